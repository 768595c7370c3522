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

    /// A partner named `name`, made by the operator: (partner_id, its key).
    pub fn partner(&self, name: &str) -> (String, String) {
        let (status, p) = self.op("POST", "/admin/partners", json!({ "name": name }));
        assert_eq!(status, 201, "{p}");
        (text(&p["payload"]["partner_id"]), text(&p["payload"]["api_key"]))
    }

    /// The merchant application `app`, submitted by the partner `partner_id`
    /// with its `key`: the merchant's id.
    pub fn submit(&self, partner_id: &str, key: &str, mut app: Value) -> String {
        app["partner_id"] = json!(partner_id);
        let (status, m) = self.call("POST", "/merchants", Some(key), Some(app));
        assert_eq!(status, 201, "{m}");
        text(&m["id"])
    }

    /// The operator approves merchant `merchant_id` with `limits`: the
    /// merchant's key.
    pub fn approve(&self, merchant_id: &str, limits: Value) -> String {
        let path = format!("/admin/merchants/{merchant_id}/approve");
        let (status, a) = self.op("POST", &path, json!({ "limits": limits }));
        assert_eq!(status, 200, "{a}");
        text(&a["payload"]["api_key"])
    }
}

/// A JSON string's text (a test's precondition: it is one).
fn text(v: &Value) -> String {
    v.as_str().unwrap_or_else(|| panic!("not a string: {v}")).to_owned()
}
