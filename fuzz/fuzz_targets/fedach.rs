//! The FedACH directory parser (`RoutingDirectory::parse_fedach`) on arbitrary
//! text: never a panic; a directory it accepts has valid routing numbers, at most
//! one record per non-blank line, and answers every lookup (type-2 forwarding
//! included) without panicking or looping.
#![no_main]

use ach_core::routing::{is_valid_routing_number, RoutingDirectory};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(directory) = RoutingDirectory::parse_fedach(text) else { return };
    let lines = text.split('\n').filter(|l| !l.trim().is_empty()).count();
    assert!(directory.len() <= lines, "{} records from {lines} lines", directory.len());
    for record in directory.iter() {
        assert!(is_valid_routing_number(&record.routing_number), "{record:?}");
        assert!(directory.get(&record.routing_number).is_some(), "{record:?}");
        if let Some(found) = directory.lookup(&record.routing_number) {
            assert_eq!(found.requested, record);
            assert_ne!(found.destination.record_type, 2, "a lookup ends on a forwarding record");
        }
    }
});
