//! The router's answer as an HTTP response: its status, its JSON body (which
//! may carry a ticket of the answers' budget), and the headers every API
//! answer has.

use ach_core::api;
use http_body_util::Full;
use hyper::body::Bytes;
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::StatusCode;

use crate::answers::Ticket;

/// The body of every response achd sends (the site's pages too).
pub type ResponseBody = Full<Bytes>;

/// The router's response as HTTP.
pub fn json(response: api::Response) -> hyper::Response<ResponseBody> {
    json_with(response, None)
}

/// [`json`], the body carrying `ticket` (shrunk to the body's size).
pub fn json_with(response: api::Response, mut ticket: Option<Ticket>) -> hyper::Response<ResponseBody> {
    let status = StatusCode::from_u16(response.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let replayed = response.replayed;
    if let Some(ticket) = ticket.as_mut() {
        ticket.shrink_to(response.body.len());
    }
    let mut out = hyper::Response::new(Full::new(crate::answers::carrying(response.body, ticket)));
    *out.status_mut() = status;
    let headers = out.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(hyper::header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(hyper::header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    if replayed {
        headers.insert(api::REPLAYED_HEADER, HeaderValue::from_static("true"));
    }
    // A 401 carries no `WWW-Authenticate: Basic`: a browser would prompt for
    // the key and then send it with every request, another site's included.
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses_are_json() {
        let r = json(api::Response { status: 422, body: "{}".into(), replayed: false });
        assert_eq!(r.status(), 422);
        assert!(r.headers().get(hyper::header::WWW_AUTHENTICATE).is_none());
        let r = json(api::Response { status: 401, body: "{}".into(), replayed: false });
        assert!(r.headers().get(hyper::header::WWW_AUTHENTICATE).is_none(), "no browser prompt");
        assert_eq!(r.headers()[CONTENT_TYPE], "application/json");
    }
}
