//! The calling thread's last error: the detail behind a failed call's code.

use std::cell::RefCell;

use crate::boundary::{self, out_param};
use crate::buffer::AchBuffer;
use crate::result::AchResult;

thread_local! {
    static LAST_ERROR: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Record `detail` as this thread's last error.
pub(crate) fn set(detail: String) {
    // try_with: during thread teardown the slot may be gone; then there is nobody
    // left to ask for the detail anyway.
    let _ = LAST_ERROR.try_with(|slot| {
        if let Ok(mut s) = slot.try_borrow_mut() {
            *s = detail;
        }
    });
}

/// Forget this thread's last error (a call succeeded).
pub(crate) fn clear() {
    let _ = LAST_ERROR.try_with(|slot| {
        if let Ok(mut s) = slot.try_borrow_mut() {
            s.clear();
        }
    });
}

/// This thread's last error (empty if none).
pub fn last_error() -> String {
    LAST_ERROR.try_with(|slot| slot.try_borrow().map(|s| s.clone()).unwrap_or_default()).unwrap_or_default()
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_detail_is_per_thread_and_reading_it_changes_nothing() {
        set("first".into());
        let other = std::thread::spawn(last_error).join().unwrap_or_default();
        assert_eq!(other, "");
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
}
