//! The NACHA reader (`nacha::read`) on arbitrary bytes: never a panic; the
//! checker runs over whatever it read; and a file it read that the writer
//! accepts comes back from the writer as a file the reader finds nothing wrong
//! with, holding the same entries.
#![no_main]

use ach_core::nacha::{check, read, write};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(parsed) = read(data) else { return };
    assert!(parsed.records >= 1);
    assert_eq!(parsed.locations.batches.len(), parsed.file.batches.len());
    assert_eq!(parsed.batch_controls.len(), parsed.file.batches.len());
    let _ = check(&parsed);
    let Ok(bytes) = write(&parsed.file) else { return };
    let again = read(&bytes).expect("the writer's output reads");
    assert!(again.problems.is_empty(), "{:?}", again.problems);
    assert!(check(&again).is_empty(), "{:?}", check(&again));
    assert_eq!(again.entry_count(), parsed.entry_count());
    assert_eq!(again.total_debit(), parsed.total_debit());
    assert_eq!(again.total_credit(), parsed.total_credit());
});
