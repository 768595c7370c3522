//! A long catch-up (a cut-off of many transactions and its origination file)
//! commits its chunks without waiting for the disk and syncs once, at its end:
//! nothing of it has been answered to anyone before then. A power loss at any
//! point of it loses nothing acknowledged, and once the engine is reopened and
//! caught up again, exactly one file carries every transaction once and the
//! feeds agree with the transactions. (That a reader never sees a commit
//! before it is durable is `storage::tests`' to show.)
#![allow(clippy::unwrap_used)]

use ach_core::engine::crash::{DiskImage, SimDisk};
use ach_core::engine::{Caller, Engine, EngineOptions, LogSettings, Outcome};
use ach_core::secrets::EncryptionKey;
use ach_sim::rng::Rng;
use ach_sim::writer;
use chrono::{DateTime, TimeZone, Utc};

/// Enough for three chunks of originations and three of the file.
const COUNT: usize = 1_200;

fn options(key: &EncryptionKey) -> EngineOptions {
    writer::options().with_encryption_key(key.clone())
}

/// The engine over `disk`, its redo log there.
fn open(disk: &SimDisk, key: &EncryptionKey) -> Result<Engine, ach_core::engine::OpenError> {
    Engine::open_on_disk(disk, options(key), LogSettings::default())
}

/// The sandbox's first cut-off: 2026-11-23 18:00 Eastern.
fn cutoff() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 23, 23, 0, 0).single().unwrap()
}

/// A disk holding `COUNT` Pending debits waiting for [`cutoff`], all synced.
fn pending(key: &EncryptionKey) -> (DiskImage, String) {
    let disk = SimDisk::new();
    let engine = open(&disk, key).unwrap();
    let (partner_id, merchant_id) = writer::tenant(&engine).unwrap();
    let ops = writer::debits(&partner_id, &merchant_id, &mut Rng::new(7), COUNT);
    for answer in engine.execute_batch(ops) {
        assert!(matches!(answer, Ok(Outcome::TransactionCreated { .. })), "{answer:?}");
    }
    // Closing checkpoints: the database holds everything durably, whatever
    // a crash now would leave of the log.
    drop(engine);
    (disk.crash_image(0).0, partner_id)
}

/// One file with every transaction once, trace numbers ascending, and feeds
/// that report each transaction Originated exactly once.
fn one_complete_file(engine: &Engine, partner_id: &str) -> Result<(), String> {
    let files = engine.origination_files().map_err(|e| format!("{e:?}"))?;
    let [file] = files.as_slice() else { return Err(format!("{} files", files.len())) };
    if file.entries != COUNT as u64 {
        return Err(format!("{} entries", file.entries));
    }
    let Some((_, text)) = engine.origination_file(&file.id).map_err(|e| format!("{e:?}"))? else {
        return Err(format!("{} is listed but not stored", file.id));
    };
    let read = ach_core::nacha::read(&text).map_err(|e| format!("{e:?}"))?;
    let traces: Vec<String> =
        read.file.batches.iter().flat_map(|b| b.entries.iter().map(|e| e.trace_number.to_string())).collect();
    if traces.len() != COUNT || !traces.windows(2).all(|p| p[0] < p[1]) {
        return Err(format!(
            "{} traces, ascending: {}",
            traces.len(),
            traces.windows(2).all(|p| p[0] < p[1])
        ));
    }
    let caller = Caller::Partner { partner_id: partner_id.to_owned() };
    let (mut pointer, mut originated) = ("0".to_owned(), std::collections::HashSet::new());
    loop {
        let page = engine.status_changes(&caller, partner_id, &pointer).map_err(|e| format!("{e:?}"))?;
        if page.changes.is_empty() {
            break;
        }
        for c in page.changes.iter().filter(|c| c.status == ach_core::model::Status::B) {
            if !originated.insert(c.transaction_id.clone()) {
                return Err(format!("{} Originated twice in the feed", c.transaction_id));
            }
        }
        pointer = page.new_pointer;
    }
    if originated.len() != COUNT {
        return Err(format!("{} Originated in the feed", originated.len()));
    }
    engine.audit_records().map_err(|e| format!("{e:?}"))?
}

#[test]
fn a_catch_up_of_many_chunks_commits_durably_only_at_its_end() {
    let key = EncryptionKey::generate();
    let (image, partner_id) = pending(&key);
    let disk = SimDisk::from_image(image);
    let engine = open(&disk, &key).unwrap();
    let before = disk.stats().syncs;
    let progress = engine.advance_to(cutoff()).unwrap();
    assert_eq!(progress.originated, COUNT as u64);
    // Five write transactions (three of originations, two of the file, the
    // last listing it): the first four deferred, redb's commits without a
    // sync and without a log record, the last redb's durable commit (a
    // checkpoint: the log stays empty). Before deferring, each of the five
    // synced the disk at least once; redb syncs up to three times for one.
    let syncs = disk.stats().syncs - before;
    assert!(syncs <= 3, "{syncs} syncs for one catch-up of five write transactions");
    assert_eq!(disk.log_unsynced(), 0, "durable once advance_to answers");
    one_complete_file(&engine, &partner_id).unwrap();
}

#[test]
fn a_power_loss_anywhere_in_a_catch_up_leaves_one_complete_file() {
    let key = EncryptionKey::generate();
    let (image, partner_id) = pending(&key);
    // How many I/O operations the whole open and catch-up take.
    let whole = SimDisk::from_image(image.clone());
    open(&whole, &key).unwrap().advance_to(cutoff()).unwrap();
    let operations = whole.operations();
    let stride =
        std::env::var("SIM_CRASH_STRIDE").ok().and_then(|v| v.parse().ok()).unwrap_or(operations / 24);
    let mut crashed = 0;
    for point in (1..=operations).step_by(usize::try_from(stride.max(1)).unwrap()) {
        let disk = SimDisk::from_image(image.clone());
        disk.lose_power_before(point);
        if let Ok(engine) = open(&disk, &key) {
            let _ = engine.advance_to(cutoff());
        }
        if !disk.crashed() {
            continue;
        }
        crashed += 1;
        let (after, _) = disk.crash_image(point);
        let disk = SimDisk::from_image(after);
        let engine = open(&disk, &key)
            .unwrap_or_else(|e| panic!("reopening after a crash before operation {point}: {e}"));
        engine.advance_to(cutoff()).unwrap_or_else(|e| panic!("catching up after operation {point}: {e:?}"));
        one_complete_file(&engine, &partner_id)
            .unwrap_or_else(|e| panic!("after a crash before operation {point} of {operations}: {e}"));
    }
    assert!(crashed >= 20, "{crashed} crash points inside the catch-up");
}
