//! `achd init [--data DIR]`: make a new service's data directory, the only way
//! (with `achd serve --init`) a production service is created. An existing
//! database or key is never touched.

use std::path::PathBuf;
use std::process::ExitCode;

use ach_core::engine::{key_file_for, EngineOptions};

use crate::datadir::{self, MayCreate, OperatorKey};

/// Arguments of `achd init`.
#[derive(clap::Args)]
pub struct InitArgs {
    /// The data directory to make (mode 0700 if missing); it must hold no
    /// database (ach.redb) and no key (ach.redb.key).
    #[arg(long, value_name = "DIR", default_value = datadir::DEFAULT)]
    data: PathBuf,
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
    if !datadir::holds_no_service(dir) {
        return Err(format!(
            "{} already holds a database or its key; nothing was changed (an existing service \
             is never initialised again)",
            dir.display()
        ));
    }
    let made_dir = datadir::prepare_new(dir, MayCreate::Asked)?;
    let operator = OperatorKey::of(dir)?;
    let options = EngineOptions::system().with_operator_key(operator.key.clone());
    drop(datadir::open(dir, options, made_dir)?);
    operator.keep()?;
    let database = datadir::database(dir);
    println!("database: {} (created, mode 0600)", database.display());
    println!(
        "encryption key: {} (created, mode 0600; keep it with the database: without it the data cannot be read)",
        key_file_for(&database).display()
    );
    let how = if operator.fresh { "created, mode 0600" } else { "existing" };
    println!("operator key: {} ({how})", operator.path.display());
    println!("start it with: achd serve --data {}", dir.display());
    Ok(())
}
