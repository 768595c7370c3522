//! A problem found in a file of fixed records (a NACHA file, an X9 image cash
//! letter): where (record number, field) and what.

use std::fmt;

use serde::Serialize;

/// One problem of a file read: the 1-based record number it is in, the
/// field's name (`record` for the record as a whole) and a message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// 1-based record number in the file (0: the file as a whole).
    pub record: usize,
    /// The field, by its standard's name in snake case (`entry_hash`,
    /// `amount`, …), or `record` for the record as a whole.
    pub field: &'static str,
    /// What is wrong, for a person.
    pub message: String,
}

impl Problem {
    /// A problem at `record` in `field`.
    pub fn new(record: usize, field: &'static str, message: impl Into<String>) -> Problem {
        Problem { record, field, message: message.into() }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "record {}, {}: {}", self.record, self.field, self.message)
    }
}
