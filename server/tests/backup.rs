//! `achd backup` and `achd restore`: a backup taken while `achd serve` answers
//! a steady load holds every transaction answered before it began, restores
//! into a directory that serves them, and its usage audit is clean; a server
//! killed (SIGKILL) while it sends a backup loses nothing and starts again; a
//! backup cut short leaves no file; nothing is ever written over.
//! (A database file's backup: on PostgreSQL, PostgreSQL's own tools back up,
//! `tests/postgres/backup.sh`.)
#![allow(clippy::unwrap_used)]
// The load runs beside the test on a plain tokio task.
#![allow(clippy::disallowed_methods)]

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use ach_core::engine::{Engine, EngineOptions};
use ach_testkit::{Achd, Conn, Server};
use serde_json::Value;

use common::{printed, redb_root, Tenant, START};

fn achd(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_achd")).args(args).output().unwrap()
}

fn backup(data: &Path, dest: &Path) -> Output {
    achd(&["backup".as_ref(), "--data".as_ref(), data.as_os_str(), dest.as_os_str()])
}

fn restore(backup: &Path, data: &Path) -> Output {
    achd(&["restore".as_ref(), backup.as_os_str(), "--data".as_ref(), data.as_os_str()])
}

fn start(data: &Path) -> Server {
    Achd::new(env!("CARGO_BIN_EXE_achd")).data(data).sandbox_start(START).start()
}

/// The tenant's transaction number `n` (each of another amount).
fn debit(t: &Tenant, n: u64) -> Value {
    t.transaction(&format!("{}.{:02}", 1 + n / 100, n % 100))
}

/// Transactions created one after another on `c` until `stop`; each id is
/// pushed once its creation was answered.
async fn load(mut c: Conn, t: Tenant, answered: Arc<Mutex<Vec<String>>>, stop: Arc<AtomicBool>) {
    let mut n = 0;
    while !stop.load(Ordering::SeqCst) {
        n += 1;
        let v = c.expect("POST", "/transactions", &t.partner_key, Some(debit(&t, n)), 201).await;
        answered.lock().unwrap().push(v["payload"]["id"].as_str().unwrap().to_owned());
    }
}

/// The restored directory's engine: its usage audit, and which of `ids` it holds.
fn audit(data: &Path, t: &Tenant, ids: &[String]) {
    let engine = Engine::open(&data.join("ach.redb"), EngineOptions::manual(chrono::Utc::now())).unwrap();
    assert_eq!(engine.audit_usage().unwrap(), Ok(()), "the usage counters match the transactions");
    let partner = engine.authenticate(&t.partner_key).unwrap();
    for id in ids {
        assert_eq!(&engine.transaction(&partner, Some(&t.partner_id), id).unwrap().id, id);
    }
}

/// What a restored directory needs beside its database: the sealing key and
/// the operator key of the service backed up.
fn bring_keys(from: &Path, to: &Path) {
    for name in ["ach.redb.key", "operator.key"] {
        std::fs::copy(from.join(name), to.join(name)).unwrap();
    }
}

/// A sandbox server on a new data directory, a connection and a tenant.
async fn served() -> Option<(tempfile::TempDir, PathBuf, Server, Conn, Tenant)> {
    let root = redb_root()?;
    let data = root.path().join("data");
    let server = start(&data);
    let mut c = server.conn().await;
    let t = Tenant::create(&server, &mut c).await;
    Some((root, data, server, c, t))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_under_load_restores_every_answered_transaction() {
    let Some((root, data, mut server, c, t)) = served().await else { return };
    let answered = Arc::new(Mutex::new(Vec::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let writer = tokio::spawn(load(c, t.clone(), answered.clone(), stop.clone()));
    while answered.lock().unwrap().len() < 30 {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    let before = answered.lock().unwrap().clone();
    let dest = root.path().join("nightly.redb");
    let (d, dst) = (data.clone(), dest.clone());
    let out = tokio::task::spawn_blocking(move || backup(&d, &dst)).await.unwrap();
    assert!(out.status.success(), "{}", printed(&out));
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["from"], "the serving achd", "{summary}");
    let after = answered.lock().unwrap().len();
    while answered.lock().unwrap().len() < after + 10 {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    stop.store(true, Ordering::SeqCst);
    writer.await.unwrap();
    assert!(!data.join("backups").read_dir().unwrap().any(|_| true), "the server's copy is removed");
    server.kill();

    let restored = root.path().join("restored");
    let out = restore(&dest, &restored);
    assert!(out.status.success(), "{}", printed(&out));
    let said: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(said["entries"], summary["entries"], "{said}");
    bring_keys(&data, &restored);
    audit(&restored, &t, &before);
    // The restored directory serves: what was answered before the backup,
    // and new transactions.
    let server = start(&restored);
    let mut c = server.conn().await;
    t.reads_back(&mut c, &before).await;
    c.expect("POST", "/transactions", &t.partner_key, Some(debit(&t, 9_999)), 201).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_while_it_sends_a_backup_loses_nothing() {
    let Some((root, data, mut server, mut c, t)) = served().await else { return };
    let mut ids = Vec::new();
    for n in 0..40 {
        let v = c.expect("POST", "/transactions", &t.partner_key, Some(debit(&t, n)), 201).await;
        ids.push(v["payload"]["id"].as_str().unwrap().to_owned());
    }
    // A reader that takes the answer's first bytes, then the server is killed.
    let mut socket = UnixStream::connect(data.join("achd.sock")).unwrap();
    socket.write_all(b"backup\n").unwrap();
    let mut reader = BufReader::new(socket);
    let mut header = String::new();
    reader.read_line(&mut header).unwrap();
    assert!(header.starts_with("ok "), "{header}");
    let mut first = [0u8; 64];
    reader.read_exact(&mut first).unwrap();
    server.kill();
    drop(reader);

    // It starts again with everything it answered, and clears what it left.
    let server = start(&data);
    assert!(!data.join("backups").exists(), "an unsent copy is removed at start");
    let mut c = server.conn().await;
    t.reads_back(&mut c, &ids).await;
    let dest = root.path().join("after.redb");
    let out = tokio::task::spawn_blocking(move || backup(&data, &dest)).await.unwrap();
    assert!(out.status.success(), "{}", printed(&out));
}

/// A stand-in for a server at `data`'s socket that answers every request
/// with `answer`, then closes.
fn fake_server(data: &Path, answer: Vec<u8>) -> std::thread::JoinHandle<()> {
    std::fs::create_dir_all(data).unwrap();
    let listener = UnixListener::bind(data.join("achd.sock")).unwrap();
    std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut line = String::new();
        BufReader::new(stream.try_clone().unwrap()).read_line(&mut line).unwrap();
        assert_eq!(line, "backup\n");
        let _ = stream.write_all(&answer);
    })
}

#[test]
fn a_backup_cut_short_or_refused_leaves_nothing() {
    let root = tempfile::tempdir().unwrap();
    let cases: [(&str, Vec<u8>, &str); 4] = [
        ("cut", [&b"ok 100000 12\n"[..], &[7u8; 4096]].concat(), "4096 of 100000 bytes"),
        ("refused", b"error the database is closed\n".to_vec(), "the server refused: the database is closed"),
        ("silent", Vec::new(), "without an answer"),
        ("garbage", [&b"ok 10 1\n"[..], &[0u8; 10]].concat(), "not whole"),
    ];
    for (name, answer, expected) in cases {
        let data = root.path().join(name);
        let server = fake_server(&data, answer);
        let dest = root.path().join(format!("{name}.redb"));
        let out = backup(&data, &dest);
        server.join().unwrap();
        assert_eq!(out.status.code(), Some(1), "{name}: {}", printed(&out));
        assert!(printed(&out).contains(expected), "{name}: {}", printed(&out));
        let left: Vec<PathBuf> = std::fs::read_dir(root.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_file())
            .collect();
        assert!(left.is_empty(), "{name}: {left:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backups_and_restores_never_write_over_anything() {
    let Some((root, data, mut server, _, t)) = served().await else { return };
    let kept = root.path().join("kept.redb");
    std::fs::write(&kept, b"an earlier file").unwrap();
    let out = backup(&data, &kept);
    assert_eq!(out.status.code(), Some(1), "{}", printed(&out));
    assert!(printed(&out).contains("never writes over"), "{}", printed(&out));
    assert_eq!(std::fs::read(&kept).unwrap(), b"an earlier file");
    // The socket answers a backup only.
    let mut socket = UnixStream::connect(data.join("achd.sock")).unwrap();
    socket.write_all(b"remove everything\n").unwrap();
    let mut answer = String::new();
    socket.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("error unknown request"), "{answer}");
    server.stop();
    assert!(!data.join("achd.sock").exists(), "a stopped server removes its socket");

    // Served or not, the same backup.
    let dest = root.path().join("closed.redb");
    let out = backup(&data, &dest);
    assert!(out.status.success(), "{}", printed(&out));
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["from"], "the closed database", "{summary}");
    let out = restore(&dest, &data);
    assert_eq!(out.status.code(), Some(1), "{}", printed(&out));
    assert!(printed(&out).contains("never writes over a database"), "{}", printed(&out));
    let out = restore(&kept, &root.path().join("fresh"));
    assert_eq!(out.status.code(), Some(1), "{}", printed(&out));
    assert!(!root.path().join("fresh").exists(), "a refused restore leaves no directory");
    let restored = root.path().join("restored");
    assert!(restore(&dest, &restored).status.success());
    bring_keys(&data, &restored);
    audit(&restored, &t, &[]);
}
