//! `achd validate`: the validation layer on the command line.

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use ach_core::calendar;
use ach_core::routing::RoutingDirectory;
use ach_core::validation::{check_bytes, Context, Kind};
use chrono::Utc;

/// Arguments of `achd validate`.
#[derive(clap::Args)]
pub struct ValidateArgs {
    /// What the body is: transaction, customer or merchant.
    #[arg(value_parser = ["transaction", "customer", "merchant"])]
    kind: String,
    /// The JSON body to check; `-` or nothing reads standard input.
    file: Option<PathBuf>,
    /// A FedACH directory file for "not found" checks (default: the embedded list).
    #[arg(long, value_name = "FEDACH_FILE")]
    routing_directory: Option<PathBuf>,
}

/// Run the command: print the verdict, exit 0 (valid), 1 (invalid) or 2 (cannot
/// read the input or the directory).
pub fn run(args: &ValidateArgs) -> ExitCode {
    let Some(kind) = Kind::parse(&args.kind) else {
        eprintln!("achd validate: unknown kind '{}'", args.kind);
        return ExitCode::from(2);
    };
    let directory = match &args.routing_directory {
        None => RoutingDirectory::embedded(),
        Some(path) => match std::fs::read_to_string(path)
            .map_err(|e| e.to_string())
            .and_then(|text| RoutingDirectory::parse_fedach(&text).map_err(|e| e.to_string()))
        {
            Ok(dir) => dir,
            Err(e) => {
                eprintln!("achd validate: cannot load routing directory {}: {e}", path.display());
                return ExitCode::from(2);
            }
        },
    };
    let body = match read_body(args.file.as_ref()) {
        Ok(body) => body,
        Err(e) => {
            eprintln!("achd validate: {e}");
            return ExitCode::from(2);
        }
    };
    let ctx = Context { today: calendar::eastern_date_cached(Utc::now()), directory: &directory };
    let verdict = check_bytes(kind, &body, &ctx);
    println!("{}", verdict.to_json());
    ExitCode::from(if verdict.valid { 0 } else { 1 })
}

fn read_body(file: Option<&PathBuf>) -> Result<Vec<u8>, String> {
    match file {
        Some(path) if path.as_os_str() != "-" => {
            std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
        }
        _ => {
            let mut body = Vec::new();
            std::io::stdin()
                .read_to_end(&mut body)
                .map_err(|e| format!("cannot read standard input: {e}"))?;
            Ok(body)
        }
    }
}
