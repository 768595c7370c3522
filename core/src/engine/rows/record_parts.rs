//! A stored transaction record read as its two parts, borrowed: the [`Head`]
//! (who, how much, the account: fixed once created) and the [`Tail`] (state,
//! dates, return, reversal: what the lifecycle changes).
//!
//! Postcard writes a struct as its fields one after the other, so a record's
//! bytes are its head's bytes followed by its tail's. A cut-off reads the head
//! in place (no string copied), and writes the record back as the same head
//! bytes followed by the new tail: about a fifth of the instructions of
//! decoding and encoding the whole [`TransactionRecord`]. The record and its
//! two parts are declared from one field list (`records.rs`); the tests below
//! check that the parts read and write the record's bytes exactly.

#[cfg(test)]
use crate::engine::rows::records::TransactionRecord;
pub(crate) use crate::engine::rows::records::{Head, Tail};
use crate::storage::StorageError;

/// A stored transaction record (postcard bytes) as its parts, and where its
/// tail starts.
pub(crate) fn split(bytes: &[u8]) -> Result<(Head<'_>, Tail<'_>, usize), StorageError> {
    let unreadable = |e: postcard::Error| StorageError(format!("a transactions record is unreadable: {e}"));
    let (head, rest) = postcard::take_from_bytes::<Head<'_>>(bytes).map_err(unreadable)?;
    let tail = postcard::from_bytes::<Tail<'_>>(rest).map_err(unreadable)?;
    Ok((head, tail, bytes.len() - rest.len()))
}

/// The record `bytes` with its tail replaced by `tail` (`at`: where its tail
/// starts, from [`split`]).
pub(crate) fn with_tail(bytes: &[u8], at: usize, tail: &Tail<'_>) -> Result<Vec<u8>, StorageError> {
    let head = bytes.get(..at).ok_or_else(|| StorageError("a transactions record is unreadable".into()))?;
    let mut out = Vec::with_capacity(bytes.len() + 16);
    out.extend_from_slice(head);
    postcard::to_extend(tail, out)
        .map_err(|e| StorageError(format!("a transactions record cannot be encoded: {e}")))
}

#[cfg(test)]
mod tests {
    use crate::engine::settlement::batch_kind::EntrySource;
    use chrono::{DateTime, NaiveDate, Utc};

    use super::*;
    use crate::engine::rows::records::SealedAccount;
    use crate::lifecycle::State;
    use crate::model::{AccountType, Direction, EntryClass};
    use crate::money::Money;

    fn at(secs: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(secs, 0).unwrap_or_default()
    }

    fn day(d: u32) -> Option<NaiveDate> {
        NaiveDate::from_ymd_opt(2026, 11, d)
    }

    /// A record with every optional field set, and one with none.
    fn records() -> [TransactionRecord; 2] {
        let full = TransactionRecord {
            id: "tx_full".into(),
            partner_id: "pt_1".into(),
            merchant_id: "mc_1".into(),
            amount: Money::from_cents(12_345),
            direction: Direction::Debit,
            class: EntryClass::POP,
            description_sealed: "ZGVzY3JpcHRpb24=".into(),
            check_number: Some("1234".into()),
            terminal_state: Some("NY".into()),
            customer_id: Some("cus_1".into()),
            account: SealedAccount {
                name_print: "cd".repeat(32),
                routing_number: "021000021".into(),
                account_sealed: "c2VhbGVk".into(),
                sealed_for: "tx_full".into(),
                account_last4: "6789".into(),
                account_type: AccountType::Savings,
                fingerprint: "ab".repeat(32),
            },
            has_images: true,
            purpose: Some(crate::model::Purpose::Purchase),
            reinitiation_of: Some("tx_first".into()),
            validation_of: Some("val_1".into()),
            validated_by: Some("val_2".into()),
            state: State::Returned,
            created_at: at(1_795_000_000),
            cutoff_at: at(1_795_010_000),
            origination_date: day(2),
            effective_date: day(3),
            settlement_date: day(4),
            settles_at: Some(at(1_795_100_000)),
            return_date: day(5),
            return_code: Some("R01".into()),
            return_reason: Some("Insufficient Funds".into()),
            reversal_of: Some("tx_other".into()),
            reversed_by: Some("tx_third".into()),
            reinitiated_by: Some("tx_fourth".into()),
        };
        let mut bare = full.clone();
        bare.check_number = None;
        bare.terminal_state = None;
        bare.customer_id = None;
        bare.has_images = false;
        bare.reversal_of = None;
        bare.purpose = None;
        bare.reinitiation_of = None;
        bare.validation_of = None;
        bare.validated_by = None;
        bare.begin_pending(at(1_795_000_000), at(1_795_010_000));
        [full, bare]
    }

    #[test]
    fn a_record_is_its_head_then_its_tail() {
        for record in records() {
            let bytes = postcard::to_allocvec(&record).unwrap_or_default();
            let (head, tail, start) = split(&bytes).unwrap_or_else(|e| panic!("{e}"));
            // Every field read back, as the record has it.
            assert_eq!(head.id, record.id);
            assert_eq!(head.entry_source(), EntrySource::of(&record));
            assert_eq!(head.description_sealed, record.description_sealed);
            assert_eq!(head.customer_id, record.customer_id.as_deref());
            assert_eq!(head.partner_id, record.partner_id);
            assert_eq!(head.merchant_id, record.merchant_id);
            assert_eq!(head.has_images, record.has_images);
            assert_eq!(
                (head.purpose, head.reinitiation_of, tail.reinitiated_by),
                (record.purpose, record.reinitiation_of.as_deref(), record.reinitiated_by.as_deref())
            );
            assert_eq!(
                (head.validation_of, head.validated_by),
                (record.validation_of.as_deref(), record.validated_by.as_deref())
            );
            assert_eq!(head.account.account_last4, record.account.account_last4);
            assert_eq!(head.account.fingerprint, record.account.fingerprint);
            assert_eq!(
                (tail.state, tail.created_at, tail.cutoff_at),
                (record.state, record.created_at, record.cutoff_at)
            );
            assert_eq!(
                [tail.origination_date, tail.effective_date, tail.settlement_date, tail.return_date],
                [record.origination_date, record.effective_date, record.settlement_date, record.return_date]
            );
            assert_eq!(tail.settles_at, record.settles_at);
            assert_eq!(
                [tail.return_code, tail.return_reason, tail.reversal_of, tail.reversed_by],
                [
                    record.return_code.as_deref(),
                    record.return_reason.as_deref(),
                    record.reversal_of.as_deref(),
                    record.reversed_by.as_deref()
                ]
            );
            // The parts written again are the record's bytes exactly.
            let mut again = postcard::to_allocvec(&head).unwrap_or_default();
            assert_eq!(start, again.len());
            again.extend(postcard::to_allocvec(&tail).unwrap_or_default());
            assert_eq!(again, bytes);
            assert_eq!(with_tail(&bytes, start, &tail).ok(), Some(bytes.clone()));
        }
    }

    #[test]
    fn a_changed_tail_reads_back_as_the_changed_record() {
        let [_, mut record] = records();
        let bytes = postcard::to_allocvec(&record).unwrap_or_default();
        let (_, mut tail, start) = split(&bytes).unwrap_or_else(|e| panic!("{e}"));
        tail.state = State::Originated;
        tail.origination_date = day(27);
        tail.settles_at = Some(at(1_796_000_000));
        tail.return_code = Some("R10");
        let changed = with_tail(&bytes, start, &tail).unwrap_or_default();
        record.state = State::Originated;
        record.origination_date = day(27);
        record.settles_at = Some(at(1_796_000_000));
        record.return_code = Some("R10".into());
        assert_eq!(changed, postcard::to_allocvec(&record).unwrap_or_default());
        // A record cut short is refused, not a panic.
        assert_eq!(
            split(&bytes[..bytes.len() / 2]).map(|(_, _, at)| at),
            Err(StorageError(
                "a transactions record is unreadable: Hit the end of buffer, expected more data".into()
            ))
        );
        assert_eq!(
            with_tail(&bytes, bytes.len() + 1, &tail),
            Err(StorageError("a transactions record is unreadable".into()))
        );
    }
}
