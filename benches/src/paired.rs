//! Paired timing: two cases alternately in one loop, for ratios on a noisy machine.

use std::hint::black_box;
use std::time::{Duration, Instant};

/// Time `a` and `b` alternately `pairs` times and print both medians and their
/// ratio: machine noise (other processes on this shared 2-core machine) then hits
/// both alike, where criterion measures one after the other.
pub fn paired<A, B>(
    group: &str,
    a_name: &str,
    b_name: &str,
    pairs: usize,
    mut a: impl FnMut() -> A,
    mut b: impl FnMut() -> B,
) {
    let (mut ta, mut tb) = (Vec::with_capacity(pairs), Vec::with_capacity(pairs));
    for _ in 0..pairs {
        let t = Instant::now();
        black_box(a());
        ta.push(t.elapsed());
        let t = Instant::now();
        black_box(b());
        tb.push(t.elapsed());
    }
    let summary = |t: &mut Vec<Duration>| {
        t.sort();
        let mean = t.iter().sum::<Duration>() / t.len() as u32;
        (t[t.len() / 2], mean, t[t.len() * 9 / 10])
    };
    let ((ma, mean_a, p90_a), (mb, mean_b, p90_b)) = (summary(&mut ta), summary(&mut tb));
    eprintln!(
        "{group}: paired ({pairs} alternations): {a_name} median {ma:.2?} (mean {mean_a:.2?}, p90 \
         {p90_a:.2?}), {b_name} median {mb:.2?} (mean {mean_b:.2?}, p90 {p90_b:.2?}); ratio of medians \
         {:.3}, of means {:.3}",
        mb.as_secs_f64() / ma.as_secs_f64(),
        mean_b.as_secs_f64() / mean_a.as_secs_f64(),
    );
}
