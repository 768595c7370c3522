//! `POST /customers` rules.

use super::account::{self, bank_account};
use super::fields;
use super::json::JsonBody;
use super::report::{Path, Report};
use super::Context;
use crate::model::{CustomerScope, NewCustomer};

/// Validate a request body given as bytes (what the engine receives).
pub fn validate_bytes(bytes: &[u8], ctx: &Context<'_>) -> Result<NewCustomer, Report> {
    super::over_bytes(bytes, ctx, validate)
}

/// Validate a `serde_json::Value` (for Rust hosts that hold one).
pub fn validate_value(value: &serde_json::Value, ctx: &Context<'_>) -> Result<NewCustomer, Report> {
    validate_bytes(value.to_string().as_bytes(), ctx)
}

/// Validate a customer request; every problem is recorded in the report.
pub fn validate(value: &JsonBody<'_>, ctx: &Context<'_>) -> Result<NewCustomer, Report> {
    super::walk_all(|r| walk(r, value, ctx))
}

fn walk(r: &mut Report, value: &JsonBody<'_>, ctx: &Context<'_>) -> Option<NewCustomer> {
    let map = fields::root_object(r, value)?;
    let root = Path::ROOT;
    let merchant = account::merchant_id(r, map, &root, true);
    let account = bank_account(r, map, &root, ctx);
    let scope = match &*merchant? {
        "global" => CustomerScope::Global,
        id => CustomerScope::Merchant(account::to_merchant_id(id)?),
    };
    Some(NewCustomer { merchant_id: scope, account: account? })
}
