//! State kept in memory that follows other processes writing the same database (PostgreSQL).
#[cfg(all(test, feature = "postgres"))]
mod partner_rows_tests;
pub(crate) mod shared_directory;
pub(crate) mod shared_window;
#[cfg(all(test, feature = "postgres"))]
mod shared_window_tests;
