//! Between JS values and the JSON text the core reads and writes. Arguments
//! cross as JSON text (a string, or `JSON.stringify` of an object), so the
//! browser validates byte for byte what the other hosts do. An Engine's answer
//! comes back as JSON text and `JSON.parse`; a verdict as the object that
//! `JSON.parse` of its JSON would give, built from its texts (the same values,
//! members in the same order), which is cheaper than making and parsing JSON.

use std::cell::Cell;

use ach_core::validation::Verdict;
use chrono::{DateTime, Utc};
use wasm_bindgen::prelude::*;

/// JS helpers of the boundary (a snippet that wasm-bindgen ships with the
/// module: `snippets/ach-wasm-*/inline0.js`). Each replaces several crossings
/// or a slower generic path (docs/bench-history.md, "WebAssembly"):
///
/// - `textInto` / `stringifyInto` / `pendingInto`: the argument's UTF-8 written
///   straight into the module's scratch buffer by `TextEncoder.encodeInto`
///   (wasm-bindgen's `as_string` copies a string character by character in JS
///   and allocates for each call). A return value `r >= 0` is the number of
///   bytes written; `-1`: not a string (`textInto`) or `JSON.stringify` threw
///   (`stringifyInto`, the thrown value kept for `takeThrown`); `-2`: it
///   stringified to `undefined`; `r <= -3`: the text does not fit, is kept, and
///   `pendingInto` writes it into a buffer of `-r` bytes (a multiple of 3);
///   `-4`: binary data (a typed array, `DataView` or `ArrayBuffer`), `-5`: not
///   an object (`stringifyInto` checks these before `JSON.stringify`, in one
///   crossing); `-6`: a request whose `body` member is binary data.
/// - `verdict`: a verdict object built from its texts (one string and the
///   UTF-16 lengths of its parts) instead of JSON text and `JSON.parse`, which
///   cost more than the validation of a small form; `validVerdict` for the
///   common answer.
///
/// Nothing here runs the caller's code except `JSON.stringify` (getters,
/// `toJSON`, proxy traps), whose exceptions are caught: a JS exception
/// unwinding through the module would skip its clean-up. A call from inside
/// that `JSON.stringify` (a getter calling the module) finishes before the
/// outer call keeps its text; a buffer view made before it is detached if the
/// module's memory grew meanwhile, and a detached view has length 0, so the
/// text is then "does not fit" and goes through `pendingInto`.
#[wasm_bindgen(inline_js = r#"
const encoder = new TextEncoder();
let pending = '';
let thrown;

function put(dest) {
  const text = pending;
  if (text.length <= dest.length) {
    const done = encoder.encodeInto(text, dest);
    if (done.read === text.length) {
      pending = '';
      return done.written;
    }
  }
  return -3 * text.length;
}

// `instanceof` runs a proxy's `getPrototypeOf` trap: what it throws means "no"
// (SharedArrayBuffer is not defined in a page that is not cross-origin isolated).
function isInstance(value, type) {
  try {
    return value instanceof type;
  } catch (_) {
    return false;
  }
}

export function textInto(value, dest) {
  if (typeof value !== 'string') return -1;
  pending = value;
  return put(dest);
}

function isBinary(value) {
  return ArrayBuffer.isView(value) || isInstance(value, ArrayBuffer) || isInstance(value, globalThis.SharedArrayBuffer);
}
export function stringifyInto(value, dest, request) {
  if (isBinary(value)) return -4;
  if (typeof value !== 'object' || value === null) return -5;
  let text;
  let binaryBody = false;
  // A request's `body` as bytes would stringify as an object of numbered
  // members: it is refused instead, as binary data is at the top.
  const replacer = request
    ? function (key, member) {
        if (key === 'body' && this === value && isBinary(member)) {
          binaryBody = true;
          return undefined;
        }
        return member;
      }
    : undefined;
  try {
    text = JSON.stringify(value, replacer);
  } catch (e) {
    thrown = e;
    return -1;
  }
  if (binaryBody) return -6;
  if (text === undefined) return -2;
  pending = text;
  return put(dest);
}

export function pendingInto(dest) {
  return put(dest);
}

export function takeThrown() {
  const e = thrown;
  thrown = undefined;
  return e;
}

export function validVerdict() {
  return { valid: true, message: null, errors: [] };
}

export function verdict(text, lens) {
  let at = lens[1] === 0 ? 0 : lens[1] - 1;
  const message = lens[1] === 0 ? null : text.slice(0, at);
  const errors = [];
  for (let i = 2; i < lens.length; i += 3) {
    const field = at + lens[i];
    const code = field + lens[i + 1];
    const end = code + lens[i + 2];
    errors.push({ field: text.slice(at, field), code: text.slice(field, code), message: text.slice(code, end) });
    at = end;
  }
  return { valid: lens[0] === 1, message, errors };
}
"#)]
extern "C" {
    #[wasm_bindgen(js_name = textInto)]
    fn text_into(value: &JsValue, dest: &mut [u8]) -> f64;
    #[wasm_bindgen(js_name = stringifyInto)]
    fn stringify_into(value: &JsValue, dest: &mut [u8], request: bool) -> f64;
    #[wasm_bindgen(js_name = pendingInto)]
    fn pending_into(dest: &mut [u8]) -> f64;
    #[wasm_bindgen(js_name = takeThrown)]
    fn take_thrown() -> JsValue;
    #[wasm_bindgen(js_name = validVerdict)]
    fn valid_verdict() -> JsValue;
    #[wasm_bindgen(js_name = verdict)]
    fn verdict_from_parts(text: &str, lens: &[u32]) -> JsValue;
}

/// The scratch buffer the argument's text is written into: kept between calls
/// up to this size (a larger one, for a large argument, is freed after it).
const SCRATCH_KEPT: usize = 64 * 1024;

thread_local! {
    /// Taken out for the length of a call (a call from inside it, through a
    /// getter, finds it empty and makes its own).
    static SCRATCH: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// Run `f` on the JSON text of an argument, as UTF-8: a JS object
/// (stringified) or a string (taken as JSON text). Anything else is misuse and
/// throws: a number, `null`, a function, binary data (a typed array or
/// `ArrayBuffer`: the caller meant its text), and an object that
/// `JSON.stringify` refuses (cyclic, a `BigInt` member, a getter or `toJSON`
/// that throws, nesting deeper than JS's own stack).
///
/// Only imports that cannot run the caller's code, or that catch what it throws,
/// are called here: a JS exception unwinding through the module would skip its
/// clean-up (an `Engine` would stay borrowed). `f` runs after every JS call.
pub(crate) fn with_json_text<R>(
    value: &JsValue,
    function: &str,
    f: impl FnOnce(&[u8]) -> R,
) -> Result<R, JsError> {
    with_text(value, function, false, f)
}

/// [`with_json_text`] for an argument that is an `Engine` request, whose `body`
/// member may not be binary data either.
fn with_text<R>(
    value: &JsValue,
    function: &str,
    request: bool,
    f: impl FnOnce(&[u8]) -> R,
) -> Result<R, JsError> {
    let mut buffer = SCRATCH.take();
    if buffer.is_empty() {
        buffer = vec![0; 4096];
    }
    // The JS numbers are whole (byte counts, codes); f64 to i64 saturates.
    let mut written = text_into(value, &mut buffer) as i64;
    if written == -1 {
        written = stringify_into(value, &mut buffer, request) as i64;
        let problem = match written {
            -1 => format!(": the argument cannot be turned into JSON ({})", thrown_message(&take_thrown())),
            -2 => ": the argument cannot be turned into JSON (it stringifies to undefined)".to_owned(),
            -4 => " expects an object or a JSON string, not binary data (decode it to text first)".to_owned(),
            -5 => " expects an object or a JSON string".to_owned(),
            -6 => ": body is binary data: pass an object or the body's text (decode it first)".to_owned(),
            _ => String::new(),
        };
        if !problem.is_empty() {
            return Err(JsError::new(&format!("{function}{problem}")));
        }
    }
    if written <= -3 {
        // At most 3 bytes of UTF-8 per UTF-16 unit.
        buffer = vec![0; usize::try_from(-written).unwrap_or(usize::MAX)];
        written = pending_into(&mut buffer) as i64;
    }
    let text = usize::try_from(written).ok().and_then(|n| buffer.get(..n)).unwrap_or_default();
    let result = f(text);
    if buffer.len() <= SCRATCH_KEPT {
        SCRATCH.set(buffer);
    }
    Ok(result)
}

/// The JSON text of an argument, as [`with_json_text`] reads it.
#[cfg(feature = "engine")]
pub(crate) fn json_text(value: &JsValue, function: &str) -> Result<String, JsError> {
    with_json_text(value, function, |text| String::from_utf8_lossy(text).into_owned())
}

/// The JSON text of an `Engine` request: as [`json_text`], and a `body` member
/// that is binary data is refused (it would reach the router as an object of
/// numbered members, and be answered as a body without `partner_id`).
#[cfg(feature = "engine")]
pub(crate) fn request_text(value: &JsValue, function: &str) -> Result<String, JsError> {
    with_text(value, function, true, |text| String::from_utf8_lossy(text).into_owned())
}

/// What a thrown JS value says, cut short: its `message` when it has a string
/// one (read with `Reflect.get`, which catches a throwing getter or proxy trap).
fn thrown_message(thrown: &JsValue) -> String {
    let message = if thrown.is_object() {
        js_sys::Reflect::get(thrown, &JsValue::from_str("message")).ok().and_then(|m| m.as_string())
    } else {
        thrown.as_string()
    };
    match message {
        Some(m) if !m.is_empty() => cut(&m, 120),
        _ => "an exception was thrown".to_owned(),
    }
}

/// `text` cut to `max` characters (then `...`): client text quoted in an error
/// message is never reflected whole.
pub(crate) fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((at, _)) => format!("{}...", &text[..at]),
    }
}

#[cfg(feature = "engine")]
#[wasm_bindgen]
extern "C" {
    /// `JSON.parse` without wasm-bindgen's exception wrapper: `js_sys::JSON::parse`
    /// (`catch`) runs through `handleError`, a closure and an `arguments` object
    /// per call, which cost more than parsing a verdict (docs/bench-history.md,
    /// "WebAssembly"). Only for JSON that serde_json wrote, which always parses.
    #[wasm_bindgen(js_namespace = JSON, js_name = parse)]
    fn parse_serialized(text: &str) -> JsValue;
}

/// JSON text the core wrote (an Engine's response) as a plain JS value.
#[cfg(feature = "engine")]
pub(crate) fn to_js(json: &str) -> JsValue {
    parse_serialized(json)
}

/// A verdict as the plain JS object `JSON.parse` would make of its JSON
/// (`{valid, message, errors: [{field, code, message}]}`, members in that
/// order), without the JSON.
pub(crate) fn verdict_to_js(verdict: &Verdict) -> JsValue {
    if verdict.valid && verdict.message.is_none() && verdict.errors.is_empty() {
        return valid_verdict();
    }
    let (text, lens) = verdict_parts(verdict);
    verdict_from_parts(&text, &lens)
}

/// A verdict's texts in one string and, for `verdict`: `[valid (0 or 1), message
/// length + 1 (0: null), then field, code and message lengths of each problem]`,
/// lengths in UTF-16 units (JS string indices).
pub(crate) fn verdict_parts(verdict: &Verdict) -> (String, Vec<u32>) {
    let mut text = String::with_capacity(256);
    let mut lens = Vec::with_capacity(2 + 3 * verdict.errors.len());
    let add = |part: &str, text: &mut String| {
        text.push_str(part);
        utf16_len(part)
    };
    lens.push(u32::from(verdict.valid));
    lens.push(verdict.message.as_deref().map_or(0, |m| add(m, &mut text) + 1));
    for error in &verdict.errors {
        lens.push(add(&error.field, &mut text));
        lens.push(add(error.code.as_str(), &mut text));
        lens.push(add(&error.message, &mut text));
    }
    (text, lens)
}

/// A text's length in UTF-16 units.
fn utf16_len(text: &str) -> u32 {
    let units = if text.is_ascii() { text.len() } else { text.encode_utf16().count() };
    u32::try_from(units).unwrap_or(u32::MAX)
}

/// The browser's current instant (`Date.now()`).
pub(crate) fn now() -> DateTime<Utc> {
    let ms = js_sys::Date::now();
    DateTime::from_timestamp_millis(ms as i64).unwrap_or_default()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use ach_core::validation::{FieldError, ProblemCode};

    #[test]
    fn verdict_parts_count_utf16_units() {
        let verdict = Verdict {
            valid: false,
            message: Some("ｍer_ \u{1F600}".into()),
            errors: vec![
                FieldError { field: "a.b".into(), code: ProblemCode::Required, message: "x".into() },
                FieldError {
                    field: String::new(),
                    code: ProblemCode::TooLong,
                    message: "\u{e9}\u{1F600}".into(),
                },
            ],
        };
        let (text, lens) = verdict_parts(&verdict);
        assert_eq!(text, "ｍer_ \u{1F600}a.brequiredxtoo_long\u{e9}\u{1F600}");
        assert_eq!(lens, [0, 8, 3, 8, 1, 0, 8, 3]);
        let valid = Verdict { valid: true, message: None, errors: Vec::new() };
        assert_eq!(verdict_parts(&valid), (String::new(), vec![1, 0]));
    }
}
