//! The checker's look at the header and control records: header fields that
//! must hold a date, a time, a routing number or a code, and control counts
//! and totals compared with what their bundle, cash letter or file holds.

use chrono::{NaiveDate, NaiveTime};

use super::frame::Record;
use super::records::{
    bundle_control, bundle_header, cash_letter_control, cash_letter_header, file_control, file_header, Field,
};
use super::report::Found;

/// What a bundle, a cash letter or a file holds. Counts and amounts saturate
/// rather than overflow on a hostile file.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Totals {
    pub cash_letters: u64,
    pub bundles: u64,
    /// Check details (`25`) and returns (`31`).
    pub items: u64,
    pub amount: i64,
    /// The amounts of check details whose MICR valid indicator is `1`.
    pub micr_valid_amount: i64,
    /// Credits (`61`, `62`), counted in a control's items and amount only when
    /// its credit total indicator is `1`.
    pub credits: u64,
    pub credit_amount: i64,
    /// Image views (`50`).
    pub images: u64,
}

impl Totals {
    pub fn add(&mut self, other: &Totals) {
        self.cash_letters = self.cash_letters.saturating_add(other.cash_letters);
        self.bundles = self.bundles.saturating_add(other.bundles);
        self.items = self.items.saturating_add(other.items);
        self.amount = self.amount.saturating_add(other.amount);
        self.micr_valid_amount = self.micr_valid_amount.saturating_add(other.micr_valid_amount);
        self.credits = self.credits.saturating_add(other.credits);
        self.credit_amount = self.credit_amount.saturating_add(other.credit_amount);
        self.images = self.images.saturating_add(other.images);
    }

    /// Items and amount as a control with `credit_total` (`1`: credits
    /// included) counts them.
    fn items_and_amount(&self, credit_total: bool) -> (u64, i64) {
        if credit_total {
            (self.items.saturating_add(self.credits), self.amount.saturating_add(self.credit_amount))
        } else {
            (self.items, self.amount)
        }
    }
}

/// A numeric (N) field's value: digits only, at least one.
pub(crate) fn digits(text: &str) -> Option<u64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

pub(crate) fn file_header(found: &mut Found, r: &Record<'_>) {
    use file_header as f;
    one_of(found, r, f::STANDARD_LEVEL, &["03", "30", "35"]);
    one_of(found, r, f::TEST_FILE, &["T", "P"]);
    routing(found, r, f::DESTINATION);
    routing(found, r, f::ORIGIN);
    date(found, r, f::CREATION_DATE);
    time(found, r, f::CREATION_TIME);
    one_of(found, r, f::RESEND, &["Y", "N"]);
}

pub(crate) fn cash_letter_header(found: &mut Found, r: &Record<'_>) {
    use cash_letter_header as f;
    routing(found, r, f::DESTINATION);
    routing(found, r, f::ECE_INSTITUTION);
    date(found, r, f::BUSINESS_DATE);
    date(found, r, f::CREATION_DATE);
    time(found, r, f::CREATION_TIME);
}

pub(crate) fn bundle_header(found: &mut Found, r: &Record<'_>) {
    use bundle_header as f;
    routing(found, r, f::DESTINATION);
    routing(found, r, f::ECE_INSTITUTION);
    date(found, r, f::BUSINESS_DATE);
    date(found, r, f::CREATION_DATE);
}

pub(crate) fn bundle_control(found: &mut Found, r: &Record<'_>, t: &Totals) {
    use bundle_control as f;
    let (items, amount) = t.items_and_amount(credit_total(found, r, f::CREDIT_TOTAL));
    count(found, r, f::ITEMS_COUNT, items, "the bundle holds", "items");
    cents(found, r, f::TOTAL_AMOUNT, amount, "the bundle's items add up to");
    // Conditional: all blank when not used.
    if r.text(f::MICR_VALID_TOTAL).is_some_and(|t| !t.trim().is_empty()) {
        cents(
            found,
            r,
            f::MICR_VALID_TOTAL,
            t.micr_valid_amount,
            "its items of MICR valid indicator 1 add up to",
        );
    }
    count(found, r, f::IMAGES_COUNT, t.images, "the bundle holds", "image views");
}

pub(crate) fn cash_letter_control(found: &mut Found, r: &Record<'_>, t: &Totals) {
    use cash_letter_control as f;
    let (items, amount) = t.items_and_amount(credit_total(found, r, f::CREDIT_TOTAL));
    count(found, r, f::BUNDLE_COUNT, t.bundles, "the cash letter holds", "bundles");
    count(found, r, f::ITEMS_COUNT, items, "the cash letter holds", "items");
    cents(found, r, f::TOTAL_AMOUNT, amount, "the cash letter's items add up to");
    count(found, r, f::IMAGES_COUNT, t.images, "the cash letter holds", "image views");
}

pub(crate) fn file_control(found: &mut Found, r: &Record<'_>, t: &Totals, records: usize) {
    use file_control as f;
    let (items, amount) = t.items_and_amount(credit_total(found, r, f::CREDIT_TOTAL));
    count(found, r, f::CASH_LETTER_COUNT, t.cash_letters, "the file holds", "cash letters");
    count(found, r, f::RECORD_COUNT, u64::try_from(records).unwrap_or(u64::MAX), "the file holds", "records");
    count(found, r, f::ITEMS_COUNT, items, "the file holds", "items");
    cents(found, r, f::TOTAL_AMOUNT, amount, "the file's items add up to");
}

/// The credit total indicator: `1` credits are in the control's totals, `0`
/// (or blank) they are not.
fn credit_total(found: &mut Found, r: &Record<'_>, field: Field) -> bool {
    let text = r.text(field).unwrap_or_default();
    match text.as_str() {
        "1" => true,
        "0" | " " | "" => false,
        other => {
            found.problem(r.number, field.name, format!("{other:?} is not 0 or 1"));
            false
        }
    }
}

fn count(found: &mut Found, r: &Record<'_>, field: Field, actual: u64, holder: &str, unit: &str) {
    let Some(text) = r.text(field) else { return };
    match digits(&text) {
        None => found.problem(r.number, field.name, format!("{text:?} is not a number")),
        Some(declared) if declared != actual => {
            found.problem(r.number, field.name, format!("{declared}, but {holder} {actual} {unit}"))
        }
        Some(_) => {}
    }
}

fn cents(found: &mut Found, r: &Record<'_>, field: Field, actual: i64, holder: &str) {
    let Some(text) = r.text(field) else { return };
    match digits(&text) {
        None => found.problem(r.number, field.name, format!("{text:?} is not an amount in cents")),
        Some(declared) if i64::try_from(declared).ok() != Some(actual) => {
            found.problem(r.number, field.name, format!("{declared} cents, but {holder} {actual}"))
        }
        Some(_) => {}
    }
}

fn one_of(found: &mut Found, r: &Record<'_>, field: Field, allowed: &[&str]) {
    let Some(text) = r.text(field) else { return };
    if !allowed.contains(&text.as_str()) {
        found.problem(r.number, field.name, format!("{text:?} is not one of {}", allowed.join(", ")));
    }
}

fn routing(found: &mut Found, r: &Record<'_>, field: Field) {
    let Some(text) = r.text(field) else { return };
    if text.len() != 9 || digits(&text).is_none() {
        found.problem(r.number, field.name, format!("{text:?} is not nine digits"));
    }
}

fn date(found: &mut Found, r: &Record<'_>, field: Field) {
    let Some(text) = r.text(field) else { return };
    // Eight digits first: chrono alone would take a shorter year.
    if digits(&text).is_none() || NaiveDate::parse_from_str(&text, "%Y%m%d").is_err() {
        found.problem(r.number, field.name, format!("{text:?} is not a date (YYYYMMDD)"));
    }
}

fn time(found: &mut Found, r: &Record<'_>, field: Field) {
    let Some(text) = r.text(field) else { return };
    if digits(&text).is_none() || NaiveTime::parse_from_str(&text, "%H%M").is_err() {
        found.problem(r.number, field.name, format!("{text:?} is not a time (hhmm)"));
    }
}
