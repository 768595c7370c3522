//! The operator plane's side effects in the server: an audit line for every
//! operator action (what it changed; never a key), and the operator key file
//! rewritten after a rotation of the operator key, so that it always holds the
//! key that works.

use std::path::{Path, PathBuf};

use ach_core::engine::{Engine, Outcome, Refusal};
use ach_core::secrets::replace_secret_file;
use tracing::{error, info, warn};

/// Log an operator action's result on the `audit` target.
pub fn audit(result: &Result<Outcome, Refusal>) {
    match result {
        Ok(outcome) => {
            let (action, changed) = audit_record(outcome);
            info!(target: "audit", action, changed = %changed, "operator action");
        }
        Err(failure) => {
            info!(target: "audit", status = failure.status(), message = %failure.message(), "operator action refused");
        }
    }
}

/// After a rotation of the operator key, where the new key goes: the key
/// file (if the server has one) and the key.
pub fn rotated_key(result: &Result<Outcome, Refusal>, key_file: Option<&Path>) -> Option<(PathBuf, String)> {
    match (result, key_file) {
        (Ok(Outcome::KeysRotated { id, api_key, .. }), Some(file)) if id == "operator" => {
            Some((file.to_path_buf(), api_key.clone()))
        }
        _ => None,
    }
}

/// The action's name and what it changed, as JSON without any `api_key`.
fn audit_record(outcome: &Outcome) -> (String, serde_json::Value) {
    let mut value = serde_json::to_value(outcome).unwrap_or_default();
    let mut action = String::new();
    if let serde_json::Value::Object(map) = &mut value {
        map.remove("api_key");
        if let Some(serde_json::Value::String(tag)) = map.remove("outcome") {
            action = tag;
        }
    }
    (action, value)
}

/// Rewrite the operator key file with `key` (a file write and sync: never
/// on an async worker).
pub fn save(file: &Path, key: &str) {
    match replace_secret_file(file, key) {
        Ok(()) => {
            info!(target: "audit", path = %file.display(), "operator key file rewritten with the new key")
        }
        Err(e) => error!(
            error = %e,
            "the operator key was rotated but its file could not be rewritten: keep the key from the answer"
        ),
    }
}

/// At start: warn when the key in the operator key file was retired by a
/// rotation (a crash between the rotation's commit and the file's rewrite).
pub fn check_key(engine: &Engine, key: &str, file: &Path) {
    if engine.authenticate(key).is_err() {
        warn!(
            path = %file.display(),
            "the operator key in this file was rotated away: use the key the rotation answered"
        );
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_audit_record_names_the_change_and_never_the_key() {
        let rotated = Outcome::KeysRotated {
            id: "par_0123456789abcdefghijKL".into(),
            api_key: "pk_secretsecretsecretsecretsecret00".into(),
            previous_keys: 1,
            previous_keys_valid_until: None,
        };
        let (action, changed) = audit_record(&rotated);
        assert_eq!(action, "keys_rotated");
        assert_eq!(
            changed,
            serde_json::json!({"id": "par_0123456789abcdefghijKL", "previous_keys": 1, "previous_keys_valid_until": null})
        );
        let created = Outcome::PartnerCreated { partner_id: "par_x".into(), api_key: "pk_y".into() };
        let (action, changed) = audit_record(&created);
        assert_eq!(
            (action.as_str(), changed),
            ("partner_created", serde_json::json!({"partner_id": "par_x"}))
        );
    }
}
