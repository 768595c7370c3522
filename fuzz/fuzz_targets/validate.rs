//! The validators (`validation::check_bytes`) for all three kinds on arbitrary
//! bytes: never a panic, and a verdict that agrees with itself (valid exactly when
//! there is no problem and no message; every problem names a field path).
#![no_main]

use std::sync::OnceLock;

use ach_core::routing::RoutingDirectory;
use ach_core::validation::{check_bytes, Context, Kind};
use libfuzzer_sys::fuzz_target;

fn directory() -> &'static RoutingDirectory {
    static DIRECTORY: OnceLock<RoutingDirectory> = OnceLock::new();
    DIRECTORY.get_or_init(RoutingDirectory::embedded)
}

fuzz_target!(|data: &[u8]| {
    let today = chrono::NaiveDate::from_ymd_opt(2026, 11, 23).unwrap_or_default();
    let ctx = Context { today, directory: directory() };
    for kind in [Kind::Transaction, Kind::Customer, Kind::Merchant] {
        let verdict = check_bytes(kind, data, &ctx);
        assert_eq!(verdict.valid, verdict.errors.is_empty(), "{kind:?}: {verdict:?}");
        assert_eq!(verdict.valid, verdict.message.is_none(), "{kind:?}: {verdict:?}");
        // The verdict always renders (what every host prints).
        let json = verdict.to_json();
        assert!(serde_json::from_str::<serde_json::Value>(&json).is_ok(), "{json}");
        // A problem's message never reflects a large input whole.
        for e in &verdict.errors {
            assert!(e.message.len() <= 1024, "{kind:?}: a {}-byte message", e.message.len());
        }
    }
});
