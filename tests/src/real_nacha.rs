//! What the tests know of the real NACHA files in `shared/data/nacha/`.

use std::path::PathBuf;

/// `shared/data/nacha/`.
pub fn nacha_dir() -> PathBuf {
    crate::shared_data().join("nacha")
}

/// 20110805A's entries whose trace number an earlier batch already used (each
/// batch numbers from 0000001 again), as (record, field) in record order.
pub const REUSED_TRACES_20110805A: [(usize, &str); 23] = reused_traces([
    30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 50, 58, 66, 76, 84,
]);

const fn reused_traces<const N: usize>(records: [usize; N]) -> [(usize, &'static str); N] {
    let mut out = [(0, "trace_number"); N];
    let mut i = 0;
    while i < N {
        out[i].0 = records[i];
        i += 1;
    }
    out
}
