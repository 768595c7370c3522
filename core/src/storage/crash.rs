//! A simulated disk that loses power (feature `simulation`; tests only).
//!
//! [`SimDisk`] keeps what a real disk holds: the *durable* image (everything a
//! completed `sync_data` covered) and, in order, every write and length change
//! issued since. Reads see all of them, as they would through the page cache.
//!
//! The disk can be armed to lose power just before its n-th I/O operation (a
//! write, a length change or a sync, counted from 1): that operation and every
//! later one fails, as for a process that died there. A sync that is cut off does
//! not complete. [`SimDisk::crash_image`] is what a restart then finds: the durable
//! image plus a random subset of the unsynced operations, applied in a random
//! order, each write possibly torn (only some byte ranges of its buffer landed).
//! That is everything redb's model of the media allows (`docs/design.md` of redb,
//! "Assumptions about underlying media": single bytes are atomic, a completed
//! sync is durable, bytes outside a write never change), and nothing more: a
//! completed sync is never undone.
//!
//! A restart reopens the image with [`SimDisk::from_image`]; redb detects and
//! rolls back a commit that did not fully land.
//!
//! The disk holds two files: the database ([`SimDisk::backend`]) and its redo
//! log (`SimDisk::log_file`). Operations on both count towards the crash
//! point, a sync covers only its own file, and a crash image loses some of
//! each file's unsynced operations.
//!
//! The disk can also be full ([`SimDisk::set_capacity`]): a write or length
//! change past the capacity fails with `ENOSPC` (`StorageFull`) and changes
//! nothing, while the disk keeps working; lifting the limit frees the space.

use std::io;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// One unsynced operation.
#[derive(Debug, Clone)]
enum Unsynced {
    Write { offset: usize, data: Vec<u8> },
    SetLen(usize),
}

/// Counts of the operations a disk was asked to do.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiskStats {
    /// Writes.
    pub writes: u64,
    /// Length changes.
    pub set_lens: u64,
    /// Completed syncs.
    pub syncs: u64,
    /// Bytes written.
    pub bytes_written: u64,
}

/// How a crash image was made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CrashImage {
    /// Unsynced operations at the crash.
    pub unsynced: usize,
    /// Of those, how many landed (wholly or in part).
    pub kept: usize,
    /// Of those, how many writes were torn (only part of the buffer landed).
    pub torn: usize,
}

/// What a restart finds on a disk: both files' bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiskImage {
    /// The database file.
    pub db: Vec<u8>,
    /// The redo log.
    pub log: Vec<u8>,
}

/// One file of the disk.
#[derive(Debug, Default)]
struct FileState {
    /// What reads see: the durable image with every unsynced operation applied.
    live: Vec<u8>,
    /// What survives any crash.
    durable: Vec<u8>,
    /// Operations since the last completed sync, in issue order.
    unsynced: Vec<Unsynced>,
}

/// The database's file.
const DB: usize = 0;
/// The redo log's file.
const LOG: usize = 1;

#[derive(Debug, Default)]
struct DiskState {
    /// The database file and the log.
    files: [FileState; 2],
    /// Operations issued so far (writes, length changes, syncs).
    ops: u64,
    /// Lose power just before this operation.
    fail_at: Option<u64>,
    /// Power was lost: every operation fails.
    crashed: bool,
    /// The disk is full past this many bytes.
    capacity: Option<usize>,
    stats: DiskStats,
}

impl DiskState {
    /// Count an operation; `Err` once power is lost (this operation included).
    fn begin(&mut self) -> io::Result<()> {
        if self.crashed {
            return Err(power_lost());
        }
        self.ops += 1;
        if self.fail_at.is_some_and(|at| self.ops >= at) {
            self.crashed = true;
            return Err(power_lost());
        }
        Ok(())
    }

    /// `Err` (ENOSPC) if file `file` ending at `end` and the other file would
    /// together pass the capacity.
    fn room_for(&self, file: usize, end: usize) -> io::Result<()> {
        let others: usize =
            self.files.iter().enumerate().filter(|(i, _)| *i != file).map(|(_, f)| f.live.len()).sum();
        match self.capacity {
            Some(capacity) if end.saturating_add(others) > capacity => {
                Err(io::Error::new(io::ErrorKind::StorageFull, "no space left on device (simulated)"))
            }
            _ => Ok(()),
        }
    }
}

fn power_lost() -> io::Error {
    io::Error::other("simulated power loss")
}

fn apply(image: &mut Vec<u8>, op: &Unsynced) {
    match op {
        Unsynced::SetLen(len) => image.resize(*len, 0),
        Unsynced::Write { offset, data } => write_at(image, *offset, data),
    }
}

fn write_at(image: &mut Vec<u8>, offset: usize, data: &[u8]) {
    let end = offset + data.len();
    if image.len() < end {
        image.resize(end, 0);
    }
    image[offset..end].copy_from_slice(data);
}

/// A small deterministic generator (SplitMix64) for crash images.
struct Mix(u64);

impl Mix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// A simulated disk. Clones share the same disk.
#[derive(Debug, Clone, Default)]
pub struct SimDisk {
    state: Arc<Mutex<DiskState>>,
}

impl SimDisk {
    /// An empty disk.
    pub fn new() -> SimDisk {
        SimDisk::default()
    }

    /// A disk holding `image`, all of it durable (a restart after a crash).
    pub fn from_image(image: DiskImage) -> SimDisk {
        let file = |bytes: Vec<u8>| FileState { live: bytes.clone(), durable: bytes, unsynced: Vec::new() };
        let state = DiskState { files: [file(image.db), file(image.log)], ..DiskState::default() };
        SimDisk { state: Arc::new(Mutex::new(state)) }
    }

    fn lock(&self) -> MutexGuard<'_, DiskState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The storage backend over this disk, for `Engine::open_with_backend`.
    pub fn backend(&self) -> SimFile {
        SimFile { state: self.state.clone(), file: DB }
    }

    /// The redo log's file on this disk.
    pub(crate) fn log_file(&self) -> SimFile {
        SimFile { state: self.state.clone(), file: LOG }
    }

    /// Lose power just before operation number `op` (counted from 1 since the disk
    /// was made): it and every later operation fail.
    pub fn lose_power_before(&self, op: u64) {
        self.lock().fail_at = Some(op);
    }

    /// A full disk: from now on a write or length change that would make the
    /// files together longer than `bytes` fails with `StorageFull` (ENOSPC) and changes
    /// nothing. `None` frees the space again.
    pub fn set_capacity(&self, bytes: Option<u64>) {
        self.lock().capacity = bytes.map(|b| usize::try_from(b).unwrap_or(usize::MAX));
    }

    /// The files' length now, together.
    pub fn len(&self) -> u64 {
        self.lock().files.iter().map(|f| f.live.len() as u64).sum()
    }

    /// Whether both files are empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Lose power now.
    pub fn lose_power(&self) {
        self.lock().crashed = true;
    }

    /// Operations issued so far (writes, length changes, syncs).
    pub fn operations(&self) -> u64 {
        self.lock().ops
    }

    /// Whether power was lost.
    pub fn crashed(&self) -> bool {
        self.lock().crashed
    }

    /// What the disk was asked to do.
    pub fn stats(&self) -> DiskStats {
        self.lock().stats
    }

    /// Operations written since the last completed sync of their file, in
    /// both files.
    pub fn unsynced(&self) -> usize {
        self.lock().files.iter().map(|f| f.unsynced.len()).sum()
    }

    /// Operations on the redo log since its last completed sync: what a crash
    /// could take from it.
    pub fn log_unsynced(&self) -> usize {
        self.lock().files[LOG].unsynced.len()
    }

    /// The image a restart finds after a crash now: each file's durable image
    /// plus a random subset (chosen by `seed`) of its unsynced operations, in a
    /// random order, writes possibly torn. One time in four nothing unsynced
    /// landed, one time in four everything did, in order.
    pub fn crash_image(&self, seed: u64) -> (DiskImage, CrashImage) {
        let state = self.lock();
        let mut rng = Mix(seed ^ 0x005E_ED0F_C4A5);
        let mut report = CrashImage::default();
        let db = crash_file(&state.files[DB], &mut rng, &mut report);
        let log = crash_file(&state.files[LOG], &mut rng, &mut report);
        (DiskImage { db, log }, report)
    }
}

/// What a crash leaves of one file (see [`SimDisk::crash_image`]).
fn crash_file(file: &FileState, rng: &mut Mix, report: &mut CrashImage) -> Vec<u8> {
    let mut image = file.durable.clone();
    report.unsynced += file.unsynced.len();
    match rng.below(4) {
        0 => {}
        1 => {
            for op in &file.unsynced {
                apply(&mut image, op);
            }
            report.kept += file.unsynced.len();
        }
        _ => {
            let mut order: Vec<usize> = (0..file.unsynced.len()).filter(|_| rng.below(2) == 0).collect();
            for i in (1..order.len()).rev() {
                order.swap(i, rng.below(i + 1));
            }
            report.kept += order.len();
            for i in order {
                match &file.unsynced[i] {
                    Unsynced::Write { offset, data } if data.len() > 1 && rng.below(3) == 0 => {
                        report.torn += 1;
                        tear(&mut image, *offset, data, rng);
                    }
                    op => apply(&mut image, op),
                }
            }
        }
    }
    image
}

/// Land some byte ranges of a write: its buffer cut at 1 to 4 random points, each
/// piece kept or lost.
fn tear(image: &mut Vec<u8>, offset: usize, data: &[u8], rng: &mut Mix) {
    let mut cuts: Vec<usize> = (0..1 + rng.below(4)).map(|_| 1 + rng.below(data.len() - 1)).collect();
    cuts.push(0);
    cuts.push(data.len());
    cuts.sort_unstable();
    cuts.dedup();
    for piece in cuts.windows(2) {
        if rng.below(2) == 0 {
            write_at(image, offset + piece[0], &data[piece[0]..piece[1]]);
        }
    }
}

/// One file of a [`SimDisk`]: the database's (redb's storage backend) or
/// the redo log's.
#[derive(Debug)]
pub struct SimFile {
    state: Arc<Mutex<DiskState>>,
    /// [`DB`] or [`LOG`].
    file: usize,
}

impl SimFile {
    fn lock(&self) -> MutexGuard<'_, DiskState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn index(n: u64) -> io::Result<usize> {
    usize::try_from(n).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "offset out of range"))
}

impl DiskState {
    fn len(&self, file: usize) -> io::Result<u64> {
        if self.crashed {
            return Err(power_lost());
        }
        Ok(self.files[file].live.len() as u64)
    }

    fn read(&self, file: usize, offset: u64, out: &mut [u8]) -> io::Result<()> {
        if self.crashed {
            return Err(power_lost());
        }
        let start = index(offset)?;
        let bytes = self.files[file]
            .live
            .get(start..start + out.len())
            .ok_or_else(|| io::Error::new(io::ErrorKind::UnexpectedEof, "read past the end"))?;
        out.copy_from_slice(bytes);
        Ok(())
    }

    fn set_len(&mut self, file: usize, len: u64) -> io::Result<()> {
        self.begin()?;
        // Cutting a file short frees space: always possible.
        if index(len)? > self.files[file].live.len() {
            self.room_for(file, index(len)?)?;
        }
        let op = Unsynced::SetLen(index(len)?);
        let f = &mut self.files[file];
        apply(&mut f.live, &op);
        f.unsynced.push(op);
        self.stats.set_lens += 1;
        Ok(())
    }

    fn sync_data(&mut self, file: usize) -> io::Result<()> {
        self.begin()?;
        let f = &mut self.files[file];
        f.durable = f.live.clone();
        f.unsynced.clear();
        self.stats.syncs += 1;
        Ok(())
    }

    fn write(&mut self, file: usize, offset: u64, data: &[u8]) -> io::Result<()> {
        self.begin()?;
        self.room_for(file, index(offset)?.saturating_add(data.len()))?;
        let op = Unsynced::Write { offset: index(offset)?, data: data.to_vec() };
        let f = &mut self.files[file];
        apply(&mut f.live, &op);
        f.unsynced.push(op);
        self.stats.writes += 1;
        self.stats.bytes_written += data.len() as u64;
        Ok(())
    }
}

impl redb::StorageBackend for SimFile {
    fn len(&self) -> io::Result<u64> {
        self.lock().len(self.file)
    }

    fn read(&self, offset: u64, out: &mut [u8]) -> io::Result<()> {
        self.lock().read(self.file, offset, out)
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.lock().set_len(self.file, len)
    }

    fn sync_data(&self) -> io::Result<()> {
        self.lock().sync_data(self.file)
    }

    fn write(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        self.lock().write(self.file, offset, data)
    }
}

/// The log's file does what the database's does, under the log's names.
impl super::log::LogFile for SimFile {
    fn len(&self) -> io::Result<u64> {
        redb::StorageBackend::len(self)
    }

    fn read_at(&self, offset: u64, out: &mut [u8]) -> io::Result<()> {
        redb::StorageBackend::read(self, offset, out)
    }

    fn write_at(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        redb::StorageBackend::write(self, offset, data)
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        redb::StorageBackend::set_len(self, len)
    }

    fn sync_data(&self) -> io::Result<()> {
        redb::StorageBackend::sync_data(self)
    }

    /// As a direct write does it on Linux (`log/direct.rs`): whole blocks,
    /// the bytes before `offset` in its first block written again as they
    /// are, zeros after `data` to its last block's end; then a sync. A crash
    /// may tear the write anywhere, as any unsynced write.
    fn write_synced(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        let block = super::log::BLOCK as usize;
        let offset = usize::try_from(offset).map_err(|_| io::Error::other("offset too large"))?;
        let start = offset - offset % block;
        let mut blocks = vec![0u8; (offset - start + data.len()).next_multiple_of(block)];
        let mut disk = self.lock();
        disk.read(self.file, start as u64, &mut blocks[..offset - start])?;
        blocks[offset - start..offset - start + data.len()].copy_from_slice(data);
        disk.write(self.file, start as u64, &blocks)?;
        disk.sync_data(self.file)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use redb::StorageBackend;

    use super::*;

    #[test]
    fn synced_writes_survive_every_crash_and_unsynced_ones_may_not() {
        let disk = SimDisk::new();
        let b = disk.backend();
        b.set_len(8).unwrap();
        b.write(0, b"durable!").unwrap();
        b.sync_data().unwrap();
        b.write(0, b"LOSTLOST").unwrap();
        let mut seen = std::collections::BTreeSet::new();
        for seed in 0..64 {
            let (image, report) = disk.crash_image(seed);
            let image = image.db;
            assert_eq!(report.unsynced, 1);
            assert_eq!(image.len(), 8);
            for (i, byte) in image.iter().enumerate() {
                assert!(*byte == b"durable!"[i] || *byte == b"LOSTLOST"[i]);
            }
            seen.insert(image);
        }
        assert!(seen.contains(b"durable!".as_slice()) && seen.contains(b"LOSTLOST".as_slice()));
        assert!(seen.len() > 2, "some images are torn");
    }

    #[test]
    fn power_loss_fails_the_operation_and_every_later_one() {
        let disk = SimDisk::new();
        let b = disk.backend();
        disk.lose_power_before(3);
        b.set_len(4).unwrap();
        b.write(0, b"abcd").unwrap();
        let lost = Err("simulated power loss".to_owned());
        assert_eq!(b.sync_data().map_err(|e| e.to_string()), lost, "the third operation is cut off");
        assert!(disk.crashed());
        assert_eq!(b.write(0, b"x").map_err(|e| e.to_string()), lost);
        assert_eq!(b.read(0, &mut [0u8; 1]).map_err(|e| e.to_string()), lost);
        assert_eq!(disk.stats().syncs, 0);
        let restarted = SimDisk::from_image(disk.crash_image(1).0);
        assert!(restarted.backend().len().unwrap() <= 4);
    }

    #[test]
    fn the_log_file_loses_its_own_unsynced_tail_and_shares_the_power() {
        use crate::storage::log::LogFile;
        let disk = SimDisk::new();
        let db: Box<dyn redb::StorageBackend> = Box::new(disk.backend());
        let log: Box<dyn LogFile> = Box::new(disk.log_file());
        log.write_at(0, b"synced").unwrap();
        log.sync_data().unwrap();
        db.write(0, b"db").unwrap();
        log.write_at(6, b"+tail").unwrap();
        db.sync_data().unwrap();
        assert_eq!((disk.unsynced(), disk.log_unsynced()), (1, 1), "a sync covers its own file only");
        let images: Vec<DiskImage> = (0..16).map(|seed| disk.crash_image(seed).0).collect();
        assert!(images.iter().all(|i| i.db == b"db" && i.log.starts_with(b"synced")));
        assert!(images.iter().any(|i| i.log == b"synced") && images.iter().any(|i| i.log == b"synced+tail"));
        disk.lose_power_before(disk.operations() + 2);
        log.write_at(11, b"!").unwrap();
        let lost = Err("simulated power loss".to_owned());
        assert_eq!(db.write(0, b"x").map_err(|e| e.to_string()), lost, "one power for both files");
        assert_eq!(log.sync_data().map_err(|e| e.to_string()), lost, "one power for both files");
    }

    #[test]
    fn a_full_disk_refuses_what_does_not_fit_until_space_is_freed() {
        let disk = SimDisk::new();
        let b = disk.backend();
        disk.set_capacity(Some(4));
        b.set_len(4).unwrap();
        b.write(0, b"abcd").unwrap();
        let full = b.write(2, b"xyz").unwrap_err();
        assert_eq!(full.kind(), io::ErrorKind::StorageFull);
        assert_eq!(b.set_len(5).unwrap_err().kind(), io::ErrorKind::StorageFull);
        b.sync_data().unwrap();
        assert!(!disk.crashed(), "a full disk keeps working");
        let mut out = [0u8; 4];
        b.read(0, &mut out).unwrap();
        assert_eq!(&out, b"abcd", "a refused write changes nothing");
        disk.set_capacity(None);
        b.write(2, b"xyz").unwrap();
        assert_eq!(disk.len(), 5);
    }
}
