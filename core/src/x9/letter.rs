//! What the writer takes: a cash letter of checks, each with its two images.

use chrono::NaiveDateTime;

/// One cash letter, written as one file: from the bank of first deposit
/// (`origin`) to the bank that clears it (`destination`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CashLetter {
    /// The routing number of the bank receiving the file: nine digits with a
    /// correct check digit.
    pub destination_routing: String,
    /// The receiving bank's short name, at most 18 printable ASCII characters.
    pub destination_name: String,
    /// The routing number of the bank sending the file (the bank of first
    /// deposit, which also created the images): nine digits with a correct
    /// check digit.
    pub origin_routing: String,
    /// The sending bank's short name, at most 18 printable ASCII characters.
    pub origin_name: String,
    /// When the file was made, US Eastern wall clock time. Its date is also the
    /// business date of the cash letter and its bundles.
    pub created: NaiveDateTime,
    /// Tells apart files made in the same minute between the same banks:
    /// `'A'..='Z'` or `'0'..='9'`.
    pub file_id_modifier: char,
    /// The cash letter's identifier: 1 to 8 ASCII letters or digits.
    pub cash_letter_id: String,
    /// The checks, in the order they are written (at least one).
    pub items: Vec<CheckItem>,
}

/// One check: its MICR line, amount, sequence number and images.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckItem {
    /// The payor bank's routing number: nine digits, the last the check digit.
    pub payor_routing: String,
    /// The account number of the check's On-Us field: digits, with `-` allowed
    /// between them.
    pub account_number: String,
    /// The check's serial number (digits), written after the account number in
    /// the On-Us field; may be empty.
    pub check_number: String,
    /// The amount in cents: more than zero and at most 9,999,999,999 (the
    /// item amount's ten digits).
    pub amount_cents: i64,
    /// The bank of first deposit's item sequence number: 1 to 15 digits,
    /// unique in the file.
    pub item_sequence: String,
    /// The front image: a TIFF, CCITT Group 4 bitonal (see
    /// [`to_g4_tiff`](super::to_g4_tiff)).
    pub front_tiff: Vec<u8>,
    /// The back image, likewise.
    pub back_tiff: Vec<u8>,
}
