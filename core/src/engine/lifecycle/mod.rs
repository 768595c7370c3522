//! Transactions over their life: create, void, reverse, return; their check images.
pub(crate) mod images;
#[cfg(test)]
mod images_tests;
pub(crate) mod reinitiation;
pub(crate) mod transactions;
