//! How a host opens an engine: files, options, readiness, the simulator's entry points.
pub(crate) mod backup;
pub(crate) mod data_key;
pub(crate) mod host_options;
pub(crate) mod open;
pub(crate) mod options;
pub(crate) mod readiness;
pub(crate) mod reseal;
pub(crate) mod sealing_keys;
#[cfg(feature = "simulation")]
pub(crate) mod simulation;
