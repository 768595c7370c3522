//! # libach: the C ABI over the ACH engine
//!
//! Built out in its own issue; today it exposes the library version.

use std::ffi::c_char;

/// The library version as a static NUL-terminated string (never freed).
#[no_mangle]
pub extern "C" fn ach_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    #[test]
    fn version_is_the_crate_version() {
        // SAFETY: ach_version returns a static NUL-terminated string.
        let v = unsafe { CStr::from_ptr(ach_version()) };
        assert_eq!(v.to_str().ok(), Some(env!("CARGO_PKG_VERSION")));
    }
}
