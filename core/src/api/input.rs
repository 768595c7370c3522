//! A request's input: the query string's and the body's members merged into one
//! JSON value, the JSON caps held before any parse, an operator body read as its
//! type, and the `partner_id` a partner's request names.
//!
//! Request data may come in the body (JSON, or form data) or the query string;
//! when both carry a member, **the body wins**.

use serde::Deserialize;
use serde_json::{Map, Value};

use super::request::{form_to_json, FormError, Request};
use crate::engine::{Caller, Refusal};
use crate::validation::json_bounds::{self as bounds};
use crate::validation::{FieldError, ProblemCode};
use crate::AchError;

/// The request's data as one JSON value: the query string's members, overlaid
/// by the body's (JSON or form data). `Err` for a body that is not JSON or holds
/// more than the JSON caps allow ([`crate::validation::json_bounds`]), form
/// data nested deeper than [`super::MAX_FORM_DEPTH`], or a name given twice in
/// the query string or the form data.
pub(super) fn data(req: &Request) -> Result<(Value, Vec<u8>), Refusal> {
    let form = |text: &[u8], what: &str| {
        form_to_json(text).map_err(|e| {
            let message = format!("{what}: {}", e.message());
            match e {
                FormError::TooDeep => refused(400, "", ProblemCode::InvalidJson, message),
                FormError::TooMany => refused(413, "", ProblemCode::OverLimit, message),
                FormError::Repeated(path) => refused(422, &path, ProblemCode::Conflict, message),
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
        .map_err(|why| refused(400, "", ProblemCode::InvalidJson, why))?;
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
/// [`bounds::MAX_JSON_VALUES`] is too large (413), nesting deeper than
/// [`bounds::MAX_JSON_DEPTH`] is malformed (400), as the parse would say.
pub(super) fn json_bounds(body: &[u8]) -> Result<(), Refusal> {
    bounds::check(body).map_err(|excess| {
        let message = format!("the body is not accepted: {}", excess.message());
        match excess {
            bounds::Excess::TooManyValues => refused(413, "", ProblemCode::OverLimit, message),
            bounds::Excess::TooDeep => refused(400, "", ProblemCode::InvalidJson, message),
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
pub(super) fn partner_id(data: &Value, caller: &Caller) -> Result<String, Refusal> {
    match data.get("partner_id") {
        Some(Value::String(p)) if !p.is_empty() => Ok(p.clone()),
        _ if matches!(caller, Caller::Partner { .. }) => Err(Refusal::PartnerIdRequired),
        _ => Err(Refusal::Authentication),
    }
}

/// The body as `T` (an empty body is `{}`).
pub(super) fn typed_body<T: for<'de> Deserialize<'de>>(req: &Request) -> Result<T, Refusal> {
    let text = if req.body.iter().all(u8::is_ascii_whitespace) { &b"{}"[..] } else { &req.body[..] };
    json_bounds(text)?;
    serde_json::from_slice(text).map_err(|e| {
        let status = if e.is_syntax() || e.is_eof() { 400 } else { 422 };
        let code = if status == 400 { ProblemCode::InvalidJson } else { ProblemCode::InvalidValue };
        Refusal::Refused {
            error: AchError::FailedToAccept,
            status,
            errors: vec![FieldError { field: String::new(), code, message: super::detail(e.to_string()) }],
        }
    })
}

/// Message 10 with one problem and the status given: how the router refuses
/// input it cannot take.
fn refused(status: u16, field: &str, code: ProblemCode, message: impl Into<String>) -> Refusal {
    Refusal::problem_with_status(AchError::FailedToAccept, status, field, code, message)
}
