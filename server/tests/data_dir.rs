//! The data directory at start: `achd init` makes a new service; `achd serve`
//! opens an existing one and refuses (exit 1, a clear message, no panic, no new
//! file left behind) a directory without a database, an empty or damaged
//! database, a database without its key and a key without its database.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use ach_testkit::Achd;
use tempfile::TempDir;

/// What a run of `achd` did.
#[derive(Debug)]
struct Run {
    /// The exit code (`None`: killed by a signal, or stopped once listening).
    code: Option<i32>,
    stdout: String,
    stderr: String,
    /// It printed `listening on https://…` (and was then stopped).
    listened: bool,
}

/// `achd init --data DATA` in `cwd`.
fn init(cwd: &Path, data: &Path) -> Run {
    init_with(cwd, data, &[])
}

/// `achd init --data DATA` and more flags, in `cwd`.
fn init_with(cwd: &Path, data: &Path, flags: &[&std::ffi::OsStr]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_achd"))
        .args(["init", "--data"])
        .arg(data)
        .args(flags)
        .current_dir(cwd)
        .output()
        .unwrap();
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    Run { code: out.status.code(), stdout: text(&out.stdout), stderr: text(&out.stderr), listened: false }
}

/// `achd serve` in `cwd` on `data` (none: its default `./ach-data`) with more
/// flags; a server that starts listening is stopped at once (killed), one that
/// hangs is killed after 60 s.
fn serve_in(cwd: &Path, data: Option<&Path>, extra: &[&str]) -> Run {
    let mut achd = Achd::new(env!("CARGO_BIN_EXE_achd")).current_dir(cwd).log_level(None).flags(extra);
    if let Some(data) = data {
        achd = achd.data(data);
    }
    match achd.try_start() {
        Ok(server) => {
            Run { code: None, stdout: server.said().join("\n"), stderr: server.log(), listened: true }
        }
        Err(exit) => Run { code: exit.code, stdout: exit.stdout, stderr: exit.log, listened: false },
    }
}

/// Every file under `dir` with its length: what a refused start must not change.
fn files(dir: &Path) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let meta = entry.metadata().unwrap();
            out.insert(entry.file_name().to_string_lossy().into_owned(), meta.len());
        }
    }
    out
}

fn serve(cwd: &Path, data: &Path, extra: &[&str]) -> Run {
    serve_in(cwd, Some(data), extra)
}

/// A refusal: exit 1, no listening, no panic, the message contains `why`, and
/// the directory is as it was.
fn assert_refused(run: &Run, why: &str, dir: &Path, before: &BTreeMap<String, u64>) {
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(!run.listened, "{run:?}");
    assert!(run.stderr.contains(why), "expected {why:?} in {run:?}");
    assert!(!run.stderr.contains("panicked"), "{run:?}");
    assert_eq!(&files(dir), before, "a refused start leaves the directory as it was: {run:?}");
}

fn temp_dir() -> TempDir {
    tempfile::Builder::new().prefix("achd-data-").tempdir().unwrap()
}

/// A new data directory made by `achd init`.
fn initialised(root: &TempDir) -> PathBuf {
    let data = root.path().join("data");
    let run = init(root.path(), &data);
    assert_eq!(run.code, Some(0), "{run:?}");
    data
}

#[test]
fn init_makes_a_service_that_serve_opens_and_refuses_to_make_it_twice() {
    let root = temp_dir();
    let data = initialised(&root);
    let made = files(&data);
    assert!(["ach.redb", "ach.redb.key", "operator.key"].iter().all(|f| made.contains_key(*f)), "{made:?}");
    let again = init(root.path(), &data);
    assert_refused(&again, "already holds a database", &data, &made);
    let run = serve(root.path(), &data, &[]);
    assert!(run.listened, "{run:?}");
    assert!(run.stdout.contains("operator key: ") && run.stdout.contains("(existing)"), "{run:?}");
    assert!(!run.stdout.contains("a new service"), "{run:?}");
}

#[test]
fn serve_makes_no_new_service_unless_asked() {
    let root = temp_dir();
    let empty = root.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let run = serve(root.path(), &empty, &[]);
    assert_refused(&run, "holds no database", &empty, &BTreeMap::new());
    assert!(run.stderr.contains("achd init --data"), "{run:?}");
    let missing = root.path().join("missing");
    let run = serve(root.path(), &missing, &[]);
    assert_refused(&run, "holds no database", &missing, &BTreeMap::new());
    assert!(!missing.exists(), "no directory is made either");

    let run = serve(root.path(), &missing, &["--init"]);
    assert!(run.listened && run.stdout.contains("a new service"), "{run:?}");
    let run = serve(root.path(), &missing, &["--init"]);
    assert!(run.listened && !run.stdout.contains("a new service"), "--init opens an existing one: {run:?}");
    let sandbox = serve(root.path(), &empty, &["--sandbox"]);
    assert!(sandbox.listened, "a sandbox still makes its own: {sandbox:?}");
}

#[test]
fn the_first_start_on_the_default_directory_makes_it_and_a_lost_database_is_refused_after() {
    let root = temp_dir();
    let run = serve_in(root.path(), None, &[]);
    assert!(run.listened, "the README's first command works without setup: {run:?}");
    assert!(run.stdout.contains("a new service"), "{run:?}");
    let data = root.path().join("ach-data");
    std::fs::remove_file(data.join("ach.redb")).unwrap();
    let before = files(&data);
    let run = serve_in(root.path(), None, &[]);
    assert_refused(&run, "exists but its database", &data, &before);
    std::fs::remove_dir_all(&data).unwrap();
    std::fs::create_dir(&data).unwrap();
    let run = serve_in(root.path(), None, &[]);
    assert_refused(&run, "holds no database", &data, &BTreeMap::new());
}

/// A start on `data` is refused with `why` and changes nothing, however it is
/// started: plainly, with `--init`, with `--sandbox`. Answers what `data` held
/// before (and still holds).
fn refused_in_every_mode(root: &TempDir, data: &Path, why: &str) -> BTreeMap<String, u64> {
    let before = files(data);
    for extra in [&[][..], &["--init"], &["--sandbox"]] {
        let run = serve(root.path(), data, extra);
        assert_refused(&run, why, data, &before);
    }
    before
}

/// A new data directory made by `achd init`, then changed by `damage`.
fn damaged(damage: impl FnOnce(&Path)) -> (TempDir, PathBuf) {
    let root = temp_dir();
    let data = initialised(&root);
    damage(&data);
    (root, data)
}

/// Delete these files of `data`.
fn remove(data: &Path, names: &[&str]) {
    for name in names {
        std::fs::remove_file(data.join(name)).unwrap();
    }
}

#[test]
fn an_empty_database_file_is_refused_not_initialised() {
    let (root, data) = damaged(|data| std::fs::write(data.join("ach.redb"), b"").unwrap());
    refused_in_every_mode(&root, &data, "is empty (0 bytes)");
}

#[test]
fn a_database_without_its_key_is_refused_and_no_key_is_made() {
    let (root, data) = damaged(|data| remove(data, &["ach.redb.key", "operator.key"]));
    refused_in_every_mode(&root, &data, "exists but its key file");
}

#[test]
fn a_key_without_its_database_is_refused_even_with_init() {
    let (root, data) = damaged(|data| remove(data, &["ach.redb"]));
    let before = refused_in_every_mode(&root, &data, "exists but its database");
    let run = init(root.path(), &data);
    assert_refused(&run, "already holds a database or its key", &data, &before);
}

#[test]
fn a_damaged_or_foreign_database_is_a_clear_error_not_a_panic() {
    let root = temp_dir();
    let data = initialised(&root);
    let path = data.join("ach.redb");
    let good = std::fs::read(&path).unwrap();
    let mut damaged = good.clone();
    for (i, byte) in damaged[4096..].iter_mut().enumerate() {
        *byte = (i * 7) as u8;
    }
    let mut truncated = good.clone();
    truncated.truncate(good.len() / 2);
    let cases: [(&[u8], &str); 3] = [
        (&damaged, "is damaged"),
        (&truncated, "corrupted"),
        (b"SQLite format 3\0 and more", "is not a database file"),
    ];
    for (bytes, why) in cases {
        std::fs::write(&path, bytes).unwrap();
        let before = files(&data);
        let run = serve(root.path(), &data, &[]);
        assert_refused(&run, why, &data, &before);
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "the file is left as it was");
    }
}

#[test]
fn a_sealing_key_kept_apart_opens_its_database_and_no_other_key_does() {
    let root = temp_dir();
    let data = root.path().join("data");
    let vault = root.path().join("vault");
    std::fs::create_dir(&vault).unwrap();
    let key = vault.join("sealing.key");
    let run = init_with(root.path(), &data, &["--key-file".as_ref(), key.as_os_str()]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stdout.contains("sealing key: ") && run.stdout.contains("created, mode 0600"), "{run:?}");
    assert!(run.stdout.contains("--key-file"), "the start command names the key: {run:?}");
    let made = files(&data);
    assert!(
        made.contains_key("ach.redb") && !made.contains_key("ach.redb.key"),
        "no key beside the data: {made:?}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&key).unwrap().permissions().mode() & 0o777, 0o600);
    }
    let key_flag = key.to_str().unwrap();
    let mut server = Achd::new(env!("CARGO_BIN_EXE_achd"))
        .data(&data)
        .current_dir(root.path())
        .log_level(None)
        .flags(["--key-file", key_flag])
        .start();
    assert!(!server.log().contains("kept in the data directory"), "{}", server.log());
    server.stop();

    // Without the key, with another key, or with a key file that is not there:
    // refused, and nothing written (no new key for an existing database).
    let made = files(&data);
    let run = serve(root.path(), &data, &[]);
    assert_refused(&run, "ach.redb.key", &data, &made);
    let other = vault.join("other.key");
    std::fs::write(&other, format!("{}\n", "ab".repeat(32))).unwrap();
    let run = serve(root.path(), &data, &["--key-file", other.to_str().unwrap()]);
    assert_refused(&run, "not this database's key", &data, &made);
    let missing = vault.join("missing.key");
    let run = serve(root.path(), &data, &["--key-file", missing.to_str().unwrap()]);
    assert_refused(&run, "never given a new key", &data, &made);
    assert!(!missing.exists(), "no key made for an existing database");

    // The systemd credential `sealing-key` stands for the flag.
    let credentials = root.path().join("credentials");
    std::fs::create_dir(&credentials).unwrap();
    std::fs::copy(&key, credentials.join("sealing-key")).unwrap();
    let setup = format!("CREDENTIALS_DIRECTORY='{}' &&", credentials.display());
    let server =
        Achd::new(env!("CARGO_BIN_EXE_achd")).data(&data).log_level(None).shell(&format!("export {setup}"));
    let served = server.try_start();
    let _server = served.unwrap_or_else(|exit| panic!("the credential opens the database: {exit}"));
}

#[test]
fn a_sealing_key_in_the_data_directory_is_warned_of() {
    let root = temp_dir();
    let data = initialised(&root);
    let run = serve(root.path(), &data, &[]);
    assert!(run.listened, "{run:?}");
    assert!(run.stderr.contains("the sealing key is kept in the data directory"), "{run:?}");
    assert!(run.stderr.contains("--key-file"), "{run:?}");
}

#[test]
fn a_refused_new_service_leaves_no_key_it_made() {
    let root = temp_dir();
    let data = root.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let key = root.path().join("sealing.key");
    // A directory without a database is refused unless asked: nor is the key made.
    let run = serve(root.path(), &data, &["--key-file", key.to_str().unwrap()]);
    assert_refused(&run, "achd init --data", &data, &BTreeMap::new());
    assert!(!key.exists(), "{run:?}");
}
