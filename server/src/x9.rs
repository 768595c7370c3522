//! `achd x9 check FILE`: read an X9.100-187 image cash letter with the engine's
//! checker, print one JSON summary line with its problems.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use ach_core::x9;
use serde_json::{json, Value};

/// Arguments of `achd x9`.
#[derive(clap::Args)]
pub struct X9Args {
    #[command(subcommand)]
    command: X9Command,
}

#[derive(clap::Subcommand)]
enum X9Command {
    /// Read and check an image cash letter (ASCII or EBCDIC, with or without
    /// record length prefixes); prints {"valid","encoding","length_prefixed",
    /// "standard_level","records","cash_letters","bundles","items","returns",
    /// "credits","total_amount_cents","images","image_formats","problems"}.
    /// Exit 0 valid, 1 invalid, 2 unreadable.
    Check {
        /// The X9 file; `-` reads standard input.
        file: PathBuf,
    },
}

/// Run the command.
pub fn run(args: &X9Args) -> ExitCode {
    match &args.command {
        X9Command::Check { file } => check(file),
    }
}

fn check(file: &Path) -> ExitCode {
    crate::file_input::check("achd x9 check", "an X9 file", file, |bytes| {
        let report = x9::check(bytes)?;
        let mut line = match serde_json::to_value(&report.summary) {
            Ok(Value::Object(fields)) => fields,
            _ => serde_json::Map::new(),
        };
        line.insert("problems".into(), json!(report.problems));
        Ok::<_, x9::NotX9>((report.is_valid(), line))
    })
}
