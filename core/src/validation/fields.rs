//! Walking a JSON object field by field, recording a problem for every missing,
//! mistyped or malformed member. Shared by the transaction, customer and merchant
//! validators.

use std::borrow::Cow;

use super::formats::has_control;
use super::json::{JsonBody, JsonType, Node, Object};
use super::report::{Path, ProblemCode, Rank, Report};
use super::text;
use crate::error::AchError;

/// How a field's problems map to the catalogue and the precedence.
#[derive(Clone, Copy)]
pub(crate) struct FieldRule<'e> {
    /// Precedence class of this field's problems.
    pub rank: Rank,
    /// The catalogue error for a problem, given the value as sent (`""` if missing).
    pub error: &'e dyn Fn(&str) -> AchError,
}

/// A structural rule: rank [`Rank::Structure`], message 10.
pub(crate) const STRUCTURE: FieldRule<'static> =
    FieldRule { rank: Rank::Structure, error: &|_| AchError::FailedToAccept };

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
pub(crate) fn literal<'v>(value: Node<'v>) -> Cow<'v, str> {
    value.literal()
}

/// JSON type name for messages.
pub(crate) fn type_name(value: Node<'_>) -> &'static str {
    value.json_type().name()
}

/// Record one problem for `path`.
pub(crate) fn problem(
    r: &mut Report,
    path: &Path<'_>,
    code: ProblemCode,
    message: impl Into<String>,
    rule: FieldRule<'_>,
    sent: &str,
) {
    r.push(path.render(), code, message, (rule.error)(sent), rule.rank);
}

/// A member that is present and not null.
pub(crate) fn member<'v>(map: &Object<'v>, key: &str) -> Option<Node<'v>> {
    map.get(key)
}

/// Record "required" for a missing member.
pub(crate) fn missing(r: &mut Report, path: &Path<'_>, rule: FieldRule<'_>) {
    let field = path.render();
    let message = format!("{field} is required");
    r.push(field, ProblemCode::Required, message, (rule.error)(""), rule.rank);
}

/// Record "must be X, not Y" for a member of the wrong JSON type.
fn wrong_type(r: &mut Report, path: &Path<'_>, expected: &str, value: Node<'_>, rule: FieldRule<'_>) {
    let msg = format!("{} must be {expected}, not {}", path.render(), type_name(value));
    problem(r, path, ProblemCode::InvalidType, msg, rule, &literal(value));
}

/// A member to read: the object that holds it, the object's path and the
/// member's key; whether it must be there; how its problems map.
#[derive(Clone, Copy)]
pub(crate) struct Member<'a, 'v> {
    map: &'a Object<'v>,
    parent: &'a Path<'a>,
    key: &'a str,
    need: Need,
    rule: FieldRule<'a>,
}

impl<'a, 'v> Member<'a, 'v> {
    /// The member `key` of `map` (at `parent`), with structural problems.
    pub(crate) fn new(map: &'a Object<'v>, parent: &'a Path<'a>, key: &'a str, need: Need) -> Self {
        Member { map, parent, key, need, rule: STRUCTURE }
    }

    /// [`Member::new`] for a member that must be there.
    pub(crate) fn required(map: &'a Object<'v>, parent: &'a Path<'a>, key: &'a str) -> Self {
        Member::new(map, parent, key, Need::Required)
    }

    /// The same member with its problems mapped by `rule`.
    pub(crate) fn rule(self, rule: FieldRule<'a>) -> Self {
        Member { rule, ..self }
    }

    fn path(&self) -> Path<'a> {
        self.parent.key(self.key)
    }

    /// Its value, or `None` after recording "required" when it must be there.
    fn value(&self, r: &mut Report) -> Option<Node<'v>> {
        let value = member(self.map, self.key);
        if value.is_none() && self.need == Need::Required {
            missing(r, &self.path(), self.rule);
        }
        value
    }

    /// Its value as `read` takes it, or `None` after recording "must be
    /// `expected`" when it is another JSON type.
    fn typed<T>(
        &self,
        r: &mut Report,
        expected: &str,
        read: impl FnOnce(Node<'v>) -> Option<T>,
    ) -> Option<T> {
        let value = self.value(r)?;
        let out = read(value);
        if out.is_none() {
            wrong_type(r, &self.path(), expected, value, self.rule);
        }
        out
    }
}

/// A text member: a JSON string, not blank, without control characters, at most
/// `max` characters. Returns it when all holds.
pub(crate) fn text<'v>(r: &mut Report, m: Member<'_, 'v>, max: usize) -> Option<Cow<'v, str>> {
    let s = m.typed(r, "a string", |value| value.as_str())?;
    check_text(r, &m.path(), s, m.need, max, m.rule)
}

/// The text checks of [`text`] on a string already in hand.
pub(crate) fn check_text<'v>(
    r: &mut Report,
    path: &Path<'_>,
    s: Cow<'v, str>,
    need: Need,
    max: usize,
    rule: FieldRule<'_>,
) -> Option<Cow<'v, str>> {
    if s.trim().is_empty() {
        if need == Need::Required {
            missing(r, path, rule);
        }
        return None;
    }
    if has_control(&s) {
        let msg = format!("{} must not contain control characters", path.render());
        problem(r, path, ProblemCode::InvalidFormat, msg, rule, &s);
        return None;
    }
    if let Some(c) = text::format_character(&s) {
        let msg = format!("{} must not contain format characters ({})", path.render(), text::describe(c));
        problem(r, path, ProblemCode::InvalidFormat, msg, rule, &s);
        return None;
    }
    if s.len() > max && s.chars().count() > max {
        let msg = format!("{} is longer than {max} characters", path.render());
        problem(r, path, ProblemCode::TooLong, msg, rule, &s);
        return None;
    }
    Some(s)
}

/// A free text member (a name, an address): [`text`], kept in NFKC
/// ([`text::nfkc`]).
pub(crate) fn free_text<'v>(r: &mut Report, m: Member<'_, 'v>, max: usize) -> Option<Cow<'v, str>> {
    text(r, m, max).map(text::nfkc)
}

/// A free text member that a NACHA file carries (a customer's name, a
/// description, a company name): [`free_text`] that folds to the file's
/// ASCII ([`text::fold`]); one that does not is `unsupported_characters`.
pub(crate) fn file_text<'v>(r: &mut Report, m: Member<'_, 'v>, max: usize) -> Option<Cow<'v, str>> {
    let path = m.path();
    let rule = m.rule;
    let s = free_text(r, m, max)?;
    if let Err(c) = text::fold(&s) {
        let msg =
            format!("{} has a character a NACHA file cannot carry: {}", path.render(), text::describe(c));
        problem(r, &path, ProblemCode::UnsupportedCharacters, msg, rule, &s);
        return None;
    }
    Some(s)
}

/// A member that may be a JSON number or a string (amounts, SSNs, tax ids): its
/// literal text, exactly as sent. Other types are a problem.
pub(crate) fn number_or_text<'v>(r: &mut Report, m: Member<'_, 'v>) -> Option<Cow<'v, str>> {
    let value = m.value(r)?;
    match value.json_type() {
        JsonType::Number => Some(literal(value)),
        JsonType::String => {
            let s = value.as_str()?;
            if s.is_empty() {
                if m.need == Need::Required {
                    missing(r, &m.path(), m.rule);
                }
                return None;
            }
            Some(s)
        }
        _ => {
            wrong_type(r, &m.path(), "a number or a numeric string", value, m.rule);
            None
        }
    }
}

/// A boolean member.
pub(crate) fn boolean(r: &mut Report, m: Member<'_, '_>) -> Option<bool> {
    m.typed(r, "true or false", |value| value.as_bool())
}

/// An object member (parsed; a member named twice inside it is a problem).
pub(crate) fn object<'v>(r: &mut Report, m: Member<'_, 'v>) -> Option<Object<'v>> {
    let value = m.value(r)?;
    as_object(r, value, &m.path(), m.rule)
}

/// A node that must be an object, at `path`.
pub(crate) fn as_object<'v>(
    r: &mut Report,
    value: Node<'v>,
    path: &Path<'_>,
    rule: FieldRule<'_>,
) -> Option<Object<'v>> {
    match value.as_object() {
        Some(Ok(o)) => Some(o),
        Some(Err(why)) => {
            let msg = format!("{} is not a valid object: {why}", path.render());
            problem(r, path, ProblemCode::Conflict, msg, rule, "");
            None
        }
        None => {
            wrong_type(r, path, "an object", value, rule);
            None
        }
    }
}

/// An array member.
pub(crate) fn array<'v>(r: &mut Report, m: Member<'_, 'v>) -> Option<Vec<Node<'v>>> {
    m.typed(r, "an array", |value| value.as_array())
}

/// The request body as an object, or a problem at the root.
pub(crate) fn root_object<'b, 'v>(r: &mut Report, body: &'b JsonBody<'v>) -> Option<&'b Object<'v>> {
    match body {
        JsonBody::Object(o) => Some(o),
        JsonBody::Other(value) => {
            let msg = format!("the request body must be a JSON object, not {}", type_name(*value));
            r.push(String::new(), ProblemCode::InvalidType, msg, AchError::FailedToAccept, Rank::Structure);
            None
        }
    }
}
