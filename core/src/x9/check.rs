//! The checker: reads any X9.100-187 file and reports what it holds and what
//! is wrong with it, each problem at its record.
//!
//! It walks the records by the standard's grammar:
//!
//! ```text
//! file        = 01 cash-letter* 99
//! cash-letter = 10 (bundle | 85 | 68)* 90
//! bundle      = 20 (item | credit | 68)* 70
//! item        = (25 (26 | 27 | 28)* | 31 (32 | 33 | 34 | 35)*) view*
//! credit      = (61 | 62) view*
//! view        = 50 52 54*
//! ```
//!
//! A record out of place is reported and skipped, and a missing control ends
//! its bundle or cash letter where the next one begins, so one slip yields one
//! problem rather than a cascade. Each control record is compared with what its
//! bundle, cash letter or file holds (items, amounts, images, bundles, records),
//! and each image is decoded. The checker never panics, whatever the bytes.

use super::controls::{self, Totals};
use super::frame::{self, image_span, NotX9, Record};
use super::records::{
    self, aba_check_digit, check_detail, credit, credit_reconciliation, image_view_data, image_view_detail,
    return_detail, Field,
};
use super::report::{Found, Report, Summary};
use super::tiff_read::{self, Sniffed, COMPRESSION_G4};

/// Reads and checks a file. `Err` only when the bytes are no X9 file at all
/// (empty, or not beginning with a file header); anything else is a
/// [`Report`], whose problems say what breaks the standard.
pub fn check(bytes: &[u8]) -> Result<Report, NotX9> {
    let framed = frame::split(bytes)?;
    let standard_level =
        framed.records.first().and_then(|r| r.text(records::file_header::STANDARD_LEVEL)).unwrap_or_default();
    let mut walk = Walk {
        records: &framed.records,
        at: 0,
        found: Found::default(),
        summary: Summary {
            encoding: framed.encoding,
            length_prefixed: framed.length_prefixed,
            standard_level,
            records: framed.records.len(),
            cash_letters: 0,
            bundles: 0,
            items: 0,
            returns: 0,
            credits: 0,
            total_amount_cents: 0,
            images: 0,
            image_formats: Default::default(),
        },
    };
    walk.file();
    let mut problems = framed.problems;
    problems.extend(walk.found.0);
    // Stable: within a record, the order found.
    problems.sort_by_key(|p| p.record);
    Ok(Report { summary: walk.summary, problems })
}

struct Walk<'r, 'a> {
    records: &'r [Record<'a>],
    at: usize,
    found: Found,
    summary: Summary,
}

impl<'r, 'a> Walk<'r, 'a> {
    /// The current record and its type. Records of no known type are passed
    /// over: framing has reported each, and the records around them still
    /// make sense.
    fn peek(&mut self) -> Option<(u8, Record<'a>)> {
        loop {
            let record = *self.records.get(self.at)?;
            match record.kind.filter(|&k| records::is_known(k)) {
                Some(kind) => return Some((kind, record)),
                None => self.at += 1,
            }
        }
    }

    /// The current record, consumed.
    fn take(&mut self) -> Option<Record<'a>> {
        let (_, record) = self.peek()?;
        self.at += 1;
        Some(record)
    }

    pub fn problem(&mut self, record: usize, field: &'static str, message: impl Into<String>) {
        self.found.problem(record, field, message);
    }

    /// The `what` that `header` begins ends before its `control`.
    fn unended(&mut self, header: &Record<'a>, what: &str, control: &str) {
        self.problem(header.number, "record", format!("the {what} that begins here has no {control}"));
    }

    fn out_of_place(&mut self, record: Record<'a>, expected: &str) {
        self.problem(
            record.number,
            "record_type",
            format!("a type {} record where {expected} belongs", record.kind_text()),
        );
    }

    fn file(&mut self) {
        // Framing found a file header first, or there would be no records.
        let Some(header) = self.take() else { return };
        controls::file_header(&mut self.found, &header);
        let mut totals = Totals::default();
        loop {
            match self.peek() {
                None => {
                    let last = self.records.len();
                    self.problem(last, "record", "the file ends without a file control record (99)");
                    return;
                }
                Some((10, _)) => {
                    let letter = self.cash_letter();
                    totals.add(&letter);
                    totals.cash_letters += 1;
                }
                Some((99, control)) => {
                    self.at += 1;
                    controls::file_control(&mut self.found, &control, &totals, self.records.len());
                    break;
                }
                Some((_, record)) => {
                    self.at += 1;
                    self.out_of_place(record, "a cash letter header (10) or the file control (99)");
                }
            }
        }
        if let Some(next) = self.records.get(self.at) {
            let extra = self.records.len() - self.at;
            self.problem(next.number, "record", format!("{extra} record(s) follow the file control (99)"));
        }
    }

    /// A cash letter, from its header to its control: what it holds.
    fn cash_letter(&mut self) -> Totals {
        let Some(header) = self.take() else { return Totals::default() };
        self.summary.cash_letters += 1;
        controls::cash_letter_header(&mut self.found, &header);
        let mut totals = Totals::default();
        loop {
            match self.peek() {
                Some((20, _)) => {
                    let bundle = self.bundle();
                    totals.add(&bundle);
                    totals.bundles += 1;
                }
                Some((85 | 68, _)) => self.at += 1,
                Some((90, control)) => {
                    self.at += 1;
                    controls::cash_letter_control(&mut self.found, &control, &totals);
                    return totals;
                }
                Some((10 | 99, _)) | None => {
                    self.unended(&header, "cash letter", "cash letter control (90)");
                    return totals;
                }
                Some((_, record)) => {
                    self.at += 1;
                    self.out_of_place(record, "a bundle header (20) or the cash letter control (90)");
                }
            }
        }
    }

    /// A bundle, from its header to its control: what it holds.
    fn bundle(&mut self) -> Totals {
        let Some(header) = self.take() else { return Totals::default() };
        self.summary.bundles += 1;
        controls::bundle_header(&mut self.found, &header);
        let mut totals = Totals::default();
        loop {
            match self.peek() {
                Some((25, _)) => {
                    let item = self.item(&CHECK);
                    totals.add(&item);
                }
                Some((31, _)) => {
                    self.summary.returns += 1;
                    let item = self.item(&RETURN);
                    totals.add(&item);
                }
                Some((kind @ (61 | 62), record)) => {
                    self.at += 1;
                    self.summary.credits += 1;
                    let amount = if kind == 61 { credit_reconciliation::AMOUNT } else { credit::AMOUNT };
                    totals.credits += 1;
                    let cents = self.amount(&record, amount);
                    totals.credit_amount = totals.credit_amount.saturating_add(cents);
                    totals.images += self.views("");
                }
                Some((68, _)) => self.at += 1,
                Some((70, control)) => {
                    self.at += 1;
                    controls::bundle_control(&mut self.found, &control, &totals);
                    return totals;
                }
                Some((20 | 85 | 90 | 10 | 99, _)) | None => {
                    self.unended(&header, "bundle", "bundle control (70)");
                    return totals;
                }
                Some((_, record)) => {
                    self.at += 1;
                    self.out_of_place(record, "an item (25 or 31) or the bundle control (70)");
                }
            }
        }
    }

    /// An item (a check detail or a return), its addenda and image views.
    fn item(&mut self, layout: &ItemLayout) -> Totals {
        let Some(record) = self.take() else { return Totals::default() };
        self.summary.items += 1;
        let amount = self.amount(&record, layout.amount);
        self.summary.total_amount_cents = self.summary.total_amount_cents.saturating_add(amount);
        self.payor_routing(&record, layout);
        let mut totals = Totals { items: 1, amount, ..Totals::default() };
        if let Some(micr) = layout.micr_valid.and_then(|f| record.text(f)) {
            match micr.as_str() {
                "1" => totals.micr_valid_amount = amount,
                " " | "2" | "3" | "4" => {}
                other => self.problem(
                    record.number,
                    "micr_valid_indicator",
                    format!("{other:?} is not a MICR valid indicator (1 to 4, or blank)"),
                ),
            }
        }
        let mut addenda = 0;
        let mut last = 0;
        while let Some((kind, addendum)) = self.peek().filter(|(k, _)| layout.addenda.contains(k)) {
            self.at += 1;
            addenda += 1;
            if kind < last {
                self.problem(
                    addendum.number,
                    "record_type",
                    format!("addendum {kind} after addendum {last}"),
                );
            }
            last = kind;
        }
        match record.text(layout.addendum_count).map(|t| controls::digits(&t)) {
            Some(Some(declared)) if declared != addenda => self.problem(
                record.number,
                layout.addendum_count.name,
                format!("says {declared} addenda, {addenda} follow"),
            ),
            Some(None) => self.problem(record.number, layout.addendum_count.name, "is not a number"),
            _ => {}
        }
        let sequence = record.text(layout.sequence).unwrap_or_default();
        totals.images = self.views(&sequence);
        totals
    }

    /// The image views (`50` + `52`, then any `54`) of the item with item
    /// sequence number `sequence` (empty for a credit); how many.
    fn views(&mut self, sequence: &str) -> u64 {
        let mut views = 0;
        while let Some((50, detail)) = self.peek() {
            self.at += 1;
            views += 1;
            self.summary.images += 1;
            match self.peek() {
                Some((52, data)) => {
                    self.at += 1;
                    self.image(&detail, &data, sequence);
                }
                _ => self.problem(
                    detail.number,
                    "record",
                    "the image view detail (50) has no image view data (52)",
                ),
            }
            while let Some((54, _)) = self.peek() {
                self.at += 1;
            }
        }
        views
    }

    fn image(&mut self, detail: &Record<'a>, data: &Record<'a>, sequence: &str) {
        let image = match image_span(data) {
            Ok((start, len)) => data.bytes.get(start..start + len).unwrap_or_default(),
            // Framing already reported the length fields.
            Err(_) => return,
        };
        let indicator = detail.text(image_view_detail::IMAGE_INDICATOR).unwrap_or_default();
        let field = image_view_detail::IMAGE_INDICATOR.name;
        match (indicator.as_str(), image.is_empty()) {
            ("0", false) => self.problem(
                detail.number,
                field,
                format!(
                    "0 (no image view), yet record {} carries {} of image data",
                    data.number,
                    byte_count(image.len())
                ),
            ),
            ("1" | "2" | "3", true) => self.problem(
                data.number,
                "image_data",
                format!(
                    "none, though the image view detail (record {}) says an image is present",
                    detail.number
                ),
            ),
            ("0" | "1" | "2" | "3", _) => {}
            (other, _) => self.problem(detail.number, field, format!("{other:?} is not 0 to 3")),
        }
        let own = data.text(image_view_data::SEQUENCE).unwrap_or_default();
        if !sequence.is_empty() && !same_number(&own, sequence) {
            self.problem(
                data.number,
                image_view_data::SEQUENCE.name,
                format!("{} is not its item's {}", own.trim(), sequence.trim()),
            );
        }
        if image.is_empty() {
            return;
        }
        let sniffed = tiff_read::sniff(image);
        *self.summary.image_formats.entry(sniffed.format_name().to_string()).or_insert(0) += 1;
        match sniffed {
            Sniffed::Tiff(Ok(tiff)) => {
                let g4 = detail.text(image_view_detail::COMPRESSION).is_some_and(|c| c == "00");
                if g4 && tiff.compression != COMPRESSION_G4 {
                    self.problem(
                        data.number,
                        "image_data",
                        format!(
                            "a {} image, though the image view detail (record {}) says Group 4",
                            tiff.format_name(),
                            detail.number
                        ),
                    );
                }
            }
            Sniffed::Tiff(Err(e)) => {
                self.problem(data.number, "image_data", format!("the TIFF does not decode: {e}"))
            }
            Sniffed::Other(format) => self.problem(
                data.number,
                "image_data",
                format!("{} of image data that is no TIFF ({format})", byte_count(image.len())),
            ),
        }
    }

    /// An amount field's cents; a problem and 0 when it is not digits.
    fn amount(&mut self, record: &Record<'a>, field: Field) -> i64 {
        match record.text(field) {
            Some(text) => match controls::digits(&text).and_then(|n| i64::try_from(n).ok()) {
                Some(cents) => cents,
                None => {
                    self.problem(record.number, field.name, format!("{text:?} is not an amount in cents"));
                    0
                }
            },
            // Framing reported the short record.
            None => 0,
        }
    }

    fn payor_routing(&mut self, record: &Record<'a>, layout: &ItemLayout) {
        let (Some(routing), Some(check)) =
            (record.text(layout.payor_routing), record.text(layout.check_digit))
        else {
            return;
        };
        match aba_check_digit(&routing) {
            None => self.problem(
                record.number,
                layout.payor_routing.name,
                format!("{routing:?} is not eight digits"),
            ),
            Some(expected) if !check.starts_with(expected) => self.problem(
                record.number,
                layout.check_digit.name,
                format!("{check:?} is not the check digit of {routing}, which is {expected}"),
            ),
            Some(_) => {}
        }
    }
}

fn byte_count(n: usize) -> String {
    if n == 1 {
        "1 byte".to_string()
    } else {
        format!("{n} bytes")
    }
}

/// Whether two item sequence numbers are the same number (the standard's
/// numeric-blank fields may pad with zeros or with blanks).
fn same_number(a: &str, b: &str) -> bool {
    let norm = |s: &str| s.trim().trim_start_matches('0').to_string();
    norm(a) == norm(b)
}

/// Where the fields the checker reads sit in a check detail or a return.
struct ItemLayout {
    payor_routing: Field,
    check_digit: Field,
    amount: Field,
    sequence: Field,
    addendum_count: Field,
    micr_valid: Option<Field>,
    /// The addendum record types, in their order.
    addenda: &'static [u8],
}

const CHECK: ItemLayout = ItemLayout {
    payor_routing: check_detail::PAYOR_ROUTING,
    check_digit: check_detail::PAYOR_CHECK_DIGIT,
    amount: check_detail::AMOUNT,
    sequence: check_detail::SEQUENCE,
    addendum_count: check_detail::ADDENDUM_COUNT,
    micr_valid: Some(check_detail::MICR_VALID),
    addenda: &[26, 27, 28],
};

const RETURN: ItemLayout = ItemLayout {
    payor_routing: return_detail::PAYOR_ROUTING,
    check_digit: return_detail::PAYOR_CHECK_DIGIT,
    amount: return_detail::AMOUNT,
    sequence: return_detail::SEQUENCE,
    addendum_count: return_detail::ADDENDUM_COUNT,
    micr_valid: None,
    addenda: &[32, 33, 34, 35],
};
