//! Idempotent retries: a client key makes a retry of the same request answer
//! exactly what the first answered (success or refusal, so an outcome never flips)
//! and never run twice; the same key with a different request is refused with
//! message 2. Keys are permanent and scoped to their partner.

use serde::{Deserialize, Serialize};

use crate::engine::request::operation::Operation;
use crate::engine::request::outcome::Outcome;
use crate::engine::{Applied, Engine, Refusal, Stop, WriteContext};
use crate::storage::{row_keys, Table};
use crate::validation::json::JsonBody;
use crate::validation::ProblemCode;
use crate::AchError;

/// Longest idempotency key.
pub const MAX_KEY_LEN: usize = 255;

#[derive(Debug, Serialize, Deserialize)]
struct StoredAnswer {
    /// Keyed fingerprint of the request (hex): never a plain hash, since a request
    /// holds an account number that a plain hash would let anyone brute-force.
    request: String,
    /// What the first request answered.
    answer: Result<Outcome, Refusal>,
}

/// The name of a transaction body's member that carries its idempotency key.
const BODY_KEY: &str = "idempotency_key";

/// The key of an operation that is to be idempotent: an explicit wrapper, or a
/// transaction body's `idempotency_key` member (`parsed`: the body already
/// parsed, if it was), with the operation it wraps.
/// A body key that is `null` counts as absent; any other non-string is refused.
pub(crate) fn key_of<'o>(
    op: &'o Operation,
    parsed: Option<&JsonBody<'_>>,
) -> Option<(Result<String, Refusal>, &'o Operation)> {
    match op {
        Operation::Idempotent { key, operation } => Some((check_key(key), operation)),
        Operation::CreateTransaction { body, .. } => {
            let key = match parsed {
                Some(parsed) => body_key(parsed)?,
                None if !may_name_key(body) => return None,
                None => body_key(&crate::validation::parse_json(body).ok()?)?,
            };
            Some((key, op))
        }
        _ => None,
    }
}

/// A parsed body's `idempotency_key` member: `None` when absent or `null`.
fn body_key(body: &JsonBody<'_>) -> Option<Result<String, Refusal>> {
    let node = body.object()?.get(BODY_KEY)?;
    Some(check_key(&node.as_str().unwrap_or_default()))
}

/// Whether a JSON text can have an `idempotency_key` member: its name appears
/// literally or the text has a `\u` escape (the only other way to spell it).
/// Exact, and spares the parse of every body that has no key.
fn may_name_key(body: &[u8]) -> bool {
    use memchr::memmem::Finder;
    use std::sync::OnceLock;
    // Built once: building a finder costs more than searching a small body.
    static NAME: OnceLock<Finder<'static>> = OnceLock::new();
    static ESCAPE: OnceLock<Finder<'static>> = OnceLock::new();
    let name = NAME.get_or_init(|| Finder::new(b"idempotency_key"));
    let escape = ESCAPE.get_or_init(|| Finder::new(b"\\u"));
    name.find(body).is_some() || escape.find(body).is_some()
}

/// A key must be 1 to 255 printable ASCII characters.
pub(crate) fn check_key(key: &str) -> Result<String, Refusal> {
    if (1..=MAX_KEY_LEN).contains(&key.len()) && key.bytes().all(|b| b.is_ascii_graphic()) {
        return Ok(key.to_owned());
    }
    let msg = format!("an idempotency key is 1 to {MAX_KEY_LEN} printable ASCII characters");
    Err(Refusal::problem(AchError::FailedToAccept, "idempotency_key", ProblemCode::InvalidFormat, msg))
}

/// A body as canonical JSON without its `idempotency_key` (so the same request
/// re-serialized, with members in another order or other spacing, is the
/// same): `parsed` if the router parsed it, else parsed from `body` here. A
/// body that is not JSON is its bytes.
fn canonical(body: &[u8], parsed: Option<&JsonBody<'_>>) -> Vec<u8> {
    if let Some(parsed) = parsed {
        return parsed.canonical(BODY_KEY).into_bytes();
    }
    match crate::validation::parse_json(body) {
        Ok(parsed) => parsed.canonical(BODY_KEY).into_bytes(),
        Err(_) => body.to_vec(),
    }
}

/// What the request asks for, as bytes to fingerprint (a body in canonical
/// form; `parsed`: the body already parsed, if it was).
pub(crate) fn request_bytes(op: &Operation, parsed: Option<&JsonBody<'_>>) -> Vec<u8> {
    let mut out = format!("{:?}", std::mem::discriminant(op)).into_bytes();
    match op {
        Operation::SubmitMerchant { partner_id, body }
        | Operation::CreateCustomer { partner_id, body }
        | Operation::CreateTransaction { partner_id, body } => {
            out.extend_from_slice(partner_id.as_bytes());
            out.push(0);
            out.extend_from_slice(&canonical(body, parsed));
        }
        Operation::CreateValidation { partner_id, customer_id, body } => {
            for part in [partner_id, customer_id] {
                out.extend_from_slice(part.as_bytes());
                out.push(0);
            }
            out.extend_from_slice(&canonical(body, parsed));
        }
        Operation::ConfirmValidation { partner_id, customer_id, validation_id, body } => {
            for part in [partner_id, customer_id, validation_id] {
                out.extend_from_slice(part.as_bytes());
                out.push(0);
            }
            out.extend_from_slice(&canonical(body, parsed));
        }
        other => out.extend_from_slice(format!("{other:?}").as_bytes()),
    }
    out
}

fn hex(bytes: &[u8]) -> String {
    crate::secrets::hex::encode(bytes)
}

/// The keyed fingerprint (hex) of [`request_bytes`], as stored with the answer.
pub(crate) fn request_print(engine: &Engine, request: &[u8]) -> String {
    hex(&engine.fingerprints.digest(&[b"idempotent-request", request]))
}

/// Run `apply` once per (partner, key): replay the stored answer for the same
/// request (`request`: its [`request_print`]), refuse a different request with
/// message 2. Only partner operations are idempotent: operator answers carry new
/// API keys, which are never stored.
pub(crate) fn run(
    cx: &mut WriteContext<'_, '_>,
    owner: &str,
    key: &str,
    request: String,
    apply: impl FnOnce(&mut WriteContext<'_, '_>) -> Result<Applied, Stop>,
) -> Result<Applied, Stop> {
    let k = row_keys::idempotency(owner, key);
    if let Some(stored) = cx.write.get::<StoredAnswer>(Table::Idempotency, &k)? {
        if stored.request != request {
            let msg = "this idempotency key was already used for a different request";
            return Err(Refusal::conflict(AchError::AlreadySubmitted, "idempotency_key", msg).into());
        }
        return match stored.answer {
            Ok(outcome) => Ok(Applied::Done(Outcome::Replayed(Box::new(outcome)))),
            Err(refusal) => Err(Refusal::Replayed(Box::new(refusal)).into()),
        };
    }
    let result = apply(cx);
    let answer = match &result {
        Ok(Applied::Done(o)) | Ok(Applied::Directory(_, o)) => Ok(o.clone()),
        Err(Stop::Refused(f)) => Err(f.clone()),
        Err(Stop::Storage(_)) => return result,
    };
    cx.write.put(Table::Idempotency, &k, &StoredAnswer { request, answer })?;
    result
}
