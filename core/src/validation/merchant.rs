//! `POST /merchants` rules (placeholder until the merchant validator lands).

use serde_json::Value;

use super::report::Report;
use super::Context;

/// Validate a merchant application.
pub fn validate(_value: &Value, _ctx: &Context<'_>) -> Result<(), Report> {
    Ok(())
}
