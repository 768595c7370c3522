//! Framing: how a file's bytes split into records.
//!
//! Two framings exist: each record preceded by its length (4 bytes, big-endian),
//! the standard's, or records back to back (optionally separated by line ends),
//! where a record's length follows from its type (80 characters; the variable
//! records say their own lengths inside). The first record is always a file
//! header (`01`), so its first two characters tell both the framing and the
//! character set. Framing never fails part way: a record cut short or of an
//! unknown type ends the reading with a problem, and what came before is kept.

use super::ebcdic;
use super::records::{self, image_view_data, user_record, Field, IMAGE_LENGTH_LEN, SIGNATURE_LENGTH_LEN};
use super::report::{Encoding, Problem};

/// Why bytes are no X9 file at all (the checker then has nothing to report on).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NotX9 {
    /// No bytes at all.
    #[error("the input is empty")]
    Empty,
    /// The bytes do not begin with a file header record (`01`), in ASCII or
    /// EBCDIC, with or without a length prefix.
    #[error("it does not begin with a file header record (01) in ASCII or EBCDIC")]
    NoFileHeader,
}

/// One record, without its length prefix.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Record<'a> {
    /// 1-based place in the file.
    pub number: usize,
    /// The record type (`25` for a check detail), `None` when its first two
    /// characters are not digits.
    pub kind: Option<u8>,
    /// The record's bytes (text, and for `52` the image data after the text).
    pub bytes: &'a [u8],
    encoding: Encoding,
}

impl Record<'_> {
    /// The text of `field`; `None` when the record ends before the field does.
    pub fn text(&self, field: Field) -> Option<String> {
        self.text_at(field.start, field.len)
    }

    /// The text of `len` characters from offset `start`; `None` past the end.
    pub fn text_at(&self, start: usize, len: usize) -> Option<String> {
        let bytes = self.bytes.get(start..start.checked_add(len)?)?;
        Some(decode(bytes, self.encoding))
    }

    /// The record type as two characters, for messages.
    pub fn kind_text(&self) -> String {
        self.text_at(0, 2).unwrap_or_else(|| decode(self.bytes, self.encoding))
    }
}

/// A file split into records.
pub(crate) struct Framed<'a> {
    pub encoding: Encoding,
    pub length_prefixed: bool,
    pub records: Vec<Record<'a>>,
    /// Problems of framing: records cut short, lengths that disagree with the
    /// record's type, unknown record types.
    pub problems: Vec<Problem>,
}

fn decode(bytes: &[u8], encoding: Encoding) -> String {
    match encoding {
        Encoding::Ascii => bytes.iter().map(|&b| char::from(b)).collect(),
        Encoding::Ebcdic => bytes.iter().map(|&b| ebcdic::decode_byte(b)).collect(),
    }
}

const HEADER_ASCII: [u8; 2] = *b"01";
const HEADER_EBCDIC: [u8; 2] = [0xF0, 0xF1];

fn encoding_of(first_two: &[u8]) -> Option<Encoding> {
    match first_two {
        b if b == HEADER_ASCII => Some(Encoding::Ascii),
        b if b == HEADER_EBCDIC => Some(Encoding::Ebcdic),
        _ => None,
    }
}

/// Splits `bytes` into records.
pub(crate) fn split(bytes: &[u8]) -> Result<Framed<'_>, NotX9> {
    if bytes.is_empty() {
        return Err(NotX9::Empty);
    }
    let (encoding, length_prefixed) = if let Some(e) = bytes.get(4..6).and_then(encoding_of) {
        // A prefix's first byte is 0 for any record under 16 MiB, and no
        // record type begins with that byte in either character set.
        (e, true)
    } else if let Some(e) = bytes.get(0..2).and_then(encoding_of) {
        (e, false)
    } else {
        return Err(NotX9::NoFileHeader);
    };
    let mut framed = Framed { encoding, length_prefixed, records: Vec::new(), problems: Vec::new() };
    if length_prefixed {
        split_prefixed(bytes, &mut framed);
    } else {
        split_bare(bytes, &mut framed);
    }
    Ok(framed)
}

fn kind_of(bytes: &[u8], encoding: Encoding) -> Option<u8> {
    let text = decode(bytes.get(0..2)?, encoding);
    if text.bytes().all(|b| b.is_ascii_digit()) {
        text.parse().ok()
    } else {
        None
    }
}

fn split_prefixed<'a>(bytes: &'a [u8], framed: &mut Framed<'a>) {
    let mut at = 0;
    while at < bytes.len() {
        let number = framed.records.len() + 1;
        let Some(prefix) = bytes.get(at..at + 4) else {
            framed.problems.push(Problem::new(
                number,
                "record_length",
                format!("the file ends with {} bytes, too few for a record length", bytes.len() - at),
            ));
            return;
        };
        let declared = u32::from_be_bytes([prefix[0], prefix[1], prefix[2], prefix[3]]);
        let start = at + 4;
        let Some(body) = usize::try_from(declared).ok().and_then(|n| bytes.get(start..start.checked_add(n)?))
        else {
            framed.problems.push(Problem::new(
                number,
                "record_length",
                format!(
                    "the record declares {declared} bytes but the file ends {} bytes later: it is cut short",
                    bytes.len() - start
                ),
            ));
            return;
        };
        at = start + body.len();
        let record =
            Record { number, kind: kind_of(body, framed.encoding), bytes: body, encoding: framed.encoding };
        match record.kind.filter(|&k| records::is_known(k)) {
            None => framed.problems.push(Problem::new(
                number,
                "record_type",
                format!("{:?} is not a record type of X9.100-187", record.kind_text()),
            )),
            Some(kind) => match expected_len(&record, kind) {
                Ok(expected) if expected != body.len() => framed.problems.push(Problem::new(
                    number,
                    "record_length",
                    format!("the record is {} bytes long, a type {:02} record {expected}", body.len(), kind),
                )),
                Ok(_) => {}
                Err(problem) => framed.problems.push(problem),
            },
        }
        framed.records.push(record);
    }
}

/// Bytes that may separate bare records: CR and LF, and EBCDIC's NL and LF.
fn is_line_end(b: u8, encoding: Encoding) -> bool {
    matches!((b, encoding), (0x0D | 0x0A, _) | (0x15 | 0x25, Encoding::Ebcdic))
}

fn split_bare<'a>(bytes: &'a [u8], framed: &mut Framed<'a>) {
    let mut at = 0;
    loop {
        while bytes.get(at).is_some_and(|&b| is_line_end(b, framed.encoding)) {
            at += 1;
        }
        let Some(rest) = bytes.get(at..).filter(|r| !r.is_empty()) else { return };
        let number = framed.records.len() + 1;
        let mut record =
            Record { number, kind: kind_of(rest, framed.encoding), bytes: rest, encoding: framed.encoding };
        let Some(kind) = record.kind.filter(|&k| records::is_known(k)) else {
            framed.problems.push(Problem::new(
                number,
                "record_type",
                format!(
                    "{:?} is not a record type of X9.100-187; without length prefixes nothing after it can be read",
                    record.kind_text()
                ),
            ));
            return;
        };
        let len = match expected_len(&record, kind) {
            Ok(len) => len,
            Err(problem) => {
                framed.problems.push(problem);
                return;
            }
        };
        let Some(body) = rest.get(..len) else {
            framed.problems.push(Problem::new(
                number,
                "record_length",
                format!(
                    "a type {kind:02} record is {len} bytes but the file ends {} bytes later",
                    rest.len()
                ),
            ));
            return;
        };
        record.bytes = body;
        framed.records.push(record);
        at += len;
    }
}

/// The length a record of `kind` must have: fixed, or for `52` and `68` the
/// length its own fields give.
fn expected_len(record: &Record<'_>, kind: u8) -> Result<usize, Problem> {
    if let Some(len) = records::fixed_len(kind) {
        return Ok(len);
    }
    if kind == 52 {
        return image_span(record).map(|(start, len)| start + len);
    }
    let len = length_field(record, user_record::USER_DATA_LENGTH)?;
    Ok(user_record::LEN + len)
}

/// Where a `52` record's image data lies: (offset, length), from the lengths
/// of the image reference key, the digital signature and the image data.
pub(crate) fn image_span(record: &Record<'_>) -> Result<(usize, usize), Problem> {
    let key_len = length_field(record, image_view_data::REFERENCE_KEY_LENGTH)?;
    let signature_at = image_view_data::LEN + key_len;
    let signature_len = length_field(
        record,
        Field { name: "length_of_digital_signature", start: signature_at, len: SIGNATURE_LENGTH_LEN },
    )?;
    let image_length_at = signature_at + SIGNATURE_LENGTH_LEN + signature_len;
    let image_len = length_field(
        record,
        Field { name: "length_of_image_data", start: image_length_at, len: IMAGE_LENGTH_LEN },
    )?;
    Ok((image_length_at + IMAGE_LENGTH_LEN, image_len))
}

/// A length field: numeric, blanks allowed around the digits, all blank
/// meaning zero.
fn length_field(record: &Record<'_>, field: Field) -> Result<usize, Problem> {
    let Some(text) = record.text(field) else {
        return Err(Problem::new(
            record.number,
            "record_length",
            format!("the record ends at byte {} before its {}", record.bytes.len(), field.name),
        ));
    };
    numeric_blank(&text).ok_or_else(|| {
        Problem::new(record.number, field.name, format!("{text:?} is not a length (digits, or blank)"))
    })
}

/// A numeric-blank (NB) field's value: digits with blanks around them; all
/// blank is zero.
pub(crate) fn numeric_blank(text: &str) -> Option<usize> {
    let digits = text.trim_matches(' ');
    if digits.is_empty() {
        return Some(0);
    }
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}
