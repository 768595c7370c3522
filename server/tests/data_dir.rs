//! The data directory at start: `achd init` makes a new service; `achd serve`
//! opens an existing one and refuses (exit 1, a clear message, no panic, no new
//! file left behind) a directory without a database, an empty or damaged
//! database, a database without its key and a key without its database.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A temporary directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> TempDir {
        let name = format!("achd-data-{}-{}", std::process::id(), ach_core::ids::random_alphanumeric(10));
        let path = std::env::temp_dir().join(name);
        std::fs::create_dir(&path).unwrap();
        TempDir(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// What a run of `achd` did.
#[derive(Debug)]
struct Run {
    /// The exit code (`None`: killed by a signal).
    code: Option<i32>,
    stdout: String,
    stderr: String,
    /// It printed `listening on https://…` (and was then stopped).
    listened: bool,
}

/// Run `achd ARGS` in `cwd`; a server that starts listening is stopped at once
/// (SIGTERM by kill: exit 0 or a signal), one that hangs for 60 s is killed.
fn achd(cwd: &Path, args: &[&str]) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_achd"))
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
        text
    });
    let mut out = String::new();
    let mut listened = false;
    for line in BufReader::new(stdout).lines() {
        let Ok(line) = line else { break };
        out.push_str(&line);
        out.push('\n');
        if line.starts_with("listening on https://") {
            listened = true;
            let _ = child.kill();
            break;
        }
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            break child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Run { code: status.code(), stdout: out, stderr: errors.join().unwrap(), listened }
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

fn serve_args(data: &Path) -> Vec<String> {
    let mut args: Vec<String> = ["serve", "--listen", "127.0.0.1:0"].map(String::from).into();
    args.extend(["--admin-listen".into(), "127.0.0.1:0".into(), "--data".into(), data.display().to_string()]);
    args
}

fn serve(cwd: &Path, data: &Path, extra: &[&str]) -> Run {
    let mut args = serve_args(data);
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    achd(cwd, &args.iter().map(String::as_str).collect::<Vec<_>>())
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

/// A new data directory made by `achd init`.
fn initialised(root: &TempDir) -> PathBuf {
    let data = root.0.join("data");
    let run = achd(&root.0, &["init", "--data", data.to_str().unwrap()]);
    assert_eq!(run.code, Some(0), "{run:?}");
    data
}

#[test]
fn init_makes_a_service_that_serve_opens_and_refuses_to_make_it_twice() {
    let root = TempDir::new();
    let data = initialised(&root);
    let made = files(&data);
    assert!(["ach.redb", "ach.redb.key", "operator.key"].iter().all(|f| made.contains_key(*f)), "{made:?}");
    let again = achd(&root.0, &["init", "--data", data.to_str().unwrap()]);
    assert_refused(&again, "already holds a database", &data, &made);
    let run = serve(&root.0, &data, &[]);
    assert!(run.listened, "{run:?}");
    assert!(run.stdout.contains("operator key: ") && run.stdout.contains("(existing)"), "{run:?}");
    assert!(!run.stdout.contains("a new service"), "{run:?}");
}

#[test]
fn serve_makes_no_new_service_unless_asked() {
    let root = TempDir::new();
    let empty = root.0.join("empty");
    std::fs::create_dir(&empty).unwrap();
    let run = serve(&root.0, &empty, &[]);
    assert_refused(&run, "holds no database", &empty, &BTreeMap::new());
    assert!(run.stderr.contains("achd init --data"), "{run:?}");
    let missing = root.0.join("missing");
    let run = serve(&root.0, &missing, &[]);
    assert_refused(&run, "holds no database", &missing, &BTreeMap::new());
    assert!(!missing.exists(), "no directory is made either");

    let run = serve(&root.0, &missing, &["--init"]);
    assert!(run.listened && run.stdout.contains("a new service"), "{run:?}");
    let run = serve(&root.0, &missing, &["--init"]);
    assert!(run.listened && !run.stdout.contains("a new service"), "--init opens an existing one: {run:?}");
    let sandbox = serve(&root.0, &empty, &["--sandbox"]);
    assert!(sandbox.listened, "a sandbox still makes its own: {sandbox:?}");
}

#[test]
fn the_first_start_on_the_default_directory_makes_it_and_a_lost_database_is_refused_after() {
    let root = TempDir::new();
    let run = achd(&root.0, &["serve", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"]);
    assert!(run.listened, "the README's first command works without setup: {run:?}");
    assert!(run.stdout.contains("a new service"), "{run:?}");
    let data = root.0.join("ach-data");
    std::fs::remove_file(data.join("ach.redb")).unwrap();
    let before = files(&data);
    let run = achd(&root.0, &["serve", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"]);
    assert_refused(&run, "exists but its database", &data, &before);
    std::fs::remove_dir_all(&data).unwrap();
    std::fs::create_dir(&data).unwrap();
    let run = achd(&root.0, &["serve", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"]);
    assert_refused(&run, "holds no database", &data, &BTreeMap::new());
}

#[test]
fn an_empty_database_file_is_refused_not_initialised() {
    let root = TempDir::new();
    let data = initialised(&root);
    std::fs::write(data.join("ach.redb"), b"").unwrap();
    let before = files(&data);
    for extra in [&[][..], &["--init"], &["--sandbox"]] {
        let run = serve(&root.0, &data, extra);
        assert_refused(&run, "is empty (0 bytes)", &data, &before);
    }
}

#[test]
fn a_database_without_its_key_is_refused_and_no_key_is_made() {
    let root = TempDir::new();
    let data = initialised(&root);
    std::fs::remove_file(data.join("ach.redb.key")).unwrap();
    std::fs::remove_file(data.join("operator.key")).unwrap();
    let before = files(&data);
    for extra in [&[][..], &["--init"], &["--sandbox"]] {
        let run = serve(&root.0, &data, extra);
        assert_refused(&run, "exists but its key file", &data, &before);
    }
}

#[test]
fn a_key_without_its_database_is_refused_even_with_init() {
    let root = TempDir::new();
    let data = initialised(&root);
    std::fs::remove_file(data.join("ach.redb")).unwrap();
    let before = files(&data);
    for extra in [&[][..], &["--init"], &["--sandbox"]] {
        let run = serve(&root.0, &data, extra);
        assert_refused(&run, "exists but its database", &data, &before);
    }
    let run = achd(&root.0, &["init", "--data", data.to_str().unwrap()]);
    assert_refused(&run, "already holds a database or its key", &data, &before);
}

#[test]
fn a_damaged_or_foreign_database_is_a_clear_error_not_a_panic() {
    let root = TempDir::new();
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
        let run = serve(&root.0, &data, &[]);
        assert_refused(&run, why, &data, &before);
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "the file is left as it was");
    }
}
