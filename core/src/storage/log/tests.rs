//! The redo log's record format, its reading back (torn tails dropped, damage
//! refused) and its replay (twice is once).
#![allow(clippy::unwrap_used)]

use proptest::prelude::*;
use redb::backends::InMemoryBackend;
use redb::{Database, ReadableDatabase, ReadableTable};

use super::record::{self, Op, Parsed, Payload};
use super::replay::{apply, replay, scan};
use crate::storage::{Table, Write};

/// The log salt of the tests' databases.
const SALT: u32 = 0x5a17_0001;

/// A payload of one put and one remove.
fn payload(n: u8) -> Payload {
    let mut p = Payload::default();
    p.put(Table::Transactions, &[b'k', n], &[n; 40]);
    p.remove(Table::Pending, &[b'p', n]);
    p
}

/// A log of records `1..=count`, each appended after a sync that covered
/// the ones before it (as single durable commits are).
fn synced_log(count: u8) -> (Vec<u8>, Vec<usize>) {
    let (mut log, mut starts) = (Vec::new(), Vec::new());
    for n in 1..=count {
        starts.push(log.len());
        let synced = log.len() as u64;
        log.extend(record::encode(SALT, u64::from(n), synced, payload(n).as_bytes()).unwrap());
    }
    (log, starts)
}

fn seqs(log: &[u8], applied: u64) -> Result<Vec<u64>, String> {
    scan(log, applied, SALT).map(|records| records.iter().map(|r| r.seq).collect())
}

#[test]
fn a_record_reads_back_as_written() {
    let p = payload(7);
    let bytes = record::encode(SALT, 42, 9, p.as_bytes()).unwrap();
    assert_eq!(bytes.len(), record::HEADER + p.len());
    let Parsed::Valid { record, next } = record::parse(&bytes, 0, SALT) else { panic!("not valid") };
    assert_eq!((record.seq, record.synced, next), (42, 9, bytes.len()));
    assert_eq!(
        record::ops(record.payload).unwrap(),
        vec![
            Op::Put { table: Table::Transactions, key: &[b'k', 7], value: &[7; 40] },
            Op::Remove { table: Table::Pending, key: &[b'p', 7] },
        ]
    );
    let mut ranged = Payload::default();
    ranged.remove_range(Table::Outgoing, b"from", b"to");
    assert_eq!(
        record::ops(ranged.as_bytes()).unwrap(),
        vec![Op::RemoveRange { table: Table::Outgoing, from: b"from", to: b"to" }]
    );
}

#[test]
fn the_table_byte_is_the_position_in_all() {
    for (i, table) in Table::ALL.iter().enumerate() {
        assert_eq!(*table as usize, i, "{}", table.name());
    }
}

#[test]
fn a_torn_tail_is_dropped_at_every_cut() {
    let (log, starts) = synced_log(3);
    for cut in 0..log.len() {
        let whole = starts.iter().skip(1).filter(|s| **s <= cut).count() + usize::from(cut == log.len());
        let expected: Vec<u64> = (1..=whole as u64).collect();
        assert_eq!(seqs(&log[..cut], 0).unwrap(), expected, "cut at {cut}");
    }
    // Zeros after the end (a length change that landed without the write).
    let mut zeros = log.clone();
    zeros.extend([0u8; 100]);
    assert_eq!(seqs(&zeros, 0).unwrap(), vec![1, 2, 3]);
}

#[test]
fn a_bad_checksum_at_the_tail_is_dropped_and_before_synced_records_is_damage() {
    let (log, starts) = synced_log(3);
    // The last record's payload damaged: nothing after it proves it was synced.
    let mut tail = log.clone();
    *tail.last_mut().unwrap() ^= 1;
    assert_eq!(seqs(&tail, 0).unwrap(), vec![1, 2]);
    // The second record damaged, with the third appended after a sync that
    // covered it: refused, naming where.
    for at in [starts[1] + 1, starts[1] + 5, starts[1] + 21, starts[2] - 1] {
        let mut middle = log.clone();
        middle[at] ^= 0x10;
        let e = seqs(&middle, 0).unwrap_err();
        assert!(e.contains(&format!("damaged at byte {}", starts[1])), "{e}");
    }
    // The same damage is no loss once the database holds every record.
    let mut applied = log.clone();
    applied[starts[1] + 30] ^= 1;
    assert_eq!(seqs(&applied, 3).unwrap(), vec![1]);
}

#[test]
fn unsynced_records_that_landed_out_of_order_are_a_torn_tail() {
    // Records 2 and 3 were appended without a sync (deferred commits); a crash
    // kept 3 and lost 2: 3 proves nothing, so it is dropped with 2.
    let mut log = record::encode(SALT, 1, 0, payload(1).as_bytes()).unwrap();
    let synced = log.len() as u64;
    let two = record::encode(SALT, 2, synced, payload(2).as_bytes()).unwrap();
    let three = record::encode(SALT, 3, synced, payload(3).as_bytes()).unwrap();
    log.extend(vec![0u8; two.len()]);
    log.extend(three);
    assert_eq!(seqs(&log, 0).unwrap(), vec![1]);
}

#[test]
fn records_out_of_sequence_end_the_log() {
    // A record left from before the log was emptied, behind a new one.
    let mut log = record::encode(SALT, 11, 0, payload(1).as_bytes()).unwrap();
    log.extend(record::encode(SALT, 5, 0, payload(2).as_bytes()).unwrap());
    assert_eq!(seqs(&log, 10).unwrap(), vec![11]);
}

proptest! {
    #[test]
    fn any_bytes_read_back_without_a_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = scan(&bytes, 0, SALT);
        let _ = record::ops(&bytes);
    }

    #[test]
    fn any_damage_to_a_log_is_dropped_or_refused_never_misread(at in 0usize..1000, bit in 0u8..8) {
        let (mut log, starts) = synced_log(4);
        let at = at % log.len();
        log[at] ^= 1 << bit;
        match scan(&log, 0, SALT) {
            // Only the record hit and those after it are lost, and only when
            // nothing after it proves it was synced: the last record.
            Ok(records) => {
                prop_assert!(at >= starts[3], "damage at {} of a synced record went unnoticed", at);
                prop_assert_eq!(records.len(), 3);
                for r in &records {
                    let written = payload(u8::try_from(r.seq).unwrap());
                    prop_assert_eq!(r.payload, written.as_bytes());
                }
            }
            Err(e) => prop_assert!(at < starts[3] && e.contains("damaged"), "{}", e),
        }
    }
}

/// A database in memory whose log salt is [`SALT`].
fn memory_db() -> Database {
    let db = Database::builder().create_with_backend(InMemoryBackend::new()).unwrap();
    let tx = db.begin_write().unwrap();
    {
        let kv = crate::storage::redb_kv::RedbWrite::new(&tx);
        let mut w = Write::new(&kv, None);
        w.put_raw(Table::Meta, crate::storage::row_keys::META_LOG_SALT, &SALT.to_le_bytes()).unwrap();
    }
    tx.commit().unwrap();
    db
}

/// Every row of `db`, table by table.
fn contents(db: &Database) -> Vec<(Table, Vec<u8>, Vec<u8>)> {
    let tx = db.begin_read().unwrap();
    let mut out = Vec::new();
    for table in Table::ALL {
        let Ok(t) = tx.open_table(table.def()) else { continue };
        for item in t.iter().unwrap() {
            let (k, v) = item.unwrap();
            out.push((table, k.value().to_vec(), v.value().to_vec()));
        }
    }
    out
}

fn apply_all(db: &Database, log: &[u8]) {
    let tx = db.begin_write().unwrap();
    {
        let kv = crate::storage::redb_kv::RedbWrite::new(&tx);
        let mut w = Write::new(&kv, None);
        for r in scan(log, 0, SALT).unwrap() {
            apply(&mut w, &r).unwrap();
        }
    }
    tx.commit().unwrap();
}

#[test]
fn replaying_twice_leaves_what_replaying_once_does() {
    // Puts, overwrites and removes of the same keys across records.
    let mut log = Vec::new();
    for n in 1..=6u8 {
        let mut p = Payload::default();
        p.put(Table::Usage, b"counter", &[n]);
        p.put(Table::Changes, &[n % 3], &[n; 8]);
        if n % 2 == 0 {
            p.remove(Table::Changes, &[(n + 1) % 3]);
        }
        // A run of index rows added, and the earlier runs removed in one range.
        for k in 0..4 {
            p.put(Table::Pending, &[n, k], &[]);
        }
        p.remove_range(Table::Pending, &[0], &[n]);
        log.extend(record::encode(SALT, u64::from(n), log.len() as u64, p.as_bytes()).unwrap());
    }
    let (once, twice) = (memory_db(), memory_db());
    apply_all(&once, &log);
    apply_all(&twice, &log);
    apply_all(&twice, &log);
    assert_eq!(contents(&once), contents(&twice));
    assert!(contents(&once).contains(&(Table::Usage, b"counter".to_vec(), vec![6])));
    let pending: Vec<Vec<u8>> =
        contents(&once).into_iter().filter(|(t, _, _)| *t == Table::Pending).map(|(_, k, _)| k).collect();
    assert_eq!(pending, (0..4).map(|k| vec![6, k]).collect::<Vec<_>>(), "only the last run is left");
    // `replay` applies only what the database lacks, and records where it stopped.
    let replayed = memory_db();
    assert_eq!(replay(&replayed, &log[..0]).unwrap(), (0, SALT));
    assert_eq!(replay(&replayed, &log).unwrap(), (6, SALT));
    assert_eq!(replay(&replayed, &log).unwrap(), (6, SALT), "nothing applied twice");
    let without_sequence: Vec<_> = contents(&replayed)
        .into_iter()
        .filter(|(t, k, _)| !(*t == Table::Meta && k == b"log_sequence"))
        .collect();
    assert_eq!(without_sequence, contents(&once));
}

#[test]
fn a_log_that_starts_past_what_the_database_holds_is_refused() {
    let mut log = record::encode(SALT, 5, 0, payload(5).as_bytes()).unwrap();
    log.extend(record::encode(SALT, 6, 0, payload(6).as_bytes()).unwrap());
    let e = replay(&memory_db(), &log).unwrap_err();
    assert!(e.0.contains("starts at record 5 but the database holds records up to 0"), "{e}");
}

#[test]
fn a_damaged_payload_with_a_good_checksum_is_refused_not_a_panic() {
    let log = record::encode(SALT, 1, 0, &[1, 99, 0, 0, 0, 0]).unwrap();
    let e = replay(&memory_db(), &log).unwrap_err();
    assert!(e.0.contains("record 1 is damaged: an unknown table"), "{e}");
}

#[test]
fn another_databases_log_never_checks_out() {
    let (log, _) = synced_log(3);
    assert_eq!(seqs(&log, 0).unwrap(), vec![1, 2, 3]);
    assert_eq!(scan(&log, 0, SALT ^ 1).unwrap(), vec![], "another salt: nothing whole");
    // A database without a salt gets one (never the tests'), and replays nothing.
    let fresh = Database::builder().create_with_backend(InMemoryBackend::new()).unwrap();
    let (last, salt) = replay(&fresh, &log).unwrap();
    assert_eq!(last, 0);
    assert_eq!(replay(&fresh, &[]).unwrap(), (0, salt), "made once, kept");
}

/// A deferred commit (a catch-up's chunk) has no record: redb holds it
/// without a sync until the next durable commit, which is then redb's own (a
/// checkpoint), never a record replayed over a database that lost it. A power
/// loss before any I/O operation leaves a prefix of the commits, with every
/// acknowledged one, and the deferred one never without the checkpoint that
/// made it durable.
#[cfg(feature = "simulation")]
#[test]
fn a_deferred_commit_is_unlogged_and_the_next_durable_one_a_checkpoint() {
    use crate::storage::crash::SimDisk;
    use crate::storage::Store;
    let settings = super::LogSettings::default();
    // (key, deferred): a logged one, a deferred one, the checkpoint, a logged one.
    let steps: [(&[u8], bool); 4] = [(b"a", false), (b"b", true), (b"c", false), (b"d", false)];
    let run = |disk: &SimDisk| -> usize {
        let Ok(store) = Store::on_disk(disk, settings) else { return 0 };
        let mut acknowledged = 0;
        for (i, (key, deferred)) in steps.iter().enumerate() {
            let written = store.write(|w| {
                w.put_raw(Table::Usage, key, b"x")?;
                if *deferred {
                    w.defer_sync();
                }
                Ok(())
            });
            if written.is_err() {
                break;
            }
            if !deferred {
                acknowledged = i + 1;
            }
        }
        acknowledged
    };
    let image = {
        let disk = SimDisk::new();
        drop(Store::on_disk(&disk, settings).unwrap());
        disk.crash_image(0).0
    };
    let whole = SimDisk::from_image(image.clone());
    assert_eq!(run(&whole), steps.len());
    assert_eq!(whole.log_unsynced(), 0);
    let operations = whole.operations();
    // About 50 operations: every one of them.
    for point in 1..=operations {
        let disk = SimDisk::from_image(image.clone());
        disk.lose_power_before(point);
        let acknowledged = run(&disk);
        let after = SimDisk::from_image(disk.crash_image(point).0);
        let store = Store::on_disk(&after, settings).unwrap();
        let present: Vec<bool> = store
            .read_durable(|r| steps.iter().map(|(k, _)| Ok(r.get_raw(Table::Usage, k)?.is_some())).collect())
            .unwrap();
        let n = present.iter().take_while(|p| **p).count();
        assert!(present[n..].iter().all(|p| !p), "not a prefix: {present:?} (operation {point})");
        assert!(n >= acknowledged, "{acknowledged} acknowledged, {present:?} (operation {point})");
        assert_ne!(n, 2, "the deferred commit without its checkpoint (operation {point})");
    }
}
