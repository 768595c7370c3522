//! Between JS values and the JSON text the core reads and writes. Everything
//! crosses as JSON text (`JSON.stringify` / `JSON.parse`), so the browser sees
//! byte for byte what the other hosts see.

use chrono::{DateTime, Utc};
use wasm_bindgen::prelude::*;

/// The JSON text of an argument: a JS object (stringified) or a string (taken as
/// JSON text). Anything else is misuse and throws.
pub(crate) fn json_text(value: &JsValue, function: &str) -> Result<String, JsError> {
    if let Some(text) = value.as_string() {
        return Ok(text);
    }
    if value.is_object() && !value.is_function() {
        return js_sys::JSON::stringify(value)
            .ok()
            .and_then(|s| s.as_string())
            .ok_or_else(|| JsError::new(&format!("{function}: the argument cannot be turned into JSON")));
    }
    Err(JsError::new(&format!("{function} expects an object or a JSON string")))
}

/// JSON text as a plain JS value.
pub(crate) fn to_js(json: &str) -> Result<JsValue, JsError> {
    js_sys::JSON::parse(json).map_err(|_| JsError::new("internal error: the core produced invalid JSON"))
}

/// The browser's current instant (`Date.now()`).
pub(crate) fn now() -> DateTime<Utc> {
    let ms = js_sys::Date::now();
    DateTime::from_timestamp_millis(ms as i64).unwrap_or_default()
}
