//! Request execution: an operation prepared and validated outside the write transaction, applied inside it, answered; reads outside one.
pub(crate) mod applied;
pub(crate) mod apply;
pub(crate) mod context;
pub(crate) mod execute;
pub(crate) mod fast_map;
pub(crate) mod group_commit;
#[cfg(test)]
mod group_commit_tests;
pub(crate) mod idempotency;
pub(crate) mod operation;
pub(crate) mod outcome;
pub(crate) mod prepare;
pub(crate) mod reads;
pub(crate) mod refusal;
pub(crate) mod validated;
