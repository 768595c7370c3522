//! What a failure says, for C: the calling thread's last error
//! (`ach_last_error`), a result's name (`ach_result_name`) and a caught panic on
//! demand (`ach_test_panic`).

use std::ffi::c_char;

use crate::boundary::{self, out_param, CallRefusal};
use crate::buffer::AchBuffer;
use crate::last_error::last_error;
use crate::result::{AchResult, AchResultNumber};

/// The detail of the calling thread's last failure, as text in a new buffer
/// (release it with `ach_buffer_free`): which argument was NULL, which option
/// member is unknown, the database's error, a panic's message...
///
/// Every function that answers an `AchResult` records a detail when it fails and
/// clears it when it succeeds, so after a call this describes that call; the
/// detail is the empty string when the last call succeeded (or none was made).
/// It is per thread: a failure on one thread never shows on another.
/// `ach_last_error` itself does not change it.
///
/// Answers `ACH_OK` with `*out` written, or `ACH_NULL_POINTER` if `out` is NULL
/// (then the recorded detail is left as it was).
///
/// # Safety
/// `out` is NULL or points to writable memory for one `AchBuffer`.
#[no_mangle]
pub unsafe extern "C" fn ach_last_error(out: *mut AchBuffer) -> AchResult {
    let detail = last_error();
    let answer = boundary::catch(Err(AchResult::ACH_PANIC), || {
        let out = out_param(out, "out").map_err(|r| r.code)?;
        // SAFETY: `out` is not NULL (checked) and writable by the caller's contract.
        unsafe { out.as_ptr().write(AchBuffer::from_text(detail)) };
        Ok(())
    });
    // Not through boundary::run: asking for the detail must not clear it, nor
    // replace it with "out is NULL".
    match answer {
        Ok(()) => AchResult::ACH_OK,
        Err(code) => code,
    }
}

const UNKNOWN: &str = "ACH_UNKNOWN_RESULT\0";

/// The name of a result as a static NUL-terminated string: `"ACH_OK"`,
/// `"ACH_NULL_POINTER"`... and `"ACH_UNKNOWN_RESULT"` for a number this library does
/// not define. Never NULL; never free it. Never fails, any value is accepted.
#[no_mangle]
pub extern "C" fn ach_result_name(result: AchResultNumber) -> *const c_char {
    let name =
        boundary::catch(UNKNOWN, || AchResult::from_u32(result.0).map_or(UNKNOWN, AchResult::name_with_nul));
    name.as_ptr().cast()
}

/// Raise an internal error (a Rust panic) inside the library and catch it at the
/// boundary, as any function would: answers `ACH_PANIC`, and `ach_last_error` then
/// says "panic: ach_test_panic was called". For hosts to test their handling of
/// `ACH_PANIC`; it changes nothing else and prints nothing.
#[no_mangle]
pub extern "C" fn ach_test_panic() -> AchResult {
    boundary::run(|| -> Result<(), CallRefusal> {
        // resume_unwind unwinds like a panic but skips the panic hook, so nothing is
        // printed on the host's standard error.
        std::panic::resume_unwind(Box::new("ach_test_panic was called"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::last_error::{clear, set};
    use crate::result::ALL;
    use std::ffi::CStr;

    #[test]
    fn reading_the_detail_changes_nothing() {
        set("first".into());
        let mut buf = AchBuffer::default();
        // SAFETY: `buf` is a valid AchBuffer to write.
        assert_eq!(unsafe { ach_last_error(&mut buf) }, AchResult::ACH_OK);
        assert_eq!(buf.as_bytes(), b"first");
        crate::buffer::ach_buffer_free(buf);
        // SAFETY: NULL is allowed (answers a code).
        assert_eq!(unsafe { ach_last_error(std::ptr::null_mut()) }, AchResult::ACH_NULL_POINTER);
        assert_eq!(last_error(), "first");
        clear();
        assert_eq!(last_error(), "");
    }

    fn name(n: u32) -> String {
        // SAFETY: ach_result_name always returns a static NUL-terminated string.
        unsafe { CStr::from_ptr(ach_result_name(AchResultNumber(n))) }.to_string_lossy().into_owned()
    }

    #[test]
    fn names_match_the_numbers() {
        for r in ALL {
            assert_eq!(name(r as u32), r.name());
        }
        assert_eq!(name(11), "ACH_UNKNOWN_RESULT");
        assert_eq!(name(u32::MAX), "ACH_UNKNOWN_RESULT");
    }

    #[test]
    fn the_test_panic_is_caught() {
        assert_eq!(ach_test_panic(), AchResult::ACH_PANIC);
        assert_eq!(last_error(), "panic: ach_test_panic was called");
    }
}
