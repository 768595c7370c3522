//! Row encodings: the stored records, their parts read in place, packed id lists and index rows.
pub(crate) mod id_list;
pub(crate) mod listings;
pub(crate) mod packed_index;
#[cfg(test)]
mod pending_rows_tests;
pub(crate) mod record_parts;
pub(crate) mod records;
