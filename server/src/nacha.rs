//! `achd nacha check FILE`: read a NACHA file with the engine's own reader,
//! validate it, print one JSON summary line.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use ach_core::nacha::{self, Problem};
use serde_json::json;

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
    let bytes = match crate::file_input::read("achd nacha check", file) {
        Ok(bytes) => bytes,
        Err(code) => return code,
    };
    let parsed = match nacha::read(&bytes) {
        Ok(parsed) => parsed,
        Err(e) => {
            eprintln!("achd nacha check: {}: not a NACHA file: {e}", file.display());
            return ExitCode::from(2);
        }
    };
    let mut problems: Vec<Problem> = parsed.problems.clone();
    problems.extend(nacha::check(&parsed));
    problems.sort_by_key(|p| p.record);
    let valid = problems.is_empty();
    let summary = json!({
        "valid": valid,
        "batches": parsed.file.batches.len(),
        "entries": parsed.entry_count(),
        "total_debit": parsed.total_debit(),
        "total_credit": parsed.total_credit(),
        "problems": problems,
    });
    println!("{summary}");
    ExitCode::from(if valid { 0 } else { 1 })
}
