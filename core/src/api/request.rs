//! The router's request: what every host (HTTPS, C, WASM) hands over, and its
//! JSON form `{"method","path","query","api_key","body"}`.

use serde::Deserialize;
use serde_json::{Map, Value};

/// Largest request body accepted (check images make bodies large: two images of
/// at most 1 MiB each, base64-encoded, plus the rest).
pub const MAX_BODY_BYTES: usize = 3 * 1024 * 1024;

/// One HTTP request, host-independent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Request {
    /// `GET`, `POST`, `PUT`, `DELETE` (case-insensitive).
    pub method: String,
    /// The path, without the query string (`/transactions/txn_…/void`).
    pub path: String,
    /// The raw query string (`partner_id=par_…&x=1`), without `?`.
    pub query: String,
    /// The Basic-auth user name (the API key), if any.
    pub api_key: Option<String>,
    /// The `Idempotency-Key` header, if any.
    pub idempotency_key: Option<String>,
    /// The `Content-Type` header, if any.
    pub content_type: Option<String>,
    /// The body bytes.
    pub body: Vec<u8>,
}

/// The JSON form hosts pass: `body` may be a JSON value or a string of raw text;
/// `query` a string or an object of strings.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonRequest {
    method: String,
    path: String,
    #[serde(default)]
    query: Option<Value>,
    #[serde(default)]
    api_key: Option<String>,
    #[serde(default)]
    idempotency_key: Option<String>,
    #[serde(default)]
    body: Option<Value>,
}

impl Request {
    /// Parse the JSON form of a request.
    pub fn from_json(text: &str) -> Result<Request, String> {
        let j: JsonRequest = serde_json::from_str(text)
            .map_err(|e| super::detail(format!("the request is not valid: {e}")))?;
        let query = match j.query {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s,
            Some(Value::Object(m)) => {
                let mut out = form_urlencoded::Serializer::new(String::new());
                for (k, v) in &m {
                    match v {
                        Value::String(s) => out.append_pair(k, s),
                        other => out.append_pair(k, &other.to_string()),
                    };
                }
                out.finish()
            }
            Some(_) => return Err("query must be a string or an object".into()),
        };
        let (body, content_type) = match j.body {
            None | Some(Value::Null) => (Vec::new(), None),
            Some(Value::String(s)) => (s.into_bytes(), None),
            Some(v) => (v.to_string().into_bytes(), Some("application/json".to_owned())),
        };
        Ok(Request {
            method: j.method,
            path: j.path,
            query,
            api_key: j.api_key,
            idempotency_key: j.idempotency_key,
            content_type,
            body,
        })
    }

    /// The query string's parameters.
    pub fn query_pairs(&self) -> Vec<(String, String)> {
        form_urlencoded::parse(self.query.as_bytes()).into_owned().collect()
    }

    /// Whether the body is form data (`application/x-www-form-urlencoded`).
    pub fn is_form(&self) -> bool {
        self.content_type
            .as_deref()
            .is_some_and(|c| c.trim().to_ascii_lowercase().starts_with("application/x-www-form-urlencoded"))
    }
}

/// Deepest nesting of a form name (`a[b][c]` nests 2 levels below `a`). Deeper is
/// malformed, as JSON nested deeper than 128 levels is: building (and dropping) a
/// value nested 100,000 levels deep would overflow the stack.
pub const MAX_FORM_DEPTH: usize = 32;

/// Form data (`a=1&customer[name]=Ada`) as a JSON object: bracketed names nest
/// (`customer[name]` → `{"customer": {"name": …}}`); every value is a string.
/// `Err` says why the text is malformed: a name nested deeper than
/// [`MAX_FORM_DEPTH`].
pub fn form_to_json(text: &[u8]) -> Result<Value, String> {
    let mut root = Map::new();
    for (name, value) in form_urlencoded::parse(text) {
        let mut parts = name.split('[').map(|p| p.trim_end_matches(']').to_owned());
        let Some(first) = parts.next() else { continue };
        let rest: Vec<String> = parts.by_ref().take(MAX_FORM_DEPTH).collect();
        if parts.next().is_some() {
            return Err(format!("a form name nests deeper than {MAX_FORM_DEPTH} levels"));
        }
        insert(&mut root, &first, &rest, Value::String(value.into_owned()));
    }
    Ok(Value::Object(root))
}

fn insert(map: &mut Map<String, Value>, key: &str, rest: &[String], value: Value) {
    match rest.split_first() {
        None => {
            map.insert(key.to_owned(), value);
        }
        Some((next, tail)) => {
            let entry = map.entry(key.to_owned()).or_insert_with(|| Value::Object(Map::new()));
            if !entry.is_object() {
                *entry = Value::Object(Map::new());
            }
            if let Value::Object(inner) = entry {
                insert(inner, next, tail, value);
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn json_form_with_object_or_text_body_and_query() {
        let r = Request::from_json(r#"{"method":"POST","path":"/transactions","query":{"partner_id":"par_x"},"api_key":"pk_1","body":{"a":1}}"#).unwrap();
        assert_eq!(
            (r.method.as_str(), r.path.as_str(), r.query.as_str()),
            ("POST", "/transactions", "partner_id=par_x")
        );
        assert_eq!(r.body, br#"{"a":1}"#);
        let raw = Request::from_json(r#"{"method":"POST","path":"/x","body":"{not json"}"#).unwrap();
        assert_eq!(raw.body, b"{not json");
        assert!(Request::from_json(r#"{"method":"GET"}"#).is_err());
        assert!(Request::from_json(r#"{"method":"GET","path":"/","bogus":1}"#).is_err());
        // An unknown member's name is quoted in the error, but never a whole 1 MB.
        let huge = format!(r#"{{"method":"GET","path":"/","{}":1}}"#, "x".repeat(1 << 20));
        assert!(Request::from_json(&huge).unwrap_err().len() < 1024);
    }

    #[test]
    fn forms_nest_bracketed_names() {
        let v = form_to_json(
            b"merchant_id=mer_1&amount=1.50&customer%5Bname%5D=Ada+L&customer[routing_number]=021000021",
        )
        .unwrap();
        assert_eq!(v["amount"], "1.50");
        assert_eq!(v["customer"]["name"], "Ada L");
        assert_eq!(v["customer"]["routing_number"], "021000021");
    }

    #[test]
    fn forms_nested_too_deep_are_malformed_not_a_stack_overflow() {
        let nested = |depth: usize| format!("a{}=1", "[a]".repeat(depth));
        let deepest = form_to_json(nested(MAX_FORM_DEPTH).as_bytes()).unwrap();
        assert_eq!(deepest.pointer(&format!("/a{}", "/a".repeat(MAX_FORM_DEPTH))), Some(&Value::from("1")));
        for depth in [MAX_FORM_DEPTH + 1, 100_000] {
            let refused = form_to_json(nested(depth).as_bytes()).unwrap_err();
            assert_eq!(refused, "a form name nests deeper than 32 levels");
        }
    }
}
