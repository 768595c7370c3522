//! How a transaction appears in an origination file: its batch (SEC code and
//! company entry description) and its entry detail. Pure: no storage.
//!
//! - A reversal within Nacha's window (made available by the fifth banking day
//!   after the original's settlement date) goes in a `REVERSAL` batch of the
//!   original's class, debit-only classes included.
//! - A reversal credit after the window is a refund: a `REFUND` batch of the
//!   original's class where that class carries credits (PPD, CCD, WEB), a PPD
//!   credit otherwise (TEL, BOC, POP carry debits only).
//! - A re-initiation of a returned entry goes in a `RETRY PYMT` batch of its
//!   class (Nacha Rules 2.12.4: the description is reserved for them), and
//!   micro-entries of an account validation in an `ACCTVERIFY` batch.
//! - A prenote (a validation's zero-dollar entry) carries a prenote's
//!   transaction code (23/28 checking, 33/38 savings).
//! - Otherwise the description of its purpose where it names one (`PAYROLL`
//!   for PPD wage credits, `PURCHASE` for WEB debits for goods bought online),
//!   `PAYMENT` for everything else; the file replaces `PAYMENT` with the
//!   merchant's own description when the operator set one
//!   (`merchant_settings.rs`).

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

use crate::engine::rows::record_parts::Head;
use crate::engine::rows::records::TransactionRecord;
use crate::lifecycle;
use crate::model::{AccountType, Direction, EntryClass};
use crate::money::Money;
use crate::nacha::{self, Entry, Text};

/// A batch's class and description.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BatchKind {
    pub sec_code: &'static str,
    pub description: &'static str,
}

/// Nacha's description of a re-initiated entry's batch.
pub(crate) const RETRY_DESCRIPTION: &str = "RETRY PYMT";
/// Nacha's description of a batch of micro-entries.
pub(crate) const MICRO_ENTRY_DESCRIPTION: &str = "ACCTVERIFY";

/// The batch of the transaction `t` originating on `origination`;
/// `reversal` is, for a reversal, the transaction it reverses (`Some(None)`
/// when that one is gone).
pub(crate) fn of(
    t: &Head<'_>,
    reversal: Option<Option<&TransactionRecord>>,
    origination: NaiveDate,
) -> BatchKind {
    let class = t.class.as_str();
    if let Some(original) = reversal {
        let window_end = original.and_then(|o| o.settlement_date).map(lifecycle::reversal_window_end);
        if window_end.is_none_or(|end| origination <= end) || t.direction == Direction::Debit {
            return BatchKind { sec_code: class, description: "REVERSAL" };
        }
        let sec_code = if t.class.debit_only() { "PPD" } else { class };
        return BatchKind { sec_code, description: "REFUND" };
    }
    let micro_entry = t.validation_of.is_some() && t.amount.cents() > 0;
    let description = match (t.reinitiation_of, t.purpose) {
        _ if micro_entry => MICRO_ENTRY_DESCRIPTION,
        (Some(_), _) => RETRY_DESCRIPTION,
        (None, Some(purpose)) => purpose.description(),
        (None, None) => crate::engine::DEFAULT_DESCRIPTION,
    };
    BatchKind { sec_code: class, description }
}

/// `text` as a NACHA alphanumeric field of at most `width` characters: upper
/// case, folded to ASCII ([`crate::validation::text::fold_lossy`]: what the
/// service takes always folds; anything else becomes a space); never empty
/// (`?` stands for nothing printable).
pub(crate) fn field(text: &str, width: usize) -> Text {
    // Written into the stack (three fields per entry of a file): every
    // character of the folded text is one printable ASCII byte.
    let mut out = [b' '; 64];
    let width = width.min(out.len());
    let mut len = 0;
    for c in crate::validation::text::fold_lossy(text.trim()).chars() {
        let Some(slot) = out.get_mut(len).filter(|_| len < width) else { break };
        debug_assert!((' '..='~').contains(&c), "fold_lossy gives printable ASCII");
        *slot = c.to_ascii_uppercase() as u8;
        len += 1;
    }
    let trimmed = out[..len].trim_ascii();
    Text::from_ascii(if trimmed.is_empty() { b"?" } else { trimmed })
}

/// What a transaction's entry detail is made of: the fields of its record a
/// file carries, borrowed. A cut-off stores them (postcard) in the file's
/// outgoing rows, so the file is written without reading each transaction
/// again; the account number stays sealed until the entry is written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct EntrySource<'a> {
    pub id: &'a str,
    #[serde(with = "crate::money::cents")]
    pub amount: Money,
    pub direction: Direction,
    pub class: EntryClass,
    #[serde(borrow)]
    pub check_number: Option<&'a str>,
    #[serde(borrow)]
    pub terminal_state: Option<&'a str>,
    pub routing_number: &'a str,
    pub account_type: AccountType,
    /// Base64 of the sealed account number and holder's name, and the id
    /// its seal is bound to.
    pub account_sealed: &'a str,
    pub sealed_for: &'a str,
}

impl<'a> EntrySource<'a> {
    /// The entry fields of `t`, as a stored record's head gives them (the
    /// record parts' tests compare the two).
    #[cfg(test)]
    pub(crate) fn of(t: &'a TransactionRecord) -> Self {
        EntrySource {
            id: &t.id,
            amount: t.amount,
            direction: t.direction,
            class: t.class,
            check_number: t.check_number.as_deref(),
            terminal_state: t.terminal_state.as_deref(),
            routing_number: &t.account.routing_number,
            account_type: t.account.account_type,
            account_sealed: &t.account.account_sealed,
            sealed_for: &t.account.sealed_for,
        }
    }
}

/// The entry detail of `t` in a batch of class `sec`, with its account
/// number and holder's name (unsealed) and `trace`; `terminal` is the
/// merchant's city and state (POP).
pub(crate) fn entry(
    t: &EntrySource<'_>,
    sec: &str,
    (account_number, name): (&str, &str),
    trace: Text,
    terminal: (&str, &str),
) -> Entry {
    let routing = t.routing_number;
    let check = t.check_number.unwrap_or("");
    let identification = match t.class {
        EntryClass::BOC => field(check, 15),
        EntryClass::POP => {
            let state = t.terminal_state.unwrap_or(terminal.1).to_ascii_uppercase();
            let city = field(terminal.0, 4);
            nacha::pop_identification(field(check, 9).as_str(), city.as_str(), &state)
                .unwrap_or_else(|| field(check, 9))
        }
        _ => field(t.id.get(t.id.len().saturating_sub(15)..).unwrap_or(t.id), 15),
    };
    let discretionary = if matches!(sec, "WEB" | "TEL") { "S" } else { "" };
    Entry {
        transaction_code: if t.amount.cents() == 0 {
            nacha::prenote_code(t.account_type, t.direction)
        } else {
            nacha::transaction_code(t.account_type, t.direction)
        },
        receiving_dfi: Text::from(routing.get(..8).unwrap_or(routing)),
        check_digit: routing.chars().nth(8).unwrap_or('0'),
        account_number: field(account_number, 17),
        amount: t.amount,
        identification,
        name: field(name, 22),
        discretionary_data: Text::from(discretionary),
        trace_number: trace,
        addenda: Vec::new(),
    }
}

impl<'a> Head<'a> {
    /// The entry fields a file needs.
    pub(crate) fn entry_source(&self) -> EntrySource<'a> {
        EntrySource {
            id: self.id,
            amount: self.amount,
            direction: self.direction,
            class: self.class,
            check_number: self.check_number,
            terminal_state: self.terminal_state,
            routing_number: self.account.routing_number,
            account_type: self.account.account_type,
            account_sealed: self.account.account_sealed,
            sealed_for: self.account.sealed_for,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_upper_case_ascii_within_their_width() {
        assert_eq!(field("José Núñez-García", 22).as_str(), "JOSE NUNEZ-GARCIA");
        assert_eq!(field("Straße ＡＣＭＥ", 22).as_str(), "STRASSE ACME");
        assert_eq!(field("株式会社", 16).as_str(), "?");
        assert_eq!(field("  Acme Widgets International LLC", 16).as_str(), "ACME WIDGETS INT");
        assert_eq!(field("a\u{7}b", 5).as_str(), "A B");
    }
}
