//! Validation without an engine: exactly what `achd validate` prints.

use std::ffi::c_char;
use std::sync::LazyLock;

use ach_core::calendar;
use ach_core::clock::{Clock, SystemClock};
use ach_core::routing::RoutingDirectory;
use ach_core::validation::{check_bytes, Context, Kind};
use chrono::NaiveDate;

use crate::boundary::{self, c_bytes, c_str, out_param, CallRefusal};
use crate::buffer::AchBuffer;
use crate::result::AchResult;

/// The embedded routing directory, built once per process.
static DIRECTORY: LazyLock<RoutingDirectory> = LazyLock::new(RoutingDirectory::embedded);

/// Today's date in US Eastern time by the system clock, as `achd validate` takes
/// it.
fn today() -> NaiveDate {
    calendar::eastern_date_cached(SystemClock.now())
}

/// The verdict line `achd validate` prints for these bytes: the verdict JSON and
/// `"\n"`. Today is the Eastern date by the system clock; the directory is the
/// embedded one.
pub fn verdict_line(kind: Kind, body: &[u8]) -> String {
    let ctx = Context { today: today(), directory: &DIRECTORY };
    let mut line = check_bytes(kind, body, &ctx).to_json();
    line.push('\n');
    line
}

fn kind_of(kind: *const c_char) -> Result<Kind, CallRefusal> {
    // SAFETY: forwarded contract: `kind` is NULL or a NUL-terminated string.
    let text = unsafe { c_str(kind, "kind") }?;
    Kind::parse(text).ok_or_else(|| {
        CallRefusal::new(
            AchResult::ACH_INVALID_ARGUMENT,
            format!("kind must be transaction, customer or merchant, not {:?}", ach_core::echo::echo(text)),
        )
    })
}

/// Validate a request body against every rule of the service, without an engine
/// or a database: `kind` is `"transaction"`, `"customer"` or `"merchant"`, `json`
/// the body (a NUL-terminated UTF-8 string).
///
/// On `ACH_OK`, `*out` receives exactly the line `achd validate` prints: the
/// verdict `{"valid": bool, "message": string|null, "errors": [{"field", "code",
/// "message"}]}` followed by `"\n"`. A body that breaks the rules, or is not JSON
/// at all, is still `ACH_OK` with `"valid":false`: the verdict is the answer. Dates
/// are checked against today's date in US Eastern time by the system clock; routing
/// numbers against the embedded routing directory.
///
/// Fails with `ACH_NULL_POINTER` (an argument is NULL), `ACH_INVALID_UTF8` (`kind`
/// or `json` is not UTF-8; use `ach_validate_bytes` to have such bytes judged like
/// `achd validate` does) or `ACH_INVALID_ARGUMENT` (unknown `kind`); then `*out` is
/// left untouched. Safe to call from any number of threads at once.
///
/// # Safety
/// `kind` and `json` are NULL or NUL-terminated strings; `out` is NULL or points to
/// writable memory for one `AchBuffer`.
#[no_mangle]
pub unsafe extern "C" fn ach_validate(
    kind: *const c_char,
    json: *const c_char,
    out: *mut AchBuffer,
) -> AchResult {
    // SAFETY: forwarded contract: `json` is NULL or a NUL-terminated string.
    let body = || unsafe { c_str(json, "json") }.map(str::as_bytes);
    // SAFETY: forwarded contract: `out` is NULL or writable for one `AchBuffer`.
    unsafe { verdict_into(kind, body, out) }
}

/// Like `ach_validate`, for a body given as `len` bytes at `data` (no NUL needed;
/// NUL bytes and invalid UTF-8 inside are allowed and judged exactly as `achd
/// validate` judges a file holding those bytes: a verdict with code
/// `invalid_json`). `data` may be NULL when `len` is 0.
///
/// # Safety
/// `kind` is NULL or a NUL-terminated string; `data` is NULL or points to `len`
/// readable bytes; `out` is NULL or points to writable memory for one `AchBuffer`.
#[no_mangle]
pub unsafe extern "C" fn ach_validate_bytes(
    kind: *const c_char,
    data: *const u8,
    len: usize,
    out: *mut AchBuffer,
) -> AchResult {
    // SAFETY: forwarded contract: `data` is NULL or `len` readable bytes.
    let body = || unsafe { c_bytes(data, len, "data") };
    // SAFETY: forwarded contract: `out` is NULL or writable for one `AchBuffer`.
    unsafe { verdict_into(kind, body, out) }
}

/// What `ach_validate` and `ach_validate_bytes` do once they can read their
/// body: check `kind`, then the body (`body` reads it), then `out`, in that
/// order, and write the verdict line to `*out`.
///
/// # Safety
/// `kind` is NULL or a NUL-terminated string; `out` is NULL or points to writable
/// memory for one `AchBuffer`.
unsafe fn verdict_into<'a>(
    kind: *const c_char,
    body: impl FnOnce() -> Result<&'a [u8], CallRefusal>,
    out: *mut AchBuffer,
) -> AchResult {
    boundary::run(|| {
        let kind = kind_of(kind)?;
        let body = body()?;
        let out = out_param(out, "out")?;
        let line = verdict_line(kind, body);
        // SAFETY: `out` is not NULL (checked) and writable by the caller's contract.
        unsafe { out.as_ptr().write(AchBuffer::from_text(line)) };
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::ach_buffer_free;

    fn validate(kind: &std::ffi::CStr, json: &std::ffi::CStr) -> (AchResult, String) {
        let mut out = AchBuffer::default();
        // SAFETY: valid C strings and a valid out-buffer.
        let r = unsafe { ach_validate(kind.as_ptr(), json.as_ptr(), &mut out) };
        let text = out.to_text();
        ach_buffer_free(out);
        (r, text)
    }

    #[test]
    fn verdicts_end_with_a_newline_and_misuse_is_a_code() {
        let (r, line) = validate(c"customer", c"{");
        assert_eq!(r, AchResult::ACH_OK);
        assert!(line.starts_with(r#"{"valid":false"#) && line.ends_with("}\n"), "{line}");
        assert_eq!(validate(c"payment", c"{}").0, AchResult::ACH_INVALID_ARGUMENT);
        assert!(crate::last_error::last_error().contains("\"payment\""));
        assert_eq!(validate(c"merchant", c"\"\xff\"").0, AchResult::ACH_INVALID_UTF8);
        let mut out = AchBuffer::default();
        // SAFETY: NULL arguments are allowed (they answer a code).
        unsafe {
            assert_eq!(ach_validate(std::ptr::null(), c"{}".as_ptr(), &mut out), AchResult::ACH_NULL_POINTER);
            assert_eq!(
                ach_validate(c"merchant".as_ptr(), c"{}".as_ptr(), std::ptr::null_mut()),
                AchResult::ACH_NULL_POINTER
            );
            assert!(out.data.is_null(), "nothing written on failure");
            let bytes = b"{\"a\":\0}";
            assert_eq!(
                ach_validate_bytes(c"customer".as_ptr(), bytes.as_ptr(), bytes.len(), &mut out),
                AchResult::ACH_OK
            );
        }
        assert!(out.to_text().contains("invalid_json"));
        ach_buffer_free(out);
    }
}
