//! What the checker reports: a summary of what a file holds and the problems
//! found in it, each at its record.

use std::collections::BTreeMap;

use serde::Serialize;

pub use crate::record_problem::Problem;

/// The character set of a file's text fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Encoding {
    /// ASCII (Latin-1 above 0x7F).
    Ascii,
    /// EBCDIC, code page 037.
    Ebcdic,
}

/// What a file holds, counted from its records (never taken from its control
/// records, which the checker compares against these counts).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// The text fields' character set.
    pub encoding: Encoding,
    /// Whether each record is preceded by its length (4 bytes, big-endian).
    pub length_prefixed: bool,
    /// The file header's standard level (`03` X9.37-2003, `30` X9.100-187-2008,
    /// `35` X9.100-187-2013 and 2016).
    pub standard_level: String,
    /// Records read.
    pub records: usize,
    /// Cash letters (`10` records).
    pub cash_letters: usize,
    /// Bundles (`20` records).
    pub bundles: usize,
    /// Items: check details (`25`) and returns (`31`).
    pub items: usize,
    /// Of the items, the returns (`31`).
    pub returns: usize,
    /// Credits (`61` and `62`), outside the items.
    pub credits: usize,
    /// The items' amounts added up, in cents.
    pub total_amount_cents: i64,
    /// Image views (`50` records).
    pub images: usize,
    /// The image data of the `52` records by format (`tiff-g4`, `tiff-lzw`,
    /// `jpeg`, `png`, `unknown`, …); records without image data are not counted.
    pub image_formats: BTreeMap<String, usize>,
}

/// The problems found in a file so far, as the checker's parts record them.
#[derive(Debug, Default)]
pub(crate) struct Found(pub(crate) Vec<Problem>);

impl Found {
    /// A problem at `record` in `field`.
    pub(crate) fn problem(&mut self, record: usize, field: &'static str, message: impl Into<String>) {
        self.0.push(Problem::new(record, field, message));
    }
}

/// The checker's answer for a file it could read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    /// What the file holds.
    pub summary: Summary,
    /// What is wrong with it, in record order; empty when the file is valid.
    pub problems: Vec<Problem>,
}

impl Report {
    /// Whether the file has no problem.
    pub fn is_valid(&self) -> bool {
        self.problems.is_empty()
    }
}
