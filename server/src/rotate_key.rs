//! `achd rotate-key --data DIR [--key-file PATH] [--reseal] [--new-key-file NEW]`.
//!
//! `--new-key-file NEW`: the sealing key changes; the data it seals does not
//! move. The database's stored keys are re-sealed under NEW in one
//! transaction (envelope sealing: `ach_core::engine::rotate_key`). A current
//! key that is not the database's is refused and nothing changes. The
//! database must not be in use (stop `achd serve` first; start it again with
//! NEW). Where the current key was the data directory's own file, that file
//! is replaced by NEW's key (atomically, after the database changed), so the
//! directory keeps opening.
//!
//! `--reseal`: a new data key, and every sealed value sealed again by it
//! (`Engine::reseal`), in chunks: through the serving `achd` (its control
//! socket) while it answers, else here. With both, the re-seal comes first.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use ach_core::engine::{key_file_for, rotate_key, Engine, EngineOptions, OpenError, ResealFigures};
use ach_core::secrets::replace_secret_file;

use crate::sealing_key::{self, KeyFileArg, Source};
use crate::{control_client, datadir};

/// Arguments of `achd rotate-key`.
#[derive(clap::Args)]
pub struct RotateKeyArgs {
    /// The data directory whose database is re-keyed (not being served).
    #[arg(long, value_name = "DIR", default_value = datadir::DEFAULT)]
    data: PathBuf,
    /// The current key, found as `achd serve` finds it.
    #[command(flatten)]
    key: KeyFileArg,
    /// The new sealing key's file (made with `achd keygen`); it must exist.
    #[arg(long = "new-key-file", value_name = "PATH")]
    new_key_file: Option<PathBuf>,
    /// Also make a new data key and seal every sealed value again with it
    /// (while achd serves, if it does).
    #[arg(long)]
    reseal: bool,
}

/// Rotate; exit 0 rotated, 1 refused or failed (nothing changed).
pub fn run(args: &RotateKeyArgs) -> ExitCode {
    match run_rotation(args) {
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

fn run_rotation(args: &RotateKeyArgs) -> Result<String, String> {
    let database = datadir::database(&args.data);
    let current_file = match args.key.source() {
        Source::Outside(path) => path,
        Source::DataDirectory => key_file_for(&database),
    };
    let mut said = serde_json::Map::new();
    if !args.reseal && args.new_key_file.is_none() {
        return Err("name --new-key-file NEW (a new sealing key), --reseal (a new data key), or both".into());
    }
    if args.reseal {
        let (figures, from) = reseal(args, &database, &current_file)?;
        said.insert("resealed".into(), figures.resealed.into());
        said.insert("unopened".into(), figures.unopened.into());
        said.insert("from".into(), from.into());
    }
    if let Some(new_key_file) = &args.new_key_file {
        let serve_with = rewrap(&database, &current_file, new_key_file)?;
        said.insert("rotated".into(), database.display().to_string().into());
        said.insert("key_file".into(), serve_with.display().to_string().into());
    }
    Ok(serde_json::Value::Object(said).to_string())
}

/// Re-seal under a new data key: through the serving achd, else here.
fn reseal(
    args: &RotateKeyArgs,
    database: &Path,
    current_file: &Path,
) -> Result<(ResealFigures, &'static str), String> {
    match control_client::reach(&args.data)? {
        Some(server) => {
            if args.new_key_file.is_some() {
                return Err(
                    "achd serves this database: its sealing key is not changed under it (stop achd first); \
                     --reseal alone runs while it serves"
                        .into(),
                );
            }
            let ([resealed, unopened], _) = control_client::ask(server, "reseal")?;
            Ok((ResealFigures { resealed, unopened }, "the serving achd"))
        }
        None => {
            let (current, _) = sealing_key::load(current_file, false)?;
            let options = EngineOptions::system().with_encryption_key(current);
            let engine = Engine::open(database, options).map_err(|e| refused(e, current_file))?;
            Ok((engine.reseal().map_err(|e| e.to_string())?, "the closed database"))
        }
    }
}

/// Why opening or re-keying with the current key failed.
fn refused(e: OpenError, current_file: &Path) -> String {
    match e {
        OpenError::WrongKey => {
            format!("{} is not this database's key: nothing was changed", current_file.display())
        }
        other => other.to_string(),
    }
}

/// Re-seal the stored keys under the key in `new_key_file`; the key file to
/// serve with from now on.
fn rewrap(database: &Path, current_file: &Path, new_key_file: &Path) -> Result<PathBuf, String> {
    let (current, _) = sealing_key::load(current_file, false)?;
    let (new, _) = sealing_key::load(new_key_file, false)?;
    if current.as_bytes() == new.as_bytes() {
        return Err(format!(
            "{} holds the current key: make a new one with `achd keygen PATH`",
            new_key_file.display()
        ));
    }
    rotate_key(database, &current, &new).map_err(|e| match e {
        OpenError::WrongKey => refused(e, current_file),
        other => format!("{other} (a database being served is not re-keyed: stop achd first)"),
    })?;
    let in_data_directory = current_file == key_file_for(database);
    if in_data_directory {
        replace_secret_file(current_file, &new.to_hex()).map_err(|e| {
            format!(
                "the database now opens with {} only, but {} could not be replaced: {e}",
                new_key_file.display(),
                current_file.display()
            )
        })?;
        return Ok(current_file.to_owned());
    }
    Ok(new_key_file.to_owned())
}
