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
    let bytes = match crate::file_input::read("achd x9 check", file) {
        Ok(bytes) => bytes,
        Err(code) => return code,
    };
    let report = match x9::check(&bytes) {
        Ok(report) => report,
        Err(e) => {
            eprintln!("achd x9 check: {}: not an X9 file: {e}", file.display());
            return ExitCode::from(2);
        }
    };
    let valid = report.is_valid();
    let mut line = match serde_json::to_value(&report.summary) {
        Ok(Value::Object(fields)) => fields,
        _ => serde_json::Map::new(),
    };
    line.insert("valid".into(), json!(valid));
    line.insert("problems".into(), json!(report.problems));
    println!("{}", Value::Object(line));
    ExitCode::from(if valid { 0 } else { 1 })
}
