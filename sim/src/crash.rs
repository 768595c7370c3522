//! Crash points: a run over a simulated disk that loses power just before its
//! n-th I/O operation, for every n (or every k-th) of the run's operations.

use crate::driver::{Config, Sim, SimError, Summary};

/// What a crash-point sweep found.
#[derive(Debug, Clone, Default)]
pub struct Sweep {
    /// The seed.
    pub seed: u64,
    /// I/O operations of the run without a crash.
    pub operations: u64,
    /// Crash points run.
    pub points: u64,
    /// Of those, how many crashed (a point past the run's last operation does not).
    pub crashed: u64,
    /// Crashes where the operation in flight turned out committed, not committed.
    pub in_flight: [u64; 2],
    /// Crash images: unsynced operations seen, kept, torn.
    pub unsynced: u64,
    /// Unsynced operations that landed.
    pub kept: u64,
    /// Torn writes.
    pub torn: u64,
    /// Transactions acknowledged before the crashes (all found after them).
    pub acknowledged: u64,
    /// Crashes inside redb's creation of the file that left it unopenable.
    pub unopenable: u64,
}

/// One run that loses power before operation `at`.
pub fn run_one(seed: u64, config: Config, at: u64) -> Result<Summary, SimError> {
    let (sim, _disk) = Sim::on_disk(seed, config, Some(at))?;
    sim.run()
}

/// Every `stride`-th crash point of the run of `seed`: 1, 1 + stride, … up to one
/// past its last operation.
pub fn sweep(seed: u64, config: Config, stride: u64) -> Result<Sweep, SimError> {
    let (sim, disk) = Sim::on_disk(seed, config, None)?;
    sim.run()?;
    let operations = disk.operations();
    let mut s = Sweep { seed, operations, ..Sweep::default() };
    let mut at = 1;
    while at <= operations + 1 {
        let summary = run_one(seed, config, at)?;
        s.points += 1;
        if let Some(c) = summary.crash {
            s.crashed += 1;
            match c.committed {
                Some(true) => s.in_flight[0] += 1,
                Some(false) => s.in_flight[1] += 1,
                None => {}
            }
            s.unsynced += c.image.unsynced as u64;
            s.kept += c.image.kept as u64;
            s.torn += c.image.torn as u64;
            s.acknowledged += c.acknowledged as u64;
            s.unopenable += u64::from(c.unopenable);
        }
        at += stride.max(1);
    }
    Ok(s)
}
