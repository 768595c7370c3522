//! The exceptions of misuse. A refusal by the service (a 422, an invalid
//! form) is data, never one of these.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::PyErr;

create_exception!(
    ach,
    AchError,
    PyException,
    "The base of every exception of the `ach` package: misuse of the package, never a refusal by the service (which is data)."
);
create_exception!(
    ach,
    InvalidArgument,
    AchError,
    "An argument that is not accepted: an unknown validator kind, an engine option of the wrong type or value, a value with no JSON form (a `set`, a cyclic `dict`), a method or path that is not a `str`."
);
create_exception!(
    ach,
    ClosedError,
    AchError,
    "The engine was closed (`Engine.close()`, or the end of its `with` block)."
);
create_exception!(
    ach,
    StorageError,
    AchError,
    "The database cannot be opened: the file is missing its key file, damaged, not a database, or already open (in this process or another)."
);
create_exception!(
    ach,
    KeyFileError,
    AchError,
    "The database's key file (`<path>.key`) cannot be read or created."
);
create_exception!(
    ach,
    WrongKeyError,
    AchError,
    "The encryption key is not the one the database was created with."
);

/// An [`InvalidArgument`] saying `message`.
pub(crate) fn invalid(message: impl Into<String>) -> PyErr {
    InvalidArgument::new_err(message.into())
}
