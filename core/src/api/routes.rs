//! The endpoints: matching a method and path, then authenticating and building the
//! engine operation (or answering a read directly).
//!
//! Request data may come in the body (JSON, or form data) or the query string;
//! when both carry a member, **the body wins**.

use serde_json::{Map, Value};

use super::admit::{self, Admitted};
use super::request::{form_to_json, FormError, Request};
use super::{admin, render, Plan};
use crate::echo::echo;
use crate::engine::{Caller, Engine, Failure, Operation};
use crate::validation::{json_bounds, routing_number_problem, FieldError, ProblemCode};
use crate::{categories, AchError};

/// Every endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Endpoint {
    CreateTransaction,
    Void,
    Reverse,
    CreateCustomer,
    DeleteCustomer,
    SubmitMerchant,
    StatusChanges,
    Events,
    Institution,
    Categories,
    OpenApi,
    Health,
    Ready,
    AdminPartners,
    AdminPartnerLimits,
    AdminApprove,
    AdminMerchantLimits,
    AdminRouting,
    AdminReturns,
    AdminReturnRates,
    AdminClock,
    AdminMerchantSettings,
    AdminSetOriginator,
    AdminOriginator,
    AdminFiles,
    AdminFile,
    AdminReturnFiles,
    AdminPartnerRotate,
    AdminPartnerRevoke,
    AdminPartnerSuspend,
    AdminPartnerResume,
    AdminMerchantRotate,
    AdminMerchantRevoke,
    AdminMerchantSuspend,
    AdminMerchantResume,
    AdminOperatorRotate,
}

/// `(method, path pattern, endpoint)`; `{}` matches one segment, `{?}` an
/// optional last segment.
pub(super) const ROUTES: &[(&str, &str, Endpoint)] = &[
    ("POST", "/transactions", Endpoint::CreateTransaction),
    ("PUT", "/transactions/{}/void", Endpoint::Void),
    ("PUT", "/transactions/{}/reverse", Endpoint::Reverse),
    ("POST", "/customers", Endpoint::CreateCustomer),
    ("DELETE", "/customers/{}", Endpoint::DeleteCustomer),
    ("POST", "/merchants", Endpoint::SubmitMerchant),
    ("GET", "/status-changes/{?}", Endpoint::StatusChanges),
    ("GET", "/events/{?}", Endpoint::Events),
    ("GET", "/institutions/{}", Endpoint::Institution),
    ("GET", "/categories", Endpoint::Categories),
    ("GET", "/openapi.json", Endpoint::OpenApi),
    ("GET", "/healthz", Endpoint::Health),
    ("GET", "/readyz", Endpoint::Ready),
    ("POST", "/admin/partners", Endpoint::AdminPartners),
    ("POST", "/admin/partners/{}/limits", Endpoint::AdminPartnerLimits),
    ("POST", "/admin/merchants/{}/approve", Endpoint::AdminApprove),
    ("POST", "/admin/merchants/{}/limits", Endpoint::AdminMerchantLimits),
    ("POST", "/admin/routing", Endpoint::AdminRouting),
    ("POST", "/admin/returns", Endpoint::AdminReturns),
    ("GET", "/admin/return-rates", Endpoint::AdminReturnRates),
    ("POST", "/admin/clock", Endpoint::AdminClock),
    ("PUT", "/admin/merchants/{}/settings", Endpoint::AdminMerchantSettings),
    ("PUT", "/admin/originator", Endpoint::AdminSetOriginator),
    ("GET", "/admin/originator", Endpoint::AdminOriginator),
    ("GET", "/admin/origination-files", Endpoint::AdminFiles),
    ("GET", "/admin/origination-files/{}", Endpoint::AdminFile),
    ("POST", "/admin/return-files", Endpoint::AdminReturnFiles),
    ("POST", "/admin/partners/{}/keys/rotate", Endpoint::AdminPartnerRotate),
    ("POST", "/admin/partners/{}/keys/revoke", Endpoint::AdminPartnerRevoke),
    ("POST", "/admin/partners/{}/suspend", Endpoint::AdminPartnerSuspend),
    ("POST", "/admin/partners/{}/resume", Endpoint::AdminPartnerResume),
    ("POST", "/admin/merchants/{}/keys/rotate", Endpoint::AdminMerchantRotate),
    ("POST", "/admin/merchants/{}/keys/revoke", Endpoint::AdminMerchantRevoke),
    ("POST", "/admin/merchants/{}/suspend", Endpoint::AdminMerchantSuspend),
    ("POST", "/admin/merchants/{}/resume", Endpoint::AdminMerchantResume),
    ("POST", "/admin/operator-key/rotate", Endpoint::AdminOperatorRotate),
];

/// The path's parameters if it matches `pattern`.
fn matches(pattern: &str, path: &str) -> Option<Vec<String>> {
    let pat: Vec<&str> = pattern.trim_start_matches('/').split('/').collect();
    let segs: Vec<&str> = path.trim_start_matches('/').trim_end_matches('/').split('/').collect();
    let optional = pat.last() == Some(&"{?}");
    let required = if optional { pat.len() - 1 } else { pat.len() };
    if segs.len() < required || segs.len() > pat.len() {
        return None;
    }
    let mut params = Vec::new();
    for (i, p) in pat.iter().enumerate() {
        match (*p, segs.get(i)) {
            ("{}" | "{?}", Some(s)) if !s.is_empty() => params.push(percent_decode(s)?),
            ("{?}", None) => {}
            (lit, Some(s)) if lit == *s => {}
            _ => return None,
        }
    }
    Some(params)
}

/// A path segment percent-decoded (`%20` is a space; `+` and `&` are themselves).
fn percent_decode(segment: &str) -> Option<String> {
    // Decoded as a query value, where `+` would be a space and `&` would end the
    // value (`txn_…&x` would name `txn_…`): both are escaped first.
    let escaped = segment.replace('+', "%2B").replace('&', "%26");
    let decoded: Vec<u8> = form_urlencoded::parse(format!("x={escaped}").as_bytes())
        .next()
        .map(|(_, v)| v.into_owned().into_bytes())?;
    String::from_utf8(decoded).ok()
}

fn failure(
    error: AchError,
    status: u16,
    field: &str,
    code: ProblemCode,
    message: impl Into<String>,
) -> Failure {
    Failure::Refused {
        error,
        status,
        errors: vec![FieldError { field: field.into(), code, message: message.into() }],
    }
}

/// The methods some route accepts at this path (for a 405's `Allow` header).
pub(crate) fn allowed_methods(path: &str) -> Vec<&'static str> {
    let path = path.split_once('?').map_or(path, |(p, _)| p);
    ROUTES.iter().filter(|(_, pattern, _)| matches(pattern, path).is_some()).map(|(m, _, _)| *m).collect()
}

/// Whether any route matches this path.
pub(crate) fn is_api_path(path: &str) -> bool {
    let path = path.split_once('?').map_or(path, |(p, _)| p);
    ROUTES.iter().any(|(_, pattern, _)| matches(pattern, path).is_some())
}

/// 404: no endpoint has this path.
pub(crate) fn unknown_endpoint(method: &str, path: &str) -> Failure {
    let msg = format!("there is no endpoint {} {}", echo(&method.to_ascii_uppercase()), echo(path));
    failure(AchError::FailedToAccept, 404, "path", ProblemCode::NotFound, msg)
}

/// The endpoint and path parameters, or 404 / 405.
pub(super) fn resolve(req: &Request) -> Result<(Endpoint, Vec<String>), Failure> {
    let method = req.method.to_ascii_uppercase();
    let mut allowed = Vec::new();
    for (m, pattern, endpoint) in ROUTES {
        if let Some(params) = matches(pattern, &req.path) {
            if *m == method {
                return Ok((*endpoint, params));
            }
            allowed.push(*m);
        }
    }
    if allowed.is_empty() {
        return Err(unknown_endpoint(&method, &req.path));
    }
    let msg = format!("{} is not allowed here; use {}", echo(&method), allowed.join(", "));
    Err(failure(AchError::FailedToAccept, 405, "method", ProblemCode::InvalidValue, msg))
}

/// The request's data as one JSON value: the query string's members, overlaid
/// by the body's (JSON or form data). `Err` for a body that is not JSON or holds
/// more than the JSON caps allow ([`crate::validation::json_bounds`]), form
/// data nested deeper than [`super::MAX_FORM_DEPTH`], or a name given twice in
/// the query string or the form data.
fn data(req: &Request) -> Result<(Value, Vec<u8>), Failure> {
    let form = |text: &[u8], what: &str| {
        form_to_json(text).map_err(|e| {
            let message = format!("{what}: {}", e.message());
            match e {
                FormError::TooDeep => {
                    failure(AchError::FailedToAccept, 400, "", ProblemCode::InvalidJson, message)
                }
                FormError::TooMany => {
                    failure(AchError::FailedToAccept, 413, "", ProblemCode::OverLimit, message)
                }
                FormError::Repeated(path) => {
                    failure(AchError::FailedToAccept, 422, &path, ProblemCode::Conflict, message)
                }
            }
        })
    };
    let mut merged = match form(req.query.as_bytes(), "the query string")? {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    if req.body.iter().all(u8::is_ascii_whitespace) {
        let value = Value::Object(merged);
        let bytes = value.to_string().into_bytes();
        return Ok((value, bytes));
    }
    if req.is_form() && !looks_like_json(&req.body) {
        if let Value::Object(body) = form(&req.body, "the form data")? {
            merged.extend(body);
        }
        let value = Value::Object(merged);
        let bytes = value.to_string().into_bytes();
        return Ok((value, bytes));
    }
    json_bounds(&req.body)?;
    let parsed: Value = std::str::from_utf8(&req.body)
        .map_err(|e| format!("the body is not valid UTF-8 (byte {})", e.valid_up_to()))
        .and_then(|t| serde_json::from_str(t).map_err(|e| format!("the body is not valid JSON: {e}")))
        .map_err(|why| failure(AchError::FailedToAccept, 400, "", ProblemCode::InvalidJson, why))?;
    match parsed {
        // The body's own bytes go to the validators, so numbers keep their exact
        // text; query members are added only when the body lacks them.
        Value::Object(body) if merged.keys().all(|k| body.contains_key(k)) => {
            Ok((Value::Object(body), req.body.clone()))
        }
        Value::Object(body) => {
            merged.extend(body);
            let value = Value::Object(merged);
            let bytes = value.to_string().into_bytes();
            Ok((value, bytes))
        }
        other => Ok((other, req.body.clone())),
    }
}

/// Refuse a JSON body over the caps before it is parsed: more values than
/// [`json_bounds::MAX_JSON_VALUES`] is too large (413), nesting deeper than
/// [`json_bounds::MAX_JSON_DEPTH`] is malformed (400), as the parse would say.
pub(super) fn json_bounds(body: &[u8]) -> Result<(), Failure> {
    json_bounds::check(body).map_err(|excess| {
        let message = format!("the body is not accepted: {}", excess.message());
        match excess {
            json_bounds::Excess::TooManyValues => {
                failure(AchError::FailedToAccept, 413, "", ProblemCode::OverLimit, message)
            }
            json_bounds::Excess::TooDeep => {
                failure(AchError::FailedToAccept, 400, "", ProblemCode::InvalidJson, message)
            }
        }
    })
}

/// Whether a body sent as form data is really a JSON text (`curl -d '{...}'`
/// sends `application/x-www-form-urlencoded`): it starts with `{` or `[`, which
/// no form field name does. Such a body is read as the JSON it is.
fn looks_like_json(body: &[u8]) -> bool {
    matches!(body.iter().find(|b| !b.is_ascii_whitespace()), Some(b'{' | b'['))
}

/// The request's `partner_id`. Absent (or not a string, or empty) with a
/// partner's key, the answer names it; for any other caller it is only
/// `Authentication failed.`.
fn partner_id(data: &Value, caller: &Caller) -> Result<String, Failure> {
    match data.get("partner_id") {
        Some(Value::String(p)) if !p.is_empty() => Ok(p.clone()),
        _ if matches!(caller, Caller::Partner { .. }) => Err(Failure::PartnerIdRequired),
        _ => Err(Failure::Authentication),
    }
}

/// A partner operation, made idempotent by the `Idempotency-Key` header if given.
fn partner_op(req: &Request, operation: Operation) -> Operation {
    match &req.idempotency_key {
        Some(key) => Operation::Idempotent { key: key.clone(), operation: Box::new(operation) },
        None => operation,
    }
}

/// Plan a request (see [`super::plan`]).
pub(crate) fn plan(engine: &Engine, req: &Request) -> Result<Plan, Failure> {
    plan_admitted(engine, admit::admit(engine, req)?, req)
}

/// Plan a request admitted on its head (see [`super::plan_admitted`]).
pub(crate) fn plan_admitted(engine: &Engine, admitted: Admitted, req: &Request) -> Result<Plan, Failure> {
    let req = &*admit::split_query(req);
    if req.body.len() > admitted.body_limit() {
        return Err(admit::too_large(admitted.body_limit()));
    }
    let Admitted { endpoint, params, caller } = admitted;
    let Some(caller) = caller else {
        return match endpoint {
            Endpoint::Health | Endpoint::Ready => health(engine, endpoint),
            _ => openapi(),
        };
    };
    let param = |i: usize| params.get(i).cloned().unwrap_or_default();
    let execute = |operation| Ok(Plan::Execute { caller: caller.clone(), operation: Box::new(operation) });
    if admin::is_admin(endpoint) {
        if let Some(answer) = admin::read(engine, endpoint, &params)? {
            return Ok(Plan::Done(answer));
        }
        return admin::plan(endpoint, &params, req).and_then(execute);
    }
    match endpoint {
        Endpoint::Institution => institution(engine, &param(0)),
        Endpoint::Categories => Ok(Plan::Done(render::data(serde_json::json!({
            "groups": categories::groups(),
            "categories": categories::all(),
        })))),
        Endpoint::Events => {
            let pointer = params.first().map(String::as_str);
            let page = engine.events(&caller, pointer)?;
            Ok(Plan::Done(render::events_page(&page)))
        }
        Endpoint::StatusChanges => {
            let (data, _) = data(req)?;
            let partner = partner_id(&data, &caller)?;
            let pointer = params.first().map_or("0", String::as_str);
            let page = engine.status_changes(&caller, &partner, pointer)?;
            Ok(Plan::Done(render::status_page(&page)))
        }
        _ => {
            let (data, body) = data(req)?;
            let partner_id = partner_id(&data, &caller)?;
            let operation = match endpoint {
                Endpoint::CreateTransaction => Operation::CreateTransaction { partner_id, body },
                Endpoint::Void => Operation::VoidTransaction { partner_id, transaction_id: param(0) },
                Endpoint::Reverse => Operation::ReverseTransaction { partner_id, transaction_id: param(0) },
                Endpoint::CreateCustomer => Operation::CreateCustomer { partner_id, body },
                Endpoint::DeleteCustomer => Operation::DeleteCustomer { partner_id, customer_id: param(0) },
                _ => Operation::SubmitMerchant { partner_id, body },
            };
            execute(partner_op(req, operation))
        }
    }
}

/// `GET /healthz` (liveness: the service answers; no disk access) and `GET
/// /readyz` (readiness: writes commit, [`Engine::ready`]; message 7 and 503
/// when they do not). Neither needs a key.
fn health(engine: &Engine, endpoint: Endpoint) -> Result<Plan, Failure> {
    if endpoint == Endpoint::Health {
        return Ok(Plan::Done(render::data(serde_json::json!({ "status": "live" }))));
    }
    if engine.ready() {
        Ok(Plan::Done(render::data(serde_json::json!({ "status": "ready" }))))
    } else {
        Err(Failure::refused(AchError::DatabaseUnavailable))
    }
}

/// `GET /institutions/{routing_number}`: the bank behind a routing number.
fn institution(engine: &Engine, routing_number: &str) -> Result<Plan, Failure> {
    let directory = engine.directory();
    if let Some((code, error)) = routing_number_problem(routing_number, &directory) {
        let message = error.to_string();
        return Err(Failure::problem(error, "routing_number", code, message));
    }
    let Some(found) = directory.lookup(routing_number) else {
        return Err(Failure::refused(AchError::RoutingNotFound { value: routing_number.to_owned() }));
    };
    let d = found.destination;
    Ok(Plan::Done(render::data(serde_json::json!({
        "routing_number": routing_number,
        "name": d.name,
        "city": d.city,
        "state": d.state,
        "new_routing_number": found.requested.new_routing_number,
    }))))
}

/// `GET /openapi.json`: the OpenAPI document of the whole API.
#[cfg(feature = "openapi")]
fn openapi() -> Result<Plan, Failure> {
    Ok(Plan::Done(super::Response {
        status: 200,
        body: include_str!("../../../docs/openapi.json").to_owned(),
    }))
}

/// `GET /openapi.json` in a build without the document (the browser module).
#[cfg(not(feature = "openapi"))]
fn openapi() -> Result<Plan, Failure> {
    let msg = "this build does not carry the OpenAPI document; achd serves it";
    Err(failure(AchError::FailedToAccept, 404, "path", ProblemCode::NotFound, msg))
}
