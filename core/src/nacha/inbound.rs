//! What a bank sent back: the returns and notifications of change of a file read.
//!
//! [`inbound`] turns a [`NachaFile`] (as [`read`](super::read()) gives it) into one
//! [`Inbound`] per entry detail, in file order, for the engine to apply:
//!
//! - an entry with a return addenda (`99`) is an [`InboundReturn`], dated by its
//!   batch's effective entry date;
//! - an entry with a notification-of-change addenda (`98`) is an
//!   [`InboundNotice`], its corrected data read with Nacha's layout for the change
//!   code into a typed [`Correction`];
//! - any other entry (a forward entry, a prenote) is [`Inbound::Other`], for the
//!   caller to count as unmatched.
//!
//! Nothing is refused here: a return code Nacha does not define is kept as sent
//! (see [`InboundReturn::lookup`]), and corrected data that does not follow its
//! layout is [`Correction::Unreadable`]. The reader's problems (a date it could
//! not parse reads as 1970-01-01, a trace number that is not 15 digits is kept as
//! read) are the caller's to judge.

use chrono::NaiveDate;

use super::file::{Batch, Entry, NachaFile};
use crate::model::AccountType;
use crate::money::Money;
use crate::returns::{self, ReturnCode};
use crate::routing::is_valid_routing_number;

/// One entry of a file a bank sent back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inbound {
    /// A returned entry (addenda `99`).
    Return(InboundReturn),
    /// A notification of change (addenda `98`).
    Notice(InboundNotice),
    /// Neither: an entry that returns or corrects nothing.
    Other {
        /// The entry's trace number.
        trace: String,
    },
}

/// A returned entry: which entry came back, why, and when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InboundReturn {
    /// Trace number of the entry returned (15 digits), from the addenda.
    pub original_trace: String,
    /// Return reason code as sent (`R01`…), whether or not Nacha defines it.
    pub return_code: String,
    /// The return batch's effective entry date.
    pub return_date: NaiveDate,
    /// The return entry's own trace number.
    pub trace: String,
    /// The amount returned.
    pub amount: Money,
    /// The addenda information (≤ 44), as sent.
    pub information: String,
}

impl InboundReturn {
    /// The Nacha table's entry for [`return_code`](Self::return_code): `None`
    /// when Nacha defines no such code (the engine decides what to do).
    pub fn lookup(&self) -> Option<ReturnCode> {
        returns::lookup(&self.return_code)
    }
}

/// A notification of change: what must change before the next entry to the
/// receiver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InboundNotice {
    /// Trace number of the entry being corrected (15 digits), from the addenda.
    pub original_trace: String,
    /// Change code as sent (`C01`…).
    pub change_code: String,
    /// The corrected data, read with the change code's layout.
    pub correction: Correction,
    /// The notification entry's own trace number.
    pub trace: String,
}

/// The corrected data of a notification of change, by change code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Correction {
    /// `C01`: the account number (positions 1–17).
    Account(String),
    /// `C02`: the routing number (positions 1–9).
    Routing(String),
    /// `C03`: the routing number (1–9) and, after three blanks, the account
    /// number (13–29).
    RoutingAndAccount {
        /// The routing number.
        routing_number: String,
        /// The account number.
        account_number: String,
    },
    /// `C05`: the account type of the transaction code (positions 1–2).
    AccountType(AccountType),
    /// `C06`: the account number (1–17) and, after three blanks, the account
    /// type of the transaction code (21–22).
    AccountAndType {
        /// The account number.
        account_number: String,
        /// The account type.
        account_type: AccountType,
    },
    /// `C07`: the routing number (1–9), the account number (10–26) and the
    /// account type of the transaction code (27–28).
    RoutingAccountAndType {
        /// The routing number.
        routing_number: String,
        /// The account number.
        account_number: String,
        /// The account type.
        account_type: AccountType,
    },
    /// Any other change code (`C04` name, `C08`–`C14`, refused notifications
    /// `C61`–`C69`…): the code and the corrected data as sent.
    Other {
        /// The change code.
        code: String,
        /// The corrected data.
        text: String,
    },
    /// `C01`, `C02`, `C03`, `C05`, `C06` or `C07` whose corrected data does not
    /// follow the code's layout (its 29 characters, blank-filled): a
    /// blank or misplaced part, a routing number that is not nine digits with a
    /// valid check digit, a transaction code of no checking or savings account.
    Unreadable {
        /// The change code.
        code: String,
        /// The corrected data.
        text: String,
    },
}

/// Width of the corrected data field.
const CORRECTED_DATA_LEN: usize = 29;

impl Correction {
    /// Read `corrected_data` with the layout of `change_code`. Never fails: what
    /// does not follow the layout is [`Correction::Unreadable`].
    pub fn parse(change_code: &str, corrected_data: &str) -> Correction {
        let (code, text) = (change_code.to_owned(), corrected_data.to_owned());
        if !matches!(change_code, "C01" | "C02" | "C03" | "C05" | "C06" | "C07") {
            return Correction::Other { code, text };
        }
        Field::new(corrected_data)
            .and_then(|field| field.correction(change_code))
            .unwrap_or(Correction::Unreadable { code, text })
    }
}

/// The corrected data field, blank-filled to its 29 characters.
struct Field([u8; CORRECTED_DATA_LEN]);

impl Field {
    /// `None` when `text` is longer than the field or not ASCII.
    fn new(text: &str) -> Option<Field> {
        if text.len() > CORRECTED_DATA_LEN || !text.is_ascii() {
            return None;
        }
        let mut field = [b' '; CORRECTED_DATA_LEN];
        field.get_mut(..text.len())?.copy_from_slice(text.as_bytes());
        Some(Field(field))
    }

    /// Positions `from` to `to` (1-based, inclusive, as in Nacha's layouts).
    fn at(&self, from: usize, to: usize) -> Option<&str> {
        std::str::from_utf8(self.0.get(from.checked_sub(1)?..to)?).ok()
    }

    /// `Some` when positions `from` to `to` are blank.
    fn blank(&self, from: usize, to: usize) -> Option<()> {
        self.at(from, to)?.bytes().all(|b| b == b' ').then_some(())
    }

    /// A routing number: nine digits with a valid check digit.
    fn routing(&self, from: usize) -> Option<String> {
        let text = self.at(from, from + 8)?;
        is_valid_routing_number(text).then(|| text.to_owned())
    }

    /// An account number, trimmed: not blank.
    fn account(&self, from: usize, to: usize) -> Option<String> {
        let text = self.at(from, to)?.trim();
        (!text.is_empty()).then(|| text.to_owned())
    }

    /// The account type of a two-digit transaction code.
    fn account_type(&self, from: usize) -> Option<AccountType> {
        account_type_of(self.at(from, from + 1)?)
    }

    /// The correction of a known change code, `None` for any other code or
    /// when the field does not follow the code's layout.
    fn correction(&self, change_code: &str) -> Option<Correction> {
        Some(match change_code {
            "C01" => {
                self.blank(18, 29)?;
                Correction::Account(self.account(1, 17)?)
            }
            "C02" => {
                self.blank(10, 29)?;
                Correction::Routing(self.routing(1)?)
            }
            "C03" => {
                self.blank(10, 12)?;
                Correction::RoutingAndAccount {
                    routing_number: self.routing(1)?,
                    account_number: self.account(13, 29)?,
                }
            }
            "C05" => {
                self.blank(3, 29)?;
                Correction::AccountType(self.account_type(1)?)
            }
            "C06" => {
                self.blank(18, 20)?;
                self.blank(23, 29)?;
                Correction::AccountAndType {
                    account_number: self.account(1, 17)?,
                    account_type: self.account_type(21)?,
                }
            }
            "C07" => {
                self.blank(29, 29)?;
                Correction::RoutingAccountAndType {
                    routing_number: self.routing(1)?,
                    account_number: self.account(10, 26)?,
                    account_type: self.account_type(27)?,
                }
            }
            _ => return None,
        })
    }
}

/// The account type of a live or prenote transaction code: 22, 23, 24, 27, 28,
/// 29 checking; 32, 33, 34, 37, 38, 39 savings.
fn account_type_of(code: &str) -> Option<AccountType> {
    match code.as_bytes() {
        [b'2', b'2'..=b'4' | b'7'..=b'9'] => Some(AccountType::Checking),
        [b'3', b'2'..=b'4' | b'7'..=b'9'] => Some(AccountType::Savings),
        _ => None,
    }
}

/// What each entry of `file` brings back, in file order: one [`Inbound`] per
/// entry detail.
pub fn inbound(file: &NachaFile) -> Vec<Inbound> {
    file.batches.iter().flat_map(|b| b.entries.iter().map(move |e| of_entry(b, e))).collect()
}

fn of_entry(batch: &Batch, entry: &Entry) -> Inbound {
    let trace = entry.trace_number.to_string();
    if let Some(r) = entry.return_addenda() {
        return Inbound::Return(InboundReturn {
            original_trace: r.original_trace.to_string(),
            return_code: r.return_code.to_string(),
            return_date: batch.effective_entry_date,
            trace,
            amount: entry.amount,
            information: r.information.to_string(),
        });
    }
    if let Some(n) = entry.notice_of_change() {
        return Inbound::Notice(InboundNotice {
            original_trace: n.original_trace.to_string(),
            change_code: n.change_code.to_string(),
            correction: Correction::parse(&n.change_code, &n.corrected_data),
            trace,
        });
    }
    Inbound::Other { trace }
}
