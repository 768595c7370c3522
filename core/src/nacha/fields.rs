//! Fixed-width fields: alphanumeric (left-justified, space-filled, upper case on
//! write) and numeric (right-justified, zero-filled), written into and read from
//! one 94-byte record.

use std::fmt;

use chrono::{NaiveDate, NaiveTime};

use super::text::Text;
use crate::record_problem::Problem;

/// Why a value does not fit its field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FieldProblem {
    /// Longer than the field.
    TooLong {
        /// The field's width.
        max: usize,
    },
    /// A character outside printable ASCII (space to `~`).
    NotPrintable,
    /// Not exactly the field's count of ASCII digits.
    NotDigits {
        /// The digits the field needs.
        width: usize,
    },
    /// Empty where the field is required.
    Missing,
    /// More than the numeric field can hold.
    TooLarge {
        /// The field's width in digits.
        width: usize,
    },
}

impl fmt::Display for FieldProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FieldProblem::TooLong { max } => write!(f, "longer than {max} characters"),
            FieldProblem::NotPrintable => f.write_str("not printable ASCII"),
            FieldProblem::NotDigits { width } => write!(f, "not {width} digits"),
            FieldProblem::Missing => f.write_str("missing"),
            FieldProblem::TooLarge { width } => write!(f, "more than {width} digits"),
        }
    }
}

/// Whether `text` fits an alphanumeric field of `width`.
pub(crate) fn check_alpha(text: &[u8], width: usize) -> Result<(), FieldProblem> {
    if !text.iter().all(|b| (b' '..=b'~').contains(b)) {
        return Err(FieldProblem::NotPrintable);
    }
    if text.len() > width {
        return Err(FieldProblem::TooLong { max: width });
    }
    Ok(())
}

/// Whether `text` is exactly `width` ASCII digits.
pub(crate) fn check_digits(text: &[u8], width: usize) -> Result<(), FieldProblem> {
    if text.len() == width && text.iter().all(u8::is_ascii_digit) {
        Ok(())
    } else {
        Err(FieldProblem::NotDigits { width })
    }
}

/// Whether `value` fits `width` digits.
pub(crate) fn check_number(value: u64, width: usize) -> Result<(), FieldProblem> {
    if width < 20 && value >= 10u64.pow(width as u32) {
        Err(FieldProblem::TooLarge { width })
    } else {
        Ok(())
    }
}

/// Append `text` left-justified, space-filled to `width`, letters upper-cased.
/// Longer text is cut (the writer checks widths first).
pub(crate) fn put_alpha(out: &mut Vec<u8>, text: impl AsRef<[u8]>, width: usize) {
    let bytes = text.as_ref();
    let n = bytes.len().min(width);
    let start = out.len();
    out.extend_from_slice(&bytes[..n]);
    out[start..].make_ascii_uppercase();
    out.resize(start + width, b' ');
}

/// Append `text` right-justified, space-filled to `width` (immediate destination
/// and origin).
pub(crate) fn put_right(out: &mut Vec<u8>, text: impl AsRef<[u8]>, width: usize) {
    let bytes = text.as_ref();
    let n = bytes.len().min(width);
    out.resize(out.len() + (width - n), b' ');
    let start = out.len();
    out.extend_from_slice(&bytes[..n]);
    out[start..].make_ascii_uppercase();
}

/// Append `value` right-justified, zero-filled to `width` (its low digits if it
/// is larger; the writer checks sizes first).
pub(crate) fn put_num(out: &mut Vec<u8>, mut value: u64, width: usize) {
    let start = out.len();
    out.resize(start + width, b'0');
    let mut i = width;
    while value > 0 && i > 0 {
        i -= 1;
        out[start + i] = b'0' + (value % 10) as u8;
        value /= 10;
    }
}

/// Append a date as YYMMDD.
pub(crate) fn put_date(out: &mut Vec<u8>, date: NaiveDate) {
    use chrono::Datelike;
    put_num(out, (date.year().rem_euclid(100)) as u64, 2);
    put_num(out, u64::from(date.month()), 2);
    put_num(out, u64::from(date.day()), 2);
}

/// Append a time as HHMM, or four spaces.
pub(crate) fn put_time(out: &mut Vec<u8>, time: Option<NaiveTime>) {
    use chrono::Timelike;
    match time {
        Some(t) => {
            put_num(out, u64::from(t.hour()), 2);
            put_num(out, u64::from(t.minute()), 2);
        }
        None => out.extend_from_slice(b"    "),
    }
}

/// One record being read: its bytes (exactly 94, padded by the reader), its
/// number, and where its problems go.
pub(crate) struct Fields<'a> {
    bytes: &'a [u8],
    /// The record is all printable ASCII (the usual case): its fields are then
    /// taken without checking each.
    ascii: bool,
    pub(crate) number: usize,
    pub(crate) problems: &'a mut Vec<Problem>,
}

impl<'a> Fields<'a> {
    /// The fields of `bytes`, record number `number`.
    pub(crate) fn new(bytes: &'a [u8], number: usize, problems: &'a mut Vec<Problem>) -> Fields<'a> {
        let ascii = bytes.iter().all(|b| (b' '..=b'~').contains(b));
        Fields { bytes, ascii, number, problems }
    }

    fn slice(&self, start: usize, len: usize) -> &'a [u8] {
        let bytes: &'a [u8] = self.bytes;
        bytes.get(start.saturating_sub(1)..start.saturating_sub(1) + len).unwrap_or(&[])
    }

    /// The raw bytes of a field (1-based `start`, as in the Nacha layouts).
    pub(crate) fn raw(&self, start: usize, len: usize) -> &'a [u8] {
        self.slice(start, len)
    }

    /// An alphanumeric field without its trailing spaces.
    pub(crate) fn text(&mut self, start: usize, len: usize, field: &'static str) -> Text {
        let raw = self.slice(start, len);
        let end = raw.iter().rposition(|&b| b != b' ').map_or(0, |i| i + 1);
        let raw = &raw[..end];
        if self.ascii {
            return Text::from_ascii(raw);
        }
        if raw.iter().all(|b| (b' '..=b'~').contains(b)) {
            // Printable ASCII: valid UTF-8, checked by the fast ASCII path.
            Text::from(std::str::from_utf8(raw).unwrap_or_default())
        } else {
            self.problems.push(Problem::new(self.number, field, "not printable ASCII"));
            Text::from(String::from_utf8_lossy(raw).as_ref())
        }
    }

    /// A field right-justified with blanks (immediate destination and origin),
    /// without its surrounding spaces.
    pub(crate) fn trimmed(&mut self, start: usize, len: usize, field: &'static str) -> Text {
        let text = self.text(start, len, field);
        Text::from(text.trim_start())
    }

    /// A numeric field. Anything but digits is a problem, read as 0.
    pub(crate) fn num(&mut self, start: usize, len: usize, field: &'static str) -> u64 {
        let raw = self.slice(start, len);
        let mut value: u64 = 0;
        for &b in raw {
            if !b.is_ascii_digit() {
                let shown = String::from_utf8_lossy(raw).into_owned();
                self.problems.push(Problem::new(self.number, field, format!("{shown:?} is not numeric")));
                return 0;
            }
            value = value * 10 + u64::from(b - b'0');
        }
        value
    }

    /// A field of exactly `len` digits kept as text (routing ids, trace numbers).
    pub(crate) fn digits(&mut self, start: usize, len: usize, field: &'static str) -> Text {
        let text = self.text(start, len, field);
        if text.as_bytes().len() != len || !text.as_bytes().iter().all(u8::is_ascii_digit) {
            self.problems.push(Problem::new(self.number, field, format!("{text:?} is not {len} digits")));
        }
        text
    }

    /// A YYMMDD date (years 2000–2099); a problem and 1970-01-01 if invalid.
    pub(crate) fn date(&mut self, start: usize, field: &'static str) -> NaiveDate {
        let raw = self.slice(start, 6);
        let digit = |i: usize| raw.get(i).filter(|b| b.is_ascii_digit()).map(|b| u32::from(b - b'0'));
        let parts: Option<Vec<u32>> = (0..6).map(digit).collect();
        let date = parts.and_then(|d| {
            NaiveDate::from_ymd_opt(2000 + (d[0] * 10 + d[1]) as i32, d[2] * 10 + d[3], d[4] * 10 + d[5])
        });
        date.unwrap_or_else(|| {
            let shown = String::from_utf8_lossy(raw).into_owned();
            self.problems.push(Problem::new(self.number, field, format!("{shown:?} is not a date (YYMMDD)")));
            NaiveDate::default()
        })
    }

    /// An HHMM time, `None` when blank; a problem if neither.
    pub(crate) fn time(&mut self, start: usize, field: &'static str) -> Option<NaiveTime> {
        let raw = self.slice(start, 4);
        if raw.iter().all(|&b| b == b' ') {
            return None;
        }
        let all_digits = raw.len() == 4 && raw.iter().all(u8::is_ascii_digit);
        let time = all_digits
            .then(|| {
                let n = |i: usize| u32::from(raw[i] - b'0');
                NaiveTime::from_hms_opt(n(0) * 10 + n(1), n(2) * 10 + n(3), 0)
            })
            .flatten();
        if time.is_none() {
            let shown = String::from_utf8_lossy(raw).into_owned();
            self.problems.push(Problem::new(self.number, field, format!("{shown:?} is not a time (HHMM)")));
        }
        time
    }

    /// A one-character field.
    pub(crate) fn char(&mut self, start: usize, field: &'static str) -> char {
        match self.slice(start, 1).first() {
            Some(&b) if (b' '..=b'~').contains(&b) => char::from(b),
            _ => {
                self.problems.push(Problem::new(self.number, field, "not printable ASCII"));
                '?'
            }
        }
    }
}
