//! The hash map of a write transaction's working sets (feed sequences, packed
//! rows, batch flags): the compiler's FxHash instead of SipHash. Their keys
//! are ids and row keys the engine made (never a client's text), hashed
//! several times per transaction of a cut-off.

/// A hash map with FxHash.
pub(crate) type FastMap<K, V> = std::collections::HashMap<K, V, rustc_hash::FxBuildHasher>;
