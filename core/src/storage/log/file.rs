//! The file a redo log lives in: a file beside the database, or (feature
//! `simulation`) a simulated disk's second file that loses its unsynced tail
//! when the power goes.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

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
}

/// The log file of the database at `database`: `<database>.log`.
pub fn log_file_for(database: &Path) -> PathBuf {
    let mut name = database.as_os_str().to_owned();
    name.push(".log");
    PathBuf::from(name)
}

/// A log in a file of the file system.
pub(crate) struct FsLog(File);

impl FsLog {
    /// Open the log at `path`, creating it (owner only, its directory synced so
    /// that the file itself survives a power loss) if it does not exist.
    pub(crate) fn open(path: &Path) -> io::Result<FsLog> {
        let mut options = std::fs::OpenOptions::new();
        options.read(true).write(true);
        if path.exists() {
            return Ok(FsLog(options.open(path)?));
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
        Ok(FsLog(file))
    }
}

impl LogFile for FsLog {
    fn len(&self) -> io::Result<u64> {
        Ok(self.0.metadata()?.len())
    }

    #[cfg(unix)]
    fn read_at(&self, offset: u64, out: &mut [u8]) -> io::Result<()> {
        std::os::unix::fs::FileExt::read_exact_at(&self.0, out, offset)
    }

    #[cfg(not(unix))]
    fn read_at(&self, offset: u64, out: &mut [u8]) -> io::Result<()> {
        use std::io::{Read, Seek, SeekFrom};
        let mut f = &self.0;
        f.seek(SeekFrom::Start(offset))?;
        f.read_exact(out)
    }

    /// One `pwrite` per record (no seek).
    #[cfg(unix)]
    fn write_at(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        std::os::unix::fs::FileExt::write_all_at(&self.0, data, offset)
    }

    #[cfg(not(unix))]
    fn write_at(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        use std::io::{Seek, SeekFrom, Write};
        let mut f = &self.0;
        f.seek(SeekFrom::Start(offset))?;
        f.write_all(data)
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.0.set_len(len)
    }

    fn sync_data(&self) -> io::Result<()> {
        self.0.sync_data()
    }
}
