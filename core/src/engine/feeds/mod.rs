//! The two status feeds (status changes per partner, events per merchant): their entries recorded in the write transaction and their pages (`changes.rs`), and how the entries are stored (`feed_rows.rs`).
#[cfg(test)]
mod batch_feed_tests;
pub(crate) mod changes;
pub(crate) mod feed_rows;
