//! The validation layer: pure rules over request values, no storage, no clock reads.
//!
//! Every validator walks the whole request and records every problem as
//! `{field, code, message}` with a JSON path, so a form can mark all bad fields at
//! once; the envelope message is the first problem by precedence ([`Rank`]). The
//! server, the C library and the browser module all call these same functions.

#[macro_use]
mod entry_points;

mod account;
pub mod account_validation;
pub mod customer;
mod fields;
pub mod formats;
pub mod json;
pub mod json_bounds;
pub mod merchant;
mod purpose;
mod report;
pub mod text;
pub mod transaction;
mod velocities;

use chrono::NaiveDate;
use serde_json::Value;

pub use account::{routing_number_problem, routing_number_verdict};
pub use report::{FieldError, Path, ProblemCode, Rank, RankedProblem, Report, Verdict};

use crate::error::AchError;
use crate::routing::RoutingDirectory;
use json::JsonBody;

/// What a validation may consult besides the request: today's date (Eastern) and
/// the routing directory. Both come from the host; nothing is read from the system.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// Today's date in US Eastern Time (dates "not in the future" are checked
    /// against it).
    pub today: NaiveDate,
    /// The routing directory for "not found" (message 16).
    pub directory: &'a RoutingDirectory,
}

/// The kinds of request `achd validate` and the hosts can check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `POST /transactions`
    Transaction,
    /// `POST /customers`
    Customer,
    /// `POST /merchants`
    Merchant,
}

impl Kind {
    /// Parse `transaction`, `customer` or `merchant`.
    pub fn parse(text: &str) -> Option<Kind> {
        match text {
            "transaction" => Some(Kind::Transaction),
            "customer" => Some(Kind::Customer),
            "merchant" => Some(Kind::Merchant),
            _ => None,
        }
    }

    /// The kind's name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Kind::Transaction => "transaction",
            Kind::Customer => "customer",
            Kind::Merchant => "merchant",
        }
    }
}

/// Validate a parsed request of the given kind and return the verdict.
pub fn check_body(kind: Kind, body: &JsonBody<'_>, ctx: &Context<'_>) -> Verdict {
    let report = match kind {
        Kind::Transaction => transaction::validate(body, ctx).err(),
        Kind::Customer => customer::validate(body, ctx).err(),
        Kind::Merchant => merchant::validate(body, ctx).err(),
    };
    report.unwrap_or_default().verdict()
}

/// Validate raw request bytes: invalid UTF-8 or malformed JSON is itself a verdict
/// (field `""`, code `invalid_json`, message 10), never a panic.
pub fn check_bytes(kind: Kind, bytes: &[u8], ctx: &Context<'_>) -> Verdict {
    match parse_json(bytes) {
        Ok(body) => check_body(kind, &body, ctx),
        Err(report) => report.verdict(),
    }
}

/// Validate a `serde_json::Value` (for hosts that hold one); same verdict as
/// [`check_bytes`] on its JSON text.
pub fn check_value(kind: Kind, value: &Value, ctx: &Context<'_>) -> Verdict {
    check_bytes(kind, value.to_string().as_bytes(), ctx)
}

/// Run a walk that records problems and builds a value: the value when no problem
/// was found, else every problem.
pub(crate) fn walk_all<T>(walk: impl FnOnce(&mut Report) -> Option<T>) -> Result<T, Report> {
    let mut r = Report::new();
    match walk(&mut r) {
        Some(value) if r.is_empty() => Ok(value),
        _ => Err(r),
    }
}

/// Run a validator over raw bytes (malformed JSON is a report, like any problem).
pub(crate) fn over_bytes<T>(
    bytes: &[u8],
    ctx: &Context<'_>,
    validate: fn(&JsonBody<'_>, &Context<'_>) -> Result<T, Report>,
) -> Result<T, Report> {
    validate(&parse_json(bytes)?, ctx)
}

/// Parse a request body as JSON; a failure becomes a one-problem report.
pub fn parse_json(bytes: &[u8]) -> Result<JsonBody<'_>, Report> {
    let mut r = Report::new();
    if json_bounds::check(bytes) == Err(json_bounds::Excess::TooManyValues) {
        let message = json_bounds::Excess::TooManyValues.message();
        r.push(String::new(), ProblemCode::OverLimit, message, AchError::FailedToAccept, Rank::Structure);
        return Err(r);
    }
    let failure = match std::str::from_utf8(bytes) {
        Err(e) => format!("the request body is not valid UTF-8 (byte {})", e.valid_up_to()),
        Ok(text) => match JsonBody::parse(text) {
            Ok(body) => return Ok(body),
            Err(e) => format!("the request body is not valid JSON: {e}"),
        },
    };
    r.push(String::new(), ProblemCode::InvalidJson, failure, AchError::FailedToAccept, Rank::Structure);
    Err(r)
}

#[cfg(test)]
mod transaction_tests;
