//! The disk block a direct write of the log is aligned to.

/// The alignment of a direct write's offset, length and memory (`direct.rs`):
/// the largest logical block size of a disk in use (4,096 bytes; most take
/// 512 too). A synced record's block is always whole in the file (`SPARE`).
pub(crate) const BLOCK: u64 = 4096;
