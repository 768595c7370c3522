//! Python values as JSON text, exactly: what this package sends for a `dict`
//! (a body, a query, an option) that the caller did not give as text.
//!
//! No number passes through a binary float on its way to the engine:
//!
//! - `int` (not `bool`): its decimal digits, however many (`10**5000` too:
//!   past Python's 4,300-digit `str` limit the digits are made here from its
//!   hexadecimal form);
//! - `decimal.Decimal`: `str(d)`, its exact text (`Decimal("125.50")` is
//!   `125.50`, `Decimal("1E+2")` is `1E+2`); NaN and the infinities as below;
//! - `float`: `repr(f)`, the shortest text that reads back as the same double
//!   (`125.5`, `0.1`, `1e+16`, `0.30000000000000004`), never rounded to cents:
//!   the engine reads that literal as decimal text, so a float that is not
//!   exactly a number of cents is refused like any other such amount; NaN and
//!   the infinities as `NaN`, `Infinity` and `-Infinity`, what `json.dumps`
//!   writes, which are not JSON: the answer is the service's to a body that is
//!   not JSON;
//! - `str`: a JSON string escaped as serde_json escapes (so a body is the same
//!   bytes the Rust hosts send), non-ASCII as UTF-8; a lone surrogate (which has
//!   no UTF-8) as its `\udXXX` escape, which the engine refuses as not JSON;
//! - `dict` (and subclasses): an object, members in insertion order; keys must
//!   be `str`; `list` and `tuple`: arrays; `None`, `True`, `False`: `null`,
//!   `true`, `false`.
//!
//! Anything else (a `set`, `bytes` inside a value, an object) has no JSON form
//! and is misuse (`ach.InvalidArgument`), as is a container that contains
//! itself. Nesting is not limited here (the serialiser keeps its own stack, not
//! the native one): the engine refuses a text nested deeper than it reads.
//! Nothing here runs the caller's code: a subclass's overridden `__str__`,
//! `__repr__` or `items` is not called.

use std::collections::HashSet;

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple, PyType};

use crate::errors::invalid;

static DECIMAL: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// `decimal.Decimal`, imported on first use.
pub(crate) fn decimal_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    DECIMAL.import(py, "decimal", "Decimal")
}

/// The JSON text of `value`.
pub(crate) fn to_json(value: &Bound<'_, PyAny>) -> PyResult<String> {
    let mut out = String::with_capacity(512);
    write_json(value, &mut out)?;
    Ok(out)
}

/// Containers up to this depth are checked for cycles by a scan of the open
/// ones; deeper, by a set.
const SCANNED_DEPTH: usize = 64;

/// One open container.
enum Frame<'py> {
    /// A list or tuple, at its `next` item.
    Array { items: Bound<'py, PyAny>, next: usize, address: usize },
    /// A dict, at position `next` of `PyDict_Next`.
    Object { dict: Bound<'py, PyDict>, next: pyo3::ffi::Py_ssize_t, first: bool, address: usize },
}

impl Frame<'_> {
    fn address(&self) -> usize {
        match self {
            Frame::Array { address, .. } | Frame::Object { address, .. } => *address,
        }
    }
}

/// The open containers, for the cycle check.
#[derive(Default)]
struct Open<'py> {
    frames: Vec<Frame<'py>>,
    /// Every open container's address once the stack is deeper than
    /// [`SCANNED_DEPTH`].
    deep: Option<HashSet<usize>>,
}

impl<'py> Open<'py> {
    fn contains(&self, address: usize) -> bool {
        match &self.deep {
            Some(set) => set.contains(&address),
            None => self.frames.iter().any(|f| f.address() == address),
        }
    }

    fn push(&mut self, frame: Frame<'py>) -> PyResult<()> {
        let address = frame.address();
        if self.contains(address) {
            return Err(invalid("a container that contains itself has no JSON form"));
        }
        if self.deep.is_none() && self.frames.len() >= SCANNED_DEPTH {
            self.deep = Some(self.frames.iter().map(Frame::address).collect());
        }
        if let Some(set) = &mut self.deep {
            set.insert(address);
        }
        self.frames.push(frame);
        Ok(())
    }

    fn pop(&mut self) {
        if let (Some(frame), Some(set)) = (self.frames.pop(), &mut self.deep) {
            set.remove(&frame.address());
        }
    }
}

/// Append the JSON text of `value` to `out`.
pub(crate) fn write_json(value: &Bound<'_, PyAny>, out: &mut String) -> PyResult<()> {
    let mut open = Open::default();
    let mut pending = Some(value.clone());
    loop {
        if let Some(v) = pending.take() {
            if let Some(frame) = write_scalar_or_open(&v, out)? {
                open.push(frame)?;
            }
        }
        let Some(top) = open.frames.last_mut() else { return Ok(()) };
        match top {
            Frame::Array { items, next, .. } => {
                let item = match items.cast::<PyList>() {
                    Ok(list) => (*next < list.len()).then(|| list.get_item(*next)).transpose()?,
                    Err(_) => match items.cast::<PyTuple>() {
                        Ok(tuple) => (*next < tuple.len()).then(|| tuple.get_item(*next)).transpose()?,
                        Err(_) => None,
                    },
                };
                match item {
                    Some(item) => {
                        if *next > 0 {
                            out.push(',');
                        }
                        *next += 1;
                        pending = Some(item);
                    }
                    None => {
                        out.push(']');
                        open.pop();
                    }
                }
            }
            Frame::Object { dict, next, first, .. } => match dict_next(dict, next) {
                Some((key, item)) => {
                    if !*first {
                        out.push(',');
                    }
                    *first = false;
                    let key = key.cast_into::<PyString>().map_err(|e| {
                        invalid(format!(
                            "a dict key must be a str to be JSON, not {}",
                            type_name(e.into_inner().as_any())
                        ))
                    })?;
                    write_str(&key, out)?;
                    out.push(':');
                    pending = Some(item);
                }
                None => {
                    out.push('}');
                    open.pop();
                }
            },
        }
    }
}

/// Write a scalar, or the start of a container and its frame.
fn write_scalar_or_open<'py>(v: &Bound<'py, PyAny>, out: &mut String) -> PyResult<Option<Frame<'py>>> {
    if let Ok(s) = v.cast::<PyString>() {
        write_str(s, out)?;
    } else if v.is_none() {
        out.push_str("null");
    } else if let Ok(b) = v.cast::<PyBool>() {
        out.push_str(if b.is_true() { "true" } else { "false" });
    } else if v.is_instance_of::<PyInt>() {
        write_int(v, out)?;
    } else if let Ok(f) = v.cast::<PyFloat>() {
        write_float(f, out)?;
    } else if let Ok(d) = v.cast::<PyDict>() {
        out.push('{');
        return Ok(Some(Frame::Object { dict: d.clone(), next: 0, first: true, address: address(v) }));
    } else if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
        out.push('[');
        return Ok(Some(Frame::Array { items: v.clone(), next: 0, address: address(v) }));
    } else if v.is_instance(decimal_type(v.py())?.as_any())? {
        write_decimal(v, out)?;
    } else {
        return Err(invalid(format!("a value of type {} has no JSON form", type_name(v))));
    }
    Ok(None)
}

/// The member of `dict` at `PyDict_Next` position `*next`, and the position
/// moved past it; `None` at the end.
///
/// Not PyO3's dict iterator, which panics when the dict changes size while it
/// is walked (a finaliser run by a collection during the walk could change
/// it): `PyDict_Next` stays within the dict's current table whatever happens
/// to it, and each member is owned before anything else can run.
fn dict_next<'py>(
    dict: &Bound<'py, PyDict>,
    next: &mut pyo3::ffi::Py_ssize_t,
) -> Option<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    let mut key = std::ptr::null_mut();
    let mut value = std::ptr::null_mut();
    // SAFETY: `dict` is a live dict (we hold a reference) and the GIL is held;
    // `next` is a position PyDict_Next gave (or 0), which it checks against the
    // current table.
    let found = unsafe { pyo3::ffi::PyDict_Next(dict.as_ptr(), next, &mut key, &mut value) } != 0;
    if !found || key.is_null() || value.is_null() {
        return None;
    }
    let py = dict.py();
    // SAFETY: on success PyDict_Next hands out borrowed references to live
    // objects (checked non-null); they are owned here at once, before any code
    // that could change the dict runs.
    unsafe { Some((Bound::from_borrowed_ptr(py, key), Bound::from_borrowed_ptr(py, value))) }
}

fn address(v: &Bound<'_, PyAny>) -> usize {
    v.as_ptr().addr()
}

/// The name of `v`'s type, for a message.
pub(crate) fn type_name(v: &Bound<'_, PyAny>) -> String {
    v.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".to_owned())
}

/// A `str` as a JSON string (see the module's documentation).
pub(crate) fn write_str(s: &Bound<'_, PyString>, out: &mut String) -> PyResult<()> {
    match s.to_str() {
        Ok(text) => {
            escape_into(text, out);
            Ok(())
        }
        Err(_) => write_surrogates(s, out),
    }
}

/// A `str` holding lone surrogates: its UTF-16 units, pairs joined, lone ones
/// escaped.
fn write_surrogates(s: &Bound<'_, PyString>, out: &mut String) -> PyResult<()> {
    let encoded = s.encode_utf16_surrogatepass()?;
    let units = encoded.chunks_exact(2).map(|u| u16::from_le_bytes([u[0], u[1]]));
    out.push('"');
    let mut buf = [0u8; 4];
    for c in char::decode_utf16(units) {
        match c {
            Ok(c) => escape_chars(c.encode_utf8(&mut buf), out),
            Err(lone) => push_unit_escape(lone.unpaired_surrogate(), out),
        }
    }
    out.push('"');
    Ok(())
}

/// `text` as a JSON string, quotes included.
pub(crate) fn escape_into(text: &str, out: &mut String) {
    out.push('"');
    escape_chars(text, out);
    out.push('"');
}

/// `text` escaped as serde_json escapes: `"` `\` and the control characters
/// (`\b \f \n \r \t`, the rest `\u00XX`); everything else as it is.
fn escape_chars(text: &str, out: &mut String) {
    let mut start = 0;
    for (i, b) in text.bytes().enumerate() {
        let short = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0..=0x1f => "",
            _ => continue,
        };
        // `i` is at an ASCII byte: a character boundary.
        out.push_str(text.get(start..i).unwrap_or_default());
        if short.is_empty() {
            push_unit_escape(u16::from(b), out);
        } else {
            out.push_str(short);
        }
        start = i + 1;
    }
    out.push_str(text.get(start..).unwrap_or_default());
}

fn push_unit_escape(unit: u16, out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push_str("\\u");
    for shift in [12, 8, 4, 0] {
        out.push(char::from(HEX[usize::from((unit >> shift) & 0xf)]));
    }
}

/// An `int` (a subclass too) as its decimal digits.
fn write_int(v: &Bound<'_, PyAny>, out: &mut String) -> PyResult<()> {
    if let Ok(n) = v.extract::<i64>() {
        use std::fmt::Write;
        // Writing to a String cannot fail.
        let _ = write!(out, "{n}");
        return Ok(());
    }
    let py = v.py();
    let int = py.get_type::<PyInt>();
    // int.__repr__, not the subclass's; it refuses more than 4,300 digits
    // (sys.set_int_max_str_digits), hexadecimal has no such limit.
    match int.getattr("__repr__")?.call1((v,)) {
        Ok(text) => out.push_str(text.cast::<PyString>()?.to_str()?),
        Err(_) => {
            let hex = int.getattr("__format__")?.call1((v, "x"))?;
            out.push_str(&hex_to_decimal(hex.cast::<PyString>()?.to_str()?));
        }
    }
    Ok(())
}

/// `-?[0-9a-f]+` (an int's hexadecimal form) as decimal digits.
fn hex_to_decimal(hex: &str) -> String {
    let (negative, digits) = match hex.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, hex),
    };
    // Little-endian base-2^32 limbs.
    let nibbles: Vec<u32> = digits.chars().filter_map(|c| c.to_digit(16)).collect();
    let mut limbs: Vec<u32> =
        nibbles.rchunks(8).map(|chunk| chunk.iter().fold(0u32, |acc, &n| (acc << 4) | n)).collect();
    // Repeated division by 10^9, least significant group first.
    let mut groups = Vec::new();
    while limbs.iter().any(|&l| l != 0) {
        let mut rem = 0u64;
        for limb in limbs.iter_mut().rev() {
            let cur = (rem << 32) | u64::from(*limb);
            *limb = u32::try_from(cur / 1_000_000_000).unwrap_or(u32::MAX);
            rem = cur % 1_000_000_000;
        }
        groups.push(rem);
        while limbs.last() == Some(&0) {
            limbs.pop();
        }
    }
    let mut text = String::from(if negative { "-" } else { "" });
    match groups.split_last() {
        None => return "0".to_owned(),
        Some((first, rest)) => {
            text.push_str(&first.to_string());
            for g in rest.iter().rev() {
                text.push_str(&format!("{g:09}"));
            }
        }
    }
    text
}

/// A `float` (a subclass too) as `float.__repr__` writes it.
fn write_float(f: &Bound<'_, PyFloat>, out: &mut String) -> PyResult<()> {
    let value = f.value();
    if value.is_nan() {
        out.push_str("NaN");
    } else if value.is_infinite() {
        out.push_str(if value > 0.0 { "Infinity" } else { "-Infinity" });
    } else {
        let exact = PyFloat::new(f.py(), value);
        out.push_str(exact.repr()?.to_str()?);
    }
    Ok(())
}

/// A `Decimal` (a subclass too) as `Decimal.__str__` writes it; NaN and the
/// infinities as for floats.
fn write_decimal(v: &Bound<'_, PyAny>, out: &mut String) -> PyResult<()> {
    let text = decimal_type(v.py())?.getattr("__str__")?.call1((v,))?;
    let text = text.cast::<PyString>()?.to_str()?;
    if text.contains("NaN") {
        out.push_str("NaN");
    } else {
        // Finite decimals, `Infinity` and `-Infinity`.
        out.push_str(text);
    }
    Ok(())
}

/// Encoding a `str` to UTF-16 with `surrogatepass`.
trait EncodeSurrogates {
    fn encode_utf16_surrogatepass(&self) -> PyResult<Vec<u8>>;
}

impl EncodeSurrogates for Bound<'_, PyString> {
    fn encode_utf16_surrogatepass(&self) -> PyResult<Vec<u8>> {
        let bytes = self.call_method1("encode", ("utf-16-le", "surrogatepass"))?;
        Ok(bytes.cast::<PyBytes>()?.as_bytes().to_vec())
    }
}

/// A `str`'s bytes for a body or a form given as text: its UTF-8, or, when it
/// holds lone surrogates, its `surrogatepass` bytes (not UTF-8: the engine
/// judges them as it judges any bytes that are not UTF-8).
pub(crate) fn str_bytes<'a>(s: &'a Bound<'_, PyString>) -> PyResult<std::borrow::Cow<'a, [u8]>> {
    match s.to_str() {
        Ok(text) => Ok(std::borrow::Cow::Borrowed(text.as_bytes())),
        Err(_) => {
            let bytes = s.call_method1("encode", ("utf-8", "surrogatepass"))?;
            Ok(std::borrow::Cow::Owned(bytes.cast::<PyBytes>()?.as_bytes().to_vec()))
        }
    }
}
