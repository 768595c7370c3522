//! `achd`: the ACH service's command line and HTTPS server.
//!
//! `achd validate transaction|customer|merchant [FILE|-] [--routing-directory FILE]`
//! checks a request against the service's rules without a server or a database.
//!
//! `achd serve [--data DIR] [--listen ADDR] [--admin-listen ADDR] [--tls-cert PEM
//! --tls-key PEM] [--sandbox] [--web DIR] [--outbox DIR] [--max-connections N]
//! [--max-connections-per-client N] [--write-timeout SECONDS] [--connection-lifetime
//! SECONDS]` runs the service over HTTPS, the operator plane on its own address.
//!
//! `achd init [--data DIR]` makes a new service's data directory (the database,
//! its key, the operator key); `achd serve` opens it.
//!
//! `achd backup [--data DIR] DEST` copies the database (served or not) into a
//! new file; `achd restore BACKUP --data NEWDIR` makes a new data directory
//! of one.
//!
//! `achd rotate-key --data DIR [--key-file PATH] [--reseal] [--new-key-file NEW]`
//! seals every value again under a new data key and/or the stored keys
//! under a new sealing key.
//!
//! `achd nacha check FILE` reads a NACHA file with the engine's reader, validates
//! it and prints a JSON summary.
//!
//! `achd x9 check FILE` reads an X9.100-187 image cash letter, checks its record
//! order, controls and images, and prints a JSON summary.
//!
//! `achd demo [--on YYYY-MM-DD]` is a newcomer's tour of the whole service against
//! a sandbox server.

mod answers;
mod backup;
mod body;
mod connections;
mod console;
mod control;
mod control_client;
mod datadir;
mod demo;
mod directory;
mod file_input;
mod guard;
mod holders;
mod http;
mod init;
mod json_answer;
mod listen;
mod logging;
mod metrics;
mod nacha;
mod open_files;
mod operator;
mod outbox;
mod rate;
mod rotate_key;
mod sealing_key;
mod serve;
mod shutdown;
mod tasks;
mod tls;
mod validate;
mod web;
mod webhooks;
mod write_timeout;
mod writer;
mod x9;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The ACH payment service.
#[derive(Parser)]
#[command(name = "achd", version, about = "The ACH payment service: HTTPS server and tools")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Validate a request body against the service's rules; prints
    /// {"valid","message","errors"}. Exit 0 valid, 1 invalid, 2 unreadable input.
    Validate(validate::ValidateArgs),
    /// NACHA files: `achd nacha check FILE` reads and validates one; prints
    /// {"valid","batches","entries","total_debit","total_credit","problems"}.
    /// Exit 0 valid, 1 invalid, 2 unreadable.
    Nacha(nacha::NachaArgs),
    /// X9.100-187 image cash letters: `achd x9 check FILE` reads and checks
    /// one; prints its summary and problems. Exit 0 valid, 1 invalid,
    /// 2 unreadable.
    X9(x9::X9Args),
    /// Make a new service's data directory: the database, its encryption key
    /// and the operator key. Exit 0 made, 1 refused (DIR already holds a
    /// database or a key: nothing is changed).
    Init(init::InitArgs),
    /// Make a new sealing key file (64 hex digits, mode 0600) for --key-file
    /// or the systemd credential. Exit 0 made, 1 refused (the file exists:
    /// it is never overwritten).
    Keygen(sealing_key::KeygenArgs),
    /// Copy the database of DIR into a new file DEST: one consistent
    /// snapshot, taken through the serving achd when one holds it. Prints
    /// {"backup","from","entries","bytes"}. Exit 0 made, 1 refused (DEST
    /// exists) or failed (nothing is left at DEST).
    Backup(backup::BackupArgs),
    /// Restore a backup as the database of a new data directory. Prints
    /// {"database","entries","bytes","key"}. Exit 0 restored, 1 refused (the
    /// directory holds a database) or failed (nothing is left).
    Restore(backup::RestoreArgs),
    /// Change the sealing key (--new-key-file: the stored data keys
    /// re-sealed, the rows unchanged; the database must not be served)
    /// and/or the data key (--reseal: every sealed value sealed again, while
    /// achd serves if it does). Prints {"resealed","unopened","from",
    /// "rotated","key_file"} as they apply. Exit 0 done, 1 refused (a wrong
    /// current key, a missing new key) or failed.
    RotateKey(rotate_key::RotateKeyArgs),
    /// Run the service over HTTPS until SIGINT or SIGTERM (then exit 0).
    Serve(Box<serve::ServeArgs>),
    /// A tour: start a sandbox server on a temporary directory and run a whole
    /// lifecycle against it over HTTPS, printing each step and the feed.
    Demo(demo::DemoArgs),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    match cli.command {
        Command::Validate(args) => validate::run(&args),
        Command::Nacha(args) => nacha::run(&args),
        Command::X9(args) => x9::run(&args),
        Command::Init(args) => init::run(&args),
        Command::Keygen(args) => sealing_key::keygen(&args),
        Command::Backup(args) => backup::run_backup(&args),
        Command::Restore(args) => backup::run_restore(&args),
        Command::RotateKey(args) => rotate_key::run(&args),
        Command::Serve(args) => serve::run(*args),
        Command::Demo(args) => demo::run(&args),
    }
}
