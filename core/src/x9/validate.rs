//! What the writer refuses, checked before a byte is written: after these
//! checks every value fits its field, so the writer itself cannot fail.

use std::collections::HashMap;

use chrono::Datelike;

use super::error::X9Error;
use super::letter::{CashLetter, CheckItem};
use super::records::{aba_check_digit, check_detail};
use super::tiff_read;
use super::BUNDLE_MAX_ITEMS;

/// The largest item amount: the check detail's ten digits.
pub(crate) const MAX_ITEM_CENTS: i64 = 9_999_999_999;
/// The most bundles a cash letter numbers (the bundle sequence number's four
/// digits), and so the most items.
pub(crate) const MAX_BUNDLES: usize = 9_999;
/// The largest image the image view data record carries (its length's seven
/// digits).
pub(crate) const MAX_IMAGE_BYTES: usize = 9_999_999;
/// Widths of the names and the cash letter id.
const NAME_LEN: usize = 18;
const CASH_LETTER_ID_LEN: usize = 8;
const SEQUENCE_LEN: usize = 15;

/// The letter's problems, the first found.
pub(crate) fn letter(letter: &CashLetter) -> Result<(), X9Error> {
    let fail = |field: &'static str, reason: String| Err(X9Error::Letter { field, reason });
    if let Err(reason) = routing(&letter.destination_routing) {
        return fail("destination_routing", reason);
    }
    if let Err(reason) = routing(&letter.origin_routing) {
        return fail("origin_routing", reason);
    }
    if let Err(reason) = name(&letter.destination_name) {
        return fail("destination_name", reason);
    }
    if let Err(reason) = name(&letter.origin_name) {
        return fail("origin_name", reason);
    }
    let year = letter.created.year();
    if !(1993..=9999).contains(&year) {
        return fail("created", format!("year {year} is outside 1993-9999"));
    }
    if !(letter.file_id_modifier.is_ascii_uppercase() || letter.file_id_modifier.is_ascii_digit()) {
        return fail("file_id_modifier", format!("{:?} is not A-Z or 0-9", letter.file_id_modifier));
    }
    let id = &letter.cash_letter_id;
    if id.is_empty() || id.len() > CASH_LETTER_ID_LEN || !id.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return fail("cash_letter_id", format!("{id:?} is not 1 to 8 ASCII letters or digits"));
    }
    if letter.items.is_empty() {
        return Err(X9Error::NoItems);
    }
    let most = MAX_BUNDLES * BUNDLE_MAX_ITEMS;
    if letter.items.len() > most {
        return fail("items", format!("{} items, more than the {most} of 9,999 bundles", letter.items.len()));
    }
    let mut seen: HashMap<u64, usize> = HashMap::with_capacity(letter.items.len());
    for (index, item) in letter.items.iter().enumerate() {
        check_item(item).map_err(|(field, reason)| X9Error::Item { index, field, reason })?;
        // Sequence numbers are written zero-filled: "7" and "007" are one number.
        let number = item.item_sequence.parse::<u64>().unwrap_or(0);
        if let Some(&first) = seen.get(&number) {
            return Err(X9Error::DuplicateSequence {
                first,
                second: index,
                sequence: item.item_sequence.clone(),
            });
        }
        seen.insert(number, index);
    }
    Ok(())
}

fn check_item(item: &CheckItem) -> Result<(), (&'static str, String)> {
    routing(&item.payor_routing).map_err(|r| ("payor_routing", r))?;
    let account = &item.account_number;
    if account.is_empty() || !account.bytes().all(|b| b.is_ascii_digit() || b == b'-') {
        return Err(("account_number", format!("{account:?} is not digits (with '-' between them)")));
    }
    if !account.bytes().any(|b| b.is_ascii_digit()) {
        return Err(("account_number", format!("{account:?} has no digit")));
    }
    let serial = &item.check_number;
    if !serial.bytes().all(|b| b.is_ascii_digit()) {
        return Err(("check_number", format!("{serial:?} is not digits")));
    }
    // The On-Us field: the account number, the On-Us symbol '/', the serial.
    let on_us = account.len() + 1 + serial.len();
    if on_us > check_detail::ON_US.len {
        return Err((
            "account_number",
            format!("the account number and check number take {on_us} characters of the On-Us field's 20"),
        ));
    }
    if !(1..=MAX_ITEM_CENTS).contains(&item.amount_cents) {
        return Err(("amount_cents", format!("{} is not 1 to {MAX_ITEM_CENTS} cents", item.amount_cents)));
    }
    let sequence = &item.item_sequence;
    if sequence.is_empty() || sequence.len() > SEQUENCE_LEN || !sequence.bytes().all(|b| b.is_ascii_digit()) {
        return Err(("item_sequence", format!("{sequence:?} is not 1 to 15 digits")));
    }
    image(&item.front_tiff).map_err(|r| ("front_tiff", r))?;
    image(&item.back_tiff).map_err(|r| ("back_tiff", r))
}

/// A routing number: nine digits, a Federal Reserve prefix, the check digit.
fn routing(text: &str) -> Result<(), String> {
    if crate::routing::is_valid_routing_number(text) {
        return Ok(());
    }
    if text.len() != 9 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("{text:?} is not nine digits"));
    }
    match (text.get(..8).and_then(aba_check_digit), text.get(8..)) {
        (Some(expected), Some(given)) if !given.starts_with(expected) => {
            Err(format!("{text} ends in check digit {given}; its first eight digits need {expected}"))
        }
        _ => Err(format!("{text} does not begin with a Federal Reserve routing prefix")),
    }
}

/// A bank's short name: at most 18 printable ASCII characters.
fn name(text: &str) -> Result<(), String> {
    if text.len() > NAME_LEN {
        return Err(format!("{text:?} is longer than {NAME_LEN} characters"));
    }
    if !text.bytes().all(|b| b == b' ' || b.is_ascii_graphic()) {
        return Err(format!("{text:?} has a character outside printable ASCII"));
    }
    Ok(())
}

/// A check image: a TIFF, bitonal CCITT Group 4, that decodes, and fits the
/// image view data record.
fn image(bytes: &[u8]) -> Result<(), String> {
    if bytes.len() > MAX_IMAGE_BYTES {
        return Err(format!("{} bytes, more than the {MAX_IMAGE_BYTES} a record carries", bytes.len()));
    }
    match tiff_read::sniff(bytes) {
        tiff_read::Sniffed::Tiff(Ok(image)) if image.is_bitonal_g4() => Ok(()),
        tiff_read::Sniffed::Tiff(Ok(image)) => Err(format!(
            "a {} TIFF{}, not bitonal Group 4 (see to_g4_tiff)",
            image.format_name(),
            if image.bitonal { "" } else { " in more than one bit per pixel" }
        )),
        tiff_read::Sniffed::Tiff(Err(e)) => Err(format!("a TIFF that does not decode: {e}")),
        tiff_read::Sniffed::Other(format) => Err(format!("not a TIFF ({format}); see to_g4_tiff")),
    }
}
