//! The typed NACHA file: what the writer takes and the reader gives back.
//!
//! Controls (counts, entry hash, totals, block count) are not part of the model:
//! the writer computes them, the reader checks them. Text fields hold the field's
//! content without its padding (trailing spaces trimmed); the writer upper-cases
//! letters, so a model written and read back compares equal when its text is
//! already upper case.

use chrono::{NaiveDate, NaiveTime};

use super::text::Text;
use super::{is_credit_code, is_debit_code, CREDITS_ONLY, DEBITS_ONLY, MIXED};
use crate::model::{AccountType, Direction};
use crate::money::Money;

/// A whole file: its header and its batches in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NachaFile {
    /// The file header record (`1`).
    pub header: FileHeader,
    /// The batches, in file order.
    pub batches: Vec<Batch>,
}

/// The file header record (`1`). Priority code (`01`), record size (`094`),
/// blocking factor (`10`) and format code (`1`) are constants of the format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileHeader {
    /// Immediate destination: the routing number (9 digits) of the bank or
    /// operator receiving the file; written as a blank and the nine digits.
    pub immediate_destination: Text,
    /// Immediate origin: 9 or 10 characters (a routing number, or `1` and a tax
    /// id); written right-justified, blank-filled.
    pub immediate_origin: Text,
    /// File creation date (YYMMDD in the record; years 2000–2099).
    pub creation_date: NaiveDate,
    /// File creation time (HHMM), blank when `None`.
    pub creation_time: Option<NaiveTime>,
    /// File id modifier: `A`–`Z` or `0`–`9`, distinguishing files of one day.
    pub file_id_modifier: char,
    /// Immediate destination name (≤ 23).
    pub immediate_destination_name: Text,
    /// Immediate origin name (≤ 23).
    pub immediate_origin_name: Text,
    /// Reference code (≤ 8), free for the originator.
    pub reference_code: Text,
}

/// The originator's side of a file: who sends it, through which bank. Its serde
/// form is the body of `PUT /admin/originator`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Originator {
    /// The ODFI's routing number (9 digits): its first 8 digits identify the ODFI
    /// in every batch header and prefix every trace number.
    pub odfi_routing_number: String,
    /// Immediate destination (9-digit routing number).
    pub immediate_destination: String,
    /// Immediate destination name (≤ 23).
    #[serde(default)]
    pub immediate_destination_name: String,
    /// Immediate origin (9 or 10 characters).
    pub immediate_origin: String,
    /// Immediate origin name (≤ 23).
    #[serde(default)]
    pub immediate_origin_name: String,
    /// The engine's Same Day ACH cut-offs the ODFI takes, `HH:MM` US Eastern:
    /// one to three, each before its FedACH window's deadline (10:30, 14:45,
    /// 16:45). Not a field of any record: when same-day files are written.
    #[serde(default = "default_same_day_cutoffs")]
    pub same_day_cutoffs: Vec<String>,
}

/// 10:00, 14:15 and 16:15 ET ([`crate::calendar::DEFAULT_SAME_DAY_CUTOFFS`]).
pub fn default_same_day_cutoffs() -> Vec<String> {
    crate::calendar::DEFAULT_SAME_DAY_CUTOFFS.iter().map(|t| t.format("%H:%M").to_string()).collect()
}

impl Originator {
    /// The ODFI identification of batch headers and trace numbers: the first 8
    /// digits of the ODFI routing number (fewer if it is shorter).
    pub fn odfi_identification(&self) -> &str {
        self.odfi_routing_number.get(..8).unwrap_or(&self.odfi_routing_number)
    }

    /// The file header of a file this originator creates on `creation_date`.
    pub fn file_header(
        &self,
        creation_date: NaiveDate,
        creation_time: Option<NaiveTime>,
        file_id_modifier: char,
    ) -> FileHeader {
        FileHeader {
            immediate_destination: Text::from(&self.immediate_destination),
            immediate_origin: Text::from(&self.immediate_origin),
            creation_date,
            creation_time,
            file_id_modifier,
            immediate_destination_name: Text::from(&self.immediate_destination_name),
            immediate_origin_name: Text::from(&self.immediate_origin_name),
            reference_code: Text::new(),
        }
    }

    /// The trace number of the entry with `sequence` (its last 7 digits): the
    /// ODFI identification followed by the sequence, zero-filled. Numbering is the
    /// caller's: it must keep trace numbers unique and ascending.
    pub fn trace_number(&self, sequence: u32) -> Text {
        let odfi = self.odfi_identification().as_bytes();
        // Written in place (one per entry of a file): the ODFI's eight digits,
        // then the sequence's seven.
        let mut out = [b'0'; 32];
        let Some(head) = out.get_mut(..odfi.len()) else {
            return Text::from(format!("{}{:07}", self.odfi_identification(), sequence % 10_000_000));
        };
        head.copy_from_slice(odfi);
        let mut n = sequence % 10_000_000;
        for digit in out[odfi.len()..odfi.len() + 7].iter_mut().rev() {
            *digit = b'0' + (n % 10) as u8;
            n /= 10;
        }
        match std::str::from_utf8(&out[..odfi.len() + 7]) {
            Ok(text) => Text::from(text),
            Err(_) => Text::new(),
        }
    }
}

/// One batch: its header fields and its entries. The batch control is computed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    /// 220 credits only, 225 debits only, 200 mixed (see [`service_class_for`]).
    pub service_class_code: u16,
    /// Company name (≤ 16).
    pub company_name: Text,
    /// Company discretionary data (≤ 20).
    pub company_discretionary_data: Text,
    /// Company identification (≤ 10), the same in the batch control.
    pub company_identification: Text,
    /// Standard entry class code (`PPD`, `CCD`, `WEB`, `TEL`, `BOC`, `POP`, …).
    pub sec_code: Text,
    /// Company entry description (≤ 10): `PAYROLL`, `PURCHASE`, `REVERSAL`
    /// (which makes the batch a reversal batch: see [`Batch::is_reversal`]), …
    pub company_entry_description: Text,
    /// Company descriptive date (≤ 6), free text.
    pub company_descriptive_date: Text,
    /// Effective entry date: the banking day the originator intends to settle.
    pub effective_entry_date: NaiveDate,
    /// Settlement date (Julian, 3 digits), filled in by the ACH operator: blank
    /// in an origination file.
    pub settlement_date: Text,
    /// Originator status code (`1` for a depository financial institution).
    pub originator_status_code: char,
    /// ODFI identification: the first 8 digits of its routing number.
    pub odfi_identification: Text,
    /// Batch number (7 digits), ascending within the file.
    pub batch_number: u32,
    /// The entries, in trace-number order.
    pub entries: Vec<Entry>,
}

impl Batch {
    /// Whether this batch reverses earlier entries (company entry description
    /// `REVERSAL`): only a reversal batch may carry credits in a debit-only class.
    pub fn is_reversal(&self) -> bool {
        self.company_entry_description.trim().eq_ignore_ascii_case("REVERSAL")
    }
}

/// An entry detail record (`6`) with its addenda.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Transaction code: 22/27 checking credit/debit, 32/37 savings (see
    /// [`transaction_code`]); returns and NOCs carry 21/26/31/36.
    pub transaction_code: u8,
    /// Receiving DFI identification: the first 8 digits of its routing number.
    pub receiving_dfi: Text,
    /// The routing number's check digit.
    pub check_digit: char,
    /// DFI account number (≤ 17).
    pub account_number: Text,
    /// Amount in cents (10 digits: at most 99,999,999.99).
    pub amount: Money,
    /// Individual identification number (≤ 15): the check serial number for BOC,
    /// ARC and RCK; for POP the check serial (9), terminal city (4) and state (2)
    /// (see [`pop_identification`]); a receiver id otherwise.
    pub identification: Text,
    /// Individual name (≤ 22), or the receiving company's name (CCD).
    pub name: Text,
    /// Discretionary data (≤ 2); for WEB and TEL the payment type code, `S`
    /// (single) or `R` (recurring).
    pub discretionary_data: Text,
    /// Trace number (15 digits): the ODFI identification and a 7-digit sequence.
    pub trace_number: Text,
    /// The entry's addenda records (the addenda indicator is `1` when any).
    pub addenda: Vec<Addenda>,
}

impl Entry {
    /// Whether the entry is a credit to the receiver.
    pub fn is_credit(&self) -> bool {
        is_credit_code(self.transaction_code)
    }

    /// Whether the entry is a debit to the receiver.
    pub fn is_debit(&self) -> bool {
        is_debit_code(self.transaction_code)
    }

    /// The receiving DFI's routing number: its identification and check digit.
    pub fn routing_number(&self) -> String {
        let mut text = self.receiving_dfi.to_string();
        text.push(self.check_digit);
        text
    }

    /// The POP terminal fields of the identification, as laid out for POP.
    pub fn pop_terminal(&self) -> PopTerminal {
        PopTerminal::parse(&self.identification)
    }

    /// The return addenda (`99`), if the entry is a return.
    pub fn return_addenda(&self) -> Option<&ReturnEntry> {
        self.addenda.iter().find_map(|a| match a {
            Addenda::Return(r) => Some(r),
            _ => None,
        })
    }

    /// The notification-of-change addenda (`98`), if the entry is a NOC.
    pub fn notice_of_change(&self) -> Option<&ChangeEntry> {
        self.addenda.iter().find_map(|a| match a {
            Addenda::Change(c) => Some(c),
            _ => None,
        })
    }
}

/// An addenda record (`7`), by its type code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Addenda {
    /// `05`: payment related information (≤ 80). Sequence numbers are the
    /// writer's (1, 2, … and the entry's trace sequence).
    Payment(Text),
    /// `98`: a notification of change.
    Change(ChangeEntry),
    /// `99`: a return.
    Return(ReturnEntry),
    /// Any other type code (`02`, IAT `10`–`18`, …): kept verbatim.
    Other {
        /// The two-character addenda type code.
        type_code: Text,
        /// Record positions 4–94, as read.
        content: Text,
    },
}

/// Addenda `98`: what the receiving bank says must change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeEntry {
    /// Change code (`C01` account number, `C02` routing number, `C03` both,
    /// `C05` transaction code, `C06` account and transaction code, `C07` all three…).
    pub change_code: Text,
    /// Trace number of the entry being corrected.
    pub original_trace: Text,
    /// Receiving DFI identification (8 digits) of the original entry.
    pub original_receiving_dfi: Text,
    /// The corrected data (≤ 29).
    pub corrected_data: Text,
    /// This addenda's trace number (15 digits).
    pub trace_number: Text,
}

/// Addenda `99`: why the receiving bank sent an entry back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReturnEntry {
    /// Return reason code (`R01`…; see [`crate::returns`]).
    pub return_code: Text,
    /// Trace number of the entry returned.
    pub original_trace: Text,
    /// Date of death (YYMMDD) for R14/R15, blank otherwise.
    pub date_of_death: Text,
    /// Receiving DFI identification (8 digits) of the original entry.
    pub original_receiving_dfi: Text,
    /// Addenda information (≤ 44).
    pub information: Text,
    /// This addenda's trace number (15 digits).
    pub trace_number: Text,
}

/// The POP layout of the individual identification field: check serial number
/// (positions 40–48), terminal city (49–52) and terminal state (53–54).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PopTerminal {
    /// Check serial number (≤ 9), trimmed.
    pub check_serial: Text,
    /// Terminal city (≤ 4), trimmed.
    pub city: Text,
    /// Terminal state (2), trimmed.
    pub state: Text,
}

impl PopTerminal {
    /// Split an identification field (as held in [`Entry::identification`]).
    pub fn parse(identification: &str) -> PopTerminal {
        let part = |from: usize, to: usize| {
            Text::from(identification.get(from..to.min(identification.len())).unwrap_or("").trim())
        };
        PopTerminal { check_serial: part(0, 9), city: part(9, 13), state: part(13, 15) }
    }
}

/// The identification field of a POP entry: the check serial number in 9
/// characters, the terminal city abbreviated to its first 4 characters and the
/// 2-letter state. `None` when the serial is longer than 9 characters.
pub fn pop_identification(check_serial: &str, city: &str, state: &str) -> Option<Text> {
    if check_serial.len() > 9 || !check_serial.is_ascii() || !city.is_ascii() || !state.is_ascii() {
        return None;
    }
    let city: String = city.chars().take(4).collect();
    let state: String = state.chars().take(2).collect();
    Some(Text::from(format!("{check_serial:<9}{city:<4}{state:<2}").trim_end()))
}

/// The transaction code of a live entry: 22/27 checking credit/debit, 32/37
/// savings credit/debit.
pub const fn transaction_code(account: AccountType, direction: Direction) -> u8 {
    match (account, direction) {
        (AccountType::Checking, Direction::Credit) => 22,
        (AccountType::Checking, Direction::Debit) => 27,
        (AccountType::Savings, Direction::Credit) => 32,
        (AccountType::Savings, Direction::Debit) => 37,
    }
}

/// The prenote transaction code for an account type and direction: 23/28
/// checking, 33/38 savings (credit/debit), a zero-dollar entry that tells the
/// receiving bank live entries will follow.
pub const fn prenote_code(account: AccountType, direction: Direction) -> u8 {
    transaction_code(account, direction) + 1
}

/// The tightest service class code for `entries`: 220 when all are credits, 225
/// when all are debits, 200 when mixed (or empty).
pub fn service_class_for(entries: &[Entry]) -> u16 {
    let credits = entries.iter().any(Entry::is_credit);
    let debits = entries.iter().any(Entry::is_debit);
    match (credits, debits) {
        (true, false) => CREDITS_ONLY,
        (false, true) => DEBITS_ONLY,
        _ => MIXED,
    }
}
