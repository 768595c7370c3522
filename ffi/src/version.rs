//! The library's version: a string at run time, macros at compile time.

use std::ffi::c_char;

use crate::boundary;

/// The major version of the library this header belongs to (semantic versioning:
/// changes only when the ABI breaks).
pub const ACH_VERSION_MAJOR: u32 = 0;
/// The minor version of the library this header belongs to (grows when functions
/// or result codes are added).
pub const ACH_VERSION_MINOR: u32 = 1;
/// The patch version of the library this header belongs to.
pub const ACH_VERSION_PATCH: u32 = 0;

const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");

/// The version of the library that is linked, as a static NUL-terminated string
/// (`"0.1.0"`); compare it with the `ACH_VERSION_*` macros of the header you compiled
/// against. Never NULL; never free it.
#[no_mangle]
pub extern "C" fn ach_version() -> *const c_char {
    boundary::catch(VERSION, || VERSION).as_ptr().cast()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    #[test]
    fn version_is_the_crate_version_and_the_macros_agree() {
        // SAFETY: ach_version returns a static NUL-terminated string.
        let v = unsafe { CStr::from_ptr(ach_version()) };
        assert_eq!(v.to_str().ok(), Some(env!("CARGO_PKG_VERSION")));
        let parts = [ACH_VERSION_MAJOR, ACH_VERSION_MINOR, ACH_VERSION_PATCH].map(|n| n.to_string());
        assert_eq!(parts.join("."), env!("CARGO_PKG_VERSION"), "update the ACH_VERSION_* constants");
    }
}
