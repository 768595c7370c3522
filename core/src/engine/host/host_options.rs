//! The options of a host's "open an engine" call, as one JSON object: the C
//! library's `ach_engine_open(options_json)` and the browser's `new
//! Engine(options)`. One parser and one set of rules; a host only says how it
//! spells the members ([`OptionNames`]), what its clock is, and how it reports a
//! refusal.

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use crate::calendar;
use crate::echo::echo;
#[cfg(not(target_arch = "wasm32"))]
use crate::engine::EngineOptions;
use crate::secrets::EncryptionKey;

/// How a host spells the option members (the C library: snake_case; JavaScript:
/// camelCase). `path` is `None` for a host without files (the browser).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptionNames {
    /// The database file's member.
    pub path: Option<&'static str>,
    /// The operator key's member.
    pub operator_key: &'static str,
    /// The encryption key's member.
    pub encryption_key: &'static str,
}

impl OptionNames {
    /// The C library's names: `path`, `operator_key`, `sandbox`, `encryption_key`,
    /// `start`.
    pub const C: OptionNames =
        OptionNames { path: Some("path"), operator_key: "operator_key", encryption_key: "encryption_key" };
    /// The browser's names: `operatorKey`, `sandbox`, `start`, `encryptionKey` (no
    /// file).
    pub const JS: OptionNames =
        OptionNames { path: None, operator_key: "operatorKey", encryption_key: "encryptionKey" };

    fn members(&self) -> Vec<&'static str> {
        let mut all: Vec<&'static str> = self.path.into_iter().collect();
        all.extend([self.operator_key, "sandbox", "start", self.encryption_key]);
        all
    }
}

/// Longest operator key accepted, in bytes (what [`crate::engine::Engine::authenticate`]
/// accepts).
pub const MAX_OPERATOR_KEY: usize = 256;

/// Longer than any RFC 3339 instant with an offset (35 characters with
/// nanoseconds): such a text is refused without being quoted back.
const MAX_INSTANT_LEN: usize = 64;

/// The first and last instants `start` may name in milliseconds since 1970: the
/// years an RFC 3339 instant can write (0000 to 9999). Beyond them the calendar's
/// date arithmetic would overflow chrono's range within a limit period.
const EARLIEST_MS: f64 = -62_167_219_200_000.0;
const LATEST_MS: f64 = 253_402_300_799_999.0;

/// The options, every rule checked.
#[derive(Debug, Clone, Default)]
pub struct HostOptions {
    /// The database file; `None`: in memory.
    pub path: Option<String>,
    /// The operator's key; `None`: no operator plane.
    pub operator_key: Option<String>,
    /// A sandbox: the clock moves only when the operator sets it.
    pub sandbox: bool,
    /// The key that seals account numbers; `None`: the key file, or a fresh key.
    pub encryption_key: Option<EncryptionKey>,
    /// A sandbox clock's first instant; `None`: now.
    pub start: Option<DateTime<Utc>>,
}

/// Why options were refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OptionsError {
    /// The text is not JSON (the parser's reason).
    #[error("not JSON: {0}")]
    NotJson(String),
    /// JSON, but not an object.
    #[error("not an object")]
    NotObject,
    /// A member is unknown or its value breaks a rule; the message names the
    /// member as the host spells it.
    #[error("{0}")]
    Invalid(String),
}

impl HostOptions {
    /// The engine options a file-backed host opens with (the C library, the
    /// Python package): a sandbox's clock starts at `start` or at `now`; any
    /// other engine runs on the system clock.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn engine_options(&self, now: DateTime<Utc>) -> EngineOptions {
        let mut options = if self.sandbox {
            EngineOptions::manual(self.start.unwrap_or(now)).sandbox()
        } else {
            EngineOptions::system()
        };
        options.operator_key = self.operator_key.clone();
        options.encryption_key = self.encryption_key.clone();
        options
    }

    /// Read options from their JSON text, members spelled as `names` says.
    pub fn parse(text: &str, names: OptionNames) -> Result<HostOptions, OptionsError> {
        let value: Value = serde_json::from_str(text).map_err(|e| OptionsError::NotJson(e.to_string()))?;
        let Value::Object(map) = value else { return Err(OptionsError::NotObject) };
        let members = names.members();
        if let Some(unknown) = map.keys().find(|k| !members.contains(&k.as_str())) {
            let list = members.join(", ");
            return Err(OptionsError::Invalid(format!("unknown option '{}' ({list})", echo(unknown))));
        }
        let invalid = |m: String| OptionsError::Invalid(m);
        let path = match names.path {
            None => None,
            Some(name) => match text_member(&map, name)? {
                Some(p) if p.is_empty() => {
                    return Err(invalid(format!("{name} must not be empty (null or absent: in memory)")))
                }
                other => other,
            },
        };
        let operator_key = match text_member(&map, names.operator_key)? {
            Some(k) if k.is_empty() || k.len() > MAX_OPERATOR_KEY => {
                return Err(invalid(format!("{} must be 1 to {MAX_OPERATOR_KEY} bytes", names.operator_key)))
            }
            other => other,
        };
        let sandbox = match map.get("sandbox") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => return Err(invalid("sandbox must be true or false".into())),
        };
        let encryption_key = match text_member(&map, names.encryption_key)? {
            None => None,
            Some(hex) => Some(
                EncryptionKey::from_hex(&hex)
                    .ok_or_else(|| invalid(format!("{} must be 64 hex digits", names.encryption_key)))?,
            ),
        };
        let start = start(map.get("start"))?;
        if start.is_some() && !sandbox {
            return Err(invalid("start applies only to a sandbox (sandbox: true)".into()));
        }
        Ok(HostOptions { path, operator_key, sandbox, encryption_key, start })
    }
}

/// A member that is a string, or absent or null.
fn text_member(map: &Map<String, Value>, name: &str) -> Result<Option<String>, OptionsError> {
    match map.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(OptionsError::Invalid(format!("{name} must be a string"))),
    }
}

/// `start`: an RFC 3339 instant with an offset, or milliseconds since 1970,
/// within the years 0000 to 9999.
fn start(value: Option<&Value>) -> Result<Option<DateTime<Utc>>, OptionsError> {
    let invalid = |m: &str| OptionsError::Invalid(m.to_owned());
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.len() > MAX_INSTANT_LEN => {
            Err(invalid("start must be an RFC 3339 instant with an offset, e.g. 2026-11-23T10:00:00-05:00"))
        }
        Some(Value::String(s)) => {
            calendar::parse_instant(s).map(Some).map_err(|e| OptionsError::Invalid(format!("start: {e}")))
        }
        Some(Value::Number(n)) => n
            .as_f64()
            .filter(|ms| (EARLIEST_MS..=LATEST_MS).contains(ms))
            .and_then(|ms| DateTime::from_timestamp_millis(ms as i64))
            .map(Some)
            .ok_or_else(|| invalid("start: not a time in milliseconds within the years 0000 to 9999")),
        Some(_) => Err(invalid("start must be an RFC 3339 string or milliseconds")),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn refused(text: &str, names: OptionNames) -> String {
        match HostOptions::parse(text, names) {
            Err(OptionsError::Invalid(m)) => m,
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn every_member_is_optional_and_read_as_the_host_spells_it() {
        let o = HostOptions::parse("{}", OptionNames::C).unwrap();
        assert!(o.path.is_none() && o.operator_key.is_none() && !o.sandbox && o.start.is_none());
        let key = "ab".repeat(32);
        let c = format!(
            r#"{{"path":"x.redb","operator_key":"ok_1","sandbox":true,"encryption_key":"{key}","start":"2026-11-23T10:00:00-05:00"}}"#
        );
        let o = HostOptions::parse(&c, OptionNames::C).unwrap();
        assert_eq!(
            (o.path.as_deref(), o.operator_key.as_deref(), o.sandbox),
            (Some("x.redb"), Some("ok_1"), true)
        );
        assert!(o.encryption_key.is_some());
        assert_eq!(o.start, Some(calendar::parse_instant("2026-11-23T15:00:00Z").unwrap()));
        let js = format!(r#"{{"operatorKey":"ok_1","sandbox":true,"encryptionKey":"{key}","start":0}}"#);
        let o = HostOptions::parse(&js, OptionNames::JS).unwrap();
        assert_eq!((o.operator_key.as_deref(), o.start), (Some("ok_1"), DateTime::from_timestamp_millis(0)));
        // Each host's names only.
        let camel = r#"{"operatorKey":"ok_1"}"#;
        assert!(
            refused(camel, OptionNames::C).starts_with("unknown option 'operatorKey' (path, operator_key,")
        );
        assert!(
            refused(r#"{"path":"x"}"#, OptionNames::JS).starts_with("unknown option 'path' (operatorKey,")
        );
    }

    #[test]
    fn each_rule_is_refused_in_the_hosts_words() {
        let cases = [
            (r#"{"bogus":1}"#, "unknown option 'bogus' (path, operator_key, sandbox, start, encryption_key)"),
            (r#"{"path":""}"#, "path must not be empty (null or absent: in memory)"),
            (r#"{"path":7}"#, "path must be a string"),
            (r#"{"operator_key":""}"#, "operator_key must be 1 to 256 bytes"),
            (r#"{"sandbox":"yes"}"#, "sandbox must be true or false"),
            (r#"{"encryption_key":"ab"}"#, "encryption_key must be 64 hex digits"),
            (r#"{"start":"2026-11-23T10:00:00-05:00"}"#, "start applies only to a sandbox (sandbox: true)"),
            (r#"{"sandbox":true,"start":true}"#, "start must be an RFC 3339 string or milliseconds"),
            (
                r#"{"sandbox":true,"start":253402300800000}"#,
                "start: not a time in milliseconds within the years 0000 to 9999",
            ),
        ];
        for (text, message) in cases {
            assert_eq!(refused(text, OptionNames::C), message, "{text}");
        }
        let long_key = format!(r#"{{"operatorKey":"{}"}}"#, "k".repeat(257));
        assert_eq!(refused(&long_key, OptionNames::JS), "operatorKey must be 1 to 256 bytes");
        assert_eq!(refused(r#"{"encryptionKey":7}"#, OptionNames::JS), "encryptionKey must be a string");
        assert!(refused(r#"{"sandbox":true,"start":"monday"}"#, OptionNames::C).starts_with("start: "));
        assert_eq!(HostOptions::parse("[1]", OptionNames::C).unwrap_err(), OptionsError::NotObject);
        assert!(matches!(HostOptions::parse("{", OptionNames::JS), Err(OptionsError::NotJson(_))));
    }

    #[test]
    fn nothing_long_is_quoted_back() {
        let big = "9".repeat(1 << 20);
        for text in [
            format!(r#"{{"{big}":1}}"#),
            format!(r#"{{"sandbox":true,"start":"{big}"}}"#),
            format!(r#"{{"encryption_key":"{big}"}}"#),
        ] {
            assert!(refused(&text, OptionNames::C).len() < 200);
        }
        for (ms, instant) in [
            ("-62167219200000", "0000-01-01T00:00:00Z"),
            ("0", "1970-01-01T00:00:00Z"),
            ("253402300799999", "9999-12-31T23:59:59.999Z"),
        ] {
            let text = format!(r#"{{"sandbox":true,"start":{ms}}}"#);
            let start = HostOptions::parse(&text, OptionNames::JS).map(|o| (o.sandbox, o.start));
            assert_eq!(start, Ok((true, Some(calendar::parse_instant(instant).unwrap()))), "{ms}");
        }
        for ms in ["-62167219200001", "1e300", "8210266876799999"] {
            let text = format!(r#"{{"sandbox":true,"start":{ms}}}"#);
            assert_eq!(
                refused(&text, OptionNames::JS),
                "start: not a time in milliseconds within the years 0000 to 9999",
                "{ms}"
            );
        }
    }
}
