//! Admission: what the router decides from a request's head alone — the method,
//! the path, the query and the API key — before any body is read: the endpoint,
//! who is asking and whether that caller may use the endpoint at all, and the
//! largest body the endpoint takes. A host that receives bodies as a stream (the
//! HTTPS server) asks first, so an unknown path, a missing or wrong key, or a
//! key of the wrong kind is answered without reading a byte of the body, and a
//! large body is read only where one belongs.

use std::borrow::Cow;

use super::media;
use super::request::{Request, MAX_BODY_BYTES};
use super::routes::{self, Endpoint};
use super::{render, Response};
use crate::engine::{may_call, Admission, Caller, Engine, Refusal, Role, Unconfirmed};
use crate::validation::{FieldError, ProblemCode};
use crate::AchError;

/// Largest body of an endpoint that takes no check image and no file (a
/// customer, a void, the operator's JSON requests, every read): the largest of
/// them is under 4 KiB.
pub const SMALL_BODY_BYTES: usize = 64 * 1024;

/// The largest feed page, rendered: 10,000 events of about 320 bytes.
const LARGEST_FEED_PAGE: usize = 4 * 1024 * 1024;

/// The largest page of a list, rendered: 100 transactions of at most 4 KiB.
const LARGEST_LIST_PAGE: usize = 512 * 1024;

/// The OpenAPI document, with room to grow.
const LARGEST_OPENAPI: usize = 512 * 1024;

/// Who may call an endpoint (decided by `engine/credentials/authorize.rs`).
fn role(endpoint: Endpoint) -> Role {
    match endpoint {
        Endpoint::OpenApi | Endpoint::Health | Endpoint::Ready => Role::Anyone,
        Endpoint::Institution | Endpoint::Categories => Role::AnyKey,
        Endpoint::Events => Role::Merchant,
        Endpoint::Transaction
        | Endpoint::Transactions
        | Endpoint::Merchant
        | Endpoint::Merchants
        | Endpoint::Customer => Role::Reader,
        e if e.is_admin() => Role::Operator,
        _ => Role::Partner,
    }
}

/// The largest body an endpoint takes: [`MAX_BODY_BYTES`] where check images or
/// files come in (a transaction, a merchant application, a return file, the
/// routing directory), [`SMALL_BODY_BYTES`] everywhere else.
fn body_limit(endpoint: Endpoint) -> usize {
    match endpoint {
        Endpoint::CreateTransaction
        | Endpoint::SubmitMerchant
        | Endpoint::AdminReturnFiles
        | Endpoint::AdminRouting => MAX_BODY_BYTES,
        _ => SMALL_BODY_BYTES,
    }
}

/// A request admitted on its head: its endpoint, its caller, and the largest
/// body it may carry. [`super::plan_admitted`] finishes it once the body is in.
#[derive(Debug, Clone)]
pub struct Admitted {
    pub(super) endpoint: Endpoint,
    pub(super) params: Vec<String>,
    /// `None` for an endpoint that needs no key.
    pub(super) caller: Option<Caller>,
    /// The caller's authentication, if answered from memory and still to be
    /// confirmed ([`Engine::admit_key`]).
    pub(super) unconfirmed: Option<Unconfirmed>,
    /// The request rate the operator set for the caller's partner, if any.
    pub(super) request_rate: Option<u32>,
}

impl Admitted {
    /// Who is asking (`None` for an endpoint that needs no key).
    pub fn caller(&self) -> Option<&Caller> {
        self.caller.as_ref()
    }

    /// Whether the caller's authentication is still to be confirmed in the
    /// store (a shared store's remembered key): planning a request that is
    /// refused then reads the store ([`Engine::confirm`]).
    pub fn unconfirmed(&self) -> bool {
        self.unconfirmed.is_some()
    }

    /// The requests per second the operator set for the caller's partner
    /// (`None`: none set, or no partner: the host's default holds).
    pub fn request_rate(&self) -> Option<u32> {
        self.request_rate
    }

    /// The largest answer this request can get, for an endpoint whose answer
    /// may be large (a feed page, the OpenAPI document); `None` for the
    /// others, whose answers are a few kilobytes.
    pub fn largest_answer(&self) -> Option<usize> {
        match self.endpoint {
            Endpoint::Events | Endpoint::StatusChanges => Some(LARGEST_FEED_PAGE),
            Endpoint::Transactions
            | Endpoint::Merchants
            | Endpoint::AdminPartnerList
            | Endpoint::AdminPartnerMerchants => Some(LARGEST_LIST_PAGE),
            Endpoint::OpenApi => Some(LARGEST_OPENAPI),
            _ => None,
        }
    }

    /// The largest body this request may carry, in bytes.
    pub fn body_limit(&self) -> usize {
        body_limit(self.endpoint)
    }

    /// Whether the body may be larger than [`SMALL_BODY_BYTES`] (a host bounds
    /// how many such bodies it holds at once).
    pub fn takes_large_body(&self) -> bool {
        self.body_limit() > SMALL_BODY_BYTES
    }

    /// The answer to a body over [`Admitted::body_limit`]: 413, message 10.
    pub fn too_large(&self) -> Response {
        render::refusal(&too_large(self.body_limit()))
    }
}

/// The refusal of a body larger than `limit` bytes.
pub(super) fn too_large(limit: usize) -> Refusal {
    let size = if limit.is_multiple_of(1024 * 1024) {
        format!("{} MiB", limit / (1024 * 1024))
    } else {
        format!("{} KiB", limit / 1024)
    };
    Refusal::Refused {
        error: AchError::FailedToAccept,
        status: 413,
        errors: vec![FieldError {
            field: String::new(),
            code: ProblemCode::OverLimit,
            message: format!("the body is larger than {size}"),
        }],
    }
}

/// A request whose path still carries its query string (`/x?a=1`, as the C and
/// browser hosts may pass it) with the two split.
pub(super) fn split_query(req: &Request) -> Cow<'_, Request> {
    match req.path.split_once('?') {
        Some((path, query)) => {
            let joined = [req.query.as_str(), query]
                .iter()
                .filter(|q| !q.is_empty())
                .copied()
                .collect::<Vec<_>>()
                .join("&");
            Cow::Owned(Request { path: path.to_owned(), query: joined, ..req.clone() })
        }
        None => Cow::Borrowed(req),
    }
}

/// Admit a request on its head (its body, if any, is not looked at): 404 or 405
/// for a path or method the API does not have, 401 for a missing or wrong key or
/// a key that may not use the endpoint (an events-only merchant key on
/// `POST /transactions`; any non-operator key on `/admin/…`), 415 for a body
/// sent as another type than the endpoint takes ([`media`]). May read the
/// store (a key not remembered).
pub fn admit(engine: &Engine, req: &Request) -> Result<Admitted, Refusal> {
    admit_with(req, |key| Some(engine.admit_key(key))).unwrap_or(Err(Refusal::Authentication))
}

/// [`admit`] from memory alone, for a thread that must not wait on storage
/// (an async worker): `None` when the key must be looked up in the store,
/// which [`admit`] then does on a thread that may block.
pub fn admit_remembered(engine: &Engine, req: &Request) -> Option<Result<Admitted, Refusal>> {
    admit_with(req, |key| engine.admit_key_remembered(key))
}

/// Admission with `check` answering who a key belongs to (`None`: it cannot
/// say here).
fn admit_with(
    req: &Request,
    check: impl FnOnce(&str) -> Option<Result<Admission, Refusal>>,
) -> Option<Result<Admitted, Refusal>> {
    // The head only: a path that carries its query is split without copying the body.
    let head = Request {
        method: req.method.clone(),
        path: req.path.clone(),
        query: req.query.clone(),
        api_key: req.api_key.clone(),
        content_type: req.content_type.clone(),
        ..Request::default()
    };
    let req = split_query(&head);
    let (endpoint, params) = match routes::resolve(&req) {
        Ok(found) => found,
        Err(refused) => return Some(Err(refused)),
    };
    let role = role(endpoint);
    if role == Role::Anyone {
        return Some(Ok(Admitted { endpoint, params, caller: None, unconfirmed: None, request_rate: None }));
    }
    let Admission { caller, unconfirmed, request_rate } = match check(req.api_key.as_deref().unwrap_or(""))? {
        Ok(admission) => admission,
        Err(refused) => return Some(Err(refused)),
    };
    if !may_call(role, &caller) {
        return Some(Err(Refusal::Authentication));
    }
    if let Err(refused) = media::check(endpoint, &req.method, req.content_type.as_deref()) {
        return Some(Err(refused));
    }
    Some(Ok(Admitted { endpoint, params, caller: Some(caller), unconfirmed, request_rate }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_endpoints_that_take_images_or_files_take_large_bodies() {
        let large = [
            Endpoint::CreateTransaction,
            Endpoint::SubmitMerchant,
            Endpoint::AdminReturnFiles,
            Endpoint::AdminRouting,
        ];
        for (_, _, endpoint) in routes::ROUTES {
            let expected = if large.contains(endpoint) { MAX_BODY_BYTES } else { SMALL_BODY_BYTES };
            assert_eq!(body_limit(*endpoint), expected, "{endpoint:?}");
        }
    }

    #[test]
    fn the_413_names_the_limit() {
        let message = |limit| too_large(limit).errors()[0].message.clone();
        assert_eq!(message(MAX_BODY_BYTES), "the body is larger than 3 MiB");
        assert_eq!(message(SMALL_BODY_BYTES), "the body is larger than 64 KiB");
        assert_eq!(too_large(SMALL_BODY_BYTES).status(), 413);
    }
}
