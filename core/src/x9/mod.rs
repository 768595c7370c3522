//! X9.100-187-2016 ("UCD") image cash letters: the file a bank of first deposit
//! sends to clear checks as images, written and checked as pure code.
//!
//! A file is a sequence of records, each preceded by its length as 4 bytes,
//! big-endian: a file header (`01`), cash letters (a cash letter header `10`,
//! bundles, a cash letter control `90`) and a file control (`99`). A bundle is a
//! bundle header (`20`), items, and a bundle control (`70`). An item is a check
//! detail (`25`) followed by its addenda (`26` for the bank of first deposit)
//! and its image views: an image view detail (`50`) and an image view data
//! record (`52`) carrying the picture, one pair for the front and one for the
//! back. Text is EBCDIC (code page 037); the images are TIFF files, CCITT Group 4
//! bitonal, carried as they are.
//!
//! - [`write()`]: a [`CashLetter`] to the bytes of a file; refuses, with a typed
//!   [`X9Error`] and never a panic, anything a bank would reject.
//! - [`check()`]: reads any X9.100-187 file (ASCII or EBCDIC, with or without the
//!   length prefixes), checks its record order, record lengths, controls and
//!   images, and reports a [`Summary`] and the [`Problem`]s, each at its record.
//! - [`items()`]: the check items of a file, with their images.
//! - [`to_g4_tiff()`]: a JPEG, PNG or TIFF picture to the bitonal Group 4 TIFF
//!   the standard carries.
//!
//! Nothing here reads a clock or touches storage: the creation time comes in as
//! a value.

mod check;
mod controls;
mod convert;
mod ebcdic;
mod error;
mod frame;
mod items;
mod letter;
mod records;
mod report;
mod tiff_read;
mod tiff_write;
mod validate;
mod write;

#[cfg(test)]
mod check_tests;
#[cfg(test)]
mod image_tests;
#[cfg(test)]
mod props;
#[cfg(test)]
mod real_files;
#[cfg(test)]
mod tests;

pub use check::check;
pub use convert::{to_g4_tiff, ImageError};
pub use error::X9Error;
pub use frame::NotX9;
pub use items::{items, ReadItem};
pub use letter::{CashLetter, CheckItem};
pub use report::{Encoding, Problem, Report, Summary};
pub use write::write;

/// Items in one bundle at most: the writer starts a new bundle after this many.
pub const BUNDLE_MAX_ITEMS: usize = 300;
