//! The file a redo log lives in: a file beside the database, or (feature
//! `simulation`) a simulated disk's second file that loses its unsynced tail
//! when the power goes.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use super::block::BLOCK;
#[cfg(target_os = "linux")]
use super::direct::Direct;

/// What the redo log needs of its file. Calls come one at a time (the log's
/// lock is held).
pub(crate) trait LogFile: Send {
    /// The file's length.
    fn len(&self) -> io::Result<u64>;
    /// Read `out.len()` bytes from `offset`.
    fn read_at(&self, offset: u64, out: &mut [u8]) -> io::Result<()>;
    /// Write all of `data` at `offset`.
    fn write_at(&self, offset: u64, data: &[u8]) -> io::Result<()>;
    /// Cut or extend the file to `len` bytes.
    fn set_len(&self, len: u64) -> io::Result<()>;
    /// Make every write and length change so far durable (`fdatasync`).
    fn sync_data(&self) -> io::Result<()>;
    /// Write all of `data` at `offset` and make it durable with every write
    /// and length change before it. The file reaches at least [`SPARE`]
    /// bytes past its end already (a direct write covers whole blocks).
    fn write_synced(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        self.write_at(offset, data)?;
        self.sync_data()
    }
}

/// How far the log's file reaches past a synced record's end at least,
/// zeros or older records: the rest of the block a direct write covers.
pub(crate) const SPARE: u64 = BLOCK;

/// The log file of the database at `database`: `<database>.log`.
pub fn log_file_for(database: &Path) -> PathBuf {
    let mut name = database.as_os_str().to_owned();
    name.push(".log");
    PathBuf::from(name)
}

/// A log in a file of the file system: its synced appends written directly
/// where Linux and the file system allow (`direct.rs`), through the page
/// cache and `fdatasync` otherwise.
pub(crate) struct FsLog {
    file: File,
    #[cfg(target_os = "linux")]
    direct: std::cell::RefCell<Option<Direct>>,
    /// Written or cut through the page cache since the last sync: the next
    /// synced append goes the same way, and its sync covers those too.
    dirty: std::cell::Cell<bool>,
}

impl FsLog {
    /// Open the log at `path`, creating it (owner only, its directory synced so
    /// that the file itself survives a power loss) if it does not exist.
    pub(crate) fn open(path: &Path) -> io::Result<FsLog> {
        let mut options = std::fs::OpenOptions::new();
        options.read(true).write(true);
        if path.exists() {
            return Ok(FsLog::with(options.open(path)?, path));
        }
        options.create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            // Sealed account numbers and key hashes, as in the database: owner only.
            options.mode(0o600);
        }
        let file = options.open(path)?;
        file.sync_all()?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            File::open(dir)?.sync_all()?;
        }
        Ok(FsLog::with(file, path))
    }

    fn with(file: File, path: &Path) -> FsLog {
        let _ = path;
        FsLog {
            file,
            #[cfg(target_os = "linux")]
            direct: std::cell::RefCell::new(Direct::open(path)),
            dirty: std::cell::Cell::new(true),
        }
    }

    /// Every synced append through the page cache and `fdatasync`, as where
    /// the file system takes no direct writes.
    #[cfg(test)]
    pub(crate) fn without_direct_writes(&self) {
        #[cfg(target_os = "linux")]
        self.direct.replace(None);
    }

    /// Tests: whether synced appends may still be written directly, and
    /// every direct write from now on refused with `EINVAL`.
    #[cfg(all(test, target_os = "linux"))]
    pub(crate) fn refuse_direct_writes(&self) -> bool {
        let mut direct = self.direct.borrow_mut();
        direct.as_mut().map(|d| d.refuse = true).is_some()
    }

    /// Tests: whether synced appends may still be written directly.
    #[cfg(all(test, target_os = "linux"))]
    pub(crate) fn writes_directly(&self) -> bool {
        self.direct.borrow().is_some()
    }

    /// The bytes past the last direct write are not known any more.
    fn written_otherwise(&self) {
        self.dirty.set(true);
        #[cfg(target_os = "linux")]
        if let Some(direct) = self.direct.borrow_mut().as_mut() {
            direct.forget();
        }
    }

    /// [`LogFile::write_synced`] as one direct write: `None` if it was not
    /// tried (no direct writer, or buffered writes waiting for a sync).
    #[cfg(target_os = "linux")]
    fn write_direct(&self, offset: u64, data: &[u8]) -> Option<io::Result<()>> {
        if self.dirty.get() {
            return None;
        }
        let mut direct = self.direct.borrow_mut();
        let written = direct.as_mut()?.write(offset, data, |at, out| self.read_at(at, out));
        match written {
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                // The disk refuses the alignment: through the page cache from now on.
                *direct = None;
                None
            }
            written => Some(written),
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn write_direct(&self, _offset: u64, _data: &[u8]) -> Option<io::Result<()>> {
        None
    }
}

impl LogFile for FsLog {
    fn len(&self) -> io::Result<u64> {
        Ok(self.file.metadata()?.len())
    }

    #[cfg(unix)]
    fn read_at(&self, offset: u64, out: &mut [u8]) -> io::Result<()> {
        std::os::unix::fs::FileExt::read_exact_at(&self.file, out, offset)
    }

    #[cfg(not(unix))]
    fn read_at(&self, offset: u64, out: &mut [u8]) -> io::Result<()> {
        use std::io::{Read, Seek, SeekFrom};
        let mut f = &self.file;
        f.seek(SeekFrom::Start(offset))?;
        f.read_exact(out)
    }

    /// One `pwrite` per record (no seek).
    #[cfg(unix)]
    fn write_at(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        self.written_otherwise();
        std::os::unix::fs::FileExt::write_all_at(&self.file, data, offset)
    }

    #[cfg(not(unix))]
    fn write_at(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        use std::io::{Seek, SeekFrom, Write};
        self.written_otherwise();
        let mut f = &self.file;
        f.seek(SeekFrom::Start(offset))?;
        f.write_all(data)
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.written_otherwise();
        self.file.set_len(len)
    }

    fn sync_data(&self) -> io::Result<()> {
        self.file.sync_data()?;
        self.dirty.set(false);
        Ok(())
    }

    fn write_synced(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        if let Some(written) = self.write_direct(offset, data) {
            return written;
        }
        self.write_at(offset, data)?;
        self.sync_data()
    }
}
