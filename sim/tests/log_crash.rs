//! Single durable creates, one per commit, each a redo-log record synced before
//! it is answered, over a simulated disk whose second file is the log: a power
//! loss before every I/O operation (appends, syncs, the log's growth, the
//! checkpoints every fourth record, redb's writes) leaves every acknowledged
//! create present exactly once, the one in flight wholly or not at all, and
//! the stored records agreeing with each other.
#![allow(clippy::unwrap_used)]

use std::collections::HashSet;

use ach_core::engine::crash::{DiskImage, SimDisk};
use ach_core::engine::{Caller, Engine, EngineOptions, LogSettings, Outcome};
use ach_core::model::Status;
use ach_core::secrets::EncryptionKey;
use ach_sim::rng::Rng;
use ach_sim::writer;

const CREATES: usize = 16;

/// A checkpoint every fourth record, the file grown 2 KiB at a time.
const LOG: LogSettings =
    LogSettings { records: 4, bytes: 1 << 20, grow_by: 2 << 10, checkpoint_above: 1 << 20, hold: 3 };

fn options(key: &EncryptionKey) -> EngineOptions {
    writer::options().with_encryption_key(key.clone())
}

/// A disk with a partner and a merchant, closed (checkpointed).
fn tenant(key: &EncryptionKey) -> (DiskImage, String, String) {
    let disk = SimDisk::new();
    let engine = Engine::open_on_disk(&disk, options(key), LOG).unwrap();
    let (partner_id, merchant_id) = writer::tenant(&engine).unwrap();
    drop(engine);
    (disk.crash_image(0).0, partner_id, merchant_id)
}

/// The ids of the creates in the partner's feed, in order.
fn created(engine: &Engine, partner_id: &str) -> Vec<String> {
    let caller = Caller::Partner { partner_id: partner_id.to_owned() };
    let (mut pointer, mut ids) = ("0".to_owned(), Vec::new());
    loop {
        let page = engine.status_changes(&caller, partner_id, &pointer).unwrap();
        if page.changes.is_empty() {
            return ids;
        }
        ids.extend(page.changes.iter().filter(|c| c.status == Status::A).map(|c| c.transaction_id.clone()));
        pointer = page.new_pointer;
    }
}

/// Run the creates on `disk` (losing power where it was armed to): the ids
/// acknowledged, in order.
fn run(disk: &SimDisk, key: &EncryptionKey, partner_id: &str, merchant_id: &str) -> Vec<String> {
    let Ok(engine) = Engine::open_on_disk(disk, options(key), LOG) else { return Vec::new() };
    let mut acknowledged = Vec::new();
    for (caller, op) in writer::debits(partner_id, merchant_id, &mut Rng::new(11), CREATES) {
        match engine.execute(&caller, op) {
            Ok(Outcome::TransactionCreated { transaction_id }) => acknowledged.push(transaction_id),
            Ok(other) => panic!("{other:?}"),
            Err(_) => break,
        }
    }
    acknowledged
}

#[test]
fn a_power_loss_at_every_io_operation_keeps_every_acknowledged_create_once() {
    let key = EncryptionKey::generate();
    let (image, partner_id, merchant_id) = tenant(&key);
    let whole = SimDisk::from_image(image.clone());
    assert_eq!(run(&whole, &key, &partner_id, &merchant_id).len(), CREATES);
    let operations = whole.operations();
    let (mut crashed, mut in_flight_kept) = (0, 0);
    for point in 1..=operations {
        let disk = SimDisk::from_image(image.clone());
        disk.lose_power_before(point);
        let acknowledged = run(&disk, &key, &partner_id, &merchant_id);
        assert!(disk.crashed(), "power lost before operation {point} of {operations}");
        crashed += 1;
        for seed in 0..3 {
            let after = SimDisk::from_image(disk.crash_image(point * 3 + seed).0);
            let engine = Engine::open_on_disk(&after, options(&key), LOG)
                .unwrap_or_else(|e| panic!("reopening after a crash before operation {point}: {e}"));
            let ids = created(&engine, &partner_id);
            let unique: HashSet<&String> = ids.iter().collect();
            assert_eq!(unique.len(), ids.len(), "crash before {point}: a create twice: {ids:?}");
            assert_eq!(
                ids[..acknowledged.len()],
                acknowledged[..],
                "crash before {point}: acknowledged lost"
            );
            assert!(ids.len() <= acknowledged.len() + 1, "crash before {point}: more than the one in flight");
            in_flight_kept += ids.len() - acknowledged.len();
            assert_eq!(engine.audit_records().unwrap(), Ok(()), "crash before {point}");
            assert_eq!(engine.audit_usage().unwrap(), Ok(()), "crash before {point}");
        }
    }
    println!("{operations} I/O operations, {crashed} crash points, 3 images each; in flight kept whole {in_flight_kept} times");
    assert!(crashed >= CREATES * 2, "{crashed} crash points");
    assert!(in_flight_kept > 0, "some creates in flight at the crash were kept whole");
}
