//! `class Engine`: the whole service as a sandbox in a browser tab.

use ach_core::api;
use ach_core::clock::{Clock, ManualClock};
use ach_core::engine::{EngineClock, EngineOptions, HostOptions, OptionNames, OptionsError};
use chrono::{DateTime, Utc};
use serde_json::{Map, Value};
use wasm_bindgen::prelude::*;

use crate::convert::{cut, json_text, now, request_text, to_js};

/// The engine in the browser: redb's in-memory backend and a clock the page
/// drives (the sandbox's moves only through `POST /admin/clock`; otherwise it
/// follows `Date.now()`).
#[wasm_bindgen]
pub struct Engine {
    inner: ach_core::engine::Engine,
    clock: ManualClock,
    sandbox: bool,
}

#[wasm_bindgen(typescript_custom_section)]
const ENGINE_TYPES: &str = r#"
/** `new Engine(options)`: every member is optional. `start` is the clock's
 * first instant (RFC 3339 with an offset, or milliseconds; default now). A
 * sandbox's clock moves only by `POST /admin/clock`. */
export interface EngineOptions {
    operatorKey?: string;
    sandbox?: boolean;
    start?: string | number;
    encryptionKey?: string;
}

/** One API request, as the HTTPS API would get it; `apiKey` is the Basic-auth
 * user name. */
export interface EngineRequest {
    method: string;
    path: string;
    query?: string | Record<string, string>;
    apiKey?: string;
    idempotencyKey?: string;
    body?: unknown;
}

/** The HTTP status and the JSON body, exactly as the HTTPS API answers. */
export interface EngineResponse {
    status: number;
    body: any;
    /** Present on the answer to an idempotent request made again. */
    headers?: { "Idempotent-Replayed": "true" };
}
"#;

/// Options as the page gives them, `{operatorKey?, sandbox?, start?,
/// encryptionKey?}`, read by the core's one parser with JavaScript's member names.
/// The clock starts at `start` or the page's wall time `wall`.
pub(crate) fn options_from_json(
    text: &str,
    wall: DateTime<Utc>,
) -> Result<(EngineOptions, ManualClock), String> {
    let o = HostOptions::parse(text, OptionNames::JS).map_err(|e| match e {
        OptionsError::NotJson(why) => format!("options are not valid JSON: {why}"),
        OptionsError::NotObject => "options must be an object".to_owned(),
        OptionsError::Invalid(why) => why,
    })?;
    let clock = ManualClock::new(o.start.unwrap_or(wall));
    let mut options = EngineOptions::manual(clock.now());
    options.clock = EngineClock::Manual(clock.clone());
    options.sandbox = o.sandbox;
    options.operator_key = o.operator_key;
    options.encryption_key = o.encryption_key;
    Ok((options, clock))
}

/// The router's JSON form from the page's request object
/// `{method, path, query?, apiKey?, idempotencyKey?, body?}`: `Ok(None)` when the
/// text cannot be read as JSON at all (the router answers that with its 400);
/// `Err` for misuse (not an object, an unknown member).
pub(crate) fn request_from_json(text: &str) -> Result<Option<String>, String> {
    let Ok(value) = serde_json::from_str::<Value>(text) else { return Ok(None) };
    let Value::Object(map) = value else { return Err("the request must be an object".into()) };
    let mut out = Map::new();
    for (key, v) in map {
        let renamed = match key.as_str() {
            "method" | "path" | "query" | "body" => key,
            "apiKey" => "api_key".into(),
            "idempotencyKey" => "idempotency_key".into(),
            other => {
                return Err(format!(
                    "unknown request member '{}' (method, path, query, apiKey, idempotencyKey, body)",
                    cut(other, 40)
                ))
            }
        };
        out.insert(renamed, v);
    }
    Ok(Some(Value::Object(out).to_string()))
}

impl Engine {
    /// An engine from options JSON at wall time `wall` (pure Rust: testable natively).
    pub fn from_options(text: &str, wall: DateTime<Utc>) -> Result<Engine, String> {
        let (options, clock) = options_from_json(text, wall)?;
        let sandbox = options.sandbox;
        let inner = ach_core::engine::Engine::in_memory(options).map_err(|e| e.to_string())?;
        Ok(Engine { inner, clock, sandbox })
    }

    /// Answer a request given as the page's JSON at wall time `wall`: the router's
    /// `{"status","body"}` JSON.
    pub fn request_json(&self, text: &str, wall: DateTime<Utc>) -> Result<String, String> {
        if !self.sandbox && wall > self.clock.now() {
            self.clock.set(wall);
        }
        // Text that is not JSON (or nested deeper than the parser's limit of 128, or
        // holding a number no f64 can hold) goes to the router as it is: it answers
        // 400 with the API envelope, as it does for the C host and over HTTPS.
        let routed = request_from_json(text)?;
        Ok(api::route_json(&self.inner, routed.as_deref().unwrap_or(text)))
    }
}

#[wasm_bindgen]
impl Engine {
    /// `new Engine({operatorKey, sandbox, start, encryptionKey})`; every member is
    /// optional. Throws on unknown members or wrong types.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_optional_param_type = "EngineOptions | string")] options: &JsValue,
    ) -> Result<Engine, JsError> {
        let text = if options.is_undefined() { "{}".to_owned() } else { json_text(options, "new Engine")? };
        Engine::from_options(&text, now()).map_err(|e| JsError::new(&e))
    }

    /// `engine.request({method, path, query, apiKey, body})` → `{status, body}`,
    /// exactly as the HTTPS API answers (with `headers` on a replayed answer).
    #[wasm_bindgen(unchecked_return_type = "EngineResponse")]
    pub fn request(
        &self,
        #[wasm_bindgen(unchecked_param_type = "EngineRequest | string")] request: &JsValue,
    ) -> Result<JsValue, JsError> {
        let text = request_text(request, "Engine.request")?;
        let answer = self.request_json(&text, now()).map_err(|e| JsError::new(&e))?;
        Ok(to_js(&answer))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        ach_core::calendar::parse_instant(s).unwrap()
    }

    #[test]
    fn a_sandbox_runs_a_lifecycle_natively() {
        let e = Engine::from_options(
            r#"{"operatorKey":"ok_x","sandbox":true,"start":"2026-11-23T10:00:00-05:00"}"#,
            at("2030-01-01T00:00:00Z"),
        )
        .unwrap();
        let partner: Value = serde_json::from_str(
            &e.request_json(
                r#"{"method":"POST","path":"/admin/partners","apiKey":"ok_x","body":{"name":"Web"}}"#,
                at("2030-01-01T00:00:00Z"),
            )
            .unwrap(),
        )
        .unwrap();
        assert_eq!(partner["status"], 201);
        let key = partner["body"]["payload"]["api_key"].as_str().unwrap();
        let pid = partner["body"]["payload"]["partner_id"].as_str().unwrap();
        let feed = e.request_json(&format!(r#"{{"method":"GET","path":"/status-changes/0","query":{{"partner_id":"{pid}"}},"apiKey":"{key}"}}"#), at("2030-01-01T00:00:00Z")).unwrap();
        assert!(feed.contains(r#""success":"true""#), "{feed}");
        // The sandbox clock did not follow the wall clock.
        assert_eq!(e.clock.now(), at("2026-11-23T10:00:00-05:00"));
    }

    #[test]
    fn misuse_is_an_error() {
        let refused = |text: &str| Engine::from_options(text, at("2026-11-23T12:00:00Z")).map(drop);
        assert_eq!(
            refused(r#"{"bogus":1}"#),
            Err("unknown option 'bogus' (operatorKey, sandbox, start, encryptionKey)".into())
        );
        assert_eq!(refused(r#"{"sandbox":"yes"}"#), Err("sandbox must be true or false".into()));
        assert_eq!(
            request_from_json(r#"{"method":"GET","path":"/","apikey":"x"}"#),
            Err("unknown request member 'apikey' (method, path, query, apiKey, idempotencyKey, body)".into())
        );
        assert_eq!(request_from_json("[1]"), Err("the request must be an object".into()));
        let long = format!(r#"{{"method":"GET","path":"/","{}":1}}"#, "k".repeat(1 << 20));
        assert!(request_from_json(&long).unwrap_err().len() < 200, "a long member name is not quoted whole");
    }

    #[test]
    fn a_start_the_calendar_cannot_reach_is_refused() {
        let wall = at("2026-11-23T12:00:00Z");
        // Year 262,142: creating a debit there overflowed chrono in the limits'
        // period arithmetic (a panic, a trap in the module).
        for start in ["8210266876799999", "253402300800000", "-62167219200001", "1e300"] {
            let options = format!(r#"{{"sandbox":true,"start":{start}}}"#);
            assert_eq!(
                Engine::from_options(&options, wall).err().as_deref(),
                Some("start: not a time in milliseconds within the years 0000 to 9999"),
                "{start}"
            );
        }
        for (start, instant) in [
            ("253402300799999", "9999-12-31T23:59:59.999Z"),
            ("-62167219200000", "0000-01-01T00:00:00Z"),
            ("0", "1970-01-01T00:00:00Z"),
        ] {
            let options = format!(r#"{{"sandbox":true,"start":{start}}}"#);
            let opened = Engine::from_options(&options, wall).map(|e| (e.sandbox, e.clock.now()));
            assert_eq!(opened, Ok((true, at(instant))), "{start}");
        }
        let long = format!(r#"{{"start":"{}"}}"#, "9".repeat(1 << 20));
        assert!(Engine::from_options(&long, wall).err().unwrap().len() < 200);
    }

    #[test]
    fn text_that_is_not_json_gets_the_routers_400() {
        let e = Engine::from_options(r#"{"sandbox":true}"#, at("2026-11-23T12:00:00Z")).unwrap();
        let deep = format!(
            r#"{{"method":"POST","path":"/transactions","apiKey":"x","body":{}{}}}"#,
            "[".repeat(1000),
            "]".repeat(1000)
        );
        for text in ["", "\u{0}", "{\"method\": ", deep.as_str()] {
            let answer: Value =
                serde_json::from_str(&e.request_json(text, at("2026-11-23T12:00:00Z")).unwrap()).unwrap();
            assert_eq!(answer["status"], 400, "{answer}");
            assert_eq!(answer["body"]["errors"][0]["code"], "invalid_json", "{answer}");
        }
    }

    #[test]
    fn a_live_engine_follows_the_wall_clock() {
        let e = Engine::from_options("{}", at("2026-11-23T12:00:00Z")).unwrap();
        assert_eq!(e.clock.now(), at("2026-11-23T12:00:00Z"));
        e.request_json(r#"{"method":"GET","path":"/categories"}"#, at("2026-11-24T10:00:00-05:00")).unwrap();
        assert_eq!(e.clock.now(), at("2026-11-24T10:00:00-05:00"));
    }
}
