//! The request router: one function from an HTTP request to an HTTP status and
//! the JSON body exactly as the spec shows it. The HTTPS server, the C library and
//! the browser module all call it, so the three answer byte for byte alike.
//!
//! Routing is split in two so a server can group commits: [`plan`] does
//! everything that needs no write (matching, size, authentication, parsing, feed
//! reads) and either answers or names the engine operation to run; [`finish`]
//! renders the operation's result. [`route`] is the two together.
//!
//! A host that receives the body as a stream splits [`plan`] once more: [`admit`]
//! answers from the head alone (the path, the key, whether that key may use the
//! endpoint, and the endpoint's body limit), before the body is read; then
//! [`plan_admitted`] with the body. Every JSON text the router reads is first
//! held to the caps of [`crate::validation::json_bounds`].

mod admin;
mod admit;
mod input;
mod list_query;
mod media;
mod plan;
mod render;
mod request;
mod routes;

pub use admin::CASH_LETTER_CONTENT;
pub use admit::{Admitted, SMALL_BODY_BYTES};
pub use render::{Response, REPLAYED_HEADER};
pub use request::{form_to_json, FormError, Request, MAX_BODY_BYTES, MAX_FORM_DEPTH};

use crate::engine::{Caller, Engine, Outcome, PreparedOperation, Refusal};
use crate::validation::ProblemCode;
use crate::AchError;

/// What the router decided for a request.
#[derive(Debug)]
pub enum Plan {
    /// The answer is known (an error, a feed page, a lookup).
    Done(Response),
    /// Run this prepared operation for this caller
    /// ([`Engine::execute_prepared`], or a host's group commit), then
    /// [`finish`]. An authentication still to be confirmed is confirmed in
    /// its write transaction.
    Execute {
        /// Who asked.
        caller: Caller,
        /// What to run, its body validated.
        prepared: Box<PreparedOperation>,
    },
}

/// Route a request completely: plan it, and run its operation, if any, in
/// one engine call (a group commit shared with the host's other threads).
pub fn route(engine: &Engine, request: &Request) -> Response {
    let planned = engine.execute_planned(|| match plan(engine, request) {
        Plan::Done(response) => Err(response),
        Plan::Execute { caller, prepared } => Ok((caller, *prepared)),
    });
    match planned {
        Ok(result) => finish(result),
        Err(response) => response,
    }
}

/// Route a request given in its JSON form (`{"method","path","query","api_key",
/// "body"}`) and answer the JSON form of the response (`{"status","body"}`): what
/// the C library and the browser module pass.
pub fn route_json(engine: &Engine, request_json: &str) -> String {
    let response = match Request::from_json(request_json) {
        Ok(request) => route(engine, &request),
        Err(why) => bad_request(&why),
    };
    response.to_json()
}

/// Whether some endpoint of the API has this path (for any method): a host that
/// also serves files serves them only where the API has nothing.
pub fn is_api_path(path: &str) -> bool {
    routes::is_api_path(path)
}

/// The pattern of the endpoint a request goes to (`/transactions/{}`, each
/// path parameter a `{}`), or `None` when it goes to none: what a host names
/// the endpoint by where no identifier may appear (metrics).
pub fn route_pattern(method: &str, path: &str) -> Option<&'static str> {
    routes::pattern(method, path)
}

/// Whether this path belongs to the operator plane (`/admin` and below): what a
/// host that serves the operator plane on its own address routes there.
pub fn is_operator_path(path: &str) -> bool {
    let path = path.split_once('?').map_or(path, |(p, _)| p);
    path == "/admin" || path.starts_with("/admin/")
}

/// The answer for a path with no endpoint (404, field `path`): what a host
/// answers for a path of the other plane, exactly as for one that does not exist.
pub fn unknown_endpoint(method: &str, path: &str) -> Response {
    render::refusal(&routes::unknown_endpoint(method, path))
}

/// The methods the API accepts at this path: what an HTTP host puts in the
/// `Allow` header of a 405.
pub fn allowed_methods(path: &str) -> Vec<&'static str> {
    routes::allowed_methods(path)
}

/// Render an operation's result.
pub fn finish(result: Result<Outcome, Refusal>) -> Response {
    match result {
        Ok(outcome) => render::outcome(&outcome),
        Err(refusal) => render::refusal(&refusal),
    }
}

/// Decide what a request needs: an answer now, or an operation to run.
pub fn plan(engine: &Engine, request: &Request) -> Plan {
    match plan::plan(engine, request) {
        Ok(plan) => plan,
        Err(refusal) => Plan::Done(render::refusal(&refusal)),
    }
}

/// Admit a request on its head alone, before its body is read (the body given,
/// if any, is not looked at): the router's answer when the path, method or key
/// already decide it (404, 405, 401), else what [`plan_admitted`] needs and the
/// largest body the endpoint takes ([`Admitted::body_limit`]).
pub fn admit(engine: &Engine, request: &Request) -> Result<Admitted, Response> {
    admit::admit(engine, request).map_err(|refusal| render::refusal(&refusal))
}

/// [`admit`] from memory alone, never waiting on storage (for an async
/// worker): `None` when the key must be looked up in the store, which
/// [`admit`] then does on a thread that may block.
pub fn admit_remembered(engine: &Engine, request: &Request) -> Option<Result<Admitted, Response>> {
    admit::admit_remembered(engine, request)
        .map(|admitted| admitted.map_err(|refusal| render::refusal(&refusal)))
}

/// [`plan`] for a request [`admit`]ted on its head, now with its body: the same
/// answer `plan` gives for that request.
pub fn plan_admitted(engine: &Engine, admitted: Admitted, request: &Request) -> Plan {
    match plan::plan_admitted(engine, admitted, request) {
        Ok(plan) => plan,
        Err(refusal) => Plan::Done(render::refusal(&refusal)),
    }
}

/// The longest parser error shown back to a client, in characters.
const MAX_DETAIL: usize = 512;

/// A parser's error as a field problem's message. Serde's errors quote the
/// client's text (an unknown member's name, a refused value), so the message is
/// cut to [`MAX_DETAIL`] characters: a 1 MB name is never reflected whole.
pub(crate) fn detail(text: String) -> String {
    match text.char_indices().nth(MAX_DETAIL) {
        None => text,
        Some((cut, _)) => format!("{}...", &text[..cut]),
    }
}

/// A 400 answer: the request itself could not be read.
pub(crate) fn bad_request(why: &str) -> Response {
    let f = Refusal::Refused {
        error: AchError::FailedToAccept,
        status: 400,
        errors: vec![crate::validation::FieldError {
            field: String::new(),
            code: ProblemCode::InvalidJson,
            message: why.to_owned(),
        }],
    };
    render::refusal(&f)
}

#[cfg(test)]
mod parse_once_tests;
