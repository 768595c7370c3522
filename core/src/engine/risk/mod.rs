//! Risk: usage per day, period and month; the duplicate window; return
//! rates; screening, the review queue and exposure.
pub(crate) mod counter_rows;
mod counters;
pub(crate) mod duplicates;
pub(crate) mod exposure;
pub(crate) mod reads;
pub(crate) mod return_rates;
pub(crate) mod reviews;
pub(crate) mod rules;
pub(crate) mod screening;
pub(crate) mod usage;
pub(crate) mod window;
