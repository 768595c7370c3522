//! `achd init [--data DIR]`: make a new service's data directory, the only way
//! (with `achd serve --init`) a production service is created. An existing
//! database or key is never touched.

use std::path::PathBuf;
use std::process::ExitCode;

use ach_core::engine::{key_file_for, EngineOptions};

use crate::datadir::{self, MayCreate, OperatorKey};
use crate::sealing_key::{self, KeyFileArg, Source};

/// Arguments of `achd init`.
#[derive(clap::Args)]
pub struct InitArgs {
    /// The data directory to make (mode 0700 if missing); it must hold no
    /// database (ach.redb) and no key (ach.redb.key).
    #[arg(long, value_name = "DIR", default_value = datadir::DEFAULT)]
    data: PathBuf,
    #[command(flatten)]
    key: KeyFileArg,
}

/// Make the directory; exit 0 when made, 1 when refused or failed.
pub fn run(args: &InitArgs) -> ExitCode {
    match init(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            eprintln!("achd init: {why}");
            ExitCode::from(1)
        }
    }
}

fn init(args: &InitArgs) -> Result<(), String> {
    let dir = &args.data;
    let source = args.key.source();
    let taken = match &source {
        Source::Outside(_) => datadir::database(dir).try_exists().unwrap_or(true),
        Source::DataDirectory => !datadir::holds_no_service(dir),
    };
    if taken {
        return Err(format!(
            "{} already holds a database or its key; nothing was changed (an existing service \
             is never initialised again)",
            dir.display()
        ));
    }
    let made_dir = datadir::prepare_new(dir, MayCreate::Asked)?;
    let operator = OperatorKey::of(dir)?;
    let mut options = EngineOptions::system().with_operator_key(operator.key.clone());
    let mut made_key = None;
    if let Source::Outside(path) = &source {
        let (key, made) = sealing_key::load(path, true)?;
        made_key = made.then(|| path.clone());
        options = options.with_encryption_key(key);
    }
    let opened = datadir::open(dir, options, made_dir).inspect_err(|_| {
        if let Some(made) = &made_key {
            let _ = std::fs::remove_file(made);
        }
    })?;
    drop(opened);
    operator.keep()?;
    let database = datadir::database(dir);
    println!("database: {} (created, mode 0600)", database.display());
    match &source {
        Source::Outside(path) => println!(
            "sealing key: {} ({}; without it the data cannot be read: keep it apart from the database's copies)",
            path.display(),
            if made_key.is_some() { "created, mode 0600" } else { "existing" }
        ),
        Source::DataDirectory => println!(
            "encryption key: {} (created, mode 0600; without it the data cannot be read; better kept \
             apart from the data: --key-file)",
            key_file_for(&database).display()
        ),
    }
    let how = if operator.fresh { "created, mode 0600" } else { "existing" };
    println!("operator key: {} ({how})", operator.path.display());
    match &source {
        Source::Outside(path) => {
            println!("start it with: achd serve --data {} --key-file {}", dir.display(), path.display())
        }
        Source::DataDirectory => println!("start it with: achd serve --data {}", dir.display()),
    }
    Ok(())
}
