//! What the C ABI's Rust tests share: opening an engine as C does.

use std::ffi::CString;

use ach::{ach_engine_open, AchEngine, AchResult};

/// Open an engine with these options (JSON text) through `ach_engine_open`: the
/// handle, or the code it answered.
pub fn open(options: &str) -> Result<*mut AchEngine, AchResult> {
    let options = CString::new(options).unwrap_or_else(|e| panic!("options with a NUL: {e}"));
    let mut engine = std::ptr::null_mut();
    // SAFETY: a valid C string and a valid out-pointer.
    match unsafe { ach_engine_open(options.as_ptr(), &mut engine) } {
        AchResult::ACH_OK => Ok(engine),
        other => Err(other),
    }
}
