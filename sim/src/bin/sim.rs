//! `sim`: run the deterministic simulator.
//!
//!     cargo run -p ach-sim -- --seed N [--steps S]        one seed, verbose
//!     cargo run -p ach-sim --release -- --seeds N         seeds 0..N
//!     cargo run -p ach-sim -- --seed N --crash-at K       lose power before I/O operation K
//!     cargo run -p ach-sim --release -- --crash-sweep N [--stride K]   every crash point of seeds 0..N
//!
//! A failure prints the seed, the step and the command that replays it, and
//! exits 1.

use std::process::ExitCode;
use std::time::Instant;

use ach_sim::crash;
use ach_sim::{Config, Sim, SimError};

struct SimArgs {
    seed: Option<u64>,
    seeds: u64,
    first: u64,
    config: Config,
    crash_at: Option<u64>,
    sweep: Option<u64>,
    stride: u64,
}

fn parse() -> Result<SimArgs, String> {
    let mut a = SimArgs {
        seed: None,
        seeds: 0,
        first: 0,
        config: Config::default(),
        crash_at: None,
        sweep: None,
        stride: 1,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || -> Result<u64, String> {
            let v = it.next().ok_or(format!("{flag} needs a number"))?;
            v.parse().map_err(|_| format!("{flag}: '{v}' is not a number"))
        };
        match flag.as_str() {
            "--seed" => a.seed = Some(value()?),
            "--seeds" => a.seeds = value()?,
            "--first" => a.first = value()?,
            "--steps" => a.config.steps = value()? as usize,
            "--full-every" => a.config.full_every = value()? as usize,
            "--crash-at" => a.crash_at = Some(value()?),
            "--crash-sweep" => a.sweep = Some(value()?),
            "--stride" => a.stride = value()?,
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if a.seed.is_none() && a.seeds == 0 && a.sweep.is_none() {
        a.seeds = 200;
    }
    Ok(a)
}

fn fail(e: &SimError) -> ExitCode {
    eprintln!("FAILED {e}");
    ExitCode::FAILURE
}

fn main() -> ExitCode {
    let args = match parse() {
        Ok(a) => a,
        Err(why) => {
            eprintln!("{why}\nusage: sim [--seed N | --seeds N [--first S] | --crash-sweep N [--stride K]] [--steps S] [--crash-at K] [--full-every F]");
            return ExitCode::from(2);
        }
    };
    let started = Instant::now();
    if let Some(seeds) = args.sweep {
        let (config, stride) = (args.config, args.stride);
        let sweeps =
            ach_sim::each_seed(args.first..args.first + seeds, |seed| crash::sweep(seed, config, stride));
        let mut points = 0;
        for s in sweeps {
            match s {
                Ok(s) => {
                    points += s.points;
                    println!(
                        "seed {}: {} I/O operations, {} crash points ({} crashed; in flight committed {} / not {}), {} unsynced operations ({} landed, {} torn), {} acknowledged transactions, 0 lost; {} during the file's creation left it unopenable",
                        s.seed, s.operations, s.points, s.crashed, s.in_flight[0], s.in_flight[1], s.unsynced, s.kept, s.torn, s.acknowledged, s.unopenable
                    );
                }
                Err(e) => return fail(&e),
            }
        }
        println!("{points} crash points, no loss, {:.1}s", started.elapsed().as_secs_f64());
        return ExitCode::SUCCESS;
    }
    if let Some(seed) = args.seed {
        let result = match args.crash_at {
            Some(at) => crash::run_one(seed, args.config, at),
            None => Sim::in_memory(seed, args.config).and_then(Sim::run),
        };
        return match result {
            Ok(s) => {
                println!(
                    "seed {seed}: {} steps, {} transactions, {} status changes, digest {:016x}",
                    s.steps, s.transactions, s.changes, s.digest
                );
                println!("  status changes A {} B {} S {} R {}; clock moves across a weekend {}, a Fed holiday {}, a DST change {}, a month end {}", s.statuses[0], s.statuses[1], s.statuses[2], s.statuses[3], s.crossings[0], s.crossings[1], s.crossings[2], s.crossings[3]);
                for (kind, [ok, refused]) in &s.counts {
                    println!("  {kind:<20} {ok:>5} accepted {refused:>5} refused");
                }
                if let Some(c) = &s.crash {
                    println!(
                        "  crash at step {} ({}): {:?}, in flight committed: {:?}",
                        c.step, c.kind, c.image, c.committed
                    );
                }
                ExitCode::SUCCESS
            }
            Err(e) => fail(&e),
        };
    }
    let config = args.config;
    let runs = ach_sim::each_seed(args.first..args.first + args.seeds, |seed| {
        Sim::in_memory(seed, config).and_then(Sim::run)
    });
    let (mut steps, mut txns, mut statuses, mut crossings) = (0, 0, [0u64; 4], [0u64; 4]);
    let mut counts: std::collections::BTreeMap<&str, [u64; 2]> = std::collections::BTreeMap::new();
    for run in runs {
        match run {
            Ok(s) => {
                steps += s.steps;
                txns += s.transactions;
                for i in 0..4 {
                    statuses[i] += s.statuses[i];
                    crossings[i] += s.crossings[i];
                }
                for (kind, [ok, no]) in s.counts {
                    let c = counts.entry(kind).or_default();
                    c[0] += ok;
                    c[1] += no;
                }
            }
            Err(e) => return fail(&e),
        }
    }
    println!(
        "{} seeds × {} steps ({steps} steps) passed in {:.1}s",
        args.seeds,
        args.config.steps,
        started.elapsed().as_secs_f64()
    );
    println!(
        "  {txns} transactions; status changes A {} B {} S {} R {}",
        statuses[0], statuses[1], statuses[2], statuses[3]
    );
    println!(
        "  clock moves across a weekend {}, a Fed holiday {}, a DST change {}, a month end {}",
        crossings[0], crossings[1], crossings[2], crossings[3]
    );
    for (kind, [ok, refused]) in &counts {
        println!("  {kind:<20} {ok:>7} accepted {refused:>7} refused");
    }
    ExitCode::SUCCESS
}
