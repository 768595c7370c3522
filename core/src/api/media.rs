//! The media type a request's body must be sent as. A browser on another site
//! can send a form (`application/x-www-form-urlencoded`, `multipart/form-data`)
//! or `text/plain` without asking the server first, but never
//! `application/json`: so a write is read only as the one type its endpoint
//! takes, and anything else is refused (415) before the body is read.
//!
//! A host states the type it was given: the HTTPS server the `Content-Type`
//! header (the empty text when a request with a body has none); the embedded
//! hosts (C, WebAssembly, Rust) pass `None` for a body they vouch for, since no
//! other site can send through them.

use super::routes::Endpoint;
use crate::engine::Refusal;
use crate::validation::{FieldError, ProblemCode};
use crate::AchError;

/// The types an endpoint's body may be sent as, and how a client sends a
/// body of them with curl.
fn accepted(endpoint: Endpoint) -> (&'static [&'static str], &'static str) {
    match endpoint {
        Endpoint::AdminRouting | Endpoint::AdminReturnFiles => (
            &["text/plain", "application/octet-stream"],
            "send the file as text/plain (curl: --data-binary @FILE -H 'Content-Type: text/plain')",
        ),
        _ => (
            &["application/json"],
            "send JSON as application/json (curl: -H 'Content-Type: application/json')",
        ),
    }
}

/// The media type of a `Content-Type` value: before any parameter, trimmed,
/// lower case (`Application/JSON; charset=utf-8` → `application/json`).
fn media_type(content_type: &str) -> String {
    content_type.split(';').next().unwrap_or_default().trim().to_ascii_lowercase()
}

/// Refuse a request to `endpoint` by `method` whose body was sent as another
/// type than the endpoint takes: 415, message 10, problem
/// `unsupported_media_type` naming the type and how to send the right one.
/// A read (`GET`, `HEAD`) takes no body and is never refused here.
pub(super) fn check(endpoint: Endpoint, method: &str, content_type: Option<&str>) -> Result<(), Refusal> {
    let Some(content_type) = content_type else { return Ok(()) };
    if method.eq_ignore_ascii_case("GET") || method.eq_ignore_ascii_case("HEAD") {
        return Ok(());
    }
    let sent = media_type(content_type);
    let (types, how) = accepted(endpoint);
    if types.contains(&sent.as_str()) {
        return Ok(());
    }
    let named = if sent.is_empty() {
        "the body was sent without a Content-Type".to_owned()
    } else {
        format!("the body was sent as {}", crate::echo::echo(&sent))
    };
    Err(Refusal::Refused {
        error: AchError::FailedToAccept,
        status: 415,
        errors: vec![FieldError {
            field: String::new(),
            code: ProblemCode::UnsupportedMediaType,
            message: format!("{named}; {how}"),
        }],
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn message(endpoint: Endpoint, method: &str, content_type: Option<&str>) -> Option<String> {
        check(endpoint, method, content_type).err().map(|r| {
            assert_eq!((r.status(), r.errors()[0].code), (415, ProblemCode::UnsupportedMediaType));
            r.errors()[0].message.clone()
        })
    }

    #[test]
    fn a_write_is_read_only_as_its_endpoints_type() {
        let create = Endpoint::CreateTransaction;
        assert_eq!(message(create, "POST", Some("application/json")), None);
        assert_eq!(message(create, "POST", Some(" Application/JSON ; charset=utf-8")), None);
        assert_eq!(message(create, "POST", None), None, "an embedded host vouches for its body");
        for forged in ["application/x-www-form-urlencoded", "text/plain", "multipart/form-data; boundary=x"] {
            let why = message(create, "POST", Some(forged)).unwrap();
            let sent = forged.split(';').next().unwrap();
            assert_eq!(
                why,
                format!(
                    "the body was sent as {sent}; send JSON as application/json (curl: -H 'Content-Type: application/json')"
                )
            );
        }
        assert_eq!(
            message(Endpoint::Void, "PUT", Some("")).unwrap(),
            "the body was sent without a Content-Type; send JSON as application/json (curl: -H 'Content-Type: application/json')"
        );
        assert_eq!(message(Endpoint::StatusChanges, "GET", Some("text/plain")), None, "a read");
    }

    #[test]
    fn files_are_sent_as_text_or_octets() {
        for endpoint in [Endpoint::AdminRouting, Endpoint::AdminReturnFiles] {
            assert_eq!(message(endpoint, "POST", Some("text/plain; charset=us-ascii")), None);
            assert_eq!(message(endpoint, "POST", Some("application/octet-stream")), None);
            assert_eq!(
                message(endpoint, "POST", Some("application/json")).unwrap(),
                "the body was sent as application/json; send the file as text/plain (curl: --data-binary @FILE -H 'Content-Type: text/plain')"
            );
        }
    }
}
