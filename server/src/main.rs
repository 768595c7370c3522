//! `achd`: the ACH service's command line.
fn main() {}
