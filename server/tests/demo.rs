//! `achd demo` runs the whole tour against a real sandbox server and cleans up.
#![allow(clippy::unwrap_used)]

use std::process::Command;

#[test]
fn the_demo_tour_runs_every_step_and_prints_the_feed() {
    let out = Command::new(env!("CARGO_BIN_EXE_achd")).arg("demo").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    for step in [
        "POST /admin/partners → 201",
        "POST /merchants → 201",
        "→ 200",
        "originated: 3",
        "settled: 2",
        "reversal txn_",
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
