//! A redo log's synced appends written straight to the disk (Linux): the file
//! opened a second time with `O_DIRECT | O_DSYNC`, each append one aligned
//! `pwrite` that returns once it is durable. Against a `pwrite` into the page
//! cache and an `fdatasync`, it skips the copy into the cache and the
//! writeback's search for dirty pages: on this project's virtual machines
//! ~15 % off a durable append's time and a quarter off its CPU
//! (`docs/bench-history.md`, "direct log appends").
//!
//! A direct write covers whole blocks, so an append rewrites the start of its
//! first block: the bytes of earlier records there, kept from the last append
//! (or read back), and zeros after its end to the block's end. Those earlier
//! bytes are rewritten with what they already hold, so a write torn by a power
//! loss leaves each of them as it was; what lay past the log's end (zeros, or
//! records of an earlier round that replay stops before) becomes zeros.

use std::fs::File;
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;

use super::block::BLOCK;

/// The log file's direct writer.
pub(super) struct Direct {
    file: File,
    /// The file's bytes from the start of the block the last direct write
    /// ended in, up to where it ended (`None`: not known).
    tail: Option<(u64, Vec<u8>)>,
    /// Room for one write and its alignment.
    buf: Vec<u8>,
    /// Tests: every write refused with `EINVAL`, as by a disk whose blocks
    /// are larger than [`BLOCK`].
    #[cfg(test)]
    pub(super) refuse: bool,
}

impl Direct {
    /// The file at `path` opened for direct, synced writes; `None` where its
    /// file system takes no direct writes (tmpfs, say).
    pub(super) fn open(path: &Path) -> Option<Direct> {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_DIRECT | libc::O_DSYNC)
            .open(path)
            .ok()?;
        Some(Direct {
            file,
            tail: None,
            buf: Vec::new(),
            #[cfg(test)]
            refuse: false,
        })
    }

    /// The bytes past the last write are not known any more (the file was
    /// written or cut another way).
    pub(super) fn forget(&mut self) {
        self.tail = None;
    }

    /// Write `data` at `offset`, durably, with the bytes before it in its
    /// first block (read with `read` if not known) and zeros after it to the
    /// end of its last block, which the file must reach already. An error
    /// leaves the tail unknown; `EINVAL` means the disk refuses the write's
    /// alignment.
    pub(super) fn write(
        &mut self,
        offset: u64,
        data: &[u8],
        read: impl FnOnce(u64, &mut [u8]) -> io::Result<()>,
    ) -> io::Result<()> {
        let start = offset - offset % BLOCK;
        let head = (offset - start) as usize;
        let end = head + data.len();
        let len = end.next_multiple_of(BLOCK as usize);
        self.buf.resize(len + BLOCK as usize, 0);
        let at = self.buf.as_ptr().align_offset(BLOCK as usize);
        let out = &mut self.buf[at..at + len];
        match self.tail.take() {
            Some((s, bytes)) if s == start && bytes.len() == head => out[..head].copy_from_slice(&bytes),
            _ if head == 0 => {}
            _ => read(start, &mut out[..head])?,
        }
        out[head..end].copy_from_slice(data);
        out[end..].fill(0);
        #[cfg(test)]
        if self.refuse {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        self.file.write_all_at(out, start)?;
        let last = end - end % BLOCK as usize;
        self.tail = Some((start + last as u64, out[last..end].to_vec()));
        Ok(())
    }
}

#[cfg(test)]
#[path = "direct_tests.rs"]
mod tests;
