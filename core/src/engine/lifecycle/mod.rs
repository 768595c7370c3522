//! Transactions over their life: create, void, reverse, return, review
//! decisions; their check images.
pub(crate) mod images;
#[cfg(test)]
mod images_tests;
pub(crate) mod pending;
pub(crate) mod reinitiation;
pub(crate) mod review_decisions;
pub(crate) mod transactions;
