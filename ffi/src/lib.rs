//! # libach: the C ABI over the ACH engine
//!
//! `libach.so` / `libach.a` expose the engine of `ach-core` to C (and to anything that
//! can call C: COBOL, Python's ctypes, Go's cgo...). The header `include/ach.h` is
//! generated from this crate by cbindgen (`ffi/cbindgen.toml`) and checked in; the
//! test `tests/header.rs` fails when it is stale.
//!
//! The model is rustls-ffi: one file per C resource, `ach_<resource>_<verb>` names,
//! one `#[repr(u32)]` result enum with fixed numbers, outputs through out-parameters
//! written only on success, library-owned buffers released by one free function, and
//! a panic boundary on every export ([`boundary`]).
//!
//! The files form layers, each importing only those below it:
//!
//! | file | C resource |
//! |---|---|
//! | [`engine`], [`validate`], [`version`] | `AchEngine`, `ach_engine_open`, `ach_engine_request`, `ach_engine_close`; `ach_validate`, `ach_validate_bytes`; `ach_version`, `ACH_VERSION_MAJOR/MINOR/PATCH` |
//! | [`error`] | `ach_last_error` (the calling thread's last failure), `ach_result_name`, `ach_test_panic` |
//! | [`buffer`] | `AchBuffer`, `ach_buffer_free`, `ach_buffer_release` |
//! | [`boundary`] | (internal) the panic boundary ([`boundary::CallRefusal`], `run`, `catch`) and the argument checks |
//! | [`last_error`] | (internal) the calling thread's last error, recorded by the boundary |
//! | [`result`] | `AchResult`: the codes and their names |
//!
//! The Rust functions are callable from Rust too (this crate is also an rlib), which
//! is how the benches measure the cost of the C boundary.

pub mod boundary;
pub mod buffer;
pub mod engine;
pub mod error;
pub mod last_error;
pub mod result;
pub mod validate;
pub mod version;

pub use buffer::{ach_buffer_free, ach_buffer_release, AchBuffer};
pub use engine::{ach_engine_close, ach_engine_open, ach_engine_request, AchEngine};
pub use error::{ach_last_error, ach_result_name, ach_test_panic};
pub use result::AchResult;
pub use validate::{ach_validate, ach_validate_bytes};
pub use version::{ach_version, ACH_VERSION_MAJOR, ACH_VERSION_MINOR, ACH_VERSION_PATCH};
