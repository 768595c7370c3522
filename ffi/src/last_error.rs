//! The calling thread's last error: the detail behind a failed call's code.
//!
//! Recorded by the boundary ([`crate::boundary`]) when a call fails, cleared when
//! one succeeds, and handed to C by `ach_last_error` ([`crate::error`]).

use std::cell::RefCell;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_detail_is_per_thread() {
        set("first".into());
        let other = std::thread::spawn(last_error).join().unwrap_or_default();
        assert_eq!(other, "");
        assert_eq!(last_error(), "first");
        clear();
        assert_eq!(last_error(), "");
    }
}
