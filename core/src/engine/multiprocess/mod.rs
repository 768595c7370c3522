//! State kept in memory that follows other processes writing the same database (PostgreSQL).
pub(crate) mod directory_epoch;
#[cfg(all(test, feature = "postgres"))]
mod partner_rows_tests;
pub(crate) mod window_log;
#[cfg(all(test, feature = "postgres"))]
mod window_log_tests;
