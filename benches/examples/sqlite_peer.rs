//! The engine's creates against the service a team would build first: the same
//! create rules over SQLite (WAL, `synchronous=FULL`, per-day and per-month
//! counter rows), in one process run on the same disk, and the ratio.
//!
//! A create, on both sides: the body validated (`ach_core::validation`), the
//! account number sealed (XChaCha20-Poly1305), the merchant's limits read, a
//! duplicate looked up by a keyed fingerprint, the day's and month's counters of
//! the merchant and the partner read and written back, the transaction and its
//! pending index written, one row appended to the partner's status changes and
//! one to the merchant's events; one durable commit per create (or per 1,000).
//!
//! `sqlite_peer [SINGLES [BATCHES]]` (release; default 2,000 single creates and
//! 20 batches of 1,000) prints each side's rates and the ratios, and the
//! disk's own limit for one durable create measured in the same run (as many
//! bare 512-byte appends, each synced): what the disk allows moves by two
//! between hours on this machine, and with it the singles' ratio.
#![allow(missing_docs, clippy::unwrap_used)]

use std::time::Instant;

use ach_benches::Sandbox;
use ach_core::routing::RoutingDirectory;
use ach_core::secrets::Cipher;
use ach_core::validation::{check_bytes, Context, Kind};
use rusqlite::{params, Connection, OptionalExtension};
use sha2::Digest as _;

const SCHEMA: &str = "
    PRAGMA journal_mode = WAL;
    PRAGMA synchronous = FULL;
    CREATE TABLE merchants (id TEXT PRIMARY KEY, partner_id TEXT NOT NULL, max_amount INTEGER,
        daily_count INTEGER, daily_amount INTEGER, monthly_count INTEGER, monthly_amount INTEGER);
    CREATE TABLE transactions (id TEXT PRIMARY KEY, partner_id TEXT, merchant_id TEXT, amount INTEGER,
        direction TEXT, class TEXT, description TEXT, name TEXT, routing TEXT, account BLOB,
        account_type TEXT, state TEXT, created_at INTEGER, cutoff_at INTEGER);
    CREATE TABLE pending (cutoff_at INTEGER, id TEXT, PRIMARY KEY (cutoff_at, id)) WITHOUT ROWID;
    CREATE TABLE usage (scope TEXT, period TEXT, count INTEGER, cents INTEGER,
        PRIMARY KEY (scope, period)) WITHOUT ROWID;
    CREATE TABLE duplicates (fingerprint BLOB PRIMARY KEY, id TEXT, day INTEGER) WITHOUT ROWID;
    CREATE TABLE sequences (scope TEXT PRIMARY KEY, seq INTEGER) WITHOUT ROWID;
    CREATE TABLE changes (partner_id TEXT, seq INTEGER, body BLOB, PRIMARY KEY (partner_id, seq)) WITHOUT ROWID;
    CREATE TABLE events (merchant_id TEXT, seq INTEGER, body BLOB, PRIMARY KEY (merchant_id, seq)) WITHOUT ROWID;
";

/// The SQLite service: one connection, one merchant of one partner.
struct Peer {
    db: Connection,
    cipher: Cipher,
    directory: RoutingDirectory,
    next: u64,
}

impl Peer {
    fn open(path: &std::path::Path) -> Peer {
        let db = Connection::open(path).unwrap();
        db.execute_batch(SCHEMA).unwrap();
        db.execute(
            "INSERT INTO merchants VALUES ('mer_1', 'par_1', 500000000, 1000000000, 999999999999, \
             1000000000, 999999999999)",
            [],
        )
        .unwrap();
        Peer { db, cipher: Cipher::new(&[7; 32]), directory: RoutingDirectory::embedded(), next: 0 }
    }

    /// Create `bodies` in one transaction (one durable commit).
    fn create(&mut self, bodies: &[Vec<u8>]) {
        let ctx = Context {
            today: chrono::NaiveDate::from_ymd_opt(2026, 11, 23).unwrap(),
            directory: &self.directory,
        };
        let tx = self.db.transaction().unwrap();
        for body in bodies {
            assert!(check_bytes(Kind::Transaction, body, &ctx).valid);
            let v: serde_json::Value = serde_json::from_slice(body).unwrap();
            let text = |p: &str| v.pointer(p).and_then(|x| x.as_str()).unwrap_or_default().to_owned();
            let amount = ach_core::Money::parse(&text("/amount")).unwrap().cents();
            self.next += 1;
            let id = format!("txn_{:022}", self.next);
            let account = self.cipher.encrypt(text("/customer/account_number").as_bytes(), id.as_bytes());
            let fingerprint = sha2::Sha256::digest(
                format!("mer_1|{amount}|{}|{}", text("/customer/account_number"), text("/description"))
                    .as_bytes(),
            )
            .to_vec();
            let (max, daily_count, daily_amount, monthly_count, monthly_amount): (i64, i64, i64, i64, i64) =
                tx.query_row(
                    "SELECT max_amount, daily_count, daily_amount, monthly_count, monthly_amount \
                     FROM merchants WHERE id = 'mer_1'",
                    [],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
                )
                .unwrap();
            let duplicate: Option<String> = tx
                .query_row("SELECT id FROM duplicates WHERE fingerprint = ?1", [&fingerprint], |r| r.get(0))
                .optional()
                .unwrap();
            let used = |scope: &str, period: &str| -> (i64, i64) {
                tx.query_row(
                    "SELECT count, cents FROM usage WHERE scope = ?1 AND period = ?2",
                    [scope, period],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()
                .unwrap()
                .unwrap_or((0, 0))
            };
            let (day, month) = (used("mer_1", "2026-11-23"), used("mer_1", "2026-11"));
            let (partner_day, partner_month) = (used("par_1", "2026-11-23"), used("par_1", "2026-11"));
            let fits = duplicate.is_none()
                && amount <= max
                && day.0 < daily_count
                && day.1 + amount <= daily_amount
                && month.0 < monthly_count
                && month.1 + amount <= monthly_amount
                && partner_day.0 < i64::MAX
                && partner_month.0 < i64::MAX;
            assert!(fits, "the peer refused a create");
            tx.execute(
                "INSERT INTO transactions VALUES (?1, 'par_1', 'mer_1', ?2, 'debit', 'PPD', ?3, ?4, ?5, ?6, \
                 'checking', 'A', 1795446000, 1795474800)",
                params![
                    id,
                    amount,
                    text("/description"),
                    text("/customer/name"),
                    text("/customer/routing_number"),
                    account
                ],
            )
            .unwrap();
            tx.execute("INSERT INTO pending VALUES (1795474800, ?1)", [&id]).unwrap();
            tx.execute("INSERT INTO duplicates VALUES (?1, ?2, 20415)", params![fingerprint, id]).unwrap();
            for (scope, period) in
                [("mer_1", "2026-11-23"), ("mer_1", "2026-11"), ("par_1", "2026-11-23"), ("par_1", "2026-11")]
            {
                tx.execute(
                    "INSERT INTO usage VALUES (?1, ?2, 1, ?3) ON CONFLICT (scope, period) \
                     DO UPDATE SET count = count + 1, cents = cents + ?3",
                    params![scope, period, amount],
                )
                .unwrap();
            }
            let change = format!(
                r#"{{"transaction_id":"{id}","change_timestamp":"2026-11-23 10:00:00","status":"A"}}"#
            );
            for (table, scope) in [("changes", "par_1"), ("events", "mer_1")] {
                let seq: i64 = tx
                    .query_row(
                        "INSERT INTO sequences VALUES (?1, 1) ON CONFLICT (scope) DO UPDATE SET seq = seq + 1 \
                         RETURNING seq",
                        [scope],
                        |r| r.get(0),
                    )
                    .unwrap();
                tx.execute(&format!("INSERT INTO {table} VALUES (?1, ?2, ?3)"), params![scope, seq, change])
                    .unwrap();
            }
        }
        tx.commit().unwrap();
    }
}

/// A file the size of a log, written ahead: the least a durable create can
/// cost on this disk is one small append and its `fdatasync`.
struct BareDisk {
    file: std::fs::File,
    at: u64,
}

impl BareDisk {
    const SIZE: u64 = 8 << 20;

    fn open(path: &std::path::Path) -> BareDisk {
        use std::io::Write as _;
        let mut file =
            std::fs::File::options().create(true).truncate(true).read(true).write(true).open(path).unwrap();
        file.write_all(&vec![0u8; Self::SIZE as usize]).unwrap();
        file.sync_all().unwrap();
        BareDisk { file, at: 0 }
    }

    fn append_and_sync(&mut self) {
        use std::os::unix::fs::FileExt as _;
        self.file.write_all_at(&[7u8; 512], self.at).unwrap();
        self.file.sync_data().unwrap();
        self.at = (self.at + 512) % Self::SIZE;
    }
}

/// Creates per second of `rounds` calls of `f`, each creating `per_call`.
fn rate(rounds: usize, per_call: usize, mut f: impl FnMut(usize)) -> f64 {
    let start = Instant::now();
    for round in 0..rounds {
        f(round);
    }
    (rounds * per_call) as f64 / start.elapsed().as_secs_f64()
}

fn main() {
    let singles: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(2_000);
    let batches: usize = std::env::args().nth(2).and_then(|a| a.parse().ok()).unwrap_or(20);
    let dir = tempfile::tempdir().unwrap();
    let engine = Sandbox::file(&dir.path().join("engine.redb"));
    let mut peer = Peer::open(&dir.path().join("peer.sqlite"));
    let mut disk = BareDisk::open(&dir.path().join("bare.log"));
    let body = |n: usize| engine.transaction_body(n as u64);
    let mut n = 0;
    // Alternate the two sides in blocks, so both meet the same disk and load.
    let (mut ours_single, mut peer_single, mut ours_batch, mut peer_batch) = (0.0, 0.0, 0.0, 0.0);
    let mut bare = 0.0;
    for _ in 0..2 {
        bare += rate(singles / 2, 1, |_| disk.append_and_sync());
        ours_single += rate(singles / 2, 1, |i| engine.create_many((n + i) as u64, 1, 1));
        n += singles / 2;
        peer_single += rate(singles / 2, 1, |i| peer.create(&[body(n + i)]));
        n += singles / 2;
        ours_batch += rate(batches / 2, 1_000, |i| engine.create_many((n + i * 1_000) as u64, 1_000, 1_000));
        n += batches / 2 * 1_000;
        peer_batch += rate(batches / 2, 1_000, |i| {
            let bodies: Vec<Vec<u8>> = (0..1_000).map(|k| body(n + i * 1_000 + k)).collect();
            peer.create(&bodies);
        });
        n += batches / 2 * 1_000;
    }
    let (ours_single, peer_single, bare) = (ours_single / 2.0, peer_single / 2.0, bare / 2.0);
    let (ours_batch, peer_batch) = (ours_batch / 2.0, peer_batch / 2.0);
    println!("single durable creates, one per commit: ach {ours_single:.0}/s, SQLite peer {peer_single:.0}/s, ratio {:.2}", ours_single / peer_single);
    println!(
        "the disk's limit, a 512-byte append and its fdatasync: {bare:.0}/s; ach singles at {:.0} % of it, the peer at {:.0} %",
        100.0 * ours_single / bare,
        100.0 * peer_single / bare
    );
    println!(
        "creates in commits of 1,000: ach {ours_batch:.0}/s, SQLite peer {peer_batch:.0}/s, ratio {:.2}",
        ours_batch / peer_batch
    );
}
