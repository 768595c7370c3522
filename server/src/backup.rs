//! `achd backup --data DIR DEST` and `achd restore BACKUP --data NEWDIR`.
//!
//! A backup is one database file holding one consistent snapshot: every
//! transaction answered before it began, nothing half-written, sealed values
//! still sealed (no key is copied). While `achd serve` holds the database, the
//! copy is asked of it through the data directory's control socket
//! (`control.rs`); otherwise the database is opened here (its redo log
//! replayed) and copied. Either way the file appears at DEST whole or not at
//! all, checked before it is renamed into place, and nothing is ever written
//! over: an existing DEST, or a NEWDIR holding a database, is refused.

use std::io::Read;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use ach_core::engine::{backup_file, check_backup_file, key_file_for, restore_file, BackupFigures};

use crate::{control_client, datadir};

/// Arguments of `achd backup`.
#[derive(clap::Args)]
pub struct BackupArgs {
    /// The data directory whose database is backed up (served or not).
    #[arg(long, value_name = "DIR", default_value = datadir::DEFAULT)]
    data: PathBuf,
    /// The backup file to make; it must not exist.
    #[arg(value_name = "DEST")]
    dest: PathBuf,
}

/// Arguments of `achd restore`.
#[derive(clap::Args)]
pub struct RestoreArgs {
    /// The backup file (made by `achd backup`); it is only read.
    #[arg(value_name = "BACKUP")]
    backup: PathBuf,
    /// The data directory to restore into (made, mode 0700, if missing); it
    /// must hold no database.
    #[arg(long, value_name = "DIR")]
    data: PathBuf,
}

/// Make the backup; exit 0 made, 1 refused or failed.
pub fn run_backup(args: &BackupArgs) -> ExitCode {
    finish("backup", backup(args))
}

/// Restore the backup; exit 0 restored, 1 refused or failed.
pub fn run_restore(args: &RestoreArgs) -> ExitCode {
    finish("restore", restore(args))
}

fn finish(command: &str, result: Result<String, String>) -> ExitCode {
    match result {
        Ok(summary) => {
            println!("{summary}");
            ExitCode::SUCCESS
        }
        Err(why) => {
            eprintln!("achd {command}: {why}");
            ExitCode::from(1)
        }
    }
}

fn backup(args: &BackupArgs) -> Result<String, String> {
    let dest = &args.dest;
    if dest.try_exists().unwrap_or(true) {
        return Err(format!("{} exists: a backup never writes over a file", dest.display()));
    }
    let (figures, from) = match control_client::reach(&args.data)? {
        Some(server) => (receive(server, dest)?, "the serving achd"),
        // No server holds the database: it is opened here.
        None => {
            let database = datadir::database(&args.data);
            (backup_file(&database, dest).map_err(|e| e.to_string())?, "the closed database")
        }
    };
    Ok(serde_json::json!({
        "backup": dest.display().to_string(),
        "from": from,
        "entries": figures.entries,
        "bytes": figures.bytes,
    })
    .to_string())
}

/// Read the server's copy into `dest`: whole, checked, then renamed into
/// place; on any failure nothing is left.
fn receive(server: UnixStream, dest: &Path) -> Result<BackupFigures, String> {
    let ([size, entries], reader) = control_client::ask(server, "backup")?;
    let partial = sibling(dest, ".partial");
    let written = write_private(&partial, &mut reader.take(size), size).and_then(|()| {
        let figures =
            check_backup_file(&partial).map_err(|e| format!("the copy received is not whole: {e}"))?;
        if figures.entries != entries {
            return Err(format!(
                "the copy received holds {} entries, the server sent {entries}",
                figures.entries
            ));
        }
        Ok(figures)
    });
    let figures = match written {
        Ok(figures) => figures,
        Err(why) => {
            let _ = std::fs::remove_file(&partial);
            return Err(why);
        }
    };
    rename_durably(&partial, dest).map_err(|e| format!("cannot write {}: {e}", dest.display()))?;
    Ok(figures)
}

/// Write exactly `size` bytes of `from` to a new owner-only file at `path`,
/// synced.
fn write_private(path: &Path, from: &mut impl Read, size: u64) -> Result<(), String> {
    let io = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
    let _ = std::fs::remove_file(path);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path).map_err(io)?;
    let copied = std::io::copy(from, &mut file).map_err(|e| format!("the backup stopped: {e}"))?;
    if copied != size {
        return Err(format!("the server stopped after {copied} of {size} bytes: the backup was not made"));
    }
    file.sync_all().map_err(io)
}

/// `path` with `suffix` appended.
fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// Rename `from` over `to` and sync the directory.
fn rename_durably(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::rename(from, to)?;
    let dir = to.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::File::open(dir)?.sync_all()
}

fn restore(args: &RestoreArgs) -> Result<String, String> {
    let made = datadir::prepare_new(&args.data, datadir::MayCreate::Asked)?;
    let database = datadir::database(&args.data);
    let restored = restore_file(&args.backup, &database).map_err(|e| e.to_string());
    let figures = restored.inspect_err(|_| {
        if made {
            let _ = std::fs::remove_dir(&args.data);
        }
    })?;
    Ok(serde_json::json!({
        "database": database.display().to_string(),
        "entries": figures.entries,
        "bytes": figures.bytes,
        "key": format!(
            "start it with the sealing key the backed-up service used: --key-file PATH, or that key at {}",
            key_file_for(&database).display()
        ),
    })
    .to_string())
}
