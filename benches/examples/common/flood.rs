//! A flood of requests with made-up keys, for the load examples: what it was
//! answered.

use std::time::{Duration, Instant};

use ach_testkit::{Conn, Strangers};

/// The JSON content type the flood's requests carry.
const JSON: &[(&str, &str)] = &[("content-type", "application/json")];

/// The flood's answers.
#[derive(Default)]
pub struct FloodCount {
    pub answered: usize,
    pub unauthorized: usize,
    pub not_found: usize,
    pub other: usize,
}

/// Connections the flood is sent over.
pub const FLOOD_CONNECTIONS: u32 = 16;

/// One flood connection: `rate` requests per second with made-up keys
/// ([`Strangers`]: a third to made-up paths) until `end`; what they were
/// answered within `[from, end)` (`other`: neither 401 nor 404, or not the
/// status expected).
pub async fn flood(mut conn: Conn, seed: u64, rate: f64, from: Instant, end: Instant) -> FloodCount {
    let mut strangers = Strangers::new(seed);
    let mut tick = tokio::time::interval(Duration::from_secs_f64(1.0 / rate));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut count = FloodCount::default();
    while Instant::now() < end {
        tick.tick().await;
        let s = strangers.next_request();
        let answer = conn
            .send(s.method, &s.path, Some(&s.key), JSON, s.body)
            .await
            .unwrap_or_else(|e| panic!("a flood connection was closed: {e}"))
            .status;
        if Instant::now() < from {
            continue;
        }
        count.answered += 1;
        match answer {
            401 => count.unauthorized += 1,
            404 => count.not_found += 1,
            _ => count.other += 1,
        }
        if answer != s.expected {
            count.other += 1;
        }
    }
    count
}
