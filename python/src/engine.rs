//! `ach.Engine`: an engine (a database and the service's rules) in the Python
//! process, answering requests through the router every other host calls.

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use ach_core::api::{self, Request, Response, REPLAYED_HEADER};
use ach_core::clock::{Clock, SystemClock};
use ach_core::engine::{Engine, EngineOptions, HostOptions, OpenError, OptionNames, OptionsError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyMemoryView, PyString, PyTuple};
use pyo3::{intern, IntoPyObjectExt};

use crate::errors::{invalid, ClosedError, KeyFileError, StorageError, WrongKeyError};
use crate::json::{decimal_type, escape_into, type_name, write_json, write_str};
use crate::validate::{cut, text_arg};

/// An engine: a database (a file, or memory) with the service's rules, as one
/// HTTPS server holds it. Requests go to the same router as the HTTPS server's,
/// the C library's and the browser module's, and are answered byte for byte
/// alike. Any number of Python threads may share one engine: the engine works
/// with the GIL released.
#[pyclass(frozen, module = "ach", name = "Engine")]
pub(crate) struct PyEngine {
    /// `None` once closed. A request clones the `Arc`, so a call in flight when
    /// another thread closes the engine finishes normally.
    inner: Mutex<Option<Arc<Engine>>>,
    /// The database file, or `None` in memory.
    path: Option<String>,
    sandbox: bool,
}

impl PyEngine {
    fn slot(&self) -> MutexGuard<'_, Option<Arc<Engine>>> {
        // The lock is only held to clone or take the `Arc`: nothing can be left
        // half done by a panic, so a poisoned lock is used as it is.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn engine(&self) -> PyResult<Arc<Engine>> {
        self.slot().clone().ok_or_else(|| ClosedError::new_err("the engine is closed"))
    }
}

/// The options JSON `ach_engine_open` takes (its member names), from the
/// keyword arguments, each written as JSON ([`crate::json`]): the core's one
/// parser then checks them, with the C library's messages.
fn options_json(
    path: Option<&Bound<'_, PyAny>>,
    sandbox: &Bound<'_, PyAny>,
    start: Option<&Bound<'_, PyAny>>,
    operator_key: Option<&Bound<'_, PyAny>>,
    encryption_key: Option<&Bound<'_, PyAny>>,
) -> PyResult<String> {
    let mut text = String::from("{");
    let mut member = |name: &str, value: &Bound<'_, PyAny>| -> PyResult<()> {
        if text.len() > 1 {
            text.push(',');
        }
        escape_into(name, &mut text);
        text.push(':');
        write_json(value, &mut text)
    };
    if let Some(path) = path {
        member("path", &fspath(path)?)?;
    }
    member("sandbox", sandbox)?;
    if let Some(start) = start {
        member("start", &instant(start)?)?;
    }
    if let Some(key) = operator_key {
        member("operator_key", key)?;
    }
    if let Some(key) = encryption_key {
        member("encryption_key", key)?;
    }
    text.push('}');
    Ok(text)
}

/// A path given as `str` or `os.PathLike` as a `str` (`os.fspath`); a path of
/// bytes must be UTF-8. Anything else is passed on for the parser to refuse.
fn fspath<'py>(path: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let py = path.py();
    if path.is_instance_of::<PyString>() {
        return Ok(path.clone());
    }
    if !path.hasattr(intern!(py, "__fspath__"))? && !path.is_instance_of::<PyBytes>() {
        return Ok(path.clone());
    }
    let text = py.import("os")?.getattr("fspath")?.call1((path,))?;
    if let Ok(bytes) = text.cast::<PyBytes>() {
        let utf8 = std::str::from_utf8(bytes.as_bytes()).map_err(|_| invalid("path must be UTF-8"))?;
        return utf8.into_bound_py_any(py);
    }
    Ok(text)
}

/// `start` as the parser reads it: a `datetime` with a time zone as its
/// ISO 8601 text; anything else as given (an RFC 3339 `str`, milliseconds).
fn instant<'py>(start: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let py = start.py();
    static DATETIME: PyOnceLock<Py<pyo3::types::PyType>> = PyOnceLock::new();
    let datetime = DATETIME.import(py, "datetime", "datetime")?;
    if !start.is_instance(datetime.as_any())? {
        return Ok(start.clone());
    }
    if start.getattr(intern!(py, "utcoffset"))?.call0()?.is_none() {
        return Err(invalid("start: a datetime must have a time zone (tzinfo)"));
    }
    datetime.getattr(intern!(py, "isoformat"))?.call1((start,))
}

/// The options as `ach_engine_open` reads them: a sandbox's clock starts at
/// `start` or now; any other engine runs on the system clock.
fn engine_options(text: &str) -> PyResult<(Option<String>, bool, EngineOptions)> {
    let o = HostOptions::parse(text, OptionNames::C).map_err(|e| match e {
        OptionsError::NotJson(why) => invalid(format!("options are not JSON: {why}")),
        OptionsError::NotObject => invalid("options must be an object"),
        OptionsError::Invalid(why) => invalid(why),
    })?;
    let options = o.engine_options(SystemClock.now());
    Ok((o.path, o.sandbox, options))
}

fn open_error(e: &OpenError) -> PyErr {
    let message = format!("cannot open the engine: {e}");
    match e {
        OpenError::WrongKey => WrongKeyError::new_err(message),
        OpenError::Secret(_) => KeyFileError::new_err(message),
        _ => StorageError::new_err(message),
    }
}

/// A request's body: text (`str`), raw bytes, or a value.
enum Body {
    None,
    /// A value's JSON text, or a `str`'s JSON string: a member of the envelope.
    Member(String),
    /// Bytes as they are, past the envelope (as the HTTPS server passes a body).
    Bytes(Vec<u8>),
}

fn body_of(body: Option<&Bound<'_, PyAny>>) -> PyResult<Body> {
    let Some(body) = body.filter(|b| !b.is_none()) else { return Ok(Body::None) };
    if let Ok(b) = body.cast::<PyBytes>() {
        return Ok(Body::Bytes(b.as_bytes().to_vec()));
    }
    if let Ok(b) = body.cast::<PyByteArray>() {
        return Ok(Body::Bytes(b.to_vec()));
    }
    if body.is_instance_of::<PyMemoryView>() {
        let bytes = body.call_method0(intern!(body.py(), "tobytes"))?;
        return Ok(Body::Bytes(bytes.cast::<PyBytes>()?.as_bytes().to_vec()));
    }
    let mut text = String::new();
    write_json(body, &mut text)?;
    Ok(Body::Member(text))
}

/// The request as the C library's envelope `{"method", "path", "query",
/// "api_key", "idempotency_key", "body"}` (the body may be left out and given
/// as bytes after).
fn envelope(
    method: &Bound<'_, PyString>,
    path: &Bound<'_, PyString>,
    api_key: Option<&Bound<'_, PyString>>,
    idempotency_key: Option<&Bound<'_, PyString>>,
    query: Option<&Bound<'_, PyAny>>,
    body: &Body,
) -> PyResult<String> {
    let mut text = String::from(r#"{"method":"#);
    write_str(method, &mut text)?;
    text.push_str(r#","path":"#);
    write_str(path, &mut text)?;
    if let Some(key) = api_key {
        text.push_str(r#","api_key":"#);
        write_str(key, &mut text)?;
    }
    if let Some(key) = idempotency_key {
        text.push_str(r#","idempotency_key":"#);
        write_str(key, &mut text)?;
    }
    if let Some(query) = query.filter(|q| !q.is_none()) {
        if !query.is_instance_of::<PyString>() && !query.is_instance_of::<PyDict>() {
            return Err(invalid(format!("query must be a str or a dict of str, not {}", type_name(query))));
        }
        text.push_str(r#","query":"#);
        write_json(query, &mut text)?;
    }
    if let Body::Member(member) = body {
        text.push_str(r#","body":"#);
        text.push_str(member);
    }
    text.push('}');
    Ok(text)
}

/// What the router answered: the status, the body's JSON text, and whether it
/// is an idempotent request's answer made again.
struct Answer {
    status: u16,
    body: String,
    replayed: bool,
}

impl From<Response> for Answer {
    fn from(r: Response) -> Answer {
        Answer { status: r.status, body: r.body, replayed: r.replayed }
    }
}

/// Route a request: the envelope read as the C library reads it; an envelope
/// the router cannot read (a body nested deeper than JSON is read, a lone
/// surrogate) is answered with the router's 400, as over HTTPS.
fn route(engine: &Engine, envelope: &str, bytes: Option<Vec<u8>>) -> Answer {
    match Request::from_json(envelope) {
        Ok(mut request) => {
            if let Some(bytes) = bytes {
                request.body = bytes;
                request.content_type = None;
            }
            api::route(engine, &request).into()
        }
        Err(_) => {
            let json = api::route_json(engine, envelope);
            let value: serde_json::Value = serde_json::from_str(&json).unwrap_or_default();
            let status = value["status"].as_u64().and_then(|s| u16::try_from(s).ok()).unwrap_or(400);
            Answer { status, body: value["body"].to_string(), replayed: false }
        }
    }
}

/// The body's JSON text as a Python value: objects as `dict`, numbers with a
/// fraction or an exponent as `decimal.Decimal` (never `float`); a body that
/// is not JSON (none is, today) as its text.
fn parse_body<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    static LOADS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let loads = LOADS.import(py, "json", "loads")?;
    let kwargs = PyDict::new(py);
    kwargs.set_item(intern!(py, "parse_float"), decimal_type(py)?)?;
    match loads.call((text,), Some(&kwargs)) {
        Ok(value) => Ok(value),
        Err(_) => text.into_bound_py_any(py),
    }
}

#[pymethods]
impl PyEngine {
    /// `Engine(path=None, *, sandbox=False, start=None, operator_key=None,
    /// encryption_key=None)`: the options of the C library's `ach_engine_open`.
    #[new]
    #[pyo3(signature = (path=None, *, sandbox=None, start=None, operator_key=None, encryption_key=None))]
    fn new(
        py: Python<'_>,
        path: Option<&Bound<'_, PyAny>>,
        sandbox: Option<&Bound<'_, PyAny>>,
        start: Option<&Bound<'_, PyAny>>,
        operator_key: Option<&Bound<'_, PyAny>>,
        encryption_key: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyEngine> {
        let no = false.into_bound_py_any(py)?;
        let sandbox = sandbox.unwrap_or(&no);
        let path = path.filter(|p| !p.is_none());
        let start = start.filter(|s| !s.is_none());
        let text = options_json(path, sandbox, start, operator_key, encryption_key)?;
        let (path, sandbox, options) = engine_options(&text)?;
        let opened = py.detach(|| match &path {
            Some(path) => Engine::open(Path::new(path), options),
            None => Engine::in_memory(options),
        });
        let engine = opened.map_err(|e| open_error(&e))?;
        Ok(PyEngine { inner: Mutex::new(Some(Arc::new(engine))), path, sandbox })
    }

    /// `(status, body)`: the HTTP status and the parsed JSON body, exactly as the
    /// HTTPS API answers (refusals included: a 422 is an answer, not an
    /// exception). See `request_full` for the answer's headers.
    #[pyo3(signature = (method, path, api_key=None, body=None, query=None, idempotency_key=None))]
    #[allow(clippy::too_many_arguments)] // the Python signature
    fn request<'py>(
        &self,
        py: Python<'py>,
        method: &Bound<'py, PyAny>,
        path: &Bound<'py, PyAny>,
        api_key: Option<&Bound<'py, PyAny>>,
        body: Option<&Bound<'py, PyAny>>,
        query: Option<&Bound<'py, PyAny>>,
        idempotency_key: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let answer = self.answer(py, method, path, api_key, body, query, idempotency_key)?;
        let body = parse_body(py, &answer.body)?;
        PyTuple::new(py, [answer.status.into_bound_py_any(py)?, body])
    }

    /// `(status, body, headers)`: as `request`, with the answer's HTTP headers
    /// that the router sets: `{"Idempotent-Replayed": "true"}` on the answer to
    /// an idempotent request made again, else `{}`.
    #[pyo3(signature = (method, path, api_key=None, body=None, query=None, idempotency_key=None))]
    #[allow(clippy::too_many_arguments)] // the Python signature
    fn request_full<'py>(
        &self,
        py: Python<'py>,
        method: &Bound<'py, PyAny>,
        path: &Bound<'py, PyAny>,
        api_key: Option<&Bound<'py, PyAny>>,
        body: Option<&Bound<'py, PyAny>>,
        query: Option<&Bound<'py, PyAny>>,
        idempotency_key: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let answer = self.answer(py, method, path, api_key, body, query, idempotency_key)?;
        let headers = PyDict::new(py);
        if answer.replayed {
            headers.set_item(REPLAYED_HEADER, "true")?;
        }
        let body = parse_body(py, &answer.body)?;
        PyTuple::new(py, [answer.status.into_bound_py_any(py)?, body, headers.into_any()])
    }

    /// Close the engine: later calls raise `ClosedError`; the database closes
    /// (a file is flushed and unlocked) when the last call in flight on another
    /// thread returns. Every committed change is already durable. Closing twice
    /// does nothing.
    fn close(&self, py: Python<'_>) {
        let engine = self.slot().take();
        // Dropped without the GIL: closing a file database flushes it.
        py.detach(move || drop(engine));
    }

    /// Whether `close` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.slot().is_none()
    }

    fn __enter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, PyTuple>) -> bool {
        self.close(py);
        false
    }

    fn __repr__(&self) -> String {
        let place = match &self.path {
            Some(path) => {
                let mut quoted = String::new();
                escape_into(&cut(path, 200), &mut quoted);
                quoted
            }
            None => "None".to_owned(),
        };
        let state = if self.closed() { ", closed" } else { "" };
        format!("<ach.Engine path={place} sandbox={}{state}>", if self.sandbox { "True" } else { "False" })
    }
}

impl PyEngine {
    /// The router's answer to a request given as Python arguments.
    #[allow(clippy::too_many_arguments)] // the Python signature
    fn answer<'py>(
        &self,
        py: Python<'py>,
        method: &Bound<'py, PyAny>,
        path: &Bound<'py, PyAny>,
        api_key: Option<&Bound<'py, PyAny>>,
        body: Option<&Bound<'py, PyAny>>,
        query: Option<&Bound<'py, PyAny>>,
        idempotency_key: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Answer> {
        let engine = self.engine()?;
        let method = text_arg("method", method)?;
        let path = text_arg("path", path)?;
        let api_key = api_key.filter(|k| !k.is_none()).map(|k| text_arg("api_key", k)).transpose()?;
        let idempotency_key =
            idempotency_key.filter(|k| !k.is_none()).map(|k| text_arg("idempotency_key", k)).transpose()?;
        let body = body_of(body)?;
        let text = envelope(method, path, api_key, idempotency_key, query, &body)?;
        let bytes = match body {
            Body::Bytes(bytes) => Some(bytes),
            Body::None | Body::Member(_) => None,
        };
        Ok(py.detach(move || route(&engine, &text, bytes)))
    }
}
