//! The two status feeds (status changes per partner, events per merchant): their entries recorded in the write transaction and their pages (`changes.rs`), how the entries are stored (`feed_rows.rs`), and each partner's own events (`partner_events.rs`).
#[cfg(test)]
mod batch_feed_tests;
pub(crate) mod changes;
pub(crate) mod feed_rows;
pub(crate) mod partner_events;
