//! `achd nacha check FILE`: read a NACHA file with the engine's own reader,
//! validate it, print one JSON summary line.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use ach_core::nacha::{self, Problem};
use serde_json::{json, Map};

/// Arguments of `achd nacha`.
#[derive(clap::Args)]
pub struct NachaArgs {
    #[command(subcommand)]
    command: NachaCommand,
}

#[derive(clap::Subcommand)]
enum NachaCommand {
    /// Read and validate a NACHA file; prints {"valid","batches","entries",
    /// "total_debit","total_credit","problems"}. Exit 0 valid, 1 invalid,
    /// 2 unreadable.
    Check {
        /// The NACHA file; `-` reads standard input.
        file: PathBuf,
    },
}

/// Run the command.
pub fn run(args: &NachaArgs) -> ExitCode {
    match &args.command {
        NachaCommand::Check { file } => check(file),
    }
}

fn check(file: &Path) -> ExitCode {
    crate::file_input::check("achd nacha check", "a NACHA file", file, |bytes| {
        let parsed = nacha::read(bytes)?;
        let mut problems: Vec<Problem> = parsed.problems.clone();
        problems.extend(nacha::check(&parsed));
        problems.sort_by_key(|p| p.record);
        let line = Map::from_iter([
            ("batches".to_owned(), json!(parsed.file.batches.len())),
            ("entries".to_owned(), json!(parsed.entry_count())),
            ("total_debit".to_owned(), json!(parsed.total_debit())),
            ("total_credit".to_owned(), json!(parsed.total_credit())),
            ("problems".to_owned(), json!(problems)),
        ]);
        Ok::<_, nacha::ReadError>((problems.is_empty(), line))
    })
}
