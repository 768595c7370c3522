//! `achd demo` runs the whole tour against a real sandbox server and cleans up.
//! The tour starts on a fixed day (`--on`), never on the day the test runs; the
//! tour's own tests run it in process for every start day of two years.
#![allow(clippy::unwrap_used)]

use std::process::Command;

#[test]
fn the_demo_tour_runs_every_step_and_prints_the_feed() {
    // The day before Thanksgiving 2026: settlement waits for the holiday.
    let out = Command::new(env!("CARGO_BIN_EXE_achd")).args(["demo", "--on", "2026-11-25"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    for step in [
        "POST /admin/partners → 201",
        "POST /merchants → 201",
        "→ 200",
        "originated: 3",
        "settled: 2",
        "reversal txn_",
        "stands at 2026-11-25, 10:00 Eastern",
        "cut-off, 6 PM Eastern on 2026-11-25",
        "settlement on 2026-12-01",
    ] {
        assert!(text.contains(step), "missing {step:?} in\n{text}");
    }
    // The feed shows the void, the return and the settlements.
    assert!(text.contains("Voided"));
    assert!(text.contains("R01   Insufficient Funds"));
    assert_eq!(text.lines().filter(|l| l.contains(" S ")).count(), 2, "{text}");
    // The server's directory is gone and its API key was never printed.
    let dir = text.lines().find_map(|l| l.split("(data in ").nth(1)).unwrap().trim_end_matches(')');
    assert!(!std::path::Path::new(dir).exists());
    assert!(!text.contains("pk_") || text.contains("pk_…"));
}

#[test]
fn a_start_day_that_is_not_a_date_is_a_usage_error() {
    for bad in ["2026-02-30", "25/11/2026", "tomorrow"] {
        let out = Command::new(env!("CARGO_BIN_EXE_achd")).args(["demo", "--on", bad]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("--on"), "{bad}");
    }
}
