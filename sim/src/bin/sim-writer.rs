//! `sim-writer`: the child process of the SIGKILL test (`sim/tests/sigkill.rs`).
//!
//! ```text
//! sim-writer setup DB                        a partner and an approved merchant;
//!                                            prints `partner ID` and `merchant ID`
//! sim-writer write DB PARTNER MERCHANT SEED  creates transactions until killed, in
//!                                            batches of 1 to 4 (one commit each), and
//!                                            prints `ack ID` for each one only after
//!                                            `execute_batch` returned (durable), flushed
//! ```
//!
//! The engine is a file database on a manual clock (nothing originates), exactly
//! as `Engine::open` runs in production otherwise (`ach_sim::writer`).

use std::process::ExitCode;

use ach_sim::writer::{setup, write};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["setup", db] => setup(db),
        ["write", db, partner, merchant, seed] => match seed.parse() {
            Ok(seed) => write(db, partner, merchant, seed),
            Err(_) => Err(format!("'{seed}' is not a seed")),
        },
        _ => Err("usage: sim-writer setup DB | sim-writer write DB PARTNER MERCHANT SEED".into()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            eprintln!("sim-writer: {why}");
            ExitCode::FAILURE
        }
    }
}
