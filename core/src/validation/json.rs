//! JSON borrowed from the request bytes and parsed lazily: the validators walk
//! these nodes instead of a `serde_json::Value`, so a request costs no allocation
//! per member, numbers keep the exact characters the client sent (for message 14),
//! and an object that names a member twice is refused instead of silently keeping
//! one of the two values.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

/// One JSON value, as the exact text of the request.
#[derive(Clone, Copy)]
pub struct Node<'a>(&'a RawValue);

/// The JSON type of a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonType {
    /// `null`
    Null,
    /// `true` or `false`
    Bool,
    /// a number literal
    Number,
    /// a string
    String,
    /// an array
    Array,
    /// an object
    Object,
}

impl JsonType {
    /// The type's name with its article, for messages (`a string`).
    pub const fn name(self) -> &'static str {
        match self {
            JsonType::Null => "null",
            JsonType::Bool => "a boolean",
            JsonType::Number => "a number",
            JsonType::String => "a string",
            JsonType::Array => "an array",
            JsonType::Object => "an object",
        }
    }
}

impl fmt::Debug for Node<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text())
    }
}

impl<'a> Node<'a> {
    /// Parse a whole document (validates all of it: syntax, UTF-8 escapes, depth).
    pub fn parse(text: &'a str) -> Result<Node<'a>, serde_json::Error> {
        let node = serde_json::from_str::<&RawValue>(text).map(Node)?;
        strict(text)?;
        Ok(node)
    }

    /// The exact JSON text of this value (serde_json excludes surrounding
    /// whitespace from raw values).
    pub fn text(&self) -> &'a str {
        self.0.get()
    }

    /// The JSON type, from the first character.
    pub fn json_type(&self) -> JsonType {
        match self.text().as_bytes().first() {
            Some(b'n') => JsonType::Null,
            Some(b't' | b'f') => JsonType::Bool,
            Some(b'"') => JsonType::String,
            Some(b'[') => JsonType::Array,
            Some(b'{') => JsonType::Object,
            _ => JsonType::Number,
        }
    }

    /// Whether this is `null`.
    pub fn is_null(&self) -> bool {
        self.json_type() == JsonType::Null
    }

    /// A string's content (borrowed unless it has escapes).
    pub fn as_str(&self) -> Option<Cow<'a, str>> {
        if self.json_type() != JsonType::String {
            return None;
        }
        let text = self.text();
        // The parser already validated the string; without escapes its content is
        // the text between the quotes.
        if !text.contains('\\') && text.len() >= 2 {
            return Some(Cow::Borrowed(&text[1..text.len() - 1]));
        }
        serde_json::from_str::<String>(text).ok().map(Cow::Owned)
    }

    /// A number's literal text, exactly as sent.
    pub fn number_text(&self) -> Option<&'a str> {
        (self.json_type() == JsonType::Number).then(|| self.text())
    }

    /// A boolean's value.
    pub fn as_bool(&self) -> Option<bool> {
        match self.text() {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        }
    }

    /// An object's members (`Err` names a member given twice).
    pub fn as_object(&self) -> Option<Result<Object<'a>, String>> {
        if self.json_type() != JsonType::Object {
            return None;
        }
        Some(serde_json::from_str::<Object<'a>>(self.text()).map_err(|e| e.to_string()))
    }

    /// An array's elements.
    pub fn as_array(&self) -> Option<Vec<Node<'a>>> {
        if self.json_type() != JsonType::Array {
            return None;
        }
        serde_json::from_str::<Vec<&'a RawValue>>(self.text()).ok().map(|v| v.into_iter().map(Node).collect())
    }

    /// The value as the client sent it: a string's content, anything else's JSON text.
    pub fn literal(&self) -> Cow<'a, str> {
        self.as_str().unwrap_or(Cow::Borrowed(self.text()))
    }
}

/// A whole request body: an object (parsed in one pass), or any other value.
#[derive(Debug, Clone)]
pub enum JsonBody<'a> {
    /// The usual case: a JSON object.
    Object(Object<'a>),
    /// Anything else (validators report it as the wrong type).
    Other(Node<'a>),
}

impl<'a> JsonBody<'a> {
    /// Parse and validate a whole document in one pass.
    pub fn parse(text: &'a str) -> Result<JsonBody<'a>, serde_json::Error> {
        #[cfg(test)]
        PARSED.with(|parsed| parsed.borrow_mut().push(text.to_owned()));
        if text.trim_start().starts_with('{') {
            let body = serde_json::from_str::<Object<'a>>(text).map(JsonBody::Object)?;
            strict(text)?;
            Ok(body)
        } else {
            Node::parse(text).map(JsonBody::Other)
        }
    }
}

#[cfg(test)]
thread_local! {
    /// Each document [`JsonBody::parse`] parsed on this thread.
    pub(crate) static PARSED: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Deepest nesting the router's parse allows.
const MAX_DEPTH: usize = super::json_bounds::MAX_JSON_DEPTH;

/// Refuse what the raw-value parse lets through but a full parse (the router's)
/// refuses, with the full parse's own error: nesting deeper than [`MAX_DEPTH`]
/// (raw values are skipped without that limit) and `\u` escapes that are not
/// characters (a lone surrogate). So a validator and the service never disagree
/// on whether a body is JSON. The full parse runs only when one of the two could
/// apply: a body with a `\u` escape or nested that deep.
fn strict(text: &str) -> Result<(), serde_json::Error> {
    if memchr::memmem::find(text.as_bytes(), b"\\u").is_none() && depth(text.as_bytes()) <= MAX_DEPTH {
        return Ok(());
    }
    // A `Value`, not `IgnoredAny`: serde_json skips ignored values without its
    // recursion limit.
    serde_json::from_str::<serde_json::Value>(text).map(drop)
}

/// The deepest nesting of arrays and objects in a (syntactically valid) JSON text.
fn depth(text: &[u8]) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for &b in text {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// An object's members, in document order.
#[derive(Debug, Clone, Default)]
pub struct Object<'a> {
    members: Vec<(Cow<'a, str>, Node<'a>)>,
}

impl<'a> Object<'a> {
    /// The member named `key`, if present and not `null`.
    pub fn get(&self, key: &str) -> Option<Node<'a>> {
        self.members.iter().find(|(k, _)| k == key).map(|(_, v)| *v).filter(|v| !v.is_null())
    }

    /// Whether no member is present (or all are null).
    pub fn is_empty(&self) -> bool {
        self.members.iter().all(|(_, v)| v.is_null())
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Every member, `null`s included, in document order.
    pub fn members(&self) -> impl Iterator<Item = (&str, Node<'a>)> + '_ {
        self.members.iter().map(|(k, v)| (k.as_ref(), *v))
    }

    /// Whether a member of this name is present (even `null`).
    pub fn has(&self, key: &str) -> bool {
        self.members.iter().any(|(k, _)| k == key)
    }

    /// This object with `other`'s members that it lacks added after its own.
    pub fn with_absent(mut self, other: &Object<'a>) -> Object<'a> {
        for (k, v) in &other.members {
            if !self.has(k) {
                self.members.push((k.clone(), *v));
            }
        }
        self
    }

    /// The object as a JSON text: its members' exact texts, in order.
    pub fn to_text(&self) -> String {
        let mut out = String::from("{");
        for (i, (k, v)) in self.members.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            push_string(&mut out, k);
            out.push(':');
            out.push_str(v.text());
        }
        out.push('}');
        out
    }
}

impl<'a> JsonBody<'a> {
    /// The body's root object (`None`: the body is another value).
    pub fn object(&self) -> Option<&Object<'a>> {
        match self {
            JsonBody::Object(o) => Some(o),
            JsonBody::Other(_) => None,
        }
    }

    /// The canonical JSON text of the body, without the root member named
    /// `except`: members sorted by name, strings escaped one way, numbers as
    /// sent, no spaces. Two texts of the same value (members in another
    /// order, other spacing or escapes) have the same canonical text; two
    /// numbers spelled differently do not (`1.5` and `1.50` are compared as
    /// the client wrote them, never through a float).
    pub fn canonical(&self, except: &str) -> String {
        let mut out = String::new();
        match self {
            JsonBody::Object(o) => canonical_object(&mut out, o, except),
            JsonBody::Other(node) => canonical_node(&mut out, *node),
        }
        out
    }
}

/// A string as JSON, escaped as serde_json escapes it.
fn push_string(out: &mut String, s: &str) {
    // Writing a `str` as JSON cannot fail.
    out.push_str(&serde_json::to_string(s).unwrap_or_default());
}

fn canonical_object(out: &mut String, object: &Object<'_>, except: &str) {
    let mut members: Vec<_> = object.members().filter(|(k, _)| *k != except).collect();
    members.sort_unstable_by(|a, b| a.0.cmp(b.0));
    out.push('{');
    for (i, (k, v)) in members.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_string(out, k);
        out.push(':');
        canonical_node(out, v);
    }
    out.push('}');
}

/// A parsed document's value in canonical form (the parse bounded its depth).
fn canonical_node(out: &mut String, node: Node<'_>) {
    match node.json_type() {
        JsonType::Object => match node.as_object() {
            Some(Ok(o)) => canonical_object(out, &o, ""),
            _ => out.push_str(node.text()),
        },
        JsonType::Array => {
            out.push('[');
            for (i, item) in node.as_array().unwrap_or_default().into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical_node(out, item);
            }
            out.push(']');
        }
        JsonType::String if node.text().contains('\\') => push_string(out, &node.literal()),
        _ => out.push_str(node.text()),
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Object<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ObjectVisitor<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for ObjectVisitor<'a> {
            type Value = Object<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
                let mut members: Vec<(Cow<'a, str>, Node<'a>)> =
                    Vec::with_capacity(map.size_hint().unwrap_or(12));
                while let Some(key) = map.next_key::<Key<'de>>()? {
                    let value: &'de RawValue = map.next_value()?;
                    if members.iter().any(|(k, _)| *k == key.0) {
                        return Err(de::Error::custom(format!(
                            "member '{}' appears twice",
                            crate::echo::echo(&key.0)
                        )));
                    }
                    members.push((key.0, Node(value)));
                }
                Ok(Object { members })
            }
        }
        d.deserialize_map(ObjectVisitor(std::marker::PhantomData))
    }
}

/// A member name, borrowed unless it has escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// What the router's parse (a `serde_json::Value`) says about `text`.
    fn router_accepts(text: &str) -> bool {
        serde_json::from_str::<serde_json::Value>(text).is_ok()
    }

    #[test]
    fn bodies_parse_exactly_when_the_routers_parse_does() {
        let nest = |n: usize| format!("{}1{}", "[".repeat(n), "]".repeat(n));
        let cases = [
            // An unknown member nested at the limit and past it.
            format!(r#"{{"amount":"1.00","note":{}}}"#, nest(126)),
            format!(r#"{{"amount":"1.00","note":{}}}"#, nest(127)),
            format!(r#"{{"amount":"1.00","note":{}}}"#, nest(200)),
            nest(127),
            nest(128),
            // Brackets inside strings are not nesting.
            format!(r#"{{"note":"{}\"{}"}}"#, "[".repeat(300), "{".repeat(300)),
            // Escapes: a pair, a lone surrogate (leading, trailing), an escaped backslash.
            r#"{"description":"\ud83d\ude00"}"#.to_owned(),
            r#"{"description":"a\ud800b"}"#.to_owned(),
            r#"{"description":"\udc00"}"#.to_owned(),
            r#"{"note":{"deeper":["\ud800"]}}"#.to_owned(),
            r#"{"description":"\\ud800"}"#.to_owned(),
            r#""\ud800""#.to_owned(),
        ];
        for text in &cases {
            let ours = JsonBody::parse(text).is_ok();
            assert_eq!(
                ours,
                router_accepts(text),
                "{} (depth {})",
                &text[..text.len().min(80)],
                depth(text.as_bytes())
            );
        }
        // The refusals say why, as serde_json does.
        let deep = JsonBody::parse(&format!(r#"{{"note":{}}}"#, nest(200))).unwrap_err();
        assert!(deep.to_string().contains("recursion limit exceeded"), "{deep}");
        let lone = JsonBody::parse(r#"{"description":"a\ud800b"}"#).unwrap_err();
        assert!(lone.to_string().contains("escape"), "{lone}");
    }

    #[test]
    fn numbers_keep_their_exact_text() {
        let n = Node::parse(r#"{"a": 1E2, "b": 1.50, "c": -0}"#).unwrap();
        let o = n.as_object().unwrap().unwrap();
        assert_eq!(o.get("a").unwrap().number_text(), Some("1E2"));
        assert_eq!(o.get("b").unwrap().number_text(), Some("1.50"));
        assert_eq!(o.get("c").unwrap().literal(), "-0");
    }

    #[test]
    fn strings_borrow_unless_escaped() {
        let n = Node::parse(r#"{"a": "plain", "b": "tab\there", "c": null}"#).unwrap();
        let o = n.as_object().unwrap().unwrap();
        assert!(matches!(o.get("a").unwrap().as_str(), Some(Cow::Borrowed("plain"))));
        assert_eq!(o.get("b").unwrap().as_str().as_deref(), Some("tab\there"));
        assert!(o.get("c").is_none());
        assert!(o.get("zz").is_none());
        assert_eq!(o.len(), 3);
    }

    #[test]
    fn duplicate_members_are_refused() {
        let n = Node::parse(r#"{"amount": 1, "amount": 2}"#).unwrap();
        let err = n.as_object().unwrap().err().unwrap();
        assert!(err.contains("'amount' appears twice"), "{err}");
    }

    #[test]
    fn types_and_arrays() {
        let n = Node::parse(r#" [1, "x", true, null, {}, []] "#).unwrap();
        let items = n.as_array().unwrap();
        let types: Vec<JsonType> = items.iter().map(Node::json_type).collect();
        assert_eq!(
            types,
            [
                JsonType::Number,
                JsonType::String,
                JsonType::Bool,
                JsonType::Null,
                JsonType::Object,
                JsonType::Array
            ]
        );
        assert_eq!(
            Node::parse("{").unwrap_err().to_string(),
            "EOF while parsing an object at line 1 column 1"
        );
        assert_eq!(
            Node::parse(&"[".repeat(200)).unwrap_err().to_string(),
            "EOF while parsing a list at line 1 column 200"
        );
    }
}
