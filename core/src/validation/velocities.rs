//! The merchant application's `velocities`: the yearly counts and amounts it
//! expects and the amounts it allows, each a count or an amount read exactly
//! from the JSON text (malformed amounts: message 14).

use super::fields::{self, problem, FieldRule, Member, Need, STRUCTURE};
use super::json::Object;
use super::report::{Path, ProblemCode as C, Rank, Report};
use crate::echo::echo;
use crate::error::AchError;
use crate::model::Velocities;
use crate::money::{AmountError, Money};

const AMOUNT: FieldRule<'static> =
    FieldRule { rank: Rank::Amount, error: &|v| AchError::InvalidAmount { value: echo(v) } };

pub(super) fn velocities(r: &mut Report, m: &Object, at: &Path<'_>) -> Option<Velocities> {
    let checks = count(r, m, at, "expected_checks_per_year");
    let average = amount(r, m, at, "expected_average_check_amount", Amount::Positive);
    let sales = amount(r, m, at, "expected_sales_per_year", Amount::NonNegative);
    let mut lowest = amount(r, m, at, "lowest_amount_allowed", Amount::Optional);
    let highest = amount(r, m, at, "highest_amount_allowed", Amount::Positive);
    let decline = fields::boolean(r, Member::required(m, at, "decline_duplicates"));
    if let (Some(Some(low)), Some(Some(high))) = (lowest, highest) {
        if low > high {
            let low_at = at.key("lowest_amount_allowed");
            let sent = fields::member(m, "lowest_amount_allowed").map(fields::literal);
            let sent = sent.as_deref().unwrap_or_default();
            let e = (AMOUNT.error)(sent);
            let high_at = at.key("highest_amount_allowed").render();
            let msg = format!("{e}: {} ({low}) is more than {high_at} ({high})", low_at.render());
            problem(r, &low_at, C::Conflict, msg, AMOUNT, sent);
            lowest = None;
        }
    }
    Some(Velocities {
        expected_checks_per_year: checks?,
        expected_average_check_amount: average??,
        expected_sales_per_year: sales??,
        lowest_amount_allowed: lowest?,
        highest_amount_allowed: highest??,
        decline_duplicates: decline?,
    })
}

/// The most zeros a count's fraction may have (`1200.000000`).
const COUNT_ZERO_FRACTION: usize = 6;

/// A count: a non-negative whole number, as a JSON number or a digit string;
/// a zero fraction of up to [`COUNT_ZERO_FRACTION`] digits (`1200.0`, what a
/// typed client writes for a "number") is the same whole number.
fn count(r: &mut Report, m: &Object, parent: &Path<'_>, key: &str) -> Option<u64> {
    let text = fields::number_or_text(r, Member::required(m, parent, key))?;
    let whole = match text.split_once('.') {
        Some((whole, fraction))
            if (1..=COUNT_ZERO_FRACTION).contains(&fraction.len()) && fraction.bytes().all(|b| b == b'0') =>
        {
            whole
        }
        _ => &text,
    };
    let digits = !whole.is_empty() && whole.bytes().all(|b| b.is_ascii_digit());
    match whole.parse::<u64>() {
        Ok(n) if digits && (whole.len() == 1 || !whole.starts_with('0')) => Some(n),
        _ => {
            let shown = echo(&text);
            let rest = format!("must be a whole number (0 or more), not '{shown}'");
            let at = parent.key(key);
            let message = format!("{} {rest}", at.render());
            problem(r, &at, C::InvalidFormat, message, STRUCTURE, "");
            None
        }
    }
}

/// What a velocity amount may be.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Amount {
    /// Required, more than zero.
    Positive,
    /// Required, zero or more.
    NonNegative,
    /// Optional, zero or more.
    Optional,
}

/// An amount (message 14 when malformed).
fn amount(r: &mut Report, m: &Object, parent: &Path<'_>, key: &str, kind: Amount) -> Option<Option<Money>> {
    let before = r.problems().len();
    let need = match kind {
        Amount::Optional => Need::Optional,
        _ => Need::Required,
    };
    let Some(text) = fields::number_or_text(r, Member::new(m, parent, key, need)) else {
        return (r.problems().len() == before).then_some(None);
    };
    let positive = kind == Amount::Positive;
    let parse =
        if key == "expected_sales_per_year" { Money::parse_yearly } else { Money::parse_non_negative };
    let parsed = parse(&text).and_then(|money| match money.cents() {
        0 if positive => Err(AmountError::Zero),
        _ => Ok(money),
    });
    let detail = match parsed {
        Ok(money) => return Some(Some(money)),
        Err(AmountError::Malformed) if positive => "must be a positive amount with at most two decimals",
        Err(AmountError::Malformed) => "must be an amount (0 or more) with at most two decimals",
        Err(AmountError::Zero) => "must be more than zero",
        Err(AmountError::TooLarge) if key == "expected_sales_per_year" => "is too large",
        Err(AmountError::TooLarge) => "is more than 99,999,999.99",
    };
    let at = parent.key(key);
    let e = (AMOUNT.error)(&text);
    let msg = format!("{e}: {} {detail}", at.render());
    problem(r, &at, C::InvalidAmount, msg, AMOUNT, &text);
    None
}
