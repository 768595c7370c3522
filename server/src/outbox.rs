//! `achd serve --outbox DIR`: every origination file and image cash letter the
//! engine writes is also written into DIR, for the transfer job that sends it
//! to the bank: `<id>.ach` and `<id>.x937`.
//!
//! A file goes in atomically: `DIR/.<id>.<ext>.tmp` (mode 0600) is written and
//! fsync'd, renamed to `DIR/<id>.<ext>`, and the directory fsync'd; the bytes are
//! exactly those the engine stored. The transfer job may then move or delete it.
//! achd never writes a file a second time: each id is appended to the export
//! record `DIR/.exported` (one id a line, fsync'd) right after its rename, and the
//! record is read at start. A crash between the rename and the record's fsync
//! means the same bytes are written again at the next start: at least once, with
//! identical content (a bank's duplicate-file check catches it by the header).
//!
//! A background thread polls the engine's file list every [`POLL`]: cut-offs run
//! from the production ticker, from requests and from a sandbox `POST
//! /admin/clock`, and polling sees them all. An idle round reads the list of
//! summaries and compares its length and last id with the previous round's;
//! bytes are read only for a file not yet exported. A failed write is logged at
//! error level (file id and the I/O error: no account data) and retried at the
//! next round; files go out oldest first, a failure stopping the round.

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{self, Read as _, Write as _};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use ach_core::engine::Engine;
use tracing::{error, info};

/// How often the exporter looks for new origination files.
pub const POLL: Duration = Duration::from_secs(1);
/// The export record's name in DIR.
const RECORD: &str = ".exported";
/// A persisting failure is logged again at most this often (retries go on every
/// round).
const RELOG: Duration = Duration::from_secs(60);

/// The outbox directory and what has been exported into it.
pub struct Outbox {
    dir: PathBuf,
    record: Record,
    /// The two lists' lengths and last ids when everything in them was
    /// exported: equal lists need no more work.
    seen: Option<Lists>,
    /// The last failure logged, and when (to log a persisting one once a minute).
    failing: Option<(String, Instant)>,
}

impl Outbox {
    /// Create DIR (0700) if missing, check that files can be created in it, and
    /// read its export record. Any failure is a reason not to start.
    pub fn open(dir: &Path) -> Result<Outbox, String> {
        let cannot = |what: &str, e: io::Error| format!("cannot {what} the outbox {}: {e}", dir.display());
        if !dir.is_dir() {
            let mut builder = std::fs::DirBuilder::new();
            builder.recursive(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::DirBuilderExt;
                builder.mode(0o700);
            }
            builder.create(dir).map_err(|e| cannot("create", e))?;
        }
        // A file created, synced and removed: the same calls an export makes.
        let probe = dir.join(".achd-probe.tmp");
        remove_if_present(&probe).map_err(|e| cannot("write into", e))?;
        create_private(&probe).and_then(|f| f.sync_all()).map_err(|e| cannot("write into", e))?;
        std::fs::remove_file(&probe).map_err(|e| cannot("write into", e))?;
        let record = Record::open(&dir.join(RECORD)).map_err(|e| cannot("read the export record of", e))?;
        Ok(Outbox { dir: dir.to_owned(), record, seen: None, failing: None })
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// How many files the record says were exported.
    pub fn exported(&self) -> usize {
        self.record.ids.len()
    }

    /// Export every file not yet exported, oldest first; stop at the first
    /// failure (logged; the next round retries). Returns how many were written.
    pub fn round(&mut self, engine: &Engine) -> usize {
        match self.try_round(engine) {
            Ok(written) => {
                if self.failing.take().is_some() {
                    info!(dir = %self.dir.display(), "outbox: writing works again");
                }
                written
            }
            Err(why) => {
                let again = matches!(&self.failing, Some((last, at)) if *last == why && at.elapsed() < RELOG);
                if !again {
                    error!(dir = %self.dir.display(), error = %why, "outbox: an origination file could not be written; retrying");
                    self.failing = Some((why, Instant::now()));
                }
                0
            }
        }
    }

    fn try_round(&mut self, engine: &Engine) -> Result<usize, String> {
        let files = engine.origination_files().map_err(|e| format!("cannot list the files: {e}"))?;
        let letters =
            engine.image_cash_letters().map_err(|e| format!("cannot list the cash letters: {e}"))?;
        let now = (
            (files.len(), files.last().map(|f| f.id.clone())),
            (letters.len(), letters.last().map(|l| l.id.clone())),
        );
        if self.seen.as_ref() == Some(&now) {
            return Ok(0);
        }
        let mut written = 0;
        for summary in &files {
            let id = summary.id.as_str();
            if self.record.contains(id) {
                continue;
            }
            let bytes = match engine.origination_file(id) {
                Ok(Some((_, bytes))) => bytes,
                Ok(None) => return Err(format!("{id}: listed but not found")),
                Err(e) => return Err(format!("{id}: cannot read it: {e}")),
            };
            write_atomically(&self.dir, id, "ach", &bytes).map_err(|e| format!("{id}: {e}"))?;
            self.record.add(id).map_err(|e| format!("{id}: written, but not recorded: {e}"))?;
            info!(file_id = id, entries = summary.entries, "outbox: origination file written");
            written += 1;
        }
        for letter in &letters {
            let id = letter.id.as_str();
            if self.record.contains(id) {
                continue;
            }
            // Every item held: a listed letter with no file to send.
            if !letter.sha256.is_empty() {
                let bytes = match engine.image_cash_letter(id) {
                    Ok(Some((_, bytes))) => bytes,
                    Ok(None) => return Err(format!("{id}: listed but not found")),
                    Err(e) => return Err(format!("{id}: cannot read it: {e}")),
                };
                write_atomically(&self.dir, id, "x937", &bytes).map_err(|e| format!("{id}: {e}"))?;
                info!(file_id = id, items = letter.items, "outbox: image cash letter written");
                written += 1;
            }
            self.record.add(id).map_err(|e| format!("{id}: written, but not recorded: {e}"))?;
        }
        self.seen = Some(now);
        Ok(written)
    }
}

/// The origination files' and the image cash letters' counts and last ids.
type Lists = ((usize, Option<String>), (usize, Option<String>));

/// The background thread running [`Outbox::round`] every [`POLL`].
pub struct Exporter {
    stop: mpsc::Sender<()>,
    thread: JoinHandle<()>,
}

impl Exporter {
    /// Start polling (a first round at once).
    pub fn start(engine: Arc<Engine>, mut outbox: Outbox) -> io::Result<Exporter> {
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new().name("achd-outbox".into()).spawn(move || loop {
            if catch_unwind(AssertUnwindSafe(|| outbox.round(&engine))).is_err() {
                error!("outbox: a round panicked; retrying");
            }
            match stopped.recv_timeout(POLL) {
                Err(RecvTimeoutError::Timeout) => {}
                // Stop asked (or the handle dropped): a last round, then stop.
                Ok(()) | Err(RecvTimeoutError::Disconnected) => {
                    if catch_unwind(AssertUnwindSafe(|| outbox.round(&engine))).is_err() {
                        error!("outbox: the last round panicked");
                    }
                    return;
                }
            }
        })?;
        Ok(Exporter { stop, thread })
    }

    /// A last round (files the last requests' cut-offs wrote), then stop.
    pub fn stop(self) {
        let _ = self.stop.send(());
        if self.thread.join().is_err() {
            error!("the outbox thread panicked");
        }
    }
}

/// Write `DIR/<id>.<ext>` atomically: a private temporary file, fsync,
/// rename, fsync of the directory. A failure leaves no temporary file behind.
fn write_atomically(dir: &Path, id: &str, ext: &str, bytes: &[u8]) -> io::Result<()> {
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a file id"));
    }
    let tmp = dir.join(format!(".{id}.{ext}.tmp"));
    let written = (|| {
        remove_if_present(&tmp)?;
        let mut file = create_private(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&tmp, dir.join(format!("{id}.{ext}")))?;
        sync_dir(dir)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// A new file, mode 0600 whatever the umask (it fails if `path` exists).
fn create_private(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        options.mode(0o600);
        let file = options.open(path)?;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        Ok(file)
    }
    #[cfg(not(unix))]
    options.open(path)
}

fn remove_if_present(path: &Path) -> io::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// Make a rename in `dir` durable (unix; elsewhere the rename is all there is).
fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    File::open(dir)?.sync_all()?;
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// The export record: an append-only file of ids, one a line, each line fsync'd
/// once written. A last line without its newline (a crash mid-append) is not a
/// record: it is cut off at open, and that file is written again.
struct Record {
    file: File,
    /// Bytes of complete lines: where the next line goes, and what a failed
    /// append is cut back to.
    len: u64,
    ids: HashSet<String>,
}

impl Record {
    fn open(path: &Path) -> io::Result<Record> {
        let mut options = OpenOptions::new();
        options.read(true).append(true).create(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let mut file = options.open(path)?;
        let mut text = Vec::new();
        file.read_to_end(&mut text)?;
        let (ids, complete) = parse(&text);
        let len = complete as u64;
        if complete < text.len() {
            file.set_len(len)?;
            file.sync_all()?;
        }
        Ok(Record { file, len, ids })
    }

    fn contains(&self, id: &str) -> bool {
        self.ids.contains(id)
    }

    fn add(&mut self, id: &str) -> io::Result<()> {
        let line = format!("{id}\n");
        let appended = self.file.write_all(line.as_bytes()).and_then(|()| self.file.sync_data());
        if let Err(e) = appended {
            // Leave no partial line for the next append to run into.
            let _ = self.file.set_len(self.len);
            return Err(e);
        }
        self.len += line.len() as u64;
        self.ids.insert(id.to_owned());
        Ok(())
    }
}

/// The ids of the complete lines of a record, and the length of those lines
/// (anything after the last newline is a torn append). Blank lines and lines
/// that are not UTF-8 name no file.
fn parse(text: &[u8]) -> (HashSet<String>, usize) {
    let complete = text.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let ids = text[..complete]
        .split(|&b| b == b'\n')
        .filter_map(|line| std::str::from_utf8(line).ok())
        .map(str::trim)
        .filter(|id| !id.is_empty())
        .map(str::to_owned)
        .collect();
    (ids, complete)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn ids(list: &[&str]) -> HashSet<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn parse_keeps_complete_lines_and_drops_a_torn_last_one() {
        assert_eq!(parse(b""), (HashSet::new(), 0));
        assert_eq!(parse(b"fil_20261123A\n"), (ids(&["fil_20261123A"]), 14));
        assert_eq!(parse(b"fil_20261123A\nfil_2026112"), (ids(&["fil_20261123A"]), 14));
        assert_eq!(parse(b"fil_2026112"), (HashSet::new(), 0));
        assert_eq!(parse(b"a\n\n \r\n\xff\xfe\nb\n"), (ids(&["a", "b"]), 11));
    }

    #[test]
    fn the_record_survives_reopening_and_cuts_a_torn_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(RECORD);
        let mut record = Record::open(&path).unwrap();
        record.add("fil_20261123A").unwrap();
        record.add("fil_20261124A").unwrap();
        drop(record);
        // A crash mid-append: part of a third id, no newline.
        std::fs::OpenOptions::new().append(true).open(&path).unwrap().write_all(b"fil_2026").unwrap();
        let mut record = Record::open(&path).unwrap();
        assert_eq!(record.ids, ids(&["fil_20261123A", "fil_20261124A"]));
        assert_eq!(std::fs::read(&path).unwrap(), b"fil_20261123A\nfil_20261124A\n");
        record.add("fil_20261125A").unwrap();
        drop(record);
        let record = Record::open(&path).unwrap();
        assert!(record.contains("fil_20261125A") && !record.contains("fil_2026"));
        assert_eq!(record.ids.len(), 3);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        }
    }

    #[test]
    fn a_file_is_written_whole_and_private_with_no_temporary_left() {
        let dir = tempfile::tempdir().unwrap();
        let outbox = Outbox::open(&dir.path().join("nested/outbox")).unwrap();
        write_atomically(outbox.dir(), "fil_20261123A", "ach", b"101 ...\n").unwrap();
        // Written again (the crash window): replaced by the same bytes.
        write_atomically(outbox.dir(), "fil_20261123A", "ach", b"101 ...\n").unwrap();
        let target = outbox.dir().join("fil_20261123A.ach");
        assert_eq!(std::fs::read(&target).unwrap(), b"101 ...\n");
        let mut names: Vec<String> = std::fs::read_dir(outbox.dir())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, [".exported", "fil_20261123A.ach"]);
        let refused = write_atomically(outbox.dir(), "../x", "ach", b"").unwrap_err();
        assert_eq!(
            (refused.kind(), refused.to_string()),
            (io::ErrorKind::InvalidInput, "not a file id".to_owned())
        );
        assert!(!outbox.dir().join("../x.ach").exists() && !outbox.dir().join("../.x.ach.tmp").exists());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&target).unwrap().permissions().mode() & 0o777, 0o600);
            assert_eq!(std::fs::metadata(outbox.dir()).unwrap().permissions().mode() & 0o777, 0o700);
        }
    }

    #[test]
    fn a_directory_that_is_a_file_stops_the_open() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("plain");
        std::fs::write(&file, b"").unwrap();
        let why = Outbox::open(&file).err().unwrap();
        assert!(why.starts_with("cannot create the outbox"), "{why}");
    }

    #[test]
    fn an_engine_without_files_exports_nothing() {
        use ach_core::engine::EngineOptions;
        let at = ach_core::calendar::parse_instant("2026-11-23T10:00:00-05:00").unwrap();
        let engine = Engine::in_memory(EngineOptions::manual(at).with_operator_key("ok_test")).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut outbox = Outbox::open(&dir.path().join("outbox")).unwrap();
        // No file yet: nothing to do.
        assert_eq!(outbox.round(&engine), 0);
        assert_eq!(outbox.exported(), 0);
    }
}
