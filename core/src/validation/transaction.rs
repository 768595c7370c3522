//! `POST /transactions` rules.

use std::borrow::Cow;

use super::account::{self, bank_account};
use super::fields::{self, problem, FieldRule, Member, STRUCTURE};
use super::formats::{check_image, terminal_state_ok, ImageError};
use super::json::{JsonBody, JsonType, Object};
use super::report::{Path, ProblemCode, Rank, Report};
use super::Context;
use crate::echo::echo;
use crate::error::AchError;
use crate::ids::{CustomerId, IdKind};
use crate::model::{CustomerRef, Direction, EntryClass, NewTransaction};
use crate::money::{AmountError, Money, CREDIT_MAX};

/// Longest description.
pub const MAX_DESCRIPTION: usize = 255;
/// Longest check number (the NACHA check serial number field).
pub const MAX_CHECK_NUMBER: usize = 15;
/// The most a Same Day ACH entry may carry: $1,000,000.00 (Nacha's per-entry
/// limit since March 2020).
pub const SAME_DAY_MAX: Money = Money::from_cents(100_000_000);

const AMOUNT: FieldRule<'static> =
    FieldRule { rank: Rank::Amount, error: &|v| AchError::InvalidAmount { value: echo(v) } };
const CLASS: FieldRule<'static> = FieldRule { rank: Rank::ClassRule, error: &|_| AchError::FailedToAccept };
const TOKEN: FieldRule<'static> = FieldRule { rank: Rank::Identifier, error: &|_| AchError::FailedToAccept };
const INLINE_KEYS: [&str; 4] = ["name", "routing_number", "account_number", "account_type"];

entry_points!(NewTransaction, "a transaction request");

fn walk(r: &mut Report, value: &JsonBody<'_>, ctx: &Context<'_>) -> Option<NewTransaction> {
    let map = fields::root_object(r, value)?;
    let root = Path::ROOT;
    let merchant = account::merchant_id(r, map, &root, false);
    let amount = amount(r, map, &root);
    let description = fields::file_text(r, Member::required(map, &root, "description"), MAX_DESCRIPTION);
    let direction = direction(r, map, &root);
    let class = entry_class(r, map, &root);
    // A member the class does not use is ignored like an unknown member: not read,
    // not type-checked, not stored (and with no valid class, none is used).
    let used = |rule: fn(EntryClass) -> bool| class.filter(|c| rule(*c));
    let check_number = match used(EntryClass::uses_check_number) {
        Some(class) => check_number(r, map, &root, class),
        None => Some(None),
    };
    let state = match used(EntryClass::requires_state) {
        Some(_) => terminal_state(r, map, &root).map(Some),
        None => Some(None),
    };
    let (front, back) = match used(EntryClass::requires_images) {
        Some(class) => (
            image(r, map, &root, "check_image_front", class).map(Some),
            image(r, map, &root, "check_image_back", class).map(Some),
        ),
        None => (Some(None), Some(None)),
    };
    let customer = customer(r, map, &root, ctx);
    let purpose = super::purpose::purpose(r, map, &root, class.zip(direction));
    let account_validation = super::account_validation::outside(r, map, &root);
    let same_day = same_day(r, map, &root, class, amount);

    if let (Some(amount), Some(direction)) = (amount, direction) {
        if direction == Direction::Credit && amount > CREDIT_MAX {
            let path = root.key("amount");
            let e = AchError::CreditsLimited;
            r.push(path.render(), ProblemCode::OverLimit, e.to_string(), e, Rank::Amount);
        }
    }
    if let (Some(class), Some(direction)) = (class, direction) {
        if class.debit_only() && direction == Direction::Credit {
            let e = AchError::NotAccepted { transaction_type: format!("{} credit", class.as_str()) };
            let msg = format!("{} entries are debit-only: {e}", class.as_str());
            r.push("type".into(), ProblemCode::DirectionNotAllowed, msg, e, Rank::ClassRule);
        }
    }
    if let (Some(class), Some(amount)) = (class, amount) {
        if let Some(cap) = class.entry_cap() {
            if amount > cap {
                // The network's cap, not the merchant's limit (message 21 says "for this
                // merchant"): the amount is invalid for the class, message 14.
                let sent = fields::member(map, "amount").map(fields::literal).unwrap_or_default();
                let e = AchError::InvalidAmount { value: echo(&sent) };
                let msg = format!(
                    "{e}: {} entries are limited to {} each by the Nacha rules",
                    class.as_str(),
                    cap.dollars()
                );
                r.push(root.key("amount").render(), ProblemCode::OverLimit, msg, e, Rank::Amount);
            }
        }
    }
    Some(NewTransaction {
        merchant_id: account::to_merchant_id(&merchant?)?,
        amount: amount?,
        description: description?.into_owned(),
        direction: direction?,
        standard_entry_class: class?,
        check_number: check_number?,
        check_image_front: front?,
        check_image_back: back?,
        state: state?,
        customer: customer?,
        purpose: purpose?,
        account_validation: account_validation?,
        same_day: same_day?,
    })
}

/// `same_day`: true, false, or left out or null (false). A same-day entry is
/// at most [`SAME_DAY_MAX`] (message 14, problem `same_day_limit`), and
/// never an ICL item (a check image, not an ACH entry: message 10).
fn same_day(
    r: &mut Report,
    map: &Object<'_>,
    root: &Path<'_>,
    class: Option<EntryClass>,
    amount: Option<Money>,
) -> Option<bool> {
    if fields::member(map, "same_day").is_none_or(|v| v.is_null()) {
        return Some(false);
    }
    let same_day = fields::boolean(r, Member::new(map, root, "same_day", fields::Need::Optional))?;
    if !same_day {
        return Some(false);
    }
    if class == Some(EntryClass::ICL) {
        let msg = "ICL items are check images, not ACH entries: they cannot be sent same day";
        problem(r, &root.key("same_day"), ProblemCode::InvalidValue, msg.to_owned(), CLASS, "true");
    }
    if let Some(amount) = amount.filter(|a| *a > SAME_DAY_MAX) {
        let sent = fields::member(map, "amount").map(fields::literal).unwrap_or_default();
        let e = AchError::InvalidAmount { value: echo(&sent) };
        let msg = format!(
            "{e}: Same Day ACH entries are limited to {} each ({} sent)",
            SAME_DAY_MAX.dollars(),
            amount.dollars()
        );
        r.push(root.key("amount").render(), ProblemCode::SameDayLimit, msg, e, Rank::Amount);
    }
    Some(true)
}

/// `amount`: a JSON number or numeric string, parsed exactly (message 14).
pub(crate) fn amount(r: &mut Report, map: &Object<'_>, parent: &Path<'_>) -> Option<Money> {
    let path = parent.key("amount");
    let text = fields::number_or_text(r, Member::required(map, parent, "amount").rule(AMOUNT))?;
    match Money::parse(&text) {
        Ok(m) => Some(m),
        Err(why) => {
            let detail = match why {
                AmountError::Malformed => "must be a positive amount with at most two decimals",
                AmountError::Zero => "must be more than zero",
                AmountError::TooLarge => "is more than an ACH entry can carry (99,999,999.99)",
            };
            let e = AchError::InvalidAmount { value: echo(&text) };
            let msg = format!("{e}: amount {detail}");
            r.push(path.render(), ProblemCode::InvalidAmount, msg, e, Rank::Amount);
            None
        }
    }
}

fn direction(r: &mut Report, map: &Object<'_>, parent: &Path<'_>) -> Option<Direction> {
    let text = fields::text(r, Member::required(map, parent, "type"), 16)?;
    let parsed = Direction::parse(&text);
    if parsed.is_none() {
        let path = parent.key("type");
        let msg = format!("type must be 'debit' or 'credit', not '{}'", echo(&text));
        problem(r, &path, ProblemCode::InvalidValue, msg, STRUCTURE, &text);
    }
    parsed
}

fn entry_class(r: &mut Report, map: &Object<'_>, parent: &Path<'_>) -> Option<EntryClass> {
    let text = fields::text(r, Member::required(map, parent, "standard_entry_class"), 16)?;
    let parsed = EntryClass::parse(&text);
    if parsed.is_none() {
        let e = AchError::NotAccepted { transaction_type: echo(&text) };
        let msg = format!(
            "'{}' is not a standard entry class the service accepts (PPD, WEB, CCD, TEL, BOC, POP, ICL)",
            echo(&text)
        );
        r.push("standard_entry_class".into(), ProblemCode::InvalidValue, msg, e, Rank::ClassRule);
    }
    parsed
}

/// `check_number` of a class that uses it: `Some(None)` when absent and allowed;
/// `None` when a problem was recorded.
fn check_number(
    r: &mut Report,
    map: &Object<'_>,
    parent: &Path<'_>,
    class: EntryClass,
) -> Option<Option<String>> {
    let required = class.requires_check_number();
    let path = parent.key("check_number");
    let text = match fields::member(map, "check_number") {
        None => None,
        Some(n) if n.json_type() == JsonType::Number => Some(n.text().to_owned()),
        Some(n) if n.json_type() == JsonType::String => {
            n.as_str().filter(|s| !s.is_empty()).map(Cow::into_owned)
        }
        Some(other) => {
            let msg = format!("check_number must be a string of digits, not {}", fields::type_name(other));
            problem(r, &path, ProblemCode::InvalidType, msg, CLASS, "");
            return None;
        }
    };
    match text {
        None if required => {
            let e = AchError::CheckNumberRequired { transaction_type: class.as_str().to_owned() };
            let msg = e.to_string();
            r.push(path.render(), ProblemCode::Required, msg, e, Rank::ClassRule);
            None
        }
        None => Some(None),
        Some(t) if (1..=MAX_CHECK_NUMBER).contains(&t.len()) && t.bytes().all(|b| b.is_ascii_digit()) => {
            Some(Some(t))
        }
        Some(t) => {
            let msg = format!("check_number must be 1 to {MAX_CHECK_NUMBER} digits, not '{}'", echo(&t));
            problem(r, &path, ProblemCode::InvalidFormat, msg, CLASS, &t);
            None
        }
    }
}

/// The POP terminal's `state` (message 9 when missing or not a code): a state or
/// territory code in any letter case, stored upper case.
fn terminal_state(r: &mut Report, map: &Object<'_>, parent: &Path<'_>) -> Option<String> {
    let rule = FieldRule { rank: Rank::ClassRule, error: &|_| AchError::StateRequired };
    let text = fields::text(r, Member::required(map, parent, "state").rule(rule), 2)?;
    // ASCII only: a Unicode case mapping would turn look-alikes (`ſ` to `S`) into codes.
    let upper = text.to_ascii_uppercase();
    if terminal_state_ok(&upper) {
        return Some(upper);
    }
    let path = parent.key("state");
    let msg = format!("state must be a US state or territory code (like NY or PR), not '{}'", echo(&text));
    problem(r, &path, ProblemCode::InvalidValue, msg, rule, &text);
    None
}

/// A check image of a class that requires it (BOC, POP, ICL).
fn image(
    r: &mut Report,
    map: &Object<'_>,
    parent: &Path<'_>,
    key: &str,
    class: EntryClass,
) -> Option<String> {
    let path = parent.key(key);
    let text = match fields::member(map, key) {
        None => None,
        Some(n) if n.json_type() == JsonType::String => n.as_str().filter(|s| !s.is_empty()),
        Some(other) => {
            let msg = format!("{key} must be a base64 string, not {}", fields::type_name(other));
            problem(r, &path, ProblemCode::InvalidType, msg, CLASS, "");
            return None;
        }
    };
    let Some(text) = text else {
        let msg = format!("{key} is required for {} transactions", class.as_str());
        problem(r, &path, ProblemCode::Required, msg, CLASS, "");
        return None;
    };
    match check_image(&text) {
        Ok(()) => Some(text.into_owned()),
        Err(why) => {
            let (code, msg) = match why {
                ImageError::Base64 => (ProblemCode::InvalidBase64, format!("{key} is not valid base64")),
                ImageError::TooLarge => (ProblemCode::OverLimit, format!("{key} is larger than 1 MiB")),
                ImageError::NotAnImage => {
                    (ProblemCode::NotAnImage, format!("{key} is not a TIFF, JPEG or PNG image"))
                }
            };
            problem(r, &path, code, msg, CLASS, "");
            None
        }
    }
}

fn customer(r: &mut Report, map: &Object<'_>, parent: &Path<'_>, ctx: &Context<'_>) -> Option<CustomerRef> {
    let obj = fields::object(r, Member::required(map, parent, "customer"))?;
    let path = parent.key("customer");
    let has_inline = INLINE_KEYS.into_iter().any(|k| fields::member(&obj, k).is_some());
    if fields::member(&obj, "id").is_none() {
        if !has_inline {
            let msg = "customer needs either an id (cus_...) or name, routing_number, account_number and account_type";
            problem(r, &path, ProblemCode::Required, msg, STRUCTURE, "");
            return None;
        }
        return bank_account(r, &obj, &path, ctx).map(CustomerRef::Inline);
    }
    let inline: Vec<&str> = INLINE_KEYS.into_iter().filter(|k| fields::member(&obj, k).is_some()).collect();
    if !inline.is_empty() {
        let msg = format!(
            "customer must be either {{id}} or the account details, not both (remove {})",
            inline.join(", ")
        );
        problem(r, &path, ProblemCode::Conflict, msg, STRUCTURE, "");
        return None;
    }
    let id = fields::text(r, Member::required(&obj, &path, "id").rule(TOKEN), 64)?;
    match CustomerId::parse(&id) {
        Some(id) => Some(CustomerRef::Token { id }),
        None => {
            let id_path = path.key("id");
            let msg = format!("'{}' is not a customer token ({}...)", echo(&id), IdKind::Customer.prefix());
            problem(r, &id_path, ProblemCode::InvalidFormat, msg, TOKEN, &id);
            None
        }
    }
}
