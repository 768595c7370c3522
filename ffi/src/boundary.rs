//! The boundary between C and Rust: every export runs its body through [`run`] (or
//! [`catch`] for the few that answer no `AchResult`), so
//!
//! * a panic never crosses into C: it is caught, answered as `ACH_PANIC` and its
//!   message recorded as the thread's last error;
//! * a refusal ([`CallRefusal`]: a code and a detail) becomes its code, with the detail
//!   recorded as the thread's last error; success clears the last error;
//! * arguments are checked before use: [`c_str`] (NULL → `ACH_NULL_POINTER`,
//!   invalid UTF-8 → `ACH_INVALID_UTF8`) and [`out_param`] (NULL →
//!   `ACH_NULL_POINTER`).
//!
//! The release profile keeps `panic = "unwind"` (never `abort`): a bad input must
//! cost the host an error code, not its process.

use std::ffi::{c_char, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::NonNull;

use crate::last_error;
use crate::result::AchResult;

/// Why a call failed: the code it answers and the detail `ach_last_error` gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallRefusal {
    /// The code answered.
    pub code: AchResult,
    /// The detail recorded as the thread's last error.
    pub detail: String,
}

impl CallRefusal {
    /// A refusal with this code and detail.
    pub fn new(code: AchResult, detail: impl Into<String>) -> CallRefusal {
        CallRefusal { code, detail: detail.into() }
    }
}

/// Run an export's body behind the panic boundary and answer its code: `ACH_OK`
/// (the last error cleared), the refusal's code (its detail recorded), or
/// `ACH_PANIC` (the panic's message recorded).
pub fn run(body: impl FnOnce() -> Result<(), CallRefusal>) -> AchResult {
    // AssertUnwindSafe: after a panic nothing the body touched is read again by this
    // call, and shared state (the engine registry, the engine's own locks) recovers
    // from poisoning instead of propagating it.
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => {
            last_error::clear();
            AchResult::ACH_OK
        }
        Ok(Err(refusal)) => {
            last_error::set(refusal.detail);
            refusal.code
        }
        Err(payload) => {
            last_error::set(format!("panic: {}", panic_message(payload.as_ref())));
            AchResult::ACH_PANIC
        }
    }
}

/// Run the body of an export that answers no `AchResult` behind the panic boundary:
/// its value, or `fallback` (with the panic recorded as the last error).
pub fn catch<T>(fallback: T, body: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(value) => value,
        Err(payload) => {
            last_error::set(format!("panic: {}", panic_message(payload.as_ref())));
            fallback
        }
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> &str {
    if let Some(s) = payload.downcast_ref::<&'static str>() {
        s
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s
    } else {
        "(no message)"
    }
}

/// A NUL-terminated string argument as `&str`.
///
/// `NULL` is `ACH_NULL_POINTER`, invalid UTF-8 is `ACH_INVALID_UTF8`; both details
/// name the argument.
///
/// # Safety
/// `ptr` is NULL or points to a NUL-terminated string that stays valid and
/// unchanged for `'a`.
pub unsafe fn c_str<'a>(ptr: *const c_char, name: &str) -> Result<&'a str, CallRefusal> {
    if ptr.is_null() {
        return Err(CallRefusal::new(AchResult::ACH_NULL_POINTER, format!("{name} is NULL")));
    }
    // SAFETY: not NULL (checked above); NUL-terminated and valid for 'a by the
    // caller's contract.
    let bytes = unsafe { CStr::from_ptr(ptr) }.to_bytes();
    std::str::from_utf8(bytes).map_err(|e| {
        CallRefusal::new(
            AchResult::ACH_INVALID_UTF8,
            format!("{name} is not valid UTF-8 (bad byte at offset {})", e.valid_up_to()),
        )
    })
}

/// A byte-range argument (`data`, `len`) as a slice. `NULL` with `len == 0` is the
/// empty slice; `NULL` with `len > 0` is `ACH_NULL_POINTER`.
///
/// # Safety
/// Unless NULL, `data` points to `len` readable bytes that stay valid and unchanged
/// for `'a`.
pub unsafe fn c_bytes<'a>(data: *const u8, len: usize, name: &str) -> Result<&'a [u8], CallRefusal> {
    if data.is_null() {
        return if len == 0 {
            Ok(&[])
        } else {
            Err(CallRefusal::new(
                AchResult::ACH_NULL_POINTER,
                format!("{name} is NULL but its length is {len}"),
            ))
        };
    }
    if len > isize::MAX as usize {
        return Err(CallRefusal::new(
            AchResult::ACH_INVALID_ARGUMENT,
            format!("{name}'s length {len} is too large"),
        ));
    }
    // SAFETY: not NULL, len ≤ isize::MAX (checked above); readable and unchanged for
    // 'a by the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(data, len) })
}

/// An out-parameter, checked for NULL (`ACH_NULL_POINTER` naming it).
pub fn out_param<T>(ptr: *mut T, name: &str) -> Result<NonNull<T>, CallRefusal> {
    NonNull::new(ptr).ok_or_else(|| CallRefusal::new(AchResult::ACH_NULL_POINTER, format!("{name} is NULL")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_and_panics_become_codes_and_details() {
        assert_eq!(run(|| Ok(())), AchResult::ACH_OK);
        assert_eq!(last_error::last_error(), "");
        let r = run(|| Err(CallRefusal::new(AchResult::ACH_INVALID_ARGUMENT, "kind is wrong")));
        assert_eq!(
            (r, last_error::last_error()),
            (AchResult::ACH_INVALID_ARGUMENT, "kind is wrong".to_owned())
        );
        let r = run(|| std::panic::resume_unwind(Box::new(String::from("boom"))));
        assert_eq!((r, last_error::last_error()), (AchResult::ACH_PANIC, "panic: boom".to_owned()));
        assert_eq!(catch(7, || std::panic::resume_unwind(Box::new(1u8))), 7);
        assert_eq!(last_error::last_error(), "panic: (no message)");
        assert_eq!(run(|| Ok(())), AchResult::ACH_OK);
        assert_eq!(last_error::last_error(), "", "success clears the last error");
    }

    #[test]
    fn strings_are_checked_for_null_and_utf8() {
        // SAFETY: NULL, and static NUL-terminated strings.
        unsafe {
            assert_eq!(c_str(std::ptr::null(), "kind").map_err(|r| r.code), Err(AchResult::ACH_NULL_POINTER));
            assert_eq!(c_str(c"ok".as_ptr(), "kind"), Ok("ok"));
            let bad = c"a\xffb";
            let e = c_str(bad.as_ptr(), "json").map_err(|r| (r.code, r.detail));
            assert_eq!(
                e,
                Err((
                    AchResult::ACH_INVALID_UTF8,
                    "json is not valid UTF-8 (bad byte at offset 1)".to_owned()
                ))
            );
            assert_eq!(c_bytes(std::ptr::null(), 0, "data"), Ok(&[][..]));
            assert_eq!(
                c_bytes(std::ptr::null(), 3, "data").map_err(|r| r.code),
                Err(AchResult::ACH_NULL_POINTER)
            );
        }
        assert_eq!(
            out_param(std::ptr::null_mut::<u8>(), "out").map_err(|r| (r.code, r.detail)),
            Err((AchResult::ACH_NULL_POINTER, "out is NULL".to_owned()))
        );
    }
}
