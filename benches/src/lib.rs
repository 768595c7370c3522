//! Criterion benches live in `benches/`; this library holds shared fixtures.
