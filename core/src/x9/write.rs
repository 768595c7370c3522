//! The writer: a [`CashLetter`] to the bytes of an X9.100-187-2016 file.
//!
//! One file holds one cash letter; its items go in bundles of at most
//! [`BUNDLE_MAX_ITEMS`]. Each item is a check detail (`25`), its BOFD addendum
//! (`26`) and two image views (`50` + `52`, front then back). Text is EBCDIC;
//! each record is preceded by its length (4 bytes, big-endian). Conditional
//! fields the letter has no value for are left blank, as the standard says.

use super::ebcdic;
use super::error::X9Error;
use super::letter::{CashLetter, CheckItem};
use super::records::{self, Field, FIXED_LEN, IMAGE_LENGTH_LEN, SIGNATURE_LENGTH_LEN};
use super::{validate, BUNDLE_MAX_ITEMS};

/// Standard level `35`: X9.100-187-2013 and 2016.
const STANDARD_LEVEL: &str = "35";

/// The file of `letter`, or why it was refused.
pub fn write(letter: &CashLetter) -> Result<Vec<u8>, X9Error> {
    validate::letter(letter)?;
    let mut file = File::default();
    let date = letter.created.format("%Y%m%d").to_string();
    let time = letter.created.format("%H%M").to_string();
    file.push(&file_header(letter, &date, &time), &[]);
    file.push(&cash_letter_header(letter, &date, &time), &[]);
    let mut total = Totals::default();
    for (index, bundle) in letter.items.chunks(BUNDLE_MAX_ITEMS).enumerate() {
        file.push(&bundle_header(letter, &date, index + 1), &[]);
        let mut sub = Totals::default();
        for item in bundle {
            file.push(&check_detail(item), &[]);
            file.push(&addendum_a(letter, item, &date), &[]);
            for (side, image) in [('0', &item.front_tiff), ('1', &item.back_tiff)] {
                file.push(&image_view_detail(letter, &date, side, image.len()), &[]);
                file.push(&image_view_data(letter, item, &date, image.len()), image);
            }
            sub.items += 1;
            sub.amount += item.amount_cents;
            sub.images += 2;
        }
        fits("bundle_total_amount", sub.amount, records::bundle_control::TOTAL_AMOUNT)?;
        file.push(&bundle_control(&sub), &[]);
        total.items += sub.items;
        total.amount += sub.amount;
        total.images += sub.images;
        total.bundles += 1;
    }
    fits("cash_letter_total_amount", total.amount, records::cash_letter_control::TOTAL_AMOUNT)?;
    file.push(&cash_letter_control(letter, &total), &[]);
    let records = file.records + 1;
    file.push(&file_control(&total, records), &[]);
    Ok(file.bytes)
}

/// Items, amounts and images added up for a control record. Amounts stay
/// within i64: at most 2,999,700 items of at most 9,999,999,999 cents.
#[derive(Default)]
struct Totals {
    bundles: u64,
    items: u64,
    amount: i64,
    images: u64,
}

fn fits(field: &'static str, cents: i64, f: Field) -> Result<(), X9Error> {
    if cents.to_string().len() > f.len {
        return Err(X9Error::TotalTooLarge { field, cents, digits: f.len });
    }
    Ok(())
}

/// The file so far.
#[derive(Default)]
struct File {
    bytes: Vec<u8>,
    records: u64,
}

impl File {
    /// Appends a record: its length, its text in EBCDIC, then `binary` as it is.
    fn push(&mut self, text: &Text, binary: &[u8]) {
        let len = text.0.len() + binary.len();
        // Every record is under 10 MB (the image length's seven digits).
        self.bytes.extend_from_slice(&u32::try_from(len).unwrap_or(u32::MAX).to_be_bytes());
        self.bytes.extend(text.0.iter().map(|&b| ebcdic::encode_byte(b)));
        self.bytes.extend_from_slice(binary);
        self.records += 1;
    }
}

/// A record's text in ASCII, blank-filled, before it is turned into EBCDIC.
struct Text(Vec<u8>);

impl Text {
    fn new(kind: &str, len: usize) -> Text {
        let mut text = Text(vec![b' '; len]);
        text.put(Field { name: "record_type", start: 0, len: 2 }, kind);
        text
    }

    /// `value` left-justified in `field`. Validation has made every value fit
    /// and printable ASCII; anything longer would be cut at the field's end.
    fn put(&mut self, field: Field, value: &str) {
        if let Some(slot) = self.0.get_mut(field.start..field.end()) {
            for (to, from) in slot.iter_mut().zip(value.bytes()) {
                *to = from;
            }
        }
    }

    /// `value` right-justified and zero-filled in `field`.
    fn num(&mut self, field: Field, value: impl std::fmt::Display) {
        self.put(field, &format!("{value:0>width$}", width = field.len));
    }
}

fn file_header(letter: &CashLetter, date: &str, time: &str) -> Text {
    use records::file_header as f;
    let mut r = Text::new("01", FIXED_LEN);
    r.put(f::STANDARD_LEVEL, STANDARD_LEVEL);
    r.put(f::TEST_FILE, "P");
    r.put(f::DESTINATION, &letter.destination_routing);
    r.put(f::ORIGIN, &letter.origin_routing);
    r.put(f::CREATION_DATE, date);
    r.put(f::CREATION_TIME, time);
    r.put(f::RESEND, "N");
    r.put(f::DESTINATION_NAME, &letter.destination_name);
    r.put(f::ORIGIN_NAME, &letter.origin_name);
    r.put(f::FILE_ID_MODIFIER, &letter.file_id_modifier.to_string());
    r.put(f::COUNTRY, "US");
    r
}

fn cash_letter_header(letter: &CashLetter, date: &str, time: &str) -> Text {
    use records::cash_letter_header as f;
    let mut r = Text::new("10", FIXED_LEN);
    // 01: forward presentment; I: image only; G: images, no paper.
    r.put(f::COLLECTION_TYPE, "01");
    r.put(f::DESTINATION, &letter.destination_routing);
    r.put(f::ECE_INSTITUTION, &letter.origin_routing);
    r.put(f::BUSINESS_DATE, date);
    r.put(f::CREATION_DATE, date);
    r.put(f::CREATION_TIME, time);
    r.put(f::RECORD_TYPE_INDICATOR, "I");
    r.put(f::DOCUMENTATION_TYPE, "G");
    r.put(f::CASH_LETTER_ID, &letter.cash_letter_id);
    r
}

fn bundle_header(letter: &CashLetter, date: &str, sequence: usize) -> Text {
    use records::bundle_header as f;
    let mut r = Text::new("20", FIXED_LEN);
    r.put(f::COLLECTION_TYPE, "01");
    r.put(f::DESTINATION, &letter.destination_routing);
    r.put(f::ECE_INSTITUTION, &letter.origin_routing);
    r.put(f::BUSINESS_DATE, date);
    r.put(f::CREATION_DATE, date);
    r.num(f::BUNDLE_ID, sequence);
    r.num(f::SEQUENCE, sequence);
    r
}

fn check_detail(item: &CheckItem) -> Text {
    use records::check_detail as f;
    let mut r = Text::new("25", FIXED_LEN);
    // Validation made the routing number nine ASCII digits.
    r.put(f::PAYOR_ROUTING, item.payor_routing.get(..8).unwrap_or_default());
    r.put(f::PAYOR_CHECK_DIGIT, item.payor_routing.get(8..).unwrap_or_default());
    // The On-Us field as the MICR line has it, '/' standing for the On-Us
    // symbol, right-justified: account number, symbol, serial number.
    let on_us = format!("{}/{}", item.account_number, item.check_number);
    r.put(f::ON_US, &format!("{on_us:>width$}", width = f::ON_US.len));
    r.num(f::AMOUNT, item.amount_cents);
    r.num(f::SEQUENCE, &item.item_sequence);
    r.put(f::DOCUMENTATION_TYPE, "G");
    r.put(f::BOFD, "Y");
    r.num(f::ADDENDUM_COUNT, 1);
    r
}

fn addendum_a(letter: &CashLetter, item: &CheckItem, date: &str) -> Text {
    use records::check_addendum_a as f;
    let mut r = Text::new("26", FIXED_LEN);
    r.put(f::RECORD_NUMBER, "1");
    r.put(f::RETURN_LOCATION, &letter.origin_routing);
    r.put(f::BOFD_DATE, date);
    r.num(f::BOFD_SEQUENCE, &item.item_sequence);
    // Y: truncated; 2: the bank of first deposit made the image; 0: no correction.
    r.put(f::TRUNCATION, "Y");
    r.put(f::CONVERSION, "2");
    r.put(f::CORRECTION, "0");
    r
}

fn image_view_detail(letter: &CashLetter, date: &str, side: char, len: usize) -> Text {
    use records::image_view_detail as f;
    let mut r = Text::new("50", FIXED_LEN);
    // 1: image present, an actual check; 00: TIFF 6; 00: Group 4; 00: full view.
    r.put(f::IMAGE_INDICATOR, "1");
    r.put(f::CREATOR_ROUTING, &letter.origin_routing);
    r.put(f::CREATOR_DATE, date);
    r.put(f::FORMAT, "00");
    r.put(f::COMPRESSION, "00");
    r.num(f::DATA_SIZE, len);
    r.put(f::VIEW_SIDE, &side.to_string());
    r.put(f::VIEW_DESCRIPTOR, "00");
    r.put(f::SIGNATURE_INDICATOR, "0");
    r.put(f::RECREATE, "0");
    r
}

fn image_view_data(letter: &CashLetter, item: &CheckItem, date: &str, len: usize) -> Text {
    use records::image_view_data as f;
    // No image reference key, no digital signature: the image length follows
    // their two zero lengths.
    let mut r = Text::new("52", f::LEN + SIGNATURE_LENGTH_LEN + IMAGE_LENGTH_LEN);
    r.put(f::ECE_INSTITUTION, &letter.origin_routing);
    r.put(f::BUSINESS_DATE, date);
    r.num(f::SEQUENCE, &item.item_sequence);
    r.put(f::CLIPPING_ORIGIN, "0");
    r.num(f::REFERENCE_KEY_LENGTH, 0);
    r.num(Field { name: "length_of_digital_signature", start: f::LEN, len: SIGNATURE_LENGTH_LEN }, 0);
    let image_length =
        Field { name: "length_of_image_data", start: f::LEN + SIGNATURE_LENGTH_LEN, len: IMAGE_LENGTH_LEN };
    r.num(image_length, len);
    r
}

fn bundle_control(t: &Totals) -> Text {
    use records::bundle_control as f;
    let mut r = Text::new("70", FIXED_LEN);
    r.num(f::ITEMS_COUNT, t.items);
    r.num(f::TOTAL_AMOUNT, t.amount);
    r.num(f::IMAGES_COUNT, t.images);
    r.put(f::CREDIT_TOTAL, "0");
    r
}

fn cash_letter_control(letter: &CashLetter, t: &Totals) -> Text {
    use records::cash_letter_control as f;
    let mut r = Text::new("90", FIXED_LEN);
    r.num(f::BUNDLE_COUNT, t.bundles);
    r.num(f::ITEMS_COUNT, t.items);
    r.num(f::TOTAL_AMOUNT, t.amount);
    r.num(f::IMAGES_COUNT, t.images);
    r.put(f::ECE_INSTITUTION_NAME, &letter.origin_name);
    r.put(f::CREDIT_TOTAL, "0");
    r
}

fn file_control(t: &Totals, records: u64) -> Text {
    use records::file_control as f;
    let mut r = Text::new("99", FIXED_LEN);
    r.num(f::CASH_LETTER_COUNT, 1);
    r.num(f::RECORD_COUNT, records);
    r.num(f::ITEMS_COUNT, t.items);
    r.num(f::TOTAL_AMOUNT, t.amount);
    r.put(f::CREDIT_TOTAL, "0");
    r
}
