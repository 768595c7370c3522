//! Requests to the router, the function every host calls, in the tests' shorthand.

use ach_core::api::{route, Request, Response};
use ach_core::engine::Engine;
use serde_json::{json, Value};

use crate::world::{options, OPERATOR_KEY};

/// A request of `method` to `path` with `key` and `body`; the other members empty.
pub fn request(method: &str, path: &str, key: Option<&str>, body: Vec<u8>) -> Request {
    Request {
        method: method.into(),
        path: path.into(),
        api_key: key.map(str::to_owned),
        body,
        ..Request::default()
    }
}

/// The JSON text of `body` as request bytes; none for no body.
pub fn json_body(body: Option<&Value>) -> Vec<u8> {
    body.map(|b| b.to_string().into_bytes()).unwrap_or_default()
}

/// Route `req` through `engine`: the status and the answer as JSON.
pub fn send(engine: &Engine, req: &Request) -> (u16, Value) {
    let Response { status, body, .. } = route(engine, req);
    (status, serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}")))
}

/// Route a request with a JSON body (or none): the status and the answer as JSON.
pub fn call(
    engine: &Engine,
    method: &str,
    path: &str,
    key: Option<&str>,
    body: Option<&Value>,
) -> (u16, Value) {
    send(engine, &request(method, path, key, json_body(body)))
}

/// Merchant limits, as the approval takes them, that no test's volume reaches.
pub fn roomy_limit_values() -> Value {
    let big = "99999999.99";
    json!({"max_transaction_amount": big, "min_transaction_amount": "0.01",
        "daily_count": 1_000_000_000u64, "daily_amount": big, "period_count": 1_000_000_000u64,
        "period_amount": big, "monthly_count": 1_000_000_000u64, "monthly_amount": big,
        "monthly_average_amount": big})
}

/// The router over an in-memory sandbox engine that starts Monday 2026-11-23 10:00
/// Eastern.
pub struct Router {
    /// The engine under test.
    pub engine: Engine,
}

impl Default for Router {
    fn default() -> Router {
        Router::new()
    }
}

impl Router {
    /// A new engine at the start.
    pub fn new() -> Router {
        Router { engine: crate::store::engine(options("2026-11-23 10:00")).unwrap_or_else(|e| panic!("{e}")) }
    }

    /// A request with a JSON body (or none): the status and the answer as JSON.
    pub fn call(&self, method: &str, path: &str, key: Option<&str>, body: Option<Value>) -> (u16, Value) {
        call(&self.engine, method, path, key, body.as_ref())
    }

    /// An operator request.
    pub fn op(&self, method: &str, path: &str, body: Value) -> (u16, Value) {
        self.call(method, path, Some(OPERATOR_KEY), Some(body))
    }
}
