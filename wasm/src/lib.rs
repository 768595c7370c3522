//! # ach-wasm: the ACH engine in the browser
//!
//! The very same rules as the server, so a form can never accept what the service
//! will refuse:
//!
//! - `validateTransaction(obj)`, `validateCustomer(obj)`, `validateMerchant(obj)`
//!   → `{valid, message, errors: [{field, code, message}]}`, identical to
//!   `achd validate` for the same input;
//! - `checkRoutingNumber(str)` (same shape) and `loadRoutingDirectory(text)` (a
//!   FedACH file; returns the record count) so "not found" works in the browser;
//! - `class Engine`: `new Engine(options)` on redb's in-memory backend and
//!   `engine.request({method, path, query, apiKey, body})` → `{status, body}`: the
//!   whole service as a sandbox in a browser tab, answering as the HTTPS API does.
//!
//! Misuse (wrong argument types) throws a JS `Error`; an invalid form is data.

mod convert;
#[cfg(feature = "engine")]
mod engine;
mod validate;

#[cfg(feature = "engine")]
pub use engine::Engine;
pub use validate::{
    check_routing_number, load_routing_directory, validate_customer, validate_merchant, validate_transaction,
};

/// The module version.
pub fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}
