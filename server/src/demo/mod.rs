//! `achd demo`: a newcomer's tour in one command. It starts a sandbox server on a
//! temporary directory, then, over real HTTPS like any client: creates a partner
//! and a merchant, submits debits and a credit, voids one, moves the clock past
//! the cut-off, records a return, moves it past settlement, reverses a settled
//! debit, and prints each step and the status-changes feed.
//!
//! `--on YYYY-MM-DD` starts the tour on that day (default: today, Eastern); the
//! clock steps come from the engine's calendar (see [`tour`]), so every start day
//! works, holidays and daylight-saving switches included.

mod https;
pub mod tour;

use std::process::ExitCode;

use chrono::NaiveDate;

/// Arguments of `achd demo`.
#[derive(clap::Args)]
pub struct DemoArgs {
    /// Start the tour at 10:00 Eastern on this day (YYYY-MM-DD; default: today).
    #[arg(long, value_name = "YYYY-MM-DD", value_parser = parse_day)]
    on: Option<NaiveDate>,
}

fn parse_day(text: &str) -> Result<NaiveDate, String> {
    let day = ach_core::calendar::parse_date(text).map_err(|e| e.to_string())?;
    if !(2000..=9000).contains(&chrono::Datelike::year(&day)) {
        return Err(format!("{text} is outside the years 2000 to 9000"));
    }
    Ok(day)
}

/// Run the tour; exit 0 when every step answered as expected.
pub fn run(args: &DemoArgs) -> ExitCode {
    let day = args.on.unwrap_or_else(|| ach_core::calendar::eastern_date(chrono::Utc::now()));
    let sandbox = match https::Sandbox::start(tour::start_instant(day)) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("achd demo: {e}");
            return ExitCode::from(1);
        }
    };
    println!(
        "A sandbox server is running at https://{} (data in {})",
        sandbox.address,
        sandbox.dir.display()
    );
    let result = https::Client::connect(&sandbox)
        .and_then(|mut client| tour::run(&mut client, day, &mut |line| println!("{line}")));
    drop(sandbox);
    match result {
        Ok(s) => {
            println!(
                "\n{} transactions and the reversal {} made {} status changes; {} originated, {} settled.",
                s.ids.len(),
                s.reversal,
                s.changes.len(),
                s.originated,
                s.settled
            );
            println!("\nThe sandbox server has stopped and its directory is gone. Run your own with: achd serve --sandbox");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("achd demo: {e}");
            ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod tests;
