//! Between JS values and the JSON text the core reads and writes. Everything
//! crosses as JSON text (`JSON.stringify` / `JSON.parse`), so the browser sees
//! byte for byte what the other hosts see.

use chrono::{DateTime, Utc};
use wasm_bindgen::prelude::*;

/// The JSON text of an argument: a JS object (stringified) or a string (taken as
/// JSON text). Anything else is misuse and throws: a number, `null`, a function,
/// binary data (a typed array or `ArrayBuffer`: the caller meant its text), and an
/// object that `JSON.stringify` refuses (cyclic, a `BigInt` member, a getter or
/// `toJSON` that throws, nesting deeper than JS's own stack).
///
/// Only imports that cannot run the caller's code, or that catch what it throws,
/// are called here: a JS exception unwinding through the module would skip its
/// clean-up (an `Engine` would stay borrowed).
pub(crate) fn json_text(value: &JsValue, function: &str) -> Result<String, JsError> {
    if let Some(text) = value.as_string() {
        return Ok(text);
    }
    // `instanceof` checks are wrapped in try/catch by wasm-bindgen; `isView` reads
    // an internal slot (no proxy trap runs).
    if js_sys::ArrayBuffer::is_view(value)
        || value.is_instance_of::<js_sys::ArrayBuffer>()
        || value.is_instance_of::<js_sys::SharedArrayBuffer>()
    {
        return Err(JsError::new(&format!(
            "{function} expects an object or a JSON string, not binary data (decode it to text first)"
        )));
    }
    if value.is_object() && !value.is_function() {
        return match js_sys::JSON::stringify(value) {
            Ok(text) => text.as_string().ok_or_else(|| {
                JsError::new(&format!(
                    "{function}: the argument cannot be turned into JSON (it stringifies to undefined)"
                ))
            }),
            Err(thrown) => Err(JsError::new(&format!(
                "{function}: the argument cannot be turned into JSON ({})",
                thrown_message(&thrown)
            ))),
        };
    }
    Err(JsError::new(&format!("{function} expects an object or a JSON string")))
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

#[wasm_bindgen]
extern "C" {
    /// `JSON.parse` without wasm-bindgen's exception wrapper: `js_sys::JSON::parse`
    /// (`catch`) runs through `handleError`, a closure and an `arguments` object
    /// per call, which cost more than parsing a verdict (BENCHMARKS.md,
    /// "WebAssembly"). Only for JSON that serde_json wrote, which always parses.
    #[wasm_bindgen(js_namespace = JSON, js_name = parse)]
    fn parse_serialized(text: &str) -> JsValue;
}

/// JSON text the core wrote (a verdict, a response) as a plain JS value.
pub(crate) fn to_js(json: &str) -> JsValue {
    parse_serialized(json)
}

/// The browser's current instant (`Date.now()`).
pub(crate) fn now() -> DateTime<Utc> {
    let ms = js_sys::Date::now();
    DateTime::from_timestamp_millis(ms as i64).unwrap_or_default()
}
