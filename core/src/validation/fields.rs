//! Walking a JSON object field by field, recording a problem for every missing,
//! mistyped or malformed member. Shared by the transaction, customer and merchant
//! validators.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::formats::has_control;
use super::report::{Path, ProblemCode, Rank, Report};
use crate::error::AchError;

/// How a field's problems map to the catalogue and the precedence.
#[derive(Clone, Copy)]
pub(crate) struct Rule<'e> {
    /// Precedence class of this field's problems.
    pub rank: Rank,
    /// The catalogue error for a problem, given the value as sent (`""` if missing).
    pub error: &'e dyn Fn(&str) -> AchError,
}

/// A structural rule: rank [`Rank::Structure`], message 10.
pub(crate) const STRUCTURE: Rule<'static> = Rule {
    rank: Rank::Structure,
    error: &|_| AchError::FailedToAccept,
};

/// Whether a field must be present.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Need {
    /// Missing, null or blank is a problem.
    Required,
    /// Missing or null is fine (a blank string counts as absent).
    Optional,
}

/// The literal text of a value as the client sent it: a string's content, a
/// number's exact characters, other JSON as JSON.
pub(crate) fn literal(value: &Value) -> Cow<'_, str> {
    match value {
        Value::String(s) => Cow::Borrowed(s.as_str()),
        Value::Number(n) => Cow::Owned(n.to_string()),
        other => Cow::Owned(other.to_string()),
    }
}

/// JSON type name for messages.
pub(crate) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Record one problem for `path`.
pub(crate) fn problem(
    r: &mut Report,
    path: &Path<'_>,
    code: ProblemCode,
    message: impl Into<String>,
    rule: Rule<'_>,
    sent: &str,
) {
    r.push(path.render(), code, message, (rule.error)(sent), rule.rank);
}

/// A member that is present and not null.
pub(crate) fn member<'v>(map: &'v Map<String, Value>, key: &str) -> Option<&'v Value> {
    map.get(key).filter(|v| !v.is_null())
}

/// Record "required" for a missing member.
pub(crate) fn missing(r: &mut Report, path: &Path<'_>, rule: Rule<'_>) {
    let field = path.render();
    let message = format!("{field} is required");
    r.push(
        field,
        ProblemCode::Required,
        message,
        (rule.error)(""),
        rule.rank,
    );
}

/// A text member: a JSON string, not blank, without control characters, at most
/// `max` characters. Returns it when all holds.
pub(crate) fn text<'v>(
    r: &mut Report,
    map: &'v Map<String, Value>,
    parent: &Path<'_>,
    key: &str,
    need: Need,
    max: usize,
    rule: Rule<'_>,
) -> Option<&'v str> {
    let path = parent.key(key);
    let Some(value) = member(map, key) else {
        if need == Need::Required {
            missing(r, &path, rule);
        }
        return None;
    };
    let Value::String(s) = value else {
        let msg = format!(
            "{} must be a string, not {}",
            path.render(),
            type_name(value)
        );
        problem(
            r,
            &path,
            ProblemCode::InvalidType,
            msg,
            rule,
            &literal(value),
        );
        return None;
    };
    check_text(r, &path, s, need, max, rule)
}

/// The text checks of [`text`] on a string already in hand.
pub(crate) fn check_text<'v>(
    r: &mut Report,
    path: &Path<'_>,
    s: &'v str,
    need: Need,
    max: usize,
    rule: Rule<'_>,
) -> Option<&'v str> {
    if s.trim().is_empty() {
        if need == Need::Required {
            missing(r, path, rule);
        }
        return None;
    }
    if has_control(s) {
        let msg = format!("{} must not contain control characters", path.render());
        problem(r, path, ProblemCode::InvalidFormat, msg, rule, s);
        return None;
    }
    let chars = s.chars().count();
    if chars > max {
        let msg = format!("{} is longer than {max} characters", path.render());
        problem(r, path, ProblemCode::TooLong, msg, rule, s);
        return None;
    }
    Some(s)
}

/// A member that may be a JSON number or a string (amounts, SSNs, tax ids): its
/// literal text. Other types are a problem.
pub(crate) fn number_or_text<'v>(
    r: &mut Report,
    map: &'v Map<String, Value>,
    parent: &Path<'_>,
    key: &str,
    need: Need,
    rule: Rule<'_>,
) -> Option<Cow<'v, str>> {
    let path = parent.key(key);
    let Some(value) = member(map, key) else {
        if need == Need::Required {
            missing(r, &path, rule);
        }
        return None;
    };
    match value {
        Value::Number(_) => Some(literal(value)),
        Value::String(s) if s.is_empty() && need == Need::Required => {
            missing(r, &path, rule);
            None
        }
        Value::String(s) if s.is_empty() => None,
        Value::String(s) => Some(Cow::Borrowed(s.as_str())),
        other => {
            let msg = format!(
                "{} must be a number or a numeric string, not {}",
                path.render(),
                type_name(other)
            );
            problem(
                r,
                &path,
                ProblemCode::InvalidType,
                msg,
                rule,
                &literal(other),
            );
            None
        }
    }
}

/// A boolean member.
pub(crate) fn boolean(
    r: &mut Report,
    map: &Map<String, Value>,
    parent: &Path<'_>,
    key: &str,
    need: Need,
    rule: Rule<'_>,
) -> Option<bool> {
    let path = parent.key(key);
    match member(map, key) {
        None => {
            if need == Need::Required {
                missing(r, &path, rule);
            }
            None
        }
        Some(Value::Bool(b)) => Some(*b),
        Some(other) => {
            let msg = format!(
                "{} must be true or false, not {}",
                path.render(),
                type_name(other)
            );
            problem(
                r,
                &path,
                ProblemCode::InvalidType,
                msg,
                rule,
                &literal(other),
            );
            None
        }
    }
}

/// An object member.
pub(crate) fn object<'v>(
    r: &mut Report,
    map: &'v Map<String, Value>,
    parent: &Path<'_>,
    key: &str,
    need: Need,
    rule: Rule<'_>,
) -> Option<&'v Map<String, Value>> {
    let path = parent.key(key);
    match member(map, key) {
        None => {
            if need == Need::Required {
                missing(r, &path, rule);
            }
            None
        }
        Some(Value::Object(o)) => Some(o),
        Some(other) => {
            let msg = format!(
                "{} must be an object, not {}",
                path.render(),
                type_name(other)
            );
            problem(
                r,
                &path,
                ProblemCode::InvalidType,
                msg,
                rule,
                &literal(other),
            );
            None
        }
    }
}

/// An array member.
pub(crate) fn array<'v>(
    r: &mut Report,
    map: &'v Map<String, Value>,
    parent: &Path<'_>,
    key: &str,
    need: Need,
    rule: Rule<'_>,
) -> Option<&'v Vec<Value>> {
    let path = parent.key(key);
    match member(map, key) {
        None => {
            if need == Need::Required {
                missing(r, &path, rule);
            }
            None
        }
        Some(Value::Array(a)) => Some(a),
        Some(other) => {
            let msg = format!(
                "{} must be an array, not {}",
                path.render(),
                type_name(other)
            );
            problem(
                r,
                &path,
                ProblemCode::InvalidType,
                msg,
                rule,
                &literal(other),
            );
            None
        }
    }
}

/// The request body as an object, or a problem at the root.
pub(crate) fn root_object<'v>(r: &mut Report, value: &'v Value) -> Option<&'v Map<String, Value>> {
    match value {
        Value::Object(o) => Some(o),
        other => {
            let msg = format!(
                "the request body must be a JSON object, not {}",
                type_name(other)
            );
            r.push(
                String::new(),
                ProblemCode::InvalidType,
                msg,
                AchError::FailedToAccept,
                Rank::Structure,
            );
            None
        }
    }
}
