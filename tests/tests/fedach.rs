//! The real FedACH directory, read from shared/data (never committed).
#![allow(clippy::unwrap_used)]

use ach_core::routing::{is_valid_routing_number, RoutingDirectory};

fn load() -> (String, RoutingDirectory) {
    let path = ach_tests::fedach_path();
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let dir = RoutingDirectory::parse_fedach(&text).unwrap();
    (text, dir)
}

#[test]
fn the_whole_directory_parses_with_valid_check_digits() {
    let (text, dir) = load();
    assert_eq!(dir.len(), 18_198);
    assert_eq!(text.lines().count(), 18_198);
    assert!(dir.iter().all(|i| is_valid_routing_number(&i.routing_number)));
    let counts = [0u8, 1, 2].map(|t| dir.iter().filter(|i| i.record_type == t).count());
    assert_eq!(counts, [41, 16_551, 1_606]);
}

#[test]
fn every_forwarding_record_resolves_to_a_sending_record() {
    let (_, dir) = load();
    let mut forwarded = 0;
    for record in dir.iter().filter(|i| i.record_type == 2) {
        let lookup = dir.lookup(&record.routing_number).unwrap();
        assert_eq!(lookup.requested.routing_number, record.routing_number);
        assert_ne!(lookup.destination.record_type, 2);
        forwarded += 1;
    }
    assert_eq!(forwarded, 1_606);
    let fed = dir.lookup("011000015").unwrap();
    assert_eq!(
        (fed.destination.name.as_str(), fed.destination.city.as_str(), fed.destination.state.as_str()),
        ("FEDERAL RESERVE BANK", "ATLANTA", "GA")
    );
}

#[test]
fn the_embedded_default_is_a_true_subset_of_the_real_directory() {
    let (_, real) = load();
    let embedded = RoutingDirectory::embedded();
    for e in embedded.iter() {
        let r =
            real.get(&e.routing_number).unwrap_or_else(|| panic!("{} is not in FedACH", e.routing_number));
        assert_eq!(
            (r.name.as_str(), r.city.as_str(), r.state.as_str()),
            (e.name.as_str(), e.city.as_str(), e.state.as_str())
        );
        assert_eq!(r.record_type, e.record_type, "{}", e.routing_number);
        assert_eq!(r.new_routing_number, e.new_routing_number);
    }
}
