//! A request's input: the query string's and the body's members merged into one
//! JSON value, the JSON caps held before any parse, an operator body read as its
//! type, and the `partner_id` a partner's request names.
//!
//! Request data may come in the JSON body or the query string; when both carry
//! a member, **the body wins**. (A body is JSON only: form data is refused on
//! admission, as another site's browser can send it.)

use serde::Deserialize;
use serde_json::{Map, Value};

use super::request::{form_to_json, FormError, Request};
use crate::engine::{Caller, Refusal};
use crate::validation::json::JsonBody;
use crate::validation::json_bounds::{self as bounds};
use crate::validation::ProblemCode;
use crate::AchError;

/// The request's data, parsed once, handed to `then` with the JSON text it
/// was parsed from: the query string's members, overlaid by the JSON body's.
/// A JSON body is parsed as sent, and that text is what `then`
/// gets, unless the query names members it lacks: then those members are
/// added to the parsed object, and `then` gets the object's text. `Err` for a
/// body that is not JSON or holds more than the JSON caps allow
/// ([`crate::validation::json_bounds`]), a query string nested deeper than
/// [`super::MAX_FORM_DEPTH`], or a name given twice (in the query string or a
/// JSON object).
pub(super) fn with_data<R>(
    req: &Request,
    then: impl FnOnce(&JsonBody<'_>, &[u8]) -> Result<R, Refusal>,
) -> Result<R, Refusal> {
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
    let query = match form(req.query.as_bytes(), "the query string")? {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    if req.body.iter().all(u8::is_ascii_whitespace) {
        return made(&Value::Object(query).to_string(), then);
    }
    json_bounds(&req.body)?;
    let text = std::str::from_utf8(&req.body)
        .map_err(|e| format!("the body is not valid UTF-8 (byte {})", e.valid_up_to()))
        .map_err(|why| refused(400, "", ProblemCode::InvalidJson, why))?;
    let body = parse(text)?;
    match &body {
        JsonBody::Object(object) if !query.keys().all(|k| object.has(k)) => {
            let query_text = Value::Object(query).to_string();
            let JsonBody::Object(query) = parse(&query_text)? else {
                return Err(refused(400, "", ProblemCode::InvalidJson, "the query string is not an object"));
            };
            // The body's members first: where both name one, the body wins.
            let merged = object.clone().with_absent(&query);
            let text = merged.to_text();
            then(&JsonBody::Object(merged), text.as_bytes())
        }
        _ => then(&body, &req.body),
    }
}

/// [`with_data`] of a JSON text made here (from a query string or form data).
fn made<R>(text: &str, then: impl FnOnce(&JsonBody<'_>, &[u8]) -> Result<R, Refusal>) -> Result<R, Refusal> {
    then(&parse(text)?, text.as_bytes())
}

/// A JSON text parsed, or the 400 that says why it is not JSON.
fn parse(text: &str) -> Result<JsonBody<'_>, Refusal> {
    JsonBody::parse(text)
        .map_err(|e| refused(400, "", ProblemCode::InvalidJson, format!("the body is not valid JSON: {e}")))
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

/// The request's `partner_id`. Absent (or not a string, or empty) with a
/// partner's key, the answer names it; for any other caller it is only
/// `Authentication failed.`.
pub(super) fn partner_id(data: &JsonBody<'_>, caller: &Caller) -> Result<String, Refusal> {
    match data.object().and_then(|o| o.get("partner_id")).and_then(|p| p.as_str()) {
        Some(p) if !p.is_empty() => Ok(p.into_owned()),
        _ if matches!(caller, Caller::Partner { .. }) => Err(Refusal::PartnerIdRequired),
        _ => Err(Refusal::Authentication),
    }
}

/// Where `partner_id` is not needed (the institution and category look-ups),
/// one given must still be the caller's own: any other answers
/// `Authentication failed.` as every other endpoint does.
pub(super) fn named_partner(data: &JsonBody<'_>, caller: &Caller) -> Result<(), Refusal> {
    match data.object().and_then(|o| o.get("partner_id")) {
        None => Ok(()),
        Some(p) => match p.as_str() {
            Some(p) => crate::engine::names_own_partner(caller, &p),
            None => Err(Refusal::Authentication),
        },
    }
}

/// The body as `T` (an empty body is `{}`).
pub(super) fn typed_body<T: for<'de> Deserialize<'de>>(req: &Request) -> Result<T, Refusal> {
    typed_body_with_lists(req, &[])
}

/// [`typed_body`] where the top-level members named in `lists` may be
/// arrays of strings (and nothing else may be an array).
pub(super) fn typed_body_with_lists<T: for<'de> Deserialize<'de>>(
    req: &Request,
    lists: &[&str],
) -> Result<T, Refusal> {
    let text = if req.body.iter().all(u8::is_ascii_whitespace) { &b"{}"[..] } else { &req.body[..] };
    json_bounds(text)?;
    typed_text(text, lists)
}

/// The request's data ([`with_data`]: the query string's members and the
/// body's) as a `T`.
pub(super) fn typed_data<T: for<'de> Deserialize<'de>>(req: &Request) -> Result<T, Refusal> {
    with_data(req, |_, text| typed_text(text, &[]))
}

/// A JSON text as a `T`: 400 if it is not JSON, 422 if it is not a `T`.
/// A typed body is an object of members that hold no arrays: an array is
/// refused wherever it stands, even where serde would read a struct's
/// members from it in order; but a top-level member named in `lists` may be
/// an array of strings (which no struct is read from).
fn typed_text<T: for<'de> Deserialize<'de>>(text: &[u8], lists: &[&str]) -> Result<T, Refusal> {
    let refusal = |e: serde_json::Error| {
        let status = if e.is_syntax() || e.is_eof() { 400 } else { 422 };
        let code = if status == 400 { ProblemCode::InvalidJson } else { ProblemCode::InvalidValue };
        refused(status, "", code, super::detail(e.to_string()))
    };
    let value: Value = serde_json::from_slice(text).map_err(refusal)?;
    let listed = |(k, v): (&String, &Value)| {
        lists.contains(&k.as_str()) && v.as_array().is_some_and(|items| items.iter().all(Value::is_string))
    };
    let holds = match &value {
        Value::Object(members) => members.iter().any(|m| !listed(m) && holds_array(m.1)),
        _ => true,
    };
    if holds {
        return Err(refused(
            422,
            "",
            ProblemCode::InvalidValue,
            "the body must be a JSON object without arrays",
        ));
    }
    // Read again from the text, not the value: a refusal keeps the status
    // the text gives it (a number too large for its field is malformed, 400).
    serde_json::from_slice(text).map_err(refusal)
}

/// Whether an array stands anywhere in `v`.
fn holds_array(v: &Value) -> bool {
    match v {
        Value::Array(_) => true,
        Value::Object(members) => members.values().any(holds_array),
        _ => false,
    }
}

/// Message 10 with one problem and the status given: how the router refuses
/// input it cannot take.
fn refused(status: u16, field: &str, code: ProblemCode, message: impl Into<String>) -> Refusal {
    Refusal::problem_with_status(AchError::FailedToAccept, status, field, code, message)
}
