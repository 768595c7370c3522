//! Validation without an engine: the verdicts `achd validate`, the C library's
//! `ach_validate_bytes` and the browser module's validators give, from the same
//! core functions.

use std::borrow::Cow;
use std::sync::LazyLock;

use ach_core::calendar;
use ach_core::clock::{Clock, SystemClock};
use ach_core::routing::RoutingDirectory;
use ach_core::validation::{check_bytes, routing_number_verdict, Context, Kind, Verdict};
use chrono::NaiveDate;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyList, PyMemoryView, PyString};
use pyo3::{intern, IntoPyObjectExt};

use crate::errors::invalid;
use crate::json::{str_bytes, to_json, type_name};

/// The embedded routing directory, built once per process.
static DIRECTORY: LazyLock<RoutingDirectory> = LazyLock::new(RoutingDirectory::embedded);

/// Bodies larger than this are validated with the GIL released (for a small
/// one, releasing and taking it back costs more than other threads gain).
const DETACHED_BYTES: usize = 16 * 1024;

/// Today's date in US Eastern time by the system clock, as `achd validate`
/// takes it.
fn today() -> NaiveDate {
    calendar::eastern_date_cached(SystemClock.now())
}

/// The bytes a form stands for: a `str` is JSON text (its UTF-8), `bytes`,
/// `bytearray` and `memoryview` are the body's bytes as they are (not UTF-8,
/// NUL bytes: judged as `ach_validate_bytes` judges them), anything else is a
/// value written as JSON ([`crate::json`]).
pub(crate) fn form_bytes<'a>(form: &'a Bound<'_, PyAny>) -> PyResult<Cow<'a, [u8]>> {
    if let Ok(s) = form.cast::<PyString>() {
        return str_bytes(s);
    }
    if let Ok(b) = form.cast::<PyBytes>() {
        return Ok(Cow::Borrowed(b.as_bytes()));
    }
    if let Ok(b) = form.cast::<PyByteArray>() {
        return Ok(Cow::Owned(b.to_vec()));
    }
    if form.is_instance_of::<PyMemoryView>() {
        let bytes = form.call_method0(intern!(form.py(), "tobytes"))?;
        return Ok(Cow::Owned(bytes.cast::<PyBytes>()?.as_bytes().to_vec()));
    }
    Ok(Cow::Owned(to_json(form)?.into_bytes()))
}

/// The verdict on `form` as `kind`.
fn verdict_of(py: Python<'_>, kind: Kind, form: &Bound<'_, PyAny>) -> PyResult<Verdict> {
    let body = form_bytes(form)?;
    let check = |body: &[u8]| {
        let ctx = Context { today: today(), directory: &DIRECTORY };
        check_bytes(kind, body, &ctx)
    };
    Ok(if body.len() > DETACHED_BYTES { py.detach(|| check(&body)) } else { check(&body) })
}

/// A verdict as the dict `{"valid", "message", "errors": [{"field", "code",
/// "message"}]}`: what `json.loads` of the verdict's JSON gives.
pub(crate) fn verdict_dict<'py>(py: Python<'py>, verdict: &Verdict) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item(intern!(py, "valid"), verdict.valid)?;
    dict.set_item(intern!(py, "message"), verdict.message.as_deref())?;
    let errors = PyList::empty(py);
    for e in &verdict.errors {
        let problem = PyDict::new(py);
        problem.set_item(intern!(py, "field"), e.field.as_str())?;
        problem.set_item(intern!(py, "code"), e.code.as_str())?;
        problem.set_item(intern!(py, "message"), e.message.as_str())?;
        errors.append(problem)?;
    }
    dict.set_item(intern!(py, "errors"), errors)?;
    Ok(dict)
}

fn answer<'py>(py: Python<'py>, kind: Kind, form: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
    verdict_dict(py, &verdict_of(py, kind, form)?)
}

/// `#[pyfunction] $name(form, /)`: the verdict on `form` as `$kind`, with the
/// documentation given (each kind's validator has the same Python signature).
macro_rules! validator {
    ($(#[doc = $doc:literal])* $name:ident, $kind:expr) => {
        $(#[doc = $doc])*
        #[pyfunction]
        #[pyo3(signature = (form, /))]
        pub(crate) fn $name<'py>(py: Python<'py>, form: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
            answer(py, $kind, form)
        }
    };
}

validator!(
    /// Validate a transaction request (`POST /transactions`) against every rule of
    /// the service, without an engine: `{"valid", "message", "errors"}`. `form` is a
    /// value (a `dict`) or its JSON text (`str` or `bytes`).
    validate_transaction,
    Kind::Transaction
);

validator!(
    /// Validate a customer request (`POST /customers`): `{"valid", "message",
    /// "errors"}`.
    validate_customer,
    Kind::Customer
);

validator!(
    /// Validate a merchant application (`POST /merchants`): `{"valid", "message",
    /// "errors"}`.
    validate_merchant,
    Kind::Merchant
);

/// Validate a form of the kind named `"transaction"`, `"customer"` or
/// `"merchant"` (the C library's `ach_validate`); another kind is
/// `InvalidArgument`.
#[pyfunction]
#[pyo3(signature = (kind, form, /))]
pub(crate) fn validate<'py>(
    py: Python<'py>,
    kind: &Bound<'py, PyAny>,
    form: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyDict>> {
    let name = text_arg("kind", kind)?.to_string_lossy();
    let kind = Kind::parse(&name).ok_or_else(|| {
        invalid(format!("kind must be transaction, customer or merchant, not {:?}", cut(&name, 40)))
    })?;
    answer(py, kind, form)
}

/// Check one routing number (format, check digit, the embedded directory):
/// `{"valid", "message", "errors"}`, the browser module's `checkRoutingNumber`.
#[pyfunction]
#[pyo3(signature = (routing_number, /))]
pub(crate) fn validate_routing_number<'py>(
    py: Python<'py>,
    routing_number: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyDict>> {
    let text = text_arg("routing_number", routing_number)?.to_string_lossy();
    verdict_dict(py, &routing_number_verdict(&text, &DIRECTORY))
}

/// The JSON text this package sends for `value` (a body or form given as a
/// value): exact numbers, see the package's documentation.
#[pyfunction]
#[pyo3(name = "to_json", signature = (value, /))]
pub(crate) fn to_json_text<'py>(py: Python<'py>, value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    to_json(value)?.into_bound_py_any(py)
}

/// A `str` argument named `name` (`kind`, `method`, a key), or misuse.
pub(crate) fn text_arg<'a, 'py>(
    name: &str,
    value: &'a Bound<'py, PyAny>,
) -> PyResult<&'a Bound<'py, PyString>> {
    value.cast::<PyString>().map_err(|_| invalid(format!("{name} must be a str, not {}", type_name(value))))
}

/// `text` cut to `max` characters (then `...`): caller text quoted in a message
/// is never reflected whole.
pub(crate) fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((at, _)) => format!("{}...", text.get(..at).unwrap_or_default()),
    }
}
