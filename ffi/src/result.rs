//! `AchResult`: what every fallible function answers, its numbers and names.
//! The bottom of the crate: it imports nothing of it.

/// What a libach function answers. `ACH_OK` (0) is success; every other value is a
/// failure whose detail `ach_last_error` gives on the same thread.
///
/// The numbers are fixed: a value is never renumbered nor reused for another
/// meaning, and new values are only ever added at the end. In C the type is a
/// `uint32_t`; treat values this header does not name as failures
/// (`ach_result_name` answers `"ACH_UNKNOWN_RESULT"` for them).
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(non_camel_case_types)] // the C names, so C and Rust read alike
pub enum AchResult {
    /// Success: the out-parameters were written.
    ACH_OK = 0,
    /// An argument has a value the function does not accept: an unknown validation
    /// kind, an unknown or mistyped member of the options or of the request, an
    /// encryption key that is not 64 hex digits, a `start` that is not RFC 3339.
    ACH_INVALID_ARGUMENT = 1,
    /// A pointer argument that must not be NULL was NULL.
    ACH_NULL_POINTER = 2,
    /// A string argument is not valid UTF-8 (the detail names the argument and the
    /// byte offset of the first bad byte).
    ACH_INVALID_UTF8 = 3,
    /// A JSON argument (the options, the request) is not well-formed JSON.
    ACH_INVALID_JSON = 4,
    /// The database could not be opened or read (missing directory, no permission,
    /// already open in another engine, another format version, unreadable data).
    ACH_STORAGE = 5,
    /// The engine handle was closed by `ach_engine_close`.
    ACH_CLOSED = 6,
    /// The library hit an internal error (a Rust panic) and recovered; the detail has
    /// its message. Nothing was written to the out-parameters. Please report it.
    ACH_PANIC = 7,
    /// The encryption key is not the key this database was created with.
    ACH_WRONG_KEY = 8,
    /// The engine handle was never issued by `ach_engine_open` in this process
    /// (a forged, corrupted or uninitialised pointer).
    ACH_UNKNOWN_HANDLE = 9,
    /// The encryption key file (`<database>.key`, used when the options give no
    /// `encryption_key`) could not be read or created, or does not hold a key.
    ACH_KEY_FILE = 10,
}

/// Every result, in numeric order (not exported to C).
pub(crate) const ALL: [AchResult; 11] = [
    AchResult::ACH_OK,
    AchResult::ACH_INVALID_ARGUMENT,
    AchResult::ACH_NULL_POINTER,
    AchResult::ACH_INVALID_UTF8,
    AchResult::ACH_INVALID_JSON,
    AchResult::ACH_STORAGE,
    AchResult::ACH_CLOSED,
    AchResult::ACH_PANIC,
    AchResult::ACH_WRONG_KEY,
    AchResult::ACH_UNKNOWN_HANDLE,
    AchResult::ACH_KEY_FILE,
];

impl AchResult {
    /// The result with this number, if there is one.
    pub fn from_u32(value: u32) -> Option<AchResult> {
        ALL.iter().copied().find(|r| *r as u32 == value)
    }

    /// The C name (`"ACH_OK"`) as a NUL-terminated static string.
    pub const fn name_with_nul(self) -> &'static str {
        match self {
            AchResult::ACH_OK => "ACH_OK\0",
            AchResult::ACH_INVALID_ARGUMENT => "ACH_INVALID_ARGUMENT\0",
            AchResult::ACH_NULL_POINTER => "ACH_NULL_POINTER\0",
            AchResult::ACH_INVALID_UTF8 => "ACH_INVALID_UTF8\0",
            AchResult::ACH_INVALID_JSON => "ACH_INVALID_JSON\0",
            AchResult::ACH_STORAGE => "ACH_STORAGE\0",
            AchResult::ACH_CLOSED => "ACH_CLOSED\0",
            AchResult::ACH_PANIC => "ACH_PANIC\0",
            AchResult::ACH_WRONG_KEY => "ACH_WRONG_KEY\0",
            AchResult::ACH_UNKNOWN_HANDLE => "ACH_UNKNOWN_HANDLE\0",
            AchResult::ACH_KEY_FILE => "ACH_KEY_FILE\0",
        }
    }

    /// The C name (`"ACH_OK"`).
    pub fn name(self) -> &'static str {
        self.name_with_nul().trim_end_matches('\0')
    }
}

/// The number of an `AchResult` as C passes it: any `uint32_t`, named or not.
///
/// The header calls this type `AchResult` (cbindgen.toml renames it and does not
/// export it), so the C signature is `ach_result_name(AchResult)` while Rust receives
/// a plain integer: an unnamed number is a defined input here, never an invalid
/// enum value.
#[repr(transparent)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AchResultNumber(
    /// The number.
    pub u32,
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_fixed_and_dense() {
        for (i, r) in ALL.iter().enumerate() {
            assert_eq!(*r as u32, i as u32, "numbers are dense from 0 in ALL's order");
            assert_eq!(AchResult::from_u32(i as u32), Some(*r));
            assert!(r.name().starts_with("ACH_"));
        }
        assert_eq!(AchResult::ACH_PANIC as u32, 7);
        assert_eq!(AchResult::ACH_UNKNOWN_HANDLE as u32, 9);
        assert_eq!(AchResult::from_u32(11), None);
    }
}
