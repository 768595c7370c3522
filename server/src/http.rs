//! HTTP ↔ router translation. Every API answer comes from `ach_core::api`: this
//! module only turns an HTTP request into an [`api::Request`] (method, path, raw
//! query, the Basic-auth user name as the API key, `Idempotency-Key`,
//! `Content-Type`, body) and an [`api::Response`] into HTTP (status, JSON body,
//! `Content-Type: application/json`).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ach_core::api::{self, Plan};
use ach_core::engine::{Caller, Engine, PreparedOperation, Refusal};
use ach_core::validation::{FieldError, ProblemCode};
use ach_core::AchError;
use base64::Engine as _;
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::header::{HeaderMap, HeaderName, HeaderValue, AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE};
use hyper::{Method, StatusCode};
use tracing::info;

use crate::answers::{Answers, Refused, Ticket};
use crate::body::{self, BodyRead, LargeBodies, LargePermit};
use crate::json_answer::{json, json_with, ResponseBody};
use crate::logging;
use crate::rate::RequestRates;
use crate::web::Site;
use crate::writer::Writer;

/// How long a request's body may take to arrive (and a refused one's rest to be
/// read and dropped).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// What every request handler shares.
pub struct App {
    /// The engine (the router's reads run on it directly).
    pub engine: Arc<Engine>,
    /// The group-commit writer (every operation that writes).
    pub writer: Writer,
    /// Static files served at `/` (`--web DIR`), if any.
    pub site: Option<Site>,
    /// Whether this listener serves the operator plane (`/admin/*` only) rather
    /// than the public API (everything else); the other plane's paths are 404.
    pub operator_plane: bool,
    /// The operator key file, rewritten after an operator key rotation.
    pub operator_key_file: Option<std::path::PathBuf>,
    /// The permits a large body is read with (shared by both planes).
    pub large_bodies: Arc<LargeBodies>,
    /// The request buckets of the key holders.
    pub rates: Arc<RequestRates>,
    /// The budget of large answers held at once (the public plane's).
    pub answers: Arc<Answers>,
    /// The figures `GET /metrics` answers (shared by both planes).
    pub metrics: crate::metrics::Shared,
}

/// Answer one request from `client` and log it (client address, method, path
/// with identifiers only, status, caller kind and id, latency; never the key,
/// the query, other headers or the body).
pub async fn handle(
    app: Arc<App>,
    client: SocketAddr,
    request: hyper::Request<Incoming>,
) -> hyper::Response<ResponseBody> {
    let started = Instant::now();
    let method = logging::method(request.method());
    let path = logging::path(request.uri().path());
    let route = match request.uri().path() {
        METRICS_PATH if app.operator_plane => Some(METRICS_PATH),
        path if app.operator_plane && crate::console::is_console_path(path) => Some(crate::console::ROUTE),
        path => api::route_pattern(method, path),
    };
    let mut admitted_caller = None;
    let response = respond(&app, request, &mut admitted_caller).await;
    let took = started.elapsed();
    let latency_us = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
    let mut response = response;
    app.metrics.request(app.operator_plane, route, method, response.status().as_u16(), took);
    // Browsers reach this address over HTTPS only, for a year.
    response.headers_mut().insert(hyper::header::STRICT_TRANSPORT_SECURITY, HeaderValue::from_static(HSTS));
    let status = response.status();
    // The caller the router admitted; none for an answer given before
    // admission (a path the API lacks) or a key refused after it (a
    // revocation confirmed in its write transaction).
    let who = admitted_caller.filter(|_| status != StatusCode::UNAUTHORIZED);
    let (caller, caller_id) = logging::caller(who.as_ref());
    info!(
        client = %client,
        method,
        path = %path,
        status = status.as_u16(),
        caller,
        caller_id,
        latency_us,
        "request"
    );
    response
}

/// `Strict-Transport-Security` on every answer.
pub const HSTS: &str = "max-age=31536000";

/// Answer `request`; `caller` gets the caller the router admitted it for.
///
/// The steps: the plane and the router admit the request on its head, the body
/// is received up to the endpoint's limit, the request is planned (and an
/// operation prepared), and an operation runs on the writer.
async fn respond(
    app: &Arc<App>,
    request: hyper::Request<Incoming>,
    caller: &mut Option<Caller>,
) -> hyper::Response<ResponseBody> {
    let (parts, mut body) = request.into_parts();
    let declared = declared_length(&parts.headers);
    if app.operator_plane && parts.uri.path() == METRICS_PATH {
        discard(&mut body, declared).await;
        return metrics(app, &parts.method).await;
    }
    // The console's files need no key: they hold nothing but the page; its
    // calls to `/admin/*` carry the operator key.
    if app.operator_plane && crate::console::is_console_path(parts.uri.path()) {
        discard(&mut body, declared).await;
        return crate::console::answer(&parts.method, parts.uri.path());
    }
    let head = to_api_request(&parts, !hyper::body::Body::is_end_stream(&body), Vec::new());
    // Each plane answers only its own paths: the other's are unknown here.
    if api::is_operator_path(parts.uri.path()) != app.operator_plane {
        discard(&mut body, declared).await;
        return json(api::unknown_endpoint(parts.method.as_str(), parts.uri.path()));
    }
    if let Some(refused) = crate::guard::refusal(&parts) {
        discard(&mut body, declared).await;
        return json(refused);
    }
    // The router admits the request on its head before a byte of the body is
    // kept: an unknown path, a missing or wrong key, or a key that may not use
    // the endpoint costs no memory for its body.
    let admitted = match admit(app, &head).await {
        Ok(admitted) => admitted,
        Err(response) => {
            discard(&mut body, declared).await;
            return answer(app, &parts, response, None).await;
        }
    };
    *caller = admitted.caller().cloned();
    if let Err(wait) = app.rates.take(admitted.caller(), admitted.request_rate()) {
        crate::logging::throttled_warning("requests over the caller's rate refused (429)", admitted.caller());
        discard(&mut body, declared).await;
        return too_many(wait);
    }
    // A large answer is built only within the budget (the operator plane's
    // own connections bound its answers).
    let ticket = match admitted.largest_answer().filter(|_| !app.operator_plane) {
        None => None,
        Some(largest) => match app.answers.reserve(admitted.caller(), largest).await {
            Ok(ticket) => Some(ticket),
            Err(refused) => {
                discard(&mut body, declared).await;
                return answers_refused(refused, admitted.caller());
            }
        },
    };
    let (body, _permit) = match receive(app, &admitted, &mut body, declared).await {
        Ok(received) => received,
        Err(response) => return response,
    };
    // Planning a refusal of a caller still to be confirmed reads the store.
    let short = is_short(&parts.method, parts.uri.path(), body.len()) && !admitted.unconfirmed();
    let request = api::Request { body, ..head };
    match plan(app, admitted, request, short).await {
        Ok(Plan::Done(response)) => answer(app, &parts, response, ticket).await,
        Ok(Plan::Execute { caller, prepared }) => execute(app, caller, *prepared).await,
        Err(response) => response,
    }
}

/// Admit `head` from what the engine remembers (no storage: this is an async
/// worker), else with the key looked up in the store on a blocking thread.
async fn admit(app: &App, head: &api::Request) -> Result<api::Admitted, api::Response> {
    if let Some(admitted) = api::admit_remembered(&app.engine, head) {
        return admitted;
    }
    let engine = Arc::clone(&app.engine);
    let head = head.clone();
    tokio::task::spawn_blocking(move || api::admit(&engine, &head))
        .await
        .unwrap_or_else(|_| Err(api::finish(Err(Refusal::refused(AchError::SystemUnable)))))
}

/// Where the operator plane answers its figures (no key: the plane is the
/// operator's own address, and the figures hold no identifier or secret).
pub const METRICS_PATH: &str = "/metrics";

/// `GET /metrics`: the figures as text, what the store holds read on a
/// blocking thread; any other method is 405.
async fn metrics(app: &App, method: &Method) -> hyper::Response<ResponseBody> {
    if method != Method::GET {
        let mut refused = json(api::finish(Err(Refusal::problem_with_status(
            AchError::FailedToAccept,
            405,
            "method",
            ProblemCode::InvalidValue,
            format!("{} is not allowed here; use GET", logging::method(method)),
        ))));
        refused.headers_mut().insert(hyper::header::ALLOW, HeaderValue::from_static("GET"));
        return refused;
    }
    let (engine, figures) = (Arc::clone(&app.engine), Arc::clone(&app.metrics));
    match tokio::task::spawn_blocking(move || figures.render(&engine)).await {
        Ok(Ok(text)) => {
            let mut out = hyper::Response::new(Full::new(Bytes::from(text)));
            let headers = out.headers_mut();
            headers.insert(CONTENT_TYPE, HeaderValue::from_static(crate::metrics::CONTENT_TYPE));
            headers.insert(hyper::header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            out
        }
        Ok(Err(why)) => {
            tracing::warn!(error = %why, "metrics could not be read");
            json(api::finish(Err(Refusal::refused(AchError::SystemUnable))))
        }
        Err(_) => json(api::finish(Err(Refusal::refused(AchError::SystemUnable)))),
    }
}

/// Read and drop what is left of a refused request's body (for at most
/// [`REQUEST_TIMEOUT`]), so the client, still sending, hears the answer.
async fn discard(body: &mut Incoming, declared: Option<u64>) {
    let _ = tokio::time::timeout(REQUEST_TIMEOUT, body::discard(body, declared)).await;
}

/// The admitted request's body, whole, with the large-body permit it needed; or
/// the answer when it is too large, no permit came free, or it did not arrive
/// (in time).
async fn receive<'a>(
    app: &'a App,
    admitted: &api::Admitted,
    body: &mut Incoming,
    declared: Option<u64>,
) -> Result<(Vec<u8>, Option<LargePermit<'a>>), hyper::Response<ResponseBody>> {
    let read = body::read(body, declared, admitted.body_limit(), admitted.caller(), &app.large_bodies);
    match tokio::time::timeout(REQUEST_TIMEOUT, read).await {
        Ok(Ok(BodyRead::Whole(whole, permit))) => Ok((whole, permit)),
        Ok(Ok(BodyRead::TooLarge)) => Err(json(admitted.too_large())),
        Ok(Ok(BodyRead::Busy)) => {
            let why = "a large body turned away: the partner's share or every permit is taken";
            crate::logging::throttled_warning(why, admitted.caller());
            discard(body, declared).await;
            Err(busy())
        }
        Ok(Ok(BodyRead::TooSlow)) => {
            crate::logging::throttled_warning(
                "a body cut: it arrived slower than the minimum rate",
                admitted.caller(),
            );
            let why = format!("the body arrived slower than {} KiB/s", body::MIN_BYTES_PER_SECOND / 1024);
            Err(json(refusal(408, ProblemCode::OverLimit, &why)))
        }
        Ok(Err(_)) => Err(json(refusal(400, ProblemCode::InvalidJson, "the body could not be read"))),
        Err(_) => {
            let why = format!("the request was not received within {} s", REQUEST_TIMEOUT.as_secs());
            Err(json(refusal(408, ProblemCode::OverLimit, &why)))
        }
    }
}

/// The router's plan for an admitted request: its answer, or its operation
/// prepared for the writer.
///
/// The router may read a feed page, and an operation to run is prepared (its
/// body validated, its fingerprints made) here, in parallel, so the one writer
/// thread only does what needs the write transaction. A `short` request (a
/// write of a few kilobytes whose planning touches no storage: tens of
/// microseconds) is planned on the async thread itself; anything that may
/// read the store or take milliseconds (a feed page, a routing directory
/// upload, a large body, a confirmation) on a blocking thread, so that it
/// never holds up other connections. The hop to a blocking thread and back
/// costs more than planning a create.
async fn plan(
    app: &App,
    admitted: api::Admitted,
    request: api::Request,
    short: bool,
) -> Result<Plan, hyper::Response<ResponseBody>> {
    let engine = Arc::clone(&app.engine);
    let plan = move || api::plan_admitted(&engine, admitted, &request);
    if short {
        return Ok(plan());
    }
    tokio::task::spawn_blocking(plan)
        .await
        .map_err(|_| json(api::finish(Err(Refusal::refused(AchError::SystemUnable)))))
}

/// Run a prepared operation on the writer and answer its outcome (after an
/// operator's operation, what it changed for the operator key file).
async fn execute(app: &App, caller: Caller, prepared: PreparedOperation) -> hyper::Response<ResponseBody> {
    let operator = caller == Caller::Operator;
    let result = app.writer.execute(caller, prepared).await;
    if operator {
        crate::operator::audit(&result);
        if let Some((file, key)) = crate::operator::rotated_key(&result, app.operator_key_file.as_deref()) {
            // The file is rewritten and synced before the answer, off the async workers.
            let _ = tokio::task::spawn_blocking(move || crate::operator::save(&file, &key)).await;
        }
    }
    json(api::finish(result))
}

/// The router's answer as HTTP: a page of the site where the API has no such
/// path, the `Allow` header on a 405; the answer carries `ticket`, its place
/// in the budget of large answers, until it is written.
async fn answer(
    app: &App,
    parts: &hyper::http::request::Parts,
    response: api::Response,
    ticket: Option<Ticket>,
) -> hyper::Response<ResponseBody> {
    if (parts.method == Method::GET || parts.method == Method::HEAD)
        && response.status == 404
        && !api::is_api_path(parts.uri.path())
    {
        if let Some(page) = crate::web::page(app.site.as_ref(), parts.uri.path()).await {
            return page;
        }
    }
    if parts.method == Method::GET && response.status == 200 {
        if let Some(id) = parts.uri.path().strip_prefix("/admin/image-cash-letters/") {
            if let Some(bytes) = cash_letter_bytes(&response.body) {
                return octet_stream(id, bytes);
            }
        }
    }
    let method_not_allowed = response.status == 405;
    let mut out = json_with(response, ticket);
    if method_not_allowed {
        // RFC 9110: a 405 names the methods the resource does accept.
        let allow = api::allowed_methods(parts.uri.path()).join(", ");
        if let Ok(value) = HeaderValue::from_str(&allow) {
            out.headers_mut().insert(hyper::header::ALLOW, value);
        }
    }
    out
}

/// An image cash letter's bytes, from the router's JSON answer (which
/// carries them in base64 for hosts that speak JSON only).
fn cash_letter_bytes(body: &str) -> Option<Vec<u8>> {
    let v: serde_json::Value = serde_json::from_str(body).ok()?;
    let text = v.get("payload")?.get(api::CASH_LETTER_CONTENT)?.as_str()?;
    base64::engine::general_purpose::STANDARD.decode(text).ok()
}

/// A file's bytes as `application/octet-stream`, named `<id>.x937`.
fn octet_stream(id: &str, bytes: Vec<u8>) -> hyper::Response<ResponseBody> {
    let mut out = hyper::Response::new(Full::new(Bytes::from(bytes)));
    let headers = out.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/octet-stream"));
    headers.insert(hyper::header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(hyper::header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    // The id is the router's, found: letters, digits, `_` and `-` only.
    if id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') {
        if let Ok(value) = HeaderValue::from_str(&format!("attachment; filename=\"{id}.x937\"")) {
            headers.insert(hyper::header::CONTENT_DISPOSITION, value);
        }
    }
    out
}

/// 503, message 1, `Retry-After: 1`: the caller's share of large-body
/// permits is taken, or every permit stayed taken for
/// [`body::LARGE_BODY_WAIT`].
fn busy() -> hyper::Response<ResponseBody> {
    let why =
        "too many large bodies are being received at once (for this partner, or in all); retry in a second";
    retry_later(503, ProblemCode::OverLimit, why, 1)
}

/// The answer to a large read not let through: 429 when its holder has its
/// reads in flight (wait for one to be taken), 503 when the budget is full;
/// `Retry-After: 1` either way.
fn answers_refused(refused: Refused, caller: Option<&Caller>) -> hyper::Response<ResponseBody> {
    crate::logging::throttled_warning("a large read refused: answers not yet taken", caller);
    match refused {
        Refused::HolderBusy => {
            let why = format!(
                "this key has {} large answers (feed pages) not yet taken; read them, then ask again",
                crate::answers::READS_PER_HOLDER
            );
            retry_later(429, ProblemCode::RateLimited, &why, 1)
        }
        Refused::Full => {
            let why = "too many large answers are waiting to be read; retry in a second";
            retry_later(503, ProblemCode::OverLimit, why, 1)
        }
    }
}

/// 429, message 1, `Retry-After` (whole seconds): the caller's bucket is
/// empty for `wait`.
fn too_many(wait: Duration) -> hyper::Response<ResponseBody> {
    let why = "too many requests for this key's rate; retry after the seconds Retry-After gives";
    retry_later(429, ProblemCode::RateLimited, why, crate::rate::retry_after(wait))
}

/// A refusal to come back later: `status`, message 1 with one problem `code`
/// saying `why`, and `Retry-After: seconds`.
fn retry_later(status: u16, code: ProblemCode, why: &str, seconds: u64) -> hyper::Response<ResponseBody> {
    let failure = Refusal::Refused {
        error: AchError::SystemUnable,
        status,
        errors: vec![FieldError { field: String::new(), code, message: why.to_owned() }],
    };
    let mut out = json(api::finish(Err(failure)));
    out.headers_mut().insert(hyper::header::RETRY_AFTER, HeaderValue::from(seconds));
    out
}

/// Bodies up to this size are planned on the async thread (a transaction with
/// check images is larger and goes to a blocking thread).
const SHORT_BODY: usize = 4 * 1024;

/// Whether planning this request takes microseconds, not milliseconds: a write
/// of the API (not a feed read, not an operator's directory upload) with a
/// small body.
fn is_short(method: &Method, path: &str, body: usize) -> bool {
    method != Method::GET && method != Method::HEAD && !path.starts_with("/admin/") && body <= SHORT_BODY
}

/// A refusal rendered by the router's own renderer (message 10, one problem).
fn refusal(status: u16, code: ProblemCode, why: &str) -> api::Response {
    api::finish(Err(Refusal::Refused {
        error: AchError::FailedToAccept,
        status,
        errors: vec![FieldError { field: String::new(), code, message: why.to_owned() }],
    }))
}

/// The router's request for these HTTP parts and body. Its content type is
/// the `Content-Type` header, or the empty text when a request that may
/// carry a body (`with_body`) has none: an HTTP host states what it was sent.
pub fn to_api_request(parts: &hyper::http::request::Parts, with_body: bool, body: Vec<u8>) -> api::Request {
    let content_type = text(&parts.headers, &CONTENT_TYPE).or_else(|| with_body.then(String::new));
    api::Request {
        method: parts.method.as_str().to_owned(),
        path: parts.uri.path().to_owned(),
        query: parts.uri.query().unwrap_or_default().to_owned(),
        api_key: basic_user(&parts.headers),
        idempotency_key: text(&parts.headers, &HeaderName::from_static("idempotency-key")),
        content_type,
        body,
    }
}

/// A header's value as text (bytes that are not UTF-8 become U+FFFD).
fn text(headers: &HeaderMap, name: &HeaderName) -> Option<String> {
    headers.get(name).map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
}

/// The user name of `Authorization: Basic base64(user:password)`: the API key (the
/// password is ignored). `None` for no header, another scheme, or bad base64.
pub fn basic_user(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(AUTHORIZATION)?.to_str().ok()?.trim();
    let (scheme, credentials) = value.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
    )
    .decode(credentials.trim())
    .ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let user = text.split_once(':').map_or(text.as_str(), |(user, _)| user);
    Some(user.to_owned())
}

fn declared_length(headers: &HeaderMap) -> Option<u64> {
    headers.get(CONTENT_LENGTH)?.to_str().ok()?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn only_small_api_writes_are_planned_on_the_async_threads() {
        assert!(is_short(&Method::POST, "/transactions", 330));
        assert!(is_short(&Method::PUT, "/transactions/txn_x/void", 40));
        assert!(is_short(&Method::DELETE, "/customers/cus_x", 0));
        assert!(!is_short(&Method::POST, "/transactions", SHORT_BODY + 1), "check images");
        assert!(!is_short(&Method::GET, "/status-changes/0", 0), "a feed page");
        assert!(!is_short(&Method::GET, "/events", 0));
        assert!(!is_short(&Method::POST, "/admin/routing", 10), "a directory upload");
        assert!(!is_short(&Method::POST, "/admin/clock", 10), "runs cut-offs");
    }

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.append(HeaderName::from_bytes(k.as_bytes()).unwrap(), HeaderValue::from_str(v).unwrap());
        }
        map
    }

    #[test]
    fn basic_auth_user_name_is_the_key() {
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        let h = |v: String| headers(&[("authorization", &v)]);
        assert_eq!(basic_user(&h(format!("Basic {}", b64("pk_abc:")))), Some("pk_abc".into()));
        assert_eq!(basic_user(&h(format!("basic {}", b64("pk_abc:ignored")))), Some("pk_abc".into()));
        assert_eq!(basic_user(&h(format!("Basic {}", b64("pk_abc")))), Some("pk_abc".into()));
        let unpadded = b64("pk_ab:").trim_end_matches('=').to_owned();
        assert_eq!(basic_user(&h(format!("Basic {unpadded}"))), Some("pk_ab".into()));
        assert_eq!(basic_user(&h(format!("Bearer {}", b64("pk_abc:")))), None);
        assert_eq!(basic_user(&h("Basic !!!".into())), None);
        assert_eq!(basic_user(&HeaderMap::new()), None);
    }

    #[test]
    fn requests_translate_verbatim() {
        let (mut parts, ()) = hyper::Request::builder()
            .method("PUT")
            .uri("/transactions/txn_1/void?partner_id=par_x&a=%20b")
            .header("idempotency-key", "k-1")
            .header("content-type", "application/x-www-form-urlencoded")
            .body(())
            .unwrap()
            .into_parts();
        parts.headers.extend(headers(&[("authorization", "Basic cGtfMTo=")]));
        let r = to_api_request(&parts, true, b"x=1".to_vec());
        assert_eq!(r.method, "PUT");
        assert_eq!(r.path, "/transactions/txn_1/void");
        assert_eq!(r.query, "partner_id=par_x&a=%20b");
        assert_eq!(r.api_key.as_deref(), Some("pk_1"));
        assert_eq!(r.idempotency_key.as_deref(), Some("k-1"));
        assert_eq!(r.content_type.as_deref(), Some("application/x-www-form-urlencoded"));
        assert_eq!(r.body, b"x=1");
        let (bare, ()) = hyper::Request::builder().method("POST").uri("/x").body(()).unwrap().into_parts();
        assert_eq!(
            to_api_request(&bare, true, Vec::new()).content_type.as_deref(),
            Some(""),
            "a body, no type"
        );
        assert_eq!(to_api_request(&bare, false, Vec::new()).content_type, None, "no body at all");
    }

    #[test]
    fn too_many_large_bodies_is_message_1_with_retry_after() {
        let r = busy();
        assert_eq!(r.status(), 503);
        assert_eq!(r.headers()[hyper::header::RETRY_AFTER], "1");
    }
}
