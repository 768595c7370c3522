//! The hash map of a write transaction's working sets (feed sequences, packed
//! rows, batch flags): foldhash's fast hasher, seeded per process, instead of
//! SipHash. Their keys are ids and row keys the engine made, hashed several
//! times per transaction of a cut-off.

/// A hash map with foldhash's per-process seeded hasher.
pub(crate) type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
