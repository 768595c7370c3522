//! What the server refuses from a request's HTTP head before the router sees
//! it, for what only HTTP carries: a write a browser sent from another site
//! (`Origin`, `Sec-Fetch-Site`: 403) and a request that names two keys (two
//! `Authorization` headers: 400).

use ach_core::api;
use ach_core::engine::Refusal;
use ach_core::validation::{FieldError, ProblemCode};
use ach_core::AchError;
use hyper::header::{HeaderMap, AUTHORIZATION, HOST, ORIGIN};
use hyper::http::request::Parts;
use hyper::Method;

/// The refusal of this head, if any.
pub fn refusal(parts: &Parts) -> Option<api::Response> {
    let count = parts.headers.get_all(AUTHORIZATION).iter().count();
    if count > 1 {
        let why = format!("the request carries {count} Authorization headers; send one");
        return Some(refused(400, ProblemCode::InvalidFormat, why));
    }
    if is_write(&parts.method) {
        if let Some(why) = cross_site(&parts.headers, authority(parts).as_deref()) {
            return Some(refused(403, ProblemCode::CrossSite, why));
        }
    }
    None
}

/// Whether a method changes state (anything but a read).
fn is_write(method: &Method) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// The authority the client addressed: `Host` (HTTP/1.1), else the target's
/// (HTTP/2's `:authority`).
fn authority(parts: &Parts) -> Option<String> {
    let host = parts.headers.get(HOST).and_then(|h| h.to_str().ok()).map(str::to_owned);
    host.or_else(|| parts.uri.authority().map(|a| a.as_str().to_owned()))
}

/// Why a browser's request came from another site, if it did: its
/// `Sec-Fetch-Site` is `cross-site` or `same-site` (a sibling host may be
/// anyone's), or its `Origin` is `null` or another origin than the one the
/// request was sent to. A client that is not a browser sends neither header.
fn cross_site(headers: &HeaderMap, authority: Option<&str>) -> Option<String> {
    let text =
        |name: &str| headers.get(name).map(|v| String::from_utf8_lossy(v.as_bytes()).trim().to_owned());
    if let Some(site) = text("sec-fetch-site") {
        if !matches!(site.to_ascii_lowercase().as_str(), "same-origin" | "none") {
            let site = ach_core::echo::echo(&site);
            return Some(format!("a browser sent this write from another site (Sec-Fetch-Site: {site})"));
        }
    }
    let origin = text(ORIGIN.as_str())?;
    let from = origin
        .to_ascii_lowercase()
        .strip_prefix("https://")
        .map(|rest| without_default_port(rest.trim_end_matches('/')).to_owned());
    let to = authority.map(|a| without_default_port(&a.to_ascii_lowercase()).to_owned());
    if from.is_some() && from == to {
        return None;
    }
    let origin = ach_core::echo::echo(&origin);
    Some(format!("a browser sent this write from another site (Origin: {origin})"))
}

/// `host:443` as `host` (an origin leaves the default port out).
fn without_default_port(authority: &str) -> &str {
    authority.strip_suffix(":443").unwrap_or(authority)
}

fn refused(status: u16, code: ProblemCode, why: String) -> api::Response {
    api::finish(Err(Refusal::Refused {
        error: AchError::FailedToAccept,
        status,
        errors: vec![FieldError { field: String::new(), code, message: why }],
    }))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn head(method: &str, headers: &[(&str, &str)]) -> Parts {
        let mut request =
            hyper::Request::builder().method(method).uri("/transactions").header("host", "127.0.0.1:8443");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.body(()).unwrap().into_parts().0
    }

    fn refused_with(method: &str, headers: &[(&str, &str)]) -> Option<(u16, serde_json::Value)> {
        refusal(&head(method, headers)).map(|r| (r.status, serde_json::from_str(&r.body).unwrap()))
    }

    #[test]
    fn writes_from_another_site_are_refused() {
        let (status, body) = refused_with("POST", &[("origin", "https://evil.example")]).unwrap();
        assert_eq!((status, body["errors"][0]["code"].as_str()), (403, Some("cross_site")));
        assert_eq!(
            body["errors"][0]["message"],
            "a browser sent this write from another site (Origin: https://evil.example)"
        );
        for site in ["cross-site", "same-site"] {
            let (status, body) = refused_with("PUT", &[("sec-fetch-site", site)]).unwrap();
            assert_eq!(status, 403);
            assert_eq!(
                body["errors"][0]["message"],
                format!("a browser sent this write from another site (Sec-Fetch-Site: {site})")
            );
        }
        assert_eq!(refused_with("POST", &[("origin", "null")]).unwrap().0, 403);
        assert_eq!(refused_with("POST", &[("origin", "http://127.0.0.1:8443")]).unwrap().0, 403, "not https");
        assert_eq!(refused_with("DELETE", &[("origin", "https://127.0.0.1:9999")]).unwrap().0, 403);
    }

    #[test]
    fn the_same_origin_reads_and_clients_that_are_not_browsers_pass() {
        assert_eq!(refused_with("POST", &[]), None, "curl sends neither header");
        assert_eq!(refused_with("POST", &[("origin", "https://127.0.0.1:8443")]), None);
        assert_eq!(
            refused_with("POST", &[("origin", "HTTPS://127.0.0.1:8443/"), ("sec-fetch-site", "same-origin")]),
            None
        );
        assert_eq!(refused_with("POST", &[("sec-fetch-site", "none")]), None, "typed by the user");
        assert_eq!(
            refused_with("GET", &[("origin", "https://evil.example"), ("sec-fetch-site", "cross-site")]),
            None
        );
    }

    #[test]
    fn two_authorization_headers_are_refused() {
        let (status, body) =
            refused_with("GET", &[("authorization", "Basic cGtfYTo="), ("authorization", "Basic cGtfYjo=")])
                .unwrap();
        assert_eq!((status, body["errors"][0]["code"].as_str()), (400, Some("invalid_format")));
        assert_eq!(body["errors"][0]["message"], "the request carries 2 Authorization headers; send one");
        assert_eq!(refused_with("GET", &[("authorization", "Basic cGtfYTo=")]), None);
    }
}
