//! Settlement and files: the schedule of cut-offs and settlements, origination files, image cash letters, the files the bank sends back.
pub(crate) mod advance;
pub(crate) mod bank_files;
pub(crate) mod batch_kind;
pub(crate) mod cash_letters;
pub(crate) mod cutoff_run;
pub(crate) mod file_digest;
pub(crate) mod file_ids;
pub(crate) mod origination;
pub(crate) mod originator;
pub(crate) mod schedule;
pub(crate) mod traces;
