//! The JSON form of the router (`api::route_json`, what the C library and the
//! browser module call) on arbitrary text, tokens substituted (see
//! `Sandbox::substitute`). The answer must be `{"status", "body"}` (and
//! `headers` naming a replay) and pass the oracle (`Sandbox::check`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let sandbox = ach_fuzz::sandbox();
    let Ok(text) = String::from_utf8(sandbox.substitute(data)) else { return };
    let answer = ach_core::api::route_json(&sandbox.engine, &text);
    let value: Value = serde_json::from_str(&answer).unwrap_or_else(|e| panic!("not JSON ({e}): {answer}"));
    let object = value.as_object().unwrap_or_else(|| panic!("not an object: {answer}"));
    let replayed = object.get("headers").is_some();
    if replayed {
        assert_eq!(value["headers"], serde_json::json!({"Idempotent-Replayed": "true"}), "{answer}");
    }
    assert_eq!(object.len(), 2 + usize::from(replayed), "{answer}");
    let status = value["status"].as_u64().and_then(|s| u16::try_from(s).ok());
    let status = status.unwrap_or_else(|| panic!("no status: {answer}"));
    // The body as the router rendered it (its JSON text).
    let body = value["body"].to_string();
    sandbox.check(&ach_core::api::Response { status, body, replayed }, text.len());
});
