//! Shared helpers for the cross-crate tests: where the shared data lives, and the
//! JSON case corpus that the Rust, C and WebAssembly hosts all run.

pub mod hostile;
pub mod json_paths;
pub mod lookalike;
pub mod nacha_sample;
pub mod real_nacha;
pub mod router;
pub mod store;

use std::path::PathBuf;

use serde::Deserialize;
use serde_json::Value;

/// The repository root.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `shared/data` beside the repository (override with `ACH_SHARED_DATA`).
pub fn shared_data() -> PathBuf {
    std::env::var_os("ACH_SHARED_DATA").map_or_else(|| repo_root().join("../shared/data"), PathBuf::from)
}

/// The real FedACH directory file (never committed: its terms forbid it).
pub fn fedach_path() -> PathBuf {
    shared_data().join("fedach/FedACHdir.txt")
}

/// One case of the corpus (`tests/corpus/*.json`).
#[derive(Debug, Clone, Deserialize)]
pub struct Case {
    /// What the case shows.
    pub name: String,
    /// `transaction`, `customer` or `merchant`.
    pub kind: String,
    /// The request body as JSON (absent when `raw` is given).
    #[serde(default)]
    pub request: Option<Value>,
    /// The request body as exact text (malformed JSON, exact number literals).
    #[serde(default)]
    pub raw: Option<String>,
    /// Expected verdict.
    pub valid: bool,
    /// Expected envelope message (null when valid).
    pub message: Option<String>,
    /// Expected `[field, code]` pairs, in order.
    pub fields: Vec<(String, String)>,
}

impl Case {
    /// The body bytes to validate.
    pub fn body(&self) -> Vec<u8> {
        match (&self.raw, &self.request) {
            (Some(raw), _) => raw.clone().into_bytes(),
            (None, Some(v)) => serde_json::to_vec(v).unwrap_or_default(),
            (None, None) => Vec::new(),
        }
    }
}

/// The `.json` files directly in `dir`, by name (none when it cannot be read).
pub fn json_files(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// Every case of the corpus, from every file.
pub fn corpus() -> Vec<Case> {
    json_files(&repo_root().join("tests/corpus"))
        .iter()
        .flat_map(|f| {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            serde_json::from_str::<Vec<Case>>(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()))
        })
        .collect()
}

pub mod world;

/// An ordinary month, in cents, of a merchant expecting 1,200 checks a year at
/// $250: 100 debits of $5 to $900 averaging $250, the first $1,000 and the
/// biggest next, ordered to test the average limit hardest
/// (`tests/data/ordinary_month.json`; core's limit tests read the same file).
pub fn ordinary_month() -> Vec<i64> {
    serde_json::from_str(include_str!("../data/ordinary_month.json")).unwrap_or_default()
}
