//! The router's request: what every host (HTTPS, C, WASM) hands over, and its
//! JSON form `{"method","path","query","api_key","body"}`.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::validation::json_bounds::{self, MAX_JSON_VALUES};

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
    /// The body's media type as the host was given it: an HTTP host's
    /// `Content-Type` (the empty text for a body sent without one); `None`
    /// where the host vouches for the body (the embedded hosts).
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
    query: Option<Box<RawValue>>,
    #[serde(default)]
    api_key: Option<String>,
    #[serde(default)]
    idempotency_key: Option<String>,
    #[serde(default)]
    body: Option<Box<RawValue>>,
}

/// A member of the JSON form as a value, parsed only within the JSON caps
/// ([`json_bounds`]): `Ok(Err(raw))` is the text of one with more values than
/// they allow; one nested deeper is not valid, as its parse says.
fn bounded(raw: Option<Box<RawValue>>) -> Result<Result<Option<Value>, Box<RawValue>>, String> {
    let Some(raw) = raw else { return Ok(Ok(None)) };
    if json_bounds::check(raw.get().as_bytes()) == Err(json_bounds::Excess::TooManyValues) {
        return Ok(Err(raw));
    }
    serde_json::from_str(raw.get())
        .map(|v| Ok(Some(v)))
        .map_err(|e| super::detail(format!("the request is not valid: {e}")))
}

impl Request {
    /// Parse the JSON form of a request.
    pub fn from_json(text: &str) -> Result<Request, String> {
        let j: JsonRequest = serde_json::from_str(text)
            .map_err(|e| super::detail(format!("the request is not valid: {e}")))?;
        let query = match bounded(j.query)? {
            Ok(query) => query,
            Err(_) => return Err(format!("the query is not accepted: more than {MAX_JSON_VALUES} values")),
        };
        let query = match query {
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
        let (body, content_type) = match bounded(j.body)? {
            Ok(None | Some(Value::Null)) => (Vec::new(), None),
            Ok(Some(Value::String(s))) => (s.into_bytes(), None),
            Ok(Some(v)) => (v.to_string().into_bytes(), Some("application/json".to_owned())),
            // Over the caps: passed on as it came, for the router to refuse.
            Err(raw) => (raw.get().as_bytes().to_vec(), Some("application/json".to_owned())),
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
}

/// Deepest nesting of a form name (`a[b][c]` nests 2 levels below `a`). Deeper is
/// malformed, as JSON nested deeper than 128 levels is: building (and dropping) a
/// value nested 100,000 levels deep would overflow the stack.
pub const MAX_FORM_DEPTH: usize = 32;

/// Why form data (or a query string) is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormError {
    /// A name nests deeper than [`MAX_FORM_DEPTH`].
    TooDeep,
    /// More than [`MAX_JSON_VALUES`] names: as many values as a JSON body may hold.
    TooMany,
    /// A name given twice (`amount=1.00&amount=6000.00`), or both as a value and
    /// as a nested name (`customer=x&customer[name]=Ada`): the request must never
    /// depend on which of two values is kept. The name's path (`customer.name`),
    /// cut as a client value echoed in a message is.
    Repeated(String),
}

impl FormError {
    /// What a client is told.
    pub fn message(&self) -> String {
        match self {
            FormError::TooDeep => format!("a form name nests deeper than {MAX_FORM_DEPTH} levels"),
            FormError::TooMany => format!("more than {MAX_JSON_VALUES} names"),
            FormError::Repeated(path) => format!("'{path}' is given twice"),
        }
    }
}

/// Form data (`a=1&customer[name]=Ada`) as a JSON object: bracketed names nest
/// (`customer[name]` → `{"customer": {"name": …}}`); every value is a string.
/// `Err` says why the text is refused: a name nested deeper than
/// [`MAX_FORM_DEPTH`], more than [`MAX_JSON_VALUES`] names, or a name given twice.
pub fn form_to_json(text: &[u8]) -> Result<Value, FormError> {
    let mut root = Map::new();
    for (count, (name, value)) in form_urlencoded::parse(text).enumerate() {
        if count == MAX_JSON_VALUES {
            return Err(FormError::TooMany);
        }
        let mut parts = name.split('[').map(|p| p.trim_end_matches(']').to_owned());
        let Some(first) = parts.next() else { continue };
        let rest: Vec<String> = parts.by_ref().take(MAX_FORM_DEPTH).collect();
        if parts.next().is_some() {
            return Err(FormError::TooDeep);
        }
        if !insert(&mut root, &first, &rest, Value::String(value.into_owned())) {
            let path = std::iter::once(&first).chain(&rest).cloned().collect::<Vec<_>>().join(".");
            return Err(FormError::Repeated(crate::echo::echo(&path)));
        }
    }
    Ok(Value::Object(root))
}

/// Put `value` at `key`, then `rest`, below `map`; `false` if that name (or a
/// value where the name needs an object) is already there.
fn insert(map: &mut Map<String, Value>, key: &str, rest: &[String], value: Value) -> bool {
    match rest.split_first() {
        None => map.insert(key.to_owned(), value).is_none(),
        Some((next, tail)) => match map.entry(key.to_owned()).or_insert_with(|| Value::Object(Map::new())) {
            Value::Object(inner) => insert(inner, next, tail, value),
            _ => false,
        },
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
        assert_eq!(
            Request::from_json(r#"{"method":"GET"}"#),
            Err("the request is not valid: missing field `path` at line 1 column 16".to_owned())
        );
        assert_eq!(
            Request::from_json(r#"{"method":"GET","path":"/","bogus":1}"#),
            Err("the request is not valid: unknown field `bogus`, expected one of `method`, `path`, \
                 `query`, `api_key`, `idempotency_key`, `body` at line 1 column 34"
                .to_owned())
        );
        // An unknown member's name is quoted in the error, but never a whole 1 MB.
        let huge = format!(r#"{{"method":"GET","path":"/","{}":1}}"#, "x".repeat(1 << 20));
        assert!(Request::from_json(&huge).unwrap_err().len() < 1024);
    }

    #[test]
    fn json_form_members_over_the_caps_are_never_built() {
        let zeros = format!("[{}]", vec!["0"; 1_500_000].join(","));
        let r = Request::from_json(&format!(r#"{{"method":"POST","path":"/transactions","body":{zeros}}}"#))
            .unwrap();
        assert_eq!(r.body, zeros.as_bytes(), "passed on as sent, for the router to refuse");
        let query = format!(r#"{{"method":"GET","path":"/","query":{{"a":{zeros}}}}}"#);
        assert!(Request::from_json(&query).unwrap_err().contains("more than 10000 values"));
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
            assert_eq!(refused.message(), "a form name nests deeper than 32 levels");
        }
    }

    #[test]
    fn a_name_given_twice_is_refused_not_the_last_kept() {
        let repeated = |text: &str| form_to_json(text.as_bytes()).unwrap_err();
        assert_eq!(repeated("amount=1.00&amount=6000.00"), FormError::Repeated("amount".into()));
        assert_eq!(
            repeated("a=1&customer[name]=A&customer%5Bname%5D=B"),
            FormError::Repeated("customer.name".into())
        );
        assert_eq!(repeated("customer=x&customer[name]=Ada"), FormError::Repeated("customer.name".into()));
        assert_eq!(repeated("customer[name]=Ada&customer=x"), FormError::Repeated("customer".into()));
        assert_eq!(repeated("amount=1&amount=6000").message(), "'amount' is given twice");
        let long = format!("{0}=1&{0}=2", "n".repeat(1000));
        assert!(repeated(&long).message().len() < 64, "a long name is cut");
        // Different names, and the same leaf under different parents, are fine.
        let v = form_to_json(b"customer[name]=Ada&merchant[name]=M&name=N").unwrap();
        assert_eq!((v["customer"]["name"].as_str(), v["name"].as_str()), (Some("Ada"), Some("N")));
    }

    #[test]
    fn forms_hold_at_most_as_many_names_as_json_values() {
        let names = |n: usize| (0..n).map(|i| format!("n{i}=")).collect::<Vec<_>>().join("&");
        let most: Map<String, Value> =
            (0..MAX_JSON_VALUES).map(|i| (format!("n{i}"), Value::from(""))).collect();
        assert_eq!(form_to_json(names(MAX_JSON_VALUES).as_bytes()), Ok(Value::Object(most)));
        assert_eq!(form_to_json(names(MAX_JSON_VALUES + 1).as_bytes()), Err(FormError::TooMany));
    }
}
