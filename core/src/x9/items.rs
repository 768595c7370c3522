//! The check items of a valid file, each with its images: what the writer was
//! given, read back.

use super::check::check;
use super::controls::digits;
use super::frame::{self, image_span};
use super::records::{check_detail, image_view_detail};
use super::report::Problem;

/// One check detail (`25`) of a file, with its front and back images.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadItem {
    /// The 1-based number of its check detail record.
    pub record: usize,
    /// The payor bank's routing number, its check digit last.
    pub payor_routing: String,
    /// The On-Us field's account number: what precedes the On-Us symbol
    /// (`/`), or the whole field when it has none.
    pub account_number: String,
    /// The On-Us field's serial number: what follows the `/`; empty when none.
    pub check_number: String,
    /// The amount in cents.
    pub amount_cents: i64,
    /// The item sequence number as the file has it (the writer zero-fills it
    /// to 15 digits).
    pub item_sequence: String,
    /// The front image's bytes (view side 0); empty when there is none.
    pub front_image: Vec<u8>,
    /// The back image's bytes (view side 1); empty when there is none.
    pub back_image: Vec<u8>,
}

/// The check items of `bytes`, in file order. A file with any problem is
/// refused with its problems (the file being no X9 file at all is a problem at
/// record 0): items are only read from a file that adds up.
pub fn items(bytes: &[u8]) -> Result<Vec<ReadItem>, Vec<Problem>> {
    let report = check(bytes).map_err(|e| vec![Problem::new(0, "file", e.to_string())])?;
    if !report.is_valid() {
        return Err(report.problems);
    }
    let framed = frame::split(bytes).map_err(|e| vec![Problem::new(0, "file", e.to_string())])?;
    let mut items: Vec<ReadItem> = Vec::new();
    // The item the next image views belong to, and the side the last image
    // view detail announced.
    let mut open = false;
    let mut side = String::new();
    for record in &framed.records {
        match record.kind {
            Some(25) => {
                let text = |f| record.text(f).unwrap_or_default();
                let on_us = text(check_detail::ON_US);
                let on_us = on_us.trim();
                let (account, serial) = on_us.split_once('/').unwrap_or((on_us, ""));
                // The checker proved the amount digits.
                let amount =
                    digits(&text(check_detail::AMOUNT)).and_then(|n| i64::try_from(n).ok()).unwrap_or(0);
                items.push(ReadItem {
                    record: record.number,
                    payor_routing: text(check_detail::PAYOR_ROUTING) + &text(check_detail::PAYOR_CHECK_DIGIT),
                    account_number: account.trim().to_string(),
                    check_number: serial.trim().to_string(),
                    amount_cents: amount,
                    item_sequence: text(check_detail::SEQUENCE).trim().to_string(),
                    front_image: Vec::new(),
                    back_image: Vec::new(),
                });
                open = true;
            }
            Some(26..=28 | 54 | 68) => {}
            Some(50) => side = record.text(image_view_detail::VIEW_SIDE).unwrap_or_default(),
            Some(52) => {
                let (Some(item), true) = (items.last_mut(), open) else { continue };
                let Ok((start, len)) = image_span(record) else { continue };
                let image = record.bytes.get(start..start + len).unwrap_or_default().to_vec();
                match side.as_str() {
                    "0" => item.front_image = image,
                    "1" => item.back_image = image,
                    _ => {}
                }
            }
            _ => open = false,
        }
    }
    Ok(items)
}
