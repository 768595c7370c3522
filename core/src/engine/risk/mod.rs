//! Risk counters: usage per day, period and month; the duplicate window; return rates.
pub(crate) mod duplicates;
pub(crate) mod return_rates;
pub(crate) mod usage;
pub(crate) mod window;
