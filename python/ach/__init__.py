"""The ACH payment engine in Python.

Validation without an engine (``validate_transaction``, ``validate_customer``,
``validate_merchant``, ``validate``, ``validate_routing_number``) and an engine
in the process (``Engine``), over the same Rust functions as the HTTPS server,
the C library and the browser module: every answer is the one they give.

A refusal (an invalid form, a 422) is data. Misuse raises an ``AchError``.
"""

from ._ach import (
    AchError,
    ClosedError,
    Engine,
    InvalidArgument,
    KeyFileError,
    StorageError,
    WrongKeyError,
    __version__,
    to_json,
    validate,
    validate_customer,
    validate_merchant,
    validate_routing_number,
    validate_transaction,
)

__all__ = [
    "AchError",
    "ClosedError",
    "Engine",
    "InvalidArgument",
    "KeyFileError",
    "StorageError",
    "WrongKeyError",
    "__version__",
    "to_json",
    "validate",
    "validate_customer",
    "validate_merchant",
    "validate_routing_number",
    "validate_transaction",
]
