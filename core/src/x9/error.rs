//! Why the writer refused a cash letter.

/// What [`write`](super::write()) objects to, with the field at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum X9Error {
    /// A field of the cash letter itself.
    #[error("cash letter, {field}: {reason}")]
    Letter {
        /// The field, as named in [`CashLetter`](super::CashLetter).
        field: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// A field of one item.
    #[error("item {index}, {field}: {reason}")]
    Item {
        /// The item's 0-based place in the letter's items.
        index: usize,
        /// The field, as named in [`CheckItem`](super::CheckItem).
        field: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// The letter has no items: a cash letter clears at least one check.
    #[error("a cash letter needs at least one item")]
    NoItems,
    /// Two items share an item sequence number, which identifies an item in
    /// the file.
    #[error("items {first} and {second} share item sequence number {sequence}")]
    DuplicateSequence {
        /// The 0-based place of the first item with it.
        first: usize,
        /// The 0-based place of the second.
        second: usize,
        /// The item sequence number, as given.
        sequence: String,
    },
    /// A control record's total would not fit its field.
    #[error("{field} of {cents} cents does not fit its {digits} digits")]
    TotalTooLarge {
        /// The control field, by its name in the standard (snake case).
        field: &'static str,
        /// The total.
        cents: i64,
        /// The field's width.
        digits: usize,
    },
}
