//! Bank account rules, shared by inline transaction customers and `POST /customers`.

use std::borrow::Cow;

use super::fields::{self, literal, problem, type_name, FieldRule, Member, STRUCTURE};
use super::formats::account_number_ok;
use super::json::Object;
use super::report::{FieldError, Path, ProblemCode, Rank, Report, Verdict};
use super::Context;
use crate::echo::{echo, mask_account};
use crate::error::AchError;
use crate::ids::{is_valid, IdKind, MerchantId};
use crate::model::{AccountType, BankAccount};
use crate::routing::{is_valid_routing_number, RoutingDirectory};

/// Longest accepted account holder or bank name.
pub const MAX_NAME: usize = 100;

const ROUTING: FieldRule<'static> =
    FieldRule { rank: Rank::Identifier, error: &|v| AchError::InvalidRoutingNumber { value: echo(v) } };
const ACCOUNT: FieldRule<'static> = FieldRule {
    rank: Rank::Identifier,
    error: &|v| AchError::InvalidAccountNumber { value: mask_account(v) },
};
const MERCHANT: FieldRule<'static> =
    FieldRule { rank: Rank::Identifier, error: &|v| AchError::InvalidMerchantId { value: echo(v) } };

/// A routing number member: a string of nine digits with a valid check digit, found
/// in the directory. Returns it when valid (even if not found: that is a separate,
/// later problem already recorded).
pub(crate) fn routing_number<'v>(
    r: &mut Report,
    map: &Object<'v>,
    parent: &Path<'_>,
    key: &str,
    ctx: &Context<'_>,
) -> Option<Cow<'v, str>> {
    let path = parent.key(key);
    let value = string_identifier(r, map, &path, key, ROUTING)?;
    match routing_number_problem(&value, ctx.directory) {
        None => {}
        Some((ProblemCode::NotFound, error)) => {
            // Recorded, but the number itself is well formed: returned.
            r.push(path.render(), ProblemCode::NotFound, error.to_string(), error, Rank::Directory);
        }
        Some((code, error)) => {
            problem(r, &path, code, error.to_string(), ROUTING, &value);
            return None;
        }
    }
    Some(value)
}

/// The one rule for a routing number, wherever one arrives (a transaction's
/// customer, a stored customer, a merchant's bank account, `GET /institutions`,
/// the browser's `checkRoutingNumber`): not nine digits is `invalid_format`, nine
/// digits with a bad prefix or check digit `invalid_check_digit` (both message 12),
/// absent from `directory` `not_found` (message 16). `None`: usable.
pub fn routing_number_problem(value: &str, directory: &RoutingDirectory) -> Option<(ProblemCode, AchError)> {
    if !is_valid_routing_number(value) {
        let code = if value.len() == 9 && value.bytes().all(|b| b.is_ascii_digit()) {
            ProblemCode::InvalidCheckDigit
        } else {
            ProblemCode::InvalidFormat
        };
        return Some((code, (ROUTING.error)(value)));
    }
    if directory.lookup(value).is_none() {
        return Some((ProblemCode::NotFound, AchError::RoutingNotFound { value: value.to_owned() }));
    }
    None
}

/// [`routing_number_problem`] as a verdict on the field `routing_number`.
pub fn routing_number_verdict(value: &str, directory: &RoutingDirectory) -> Verdict {
    match routing_number_problem(value, directory) {
        None => Verdict { valid: true, message: None, errors: Vec::new() },
        Some((code, error)) => Verdict {
            valid: false,
            message: Some(error.to_string()),
            errors: vec![FieldError { field: "routing_number".into(), code, message: error.to_string() }],
        },
    }
}

/// An account number member (masked to its last four in every message).
pub(crate) fn account_number<'v>(
    r: &mut Report,
    map: &Object<'v>,
    parent: &Path<'_>,
    key: &str,
) -> Option<Cow<'v, str>> {
    let path = parent.key(key);
    let value = string_identifier(r, map, &path, key, ACCOUNT)?;
    if !account_number_ok(&value) {
        let msg = (ACCOUNT.error)(&value).to_string();
        problem(r, &path, ProblemCode::InvalidFormat, msg, ACCOUNT, &value);
        return None;
    }
    Some(value)
}

/// A merchant id member (`mer_` + 22 alphanumerics); with `allow_global`, also the
/// literal `global`.
pub(crate) fn merchant_id<'v>(
    r: &mut Report,
    map: &Object<'v>,
    parent: &Path<'_>,
    allow_global: bool,
) -> Option<Cow<'v, str>> {
    let path = parent.key("merchant_id");
    let value = string_identifier(r, map, &path, "merchant_id", MERCHANT)?;
    if is_valid(IdKind::Merchant, &value) || (allow_global && value == "global") {
        return Some(value);
    }
    let msg = (MERCHANT.error)(&value).to_string();
    problem(r, &path, ProblemCode::InvalidFormat, msg, MERCHANT, &value);
    None
}

/// A member that must be a non-empty JSON string; problems use the catalogue
/// message of `rule` (so the field's message is the envelope's).
fn string_identifier<'v>(
    r: &mut Report,
    map: &Object<'v>,
    path: &Path<'_>,
    key: &str,
    rule: FieldRule<'_>,
) -> Option<Cow<'v, str>> {
    let Some(value) = fields::member(map, key) else {
        let msg = format!("{} is required", path.render());
        problem(r, path, ProblemCode::Required, msg, rule, "");
        return None;
    };
    match value.as_str() {
        Some(s) if s.is_empty() => {
            let msg = format!("{} is required", path.render());
            problem(r, path, ProblemCode::Required, msg, rule, "");
            None
        }
        Some(s) => Some(s),
        None => {
            let sent = literal(value);
            let msg = format!("{} (must be a string, not {})", (rule.error)(&sent), type_name(value));
            problem(r, path, ProblemCode::InvalidType, msg, rule, &sent);
            None
        }
    }
}

/// `checking` or `savings`.
pub(crate) fn account_type(
    r: &mut Report,
    map: &Object<'_>,
    parent: &Path<'_>,
    key: &str,
) -> Option<AccountType> {
    let text = fields::text(r, Member::required(map, parent, key), 16)?;
    let parsed = AccountType::parse(&text);
    if parsed.is_none() {
        let path = parent.key(key);
        let msg = format!("{} must be 'checking' or 'savings', not '{}'", path.render(), echo(&text));
        problem(r, &path, ProblemCode::InvalidValue, msg, STRUCTURE, &text);
    }
    parsed
}

/// `{name, routing_number, account_number, account_type}` at `path`.
pub(crate) fn bank_account(
    r: &mut Report,
    map: &Object<'_>,
    path: &Path<'_>,
    ctx: &Context<'_>,
) -> Option<BankAccount> {
    let name = fields::file_text(r, Member::required(map, path, "name"), MAX_NAME);
    let routing = routing_number(r, map, path, "routing_number", ctx);
    let account = account_number(r, map, path, "account_number");
    let kind = account_type(r, map, path, "account_type");
    Some(BankAccount {
        name: name?.into_owned(),
        routing_number: routing?.into_owned(),
        account_number: account?.into_owned(),
        account_type: kind?,
    })
}

/// Parse a merchant id already checked by [`merchant_id`].
pub(crate) fn to_merchant_id(text: &str) -> Option<MerchantId> {
    MerchantId::parse(text)
}
