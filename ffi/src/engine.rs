//! `AchEngine`: an engine (a database and its rules) behind a handle.
//!
//! Handles are not pointers to memory. `ach_engine_open` puts the engine in a
//! process-wide registry (`Mutex<HashMap<id, Arc<Engine>>>`) under a fresh id that
//! is never reused, and hands C a pointer-sized value that encodes the id; the
//! library never dereferences it. `ach_engine_request` looks the id up and clones the
//! `Arc`, so a call in flight keeps its engine alive and finishes normally even if
//! another thread closes the handle meanwhile; `ach_engine_close` removes the entry,
//! and the database closes when the last call in flight ends. After that the handle
//! answers `ACH_CLOSED`; a value that was never issued answers `ACH_UNKNOWN_HANDLE`.

use std::collections::HashMap;
use std::ffi::c_char;
use std::path::Path;
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, PoisonError};

use ach_core::api::{self, Request};
use ach_core::clock::{Clock, SystemClock};
use ach_core::engine::{Engine, EngineOptions, HostOptions, OpenError, OptionNames, OptionsError};

use crate::boundary::{self, c_str, out_param, CallRefusal};
use crate::buffer::AchBuffer;
use crate::result::AchResult;

/// An open engine: a database (a file, or memory) with the service's rules, as one
/// HTTPS server would hold it. Opaque: only ever used through a pointer.
///
/// The pointer is a handle, not an address: it encodes an id in the library's
/// registry and is never dereferenced, so a stale or bogus handle is an error code,
/// never a crash. Handles are never reused within a process.
///
/// Threads: one engine may be used from any number of threads at once; writes are
/// serialised inside the engine (one writer at a time), reads run concurrently.
/// Closing while other threads are inside `ach_engine_request` with the same
/// handle is defined: those calls finish normally, later calls answer `ACH_CLOSED`,
/// and the database closes when the last of them returns.
pub struct AchEngine {
    _opaque: [u8; 0],
}

/// The low byte of every handle: real addresses (aligned) never match it, so a
/// pointer to memory passed as a handle answers `ACH_UNKNOWN_HANDLE`.
const HANDLE_TAG: usize = 0xAC;
const TAG_BITS: u32 = 8;

/// The handle that encodes `id`, if it fits in a pointer.
fn handle_of(id: u64) -> Option<*mut AchEngine> {
    let id = usize::try_from(id).ok()?;
    let addr = id.checked_mul(1 << TAG_BITS)?.checked_add(HANDLE_TAG)?;
    Some(std::ptr::without_provenance_mut(addr))
}

/// The id a handle encodes, if it is shaped like one.
fn id_of(handle: *mut AchEngine) -> Option<u64> {
    let addr = handle.addr();
    if addr & ((1 << TAG_BITS) - 1) != HANDLE_TAG {
        return None;
    }
    u64::try_from(addr >> TAG_BITS).ok()
}

/// The registry of open engines. Ids are issued in order from 1, so every id below
/// `next` was issued: one not in `open` was closed.
struct Registry {
    next: u64,
    open: HashMap<u64, Arc<Engine>>,
}

static REGISTRY: LazyLock<Mutex<Registry>> =
    LazyLock::new(|| Mutex::new(Registry { next: 1, open: HashMap::new() }));

fn registry() -> MutexGuard<'static, Registry> {
    // A panic while the lock was held cannot leave the map half-updated (inserts and
    // removes are single calls), so a poisoned lock is used as it is.
    REGISTRY.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The engine behind a handle (a clone of its `Arc`).
fn lookup(handle: *mut AchEngine) -> Result<Arc<Engine>, CallRefusal> {
    if handle.is_null() {
        return Err(CallRefusal::new(AchResult::ACH_NULL_POINTER, "engine is NULL"));
    }
    let unknown = || {
        CallRefusal::new(
            AchResult::ACH_UNKNOWN_HANDLE,
            format!("engine {handle:p} is not a handle issued by ach_engine_open"),
        )
    };
    let id = id_of(handle).ok_or_else(unknown)?;
    let reg = registry();
    match reg.open.get(&id) {
        Some(engine) => Ok(Arc::clone(engine)),
        None if id >= 1 && id < reg.next => {
            Err(CallRefusal::new(AchResult::ACH_CLOSED, format!("engine {handle:p} was closed")))
        }
        None => Err(unknown()),
    }
}

/// The engine behind a handle, for Rust code that links this crate as an rlib (a
/// host mixing Rust and C, the benches): the same engine C reaches through the
/// handle. `Err` is the code `ach_engine_request` would answer. Not exported to C.
pub fn shared_engine(handle: *mut AchEngine) -> Result<Arc<Engine>, AchResult> {
    lookup(handle).map_err(|r| r.code)
}

fn invalid(detail: impl Into<String>) -> CallRefusal {
    CallRefusal::new(AchResult::ACH_INVALID_ARGUMENT, detail)
}

/// Read the options JSON (the core's one parser, C's member names): malformed JSON
/// is `ACH_INVALID_JSON`; well-formed JSON of the wrong shape (an unknown member, a
/// wrong type or value) is `ACH_INVALID_ARGUMENT`. A sandbox's clock starts at
/// `start` or now; any other engine runs on the system clock.
fn parse_options(text: &str) -> Result<(Option<String>, EngineOptions), CallRefusal> {
    let o = HostOptions::parse(text, OptionNames::C).map_err(|e| match e {
        OptionsError::NotJson(why) => {
            CallRefusal::new(AchResult::ACH_INVALID_JSON, format!("options_json is not JSON: {why}"))
        }
        OptionsError::NotObject => invalid("options_json must be a JSON object ({} for every default)"),
        OptionsError::Invalid(why) => invalid(format!("options_json: {why}")),
    })?;
    let options = o.engine_options(SystemClock.now());
    Ok((o.path, options))
}

fn open_refusal(e: &OpenError) -> CallRefusal {
    let code = match e {
        OpenError::WrongKey => AchResult::ACH_WRONG_KEY,
        OpenError::Secret(_) => AchResult::ACH_KEY_FILE,
        _ => AchResult::ACH_STORAGE,
    };
    CallRefusal::new(code, format!("cannot open the engine: {e}"))
}

/// Open an engine and write its handle to `*out`.
///
/// `options_json` is a JSON object; every member is optional and no other member is
/// accepted:
///
/// * `"path"`: the database file, created if missing (with its key file
///   `<path>.key`, mode 0600, unless `encryption_key` is given); `null` or absent:
///   a database in memory that disappears with the engine.
/// * `"operator_key"`: the operator's API key (partners, approvals, limits,
///   returns, the routing directory, the sandbox clock); absent: no operator access.
/// * `"sandbox"`: `true` for a sandbox, whose clock moves only when the operator
///   sets it (`POST /admin/clock`); `false` (default): the system clock.
/// * `"encryption_key"`: 64 hex digits, the key that seals account numbers at rest.
/// * `"start"`: a sandbox's first instant, RFC 3339 with an offset
///   (`"2026-11-23T09:00:00-05:00"`) or milliseconds since 1970; default now. Only with `"sandbox": true`. A
///   reopened sandbox database resumes where its clock stood if that is later.
///
/// Answers `ACH_OK` (`*out` written), or: `ACH_NULL_POINTER`, `ACH_INVALID_UTF8`,
/// `ACH_INVALID_JSON` (not JSON), `ACH_INVALID_ARGUMENT` (an unknown member, named
/// in the detail, or a bad value), `ACH_STORAGE` (the file cannot be opened, or is
/// already open, in this or another process), `ACH_KEY_FILE`, `ACH_WRONG_KEY`. On
/// failure `*out` is left untouched. Release the engine with `ach_engine_close`.
///
/// # Safety
/// `options_json` is NULL or a NUL-terminated string; `out` is NULL or points to
/// writable memory for one `AchEngine *`.
#[no_mangle]
pub unsafe extern "C" fn ach_engine_open(options_json: *const c_char, out: *mut *mut AchEngine) -> AchResult {
    boundary::run(|| {
        // SAFETY: forwarded contract: NULL or a NUL-terminated string.
        let text = unsafe { c_str(options_json, "options_json") }?;
        let out = out_param(out, "out")?;
        let (path, options) = parse_options(text)?;
        let engine = match path {
            Some(path) => Engine::open(Path::new(&path), options),
            None => Engine::in_memory(options),
        }
        .map_err(|e| open_refusal(&e))?;
        let handle = {
            let mut reg = registry();
            let id = reg.next;
            let handle =
                handle_of(id).ok_or_else(|| invalid("too many engines were opened in this process"))?;
            reg.next += 1;
            reg.open.insert(id, Arc::new(engine));
            handle
        };
        // SAFETY: `out` is not NULL (checked) and writable by the caller's contract.
        unsafe { out.as_ptr().write(handle) };
        Ok(())
    })
}

/// Why a request envelope was refused: `ACH_INVALID_JSON` if it is not JSON at all,
/// else `ACH_INVALID_ARGUMENT` (a missing `method` or `path`, an unknown member, a
/// wrong type).
fn envelope_refusal(text: &str, why: String) -> CallRefusal {
    let code = match serde_json::from_str::<serde::de::IgnoredAny>(text) {
        Ok(_) => AchResult::ACH_INVALID_ARGUMENT,
        Err(_) => AchResult::ACH_INVALID_JSON,
    };
    CallRefusal::new(code, format!("request_json: {why}"))
}

/// Send one request to the engine, as the HTTPS API would receive it, and write the
/// response to `*out`.
///
/// `request_json` is `{"method", "path", "query", "api_key", "idempotency_key",
/// "body"}`: `method` and `path` are required (`"GET"`, `"/status-changes/0"`);
/// `query` is a query string (`"partner_id=par_..."`) or an object of strings;
/// `api_key` is the Basic-auth user name (a partner's, a merchant's or the
/// operator's key); `idempotency_key` is the `Idempotency-Key` header; `body` is the
/// request body as a JSON value, or a string of raw text.
///
/// On `ACH_OK`, `*out` receives `{"status": <HTTP status>, "body": <JSON body>}`:
/// the very answer the HTTPS API gives, byte for byte, refusals included (a
/// refused transaction is `ACH_OK` with status 422 and the spec's message: the
/// answer is data), and `"headers": {"Idempotent-Replayed": "true"}` on the
/// answer to an idempotent request made again. Operator paths (`/admin/...`)
/// work with the operator key.
///
/// Fails with `ACH_NULL_POINTER`, `ACH_UNKNOWN_HANDLE`, `ACH_CLOSED`,
/// `ACH_INVALID_UTF8`, `ACH_INVALID_JSON` (the envelope is not JSON) or
/// `ACH_INVALID_ARGUMENT` (the envelope lacks `method` or `path`, or has another
/// member); then nothing was done and `*out` is left untouched.
///
/// Any number of threads may call this at once on the same engine. A call in
/// flight when another thread closes the engine finishes normally.
///
/// # Safety
/// `request_json` is NULL or a NUL-terminated string; `out` is NULL or points to
/// writable memory for one `AchBuffer`. `engine` may be any value.
#[no_mangle]
pub unsafe extern "C" fn ach_engine_request(
    engine: *mut AchEngine,
    request_json: *const c_char,
    out: *mut AchBuffer,
) -> AchResult {
    boundary::run(|| {
        let engine = lookup(engine)?;
        // SAFETY: forwarded contract: NULL or a NUL-terminated string.
        let text = unsafe { c_str(request_json, "request_json") }?;
        let out = out_param(out, "out")?;
        let request = Request::from_json(text).map_err(|why| envelope_refusal(text, why))?;
        let answer = api::route(&engine, &request).to_json();
        // SAFETY: `out` is not NULL (checked) and writable by the caller's contract.
        unsafe { out.as_ptr().write(AchBuffer::from_text(answer)) };
        Ok(())
    })
}

/// Close an engine: its handle answers `ACH_CLOSED` from now on, and its database
/// closes (a file database is flushed and unlocked) as soon as no call is using it:
/// at once, or when the last `ach_engine_request` in flight on another thread
/// returns. Every committed change is already durable.
///
/// NULL, a handle closed before (closing twice is harmless) and a value that was
/// never a handle do nothing. Does not change `ach_last_error`.
///
/// To reopen the same database file right after closing, make sure no other thread
/// is still inside `ach_engine_request` with this handle, or the reopen may answer
/// `ACH_STORAGE` (the file is still open).
#[no_mangle]
pub extern "C" fn ach_engine_close(engine: *mut AchEngine) {
    boundary::catch((), || {
        let Some(id) = id_of(engine) else { return };
        let removed = registry().open.remove(&id);
        // Dropped after the registry lock is released: closing a file database
        // flushes it, and other threads' lookups need not wait for that.
        drop(removed);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_encode_ids_and_real_addresses_are_not_handles() {
        let h = handle_of(5).unwrap_or(std::ptr::null_mut());
        assert_eq!(id_of(h), Some(5));
        let on_stack = 0u64;
        assert_eq!(id_of(std::ptr::from_ref(&on_stack).cast_mut().cast()), None);
        assert_eq!(id_of(std::ptr::null_mut()), None);
    }

    #[test]
    fn options_are_strict() {
        let code = |t: &str| parse_options(t).map(|_| ()).map_err(|r| r.code);
        assert_eq!(code("{}"), Ok(()));
        assert_eq!(code(r#"{"path":null,"sandbox":true,"start":"2026-11-23T09:00:00-05:00"}"#), Ok(()));
        assert_eq!(code("{"), Err(AchResult::ACH_INVALID_JSON));
        assert_eq!(code(r#"{"sandbox":true,"bogus":1}"#), Err(AchResult::ACH_INVALID_ARGUMENT));
        let detail = parse_options(r#"{"bogus":1}"#).err().map(|r| r.detail).unwrap_or_default();
        assert!(detail.contains("bogus"), "{detail}");
        assert_eq!(code(r#"{"sandbox":"yes"}"#), Err(AchResult::ACH_INVALID_ARGUMENT));
        assert_eq!(code(r#"{"start":"2026-11-23T09:00:00Z"}"#), Err(AchResult::ACH_INVALID_ARGUMENT));
        assert_eq!(code(r#"{"sandbox":true,"start":"monday"}"#), Err(AchResult::ACH_INVALID_ARGUMENT));
        assert_eq!(code(r#"{"encryption_key":"abc"}"#), Err(AchResult::ACH_INVALID_ARGUMENT));
        assert_eq!(code(r#"{"operator_key":""}"#), Err(AchResult::ACH_INVALID_ARGUMENT));
        assert_eq!(code(r#"{"path":""}"#), Err(AchResult::ACH_INVALID_ARGUMENT));
        assert_eq!(code("[]"), Err(AchResult::ACH_INVALID_ARGUMENT));
    }
}
