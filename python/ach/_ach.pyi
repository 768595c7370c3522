"""Type stubs of the native module ``ach._ach`` (re-exported by ``ach``)."""

import os
from datetime import datetime
from decimal import Decimal
from typing import Any, Literal, Mapping, Sequence, TypedDict, Union, final

__version__: str

JsonValue = Union[
    None, bool, int, float, Decimal, str, Sequence["JsonValue"], Mapping[str, "JsonValue"]
]
"""A value this package can write as JSON: numbers exactly (``float`` as its
``repr``), ``dict`` members in insertion order."""

Form = Union[str, bytes, bytearray, memoryview, JsonValue]
"""A form or a body: JSON text (``str``), raw bytes, or a value."""

class Problem(TypedDict):
    """One problem of a form."""

    field: str
    """The field's JSON path (``principal[0].address.zip``; ``""`` for the body)."""
    code: str
    """A stable code: ``required``, ``invalid_format``, ``invalid_json``, ..."""
    message: str
    """The message to show."""

class Verdict(TypedDict):
    """A validator's answer: an invalid form is data, never an exception."""

    valid: bool
    message: str | None
    """The service's envelope message for the first problem (``None`` when valid)."""
    errors: list[Problem]

class AchError(Exception):
    """The base of every exception of the package: misuse, never a refusal."""

class InvalidArgument(AchError):
    """An argument that is not accepted (a bad option, a value with no JSON form)."""

class ClosedError(AchError):
    """The engine was closed."""

class StorageError(AchError):
    """The database cannot be opened (missing key file, damaged, already open)."""

class KeyFileError(AchError):
    """The database's key file cannot be read or created."""

class WrongKeyError(AchError):
    """The encryption key is not the database's."""

def validate_transaction(form: Form, /) -> Verdict:
    """Validate a transaction request (``POST /transactions``) without an engine.

    A ``str`` is JSON text; ``bytes`` are the body's bytes as they are (not
    UTF-8: an ``invalid_json`` verdict, as ``ach_validate_bytes`` gives); any
    other value is written as JSON (see ``to_json``)."""

def validate_customer(form: Form, /) -> Verdict:
    """Validate a customer request (``POST /customers``)."""

def validate_merchant(form: Form, /) -> Verdict:
    """Validate a merchant application (``POST /merchants``)."""

def validate(kind: Literal["transaction", "customer", "merchant"], form: Form, /) -> Verdict:
    """Validate a form of the named kind (the C library's ``ach_validate``)."""

def validate_routing_number(routing_number: str, /) -> Verdict:
    """Check one routing number: format, check digit, the embedded directory."""

def to_json(value: JsonValue, /) -> str:
    """The JSON text this package sends for ``value``.

    ``int`` and ``Decimal`` exactly (``str(d)``); ``float`` as ``repr(f)``, the
    shortest text of the same double, never rounded (a float that is not a whole
    number of cents is refused as an amount); NaN and the infinities as ``NaN``,
    ``Infinity``, ``-Infinity`` (not JSON: refused as such). Raises
    ``InvalidArgument`` for a value with no JSON form."""

@final
class Engine:
    """An engine in the process: a database (a file, or memory) and the service's
    rules, answering requests exactly as the HTTPS API does. Threads may share it
    (the GIL is released while it works). A context manager: closed on exit."""

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        sandbox: bool = False,
        start: str | int | datetime | None = None,
        operator_key: str | None = None,
        encryption_key: str | None = None,
    ) -> None:
        """Open an engine, as the C library's ``ach_engine_open``.

        ``path``: the database file, created if missing (with its key file
        ``<path>.key``, mode 0600, unless ``encryption_key`` is given); ``None``:
        in memory. ``sandbox``: the clock moves only by ``POST /admin/clock``.
        ``start``: a sandbox's first instant (RFC 3339 with an offset,
        milliseconds since 1970, or an aware ``datetime``; default now).
        ``operator_key``: the operator's API key. ``encryption_key``: 64 hex
        digits. Raises ``InvalidArgument``, ``StorageError``, ``KeyFileError``
        or ``WrongKeyError``."""

    def request(
        self,
        method: str,
        path: str,
        api_key: str | None = None,
        body: Form | None = None,
        query: str | Mapping[str, str] | None = None,
        idempotency_key: str | None = None,
    ) -> tuple[int, Any]:
        """``(status, body)``: the HTTP status and the parsed JSON body.

        ``body``: a value (written as JSON, sent as ``application/json``), a
        ``str`` (the body's text), or bytes (sent as they are). The answer's
        numbers with a fraction come back as ``Decimal``, never ``float``.
        Raises ``ClosedError`` on a closed engine."""

    def request_full(
        self,
        method: str,
        path: str,
        api_key: str | None = None,
        body: Form | None = None,
        query: str | Mapping[str, str] | None = None,
        idempotency_key: str | None = None,
    ) -> tuple[int, Any, dict[str, str]]:
        """``(status, body, headers)``: ``headers`` is
        ``{"Idempotent-Replayed": "true"}`` on the answer to an idempotent request
        made again, else ``{}``."""

    def close(self) -> None:
        """Close the engine (twice is harmless); later calls raise ``ClosedError``."""

    @property
    def closed(self) -> bool:
        """Whether ``close`` was called."""

    def __enter__(self) -> "Engine": ...
    def __exit__(self, *exc: object) -> bool: ...
