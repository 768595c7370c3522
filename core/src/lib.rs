//! # ach-core
//!
//! The engine of the ACH (bank draft) payment service: the spec's validation rules,
//! the error catalogue, money, identifiers, the routing directory, the banking
//! calendar, and (over redb) the stateful engine. One core, exposed as this crate,
//! a C library, a WebAssembly module and an HTTPS server, so every host runs the
//! very same rules.

pub mod api;
pub mod calendar;
pub mod categories;
pub mod clock;
pub mod echo;
pub mod engine;
pub mod error;
pub mod ids;
pub mod lifecycle;
pub mod limits;
pub mod model;
pub mod money;
pub mod nacha;
pub mod nonblocking;
mod record_problem;
pub mod returns;
pub mod routing;
pub mod secrets;
mod storage;
pub mod validation;
pub mod x9;

pub use error::AchError;
pub use money::Money;
