//! `achd rotate-key --data DIR [--key-file PATH] --new-key-file NEW`: the
//! sealing key changes; the data it seals does not move.
//!
//! The database's data key is re-sealed under NEW in one transaction
//! (envelope sealing: `ach_core::engine::rotate_key`). A current key that is
//! not the database's is refused and nothing changes. The database must not be
//! in use (stop `achd serve` first; start it again with NEW). Where the current
//! key was the data directory's own file, that file is replaced by NEW's key
//! (atomically, after the database changed), so the directory keeps opening.

use std::path::PathBuf;
use std::process::ExitCode;

use ach_core::engine::{key_file_for, rotate_key, OpenError};
use ach_core::secrets::replace_secret_file;

use crate::datadir;
use crate::sealing_key::{self, KeyFileArg, Source};

/// Arguments of `achd rotate-key`.
#[derive(clap::Args)]
pub struct RotateKeyArgs {
    /// The data directory whose database is re-keyed (not being served).
    #[arg(long, value_name = "DIR", default_value = datadir::DEFAULT)]
    data: PathBuf,
    /// The current key, found as `achd serve` finds it.
    #[command(flatten)]
    key: KeyFileArg,
    /// The new key's file (made with `achd keygen`); it must exist.
    #[arg(long = "new-key-file", value_name = "PATH")]
    new_key_file: PathBuf,
}

/// Rotate; exit 0 rotated, 1 refused or failed (nothing changed).
pub fn run(args: &RotateKeyArgs) -> ExitCode {
    match rotate(args) {
        Ok(summary) => {
            println!("{summary}");
            ExitCode::SUCCESS
        }
        Err(why) => {
            eprintln!("achd rotate-key: {why}");
            ExitCode::from(1)
        }
    }
}

fn rotate(args: &RotateKeyArgs) -> Result<String, String> {
    let database = datadir::database(&args.data);
    let current_file = match args.key.source() {
        Source::Outside(path) => path,
        Source::DataDirectory => key_file_for(&database),
    };
    let (current, _) = sealing_key::load(&current_file, false)?;
    let (new, _) = sealing_key::load(&args.new_key_file, false)?;
    if current.as_bytes() == new.as_bytes() {
        return Err(format!(
            "{} holds the current key: make a new one with `achd keygen PATH`",
            args.new_key_file.display()
        ));
    }
    rotate_key(&database, &current, &new).map_err(|e| match e {
        OpenError::WrongKey => {
            format!("{} is not this database's key: nothing was changed", current_file.display())
        }
        other => format!("{other} (a database being served is not re-keyed: stop achd first)"),
    })?;
    let in_data_directory = current_file == key_file_for(&database);
    if in_data_directory {
        replace_secret_file(&current_file, &new.to_hex()).map_err(|e| {
            format!(
                "the database now opens with {} only, but {} could not be replaced: {e}",
                args.new_key_file.display(),
                current_file.display()
            )
        })?;
    }
    let serve_with = if in_data_directory { &current_file } else { &args.new_key_file };
    Ok(serde_json::json!({
        "rotated": database.display().to_string(),
        "key_file": serve_with.display().to_string(),
    })
    .to_string())
}
