//! Validate the typical transaction N times (for callgrind profiles).
#![allow(clippy::unwrap_used, missing_docs)]
use ach_core::routing::RoutingDirectory;
use ach_core::validation::{check_bytes, Context, Kind};
use chrono::NaiveDate;

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let directory = RoutingDirectory::embedded();
    let ctx = Context { today: NaiveDate::from_ymd_opt(2026, 11, 22).unwrap(), directory: &directory };
    let mut valid = 0;
    if std::env::args().nth(2).as_deref() == Some("parse") {
        for _ in 0..n {
            let v: serde_json::Value = serde_json::from_str(ach_benches::TYPICAL_TRANSACTION).unwrap();
            valid += usize::from(v.is_object());
        }
        println!("{valid}");
        return;
    }
    for _ in 0..n {
        valid += usize::from(
            check_bytes(Kind::Transaction, ach_benches::TYPICAL_TRANSACTION.as_bytes(), &ctx).valid,
        );
    }
    println!("{valid}");
}
