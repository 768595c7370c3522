//! Requests of account validation: a new validation
//! (`POST /customers/{token}/validations`), the confirmation of
//! micro-entries, and the outside validation a WEB debit may carry
//! (`account_validation`).

use super::fields::{self, problem, FieldRule, Member, STRUCTURE};
use super::json::{JsonBody, Object};
use super::report::{Path, ProblemCode, Rank, Report};
use super::{account, walk_all};
use crate::echo::echo;
use crate::error::AchError;
use crate::model::{Confirmation, NewValidation, OutsideValidation, ValidationMethod};
use crate::money::Money;

/// Longest outside provider's name.
pub const MAX_PROVIDER: usize = 64;
/// Longest outside reference.
pub const MAX_REFERENCE: usize = 128;
/// Smallest and largest micro-entry credit.
pub const MICRO_RANGE: (Money, Money) = (Money::from_cents(1), Money::from_cents(99));

const RULE: FieldRule<'static> = FieldRule { rank: Rank::Structure, error: &|_| AchError::FailedToAccept };

/// A new validation's body.
pub fn new_validation(body: &JsonBody<'_>) -> Result<NewValidation, Report> {
    walk_all(|r| {
        let map = fields::root_object(r, body)?;
        let root = Path::ROOT;
        let merchant = account::merchant_id(r, map, &root, false);
        let method = method(r, map, &root);
        let (provider, reference) = match method {
            Some(ValidationMethod::Outside) => {
                let (p, re) = provider_and_reference(r, map, &root);
                (p.map(Some), re.map(Some))
            }
            _ => (Some(None), Some(None)),
        };
        Some(NewValidation {
            merchant_id: account::to_merchant_id(&merchant?)?,
            method: method?,
            provider: provider?,
            reference: reference?,
        })
    })
}

/// A confirmation's body: `amounts`, the two micro-entry credits.
pub fn confirmation(body: &JsonBody<'_>) -> Result<Confirmation, Report> {
    walk_all(|r| {
        let map = fields::root_object(r, body)?;
        let root = Path::ROOT;
        let path = root.key("amounts");
        let items = fields::array(r, Member::required(map, &root, "amounts"))?;
        if items.len() != 2 {
            let msg = format!("amounts must hold the two micro-entry credits, not {}", items.len());
            problem(r, &path, ProblemCode::InvalidValue, msg, RULE, "");
            return None;
        }
        let mut amounts = [Money::from_cents(0); 2];
        let mut ok = true;
        for (i, item) in items.iter().enumerate() {
            let text = fields::literal(*item);
            match Money::parse(&text) {
                Ok(m) if (MICRO_RANGE.0..=MICRO_RANGE.1).contains(&m) => amounts[i] = m,
                _ => {
                    let msg =
                        format!("amounts[{i}] must be an amount from 0.01 to 0.99, not '{}'", echo(&text));
                    problem(r, &path.index(i), ProblemCode::InvalidAmount, msg, RULE, &text);
                    ok = false;
                }
            }
        }
        ok.then_some(Confirmation { amounts })
    })
}

/// A transaction's optional `account_validation`: `{"method": "outside",
/// "provider", "reference"}`. `Some(None)` when absent; `None` when a
/// problem was recorded.
pub(crate) fn outside(
    r: &mut Report,
    map: &Object<'_>,
    parent: &Path<'_>,
) -> Option<Option<OutsideValidation>> {
    if fields::member(map, "account_validation").is_none() {
        return Some(None);
    }
    let path = parent.key("account_validation");
    let obj = fields::object(r, Member::required(map, parent, "account_validation"))?;
    let method = method(r, &obj, &path);
    if method.is_some_and(|m| m != ValidationMethod::Outside) {
        let msg =
            "account_validation on a transaction records an outside validation: its method is 'outside' \
                   (prenotes and micro-entries are made with POST /customers/{customer_token}/validations)";
        problem(r, &path.key("method"), ProblemCode::InvalidValue, msg, RULE, "");
        return None;
    }
    let (provider, reference) = provider_and_reference(r, &obj, &path);
    method?;
    Some(Some(OutsideValidation { provider: provider?, reference: reference? }))
}

/// `method`: one of the three.
fn method(r: &mut Report, map: &Object<'_>, parent: &Path<'_>) -> Option<ValidationMethod> {
    let text = fields::text(r, Member::required(map, parent, "method"), 32)?;
    let parsed = ValidationMethod::parse(&text);
    if parsed.is_none() {
        let msg = format!("method must be 'prenote', 'micro_entries' or 'outside', not '{}'", echo(&text));
        problem(r, &parent.key("method"), ProblemCode::InvalidValue, msg, STRUCTURE, &text);
    }
    parsed
}

/// An outside validation's `provider` and `reference`, both required.
fn provider_and_reference(
    r: &mut Report,
    map: &Object<'_>,
    parent: &Path<'_>,
) -> (Option<String>, Option<String>) {
    let provider = fields::text(r, Member::required(map, parent, "provider"), MAX_PROVIDER);
    let reference = fields::text(r, Member::required(map, parent, "reference"), MAX_REFERENCE);
    (provider.map(|p| p.into_owned()), reference.map(|r| r.into_owned()))
}
