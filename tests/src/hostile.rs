//! The hostile-input corpus (`tests/hostile/*.json`) for the Rust hosts: the
//! router (`tests/tests/hostile.rs`), the C ABI (`ffi/tests/hostile.rs`) and HTTPS
//! (`server/tests/hostile_https.rs`). The format is described in
//! `tests/hostile/README.md`; the C program and the node test read the same files.
//!
//! A case is loaded for one host (its `hosts.<host>` override applied, or left out
//! when that says `skip`); its templates are expanded against the values of the
//! host's fixture ([`Values`]); its answer is judged by [`check`].

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::{json, Map, Value};

use crate::json_paths::set;
use crate::lookalike::{cyrillic, fullwidth};

/// The directory of the corpus.
pub fn dir() -> PathBuf {
    crate::repo_root().join("tests/hostile")
}

/// One case, for one host, its body built (templates not yet expanded).
#[derive(Debug, Clone)]
pub struct Case {
    /// Unique over the corpus.
    pub name: String,
    /// The file it is in (`nul.json`).
    pub file: String,
    /// What the case sends.
    pub request: CaseRequest,
    /// The fixture value (`a.pending`) whose never-issued twin must be answered alike.
    pub like_unknown: Option<String>,
    /// What the answer must be (see [`check`]).
    pub expect: Value,
}

/// What a case sends, its parts templates: every host sends them its own way.
#[derive(Debug, Clone)]
pub struct CaseRequest {
    /// The method.
    pub method: String,
    /// The path, possibly with `?query`.
    pub path: String,
    /// The API key (the Basic-auth user name), if any.
    pub key: Option<String>,
    /// The `Idempotency-Key`, if any.
    pub idempotency_key: Option<String>,
    /// The `Content-Type`, if any.
    pub content_type: Option<String>,
    /// The body's text, if any (a template).
    pub body: Option<String>,
}

fn read(path: &std::path::Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every case of every file, for `host` (`router`, `c`, `js`, `https`), and the
/// number left out for it (`hosts.<host>.skip`).
pub fn corpus(host: &str) -> (Vec<Case>, usize) {
    let bases = read(&dir().join("support/bases.json"));
    let files = crate::json_files(&dir());
    let (mut cases, mut skipped, mut names) = (Vec::new(), 0, std::collections::BTreeSet::new());
    for path in files {
        let file = path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
        for raw in read(&path)["cases"].as_array().cloned().unwrap_or_default() {
            let mut c = raw.as_object().cloned().unwrap_or_default();
            let name = c["name"].as_str().unwrap_or_default().to_owned();
            assert!(names.insert(name.clone()), "{file}: the name {name:?} is taken");
            if let Some(over) = c.get("hosts").and_then(|h| h.get(host)).and_then(Value::as_object).cloned() {
                if over.contains_key("skip") {
                    skipped += 1;
                    continue;
                }
                c.extend(over.into_iter().filter(|(k, _)| k != "why"));
            }
            let text = |k: &str| c.get(k).and_then(Value::as_str).map(str::to_owned);
            cases.push(Case {
                request: CaseRequest {
                    body: body(&c, &bases),
                    method: text("method").unwrap_or_else(|| "GET".into()),
                    path: text("path").unwrap_or_else(|| panic!("{name}: no path")),
                    key: text("key"),
                    idempotency_key: text("idempotency_key"),
                    content_type: text("content_type"),
                },
                like_unknown: text("like_unknown"),
                expect: c.get("expect").cloned().unwrap_or(Value::Null),
                file: file.clone(),
                name,
            });
        }
    }
    (cases, skipped)
}

/// The body's text: `body` as it is; else `body_json` or the named `base`, with
/// `set` members replaced by values and `set_raw` members by raw JSON text.
fn body(c: &Map<String, Value>, bases: &Value) -> Option<String> {
    if let Some(text) = c.get("body").and_then(Value::as_str) {
        return Some(text.to_owned());
    }
    let base = c.get("base").and_then(Value::as_str).map(|b| bases[b].clone());
    let mut v = c.get("body_json").cloned().or(base)?;
    let members = |k: &str| c.get(k).and_then(Value::as_object).cloned().unwrap_or_default();
    for (path, value) in members("set") {
        set(&mut v, &path, value);
    }
    let raw = members("set_raw");
    for (i, path) in raw.keys().enumerate() {
        set(&mut v, path, json!(format!("@@raw{i}@@")));
    }
    let mut text = v.to_string();
    for (i, literal) in raw.values().enumerate() {
        text = text.replace(&format!("\"@@raw{i}@@\""), literal.as_str().unwrap_or_default());
    }
    Some(text)
}

/// One partner's set-up, as the corpus' templates name its parts (`a.id`,
/// `b.pending`, …): every host's fixture makes two.
#[derive(Debug, Clone, Default)]
pub struct Side {
    /// The partner's id.
    pub id: String,
    /// The partner's API key.
    pub key: String,
    /// Its approved PPD and WEB merchant.
    pub merchant: String,
    /// That merchant's API key.
    pub merchant_key: String,
    /// Its second approved merchant (PPD only).
    pub second: String,
    /// A stored customer of the partner.
    pub customer: String,
    /// A pending debit.
    pub pending: String,
    /// The last debit of the set-up, where the host keeps one apart.
    pub last: Option<String>,
    /// A status-changes pointer issued before the last debit (to replay).
    pub early_pointer: String,
    /// Where the status-changes feed stood after the set-up.
    pub pointer: String,
    /// Where the merchant's events feed stood after the set-up.
    pub events: String,
}

impl Side {
    /// `values` with this side's parts named `{side}.id`, `{side}.key`, ….
    pub fn values(&self, side: &str, values: Values) -> Values {
        let named = [
            ("id", &self.id),
            ("key", &self.key),
            ("merchant", &self.merchant),
            ("merchant_key", &self.merchant_key),
            ("second", &self.second),
            ("customer", &self.customer),
            ("pending", &self.pending),
            ("early_pointer", &self.early_pointer),
            ("pointer", &self.pointer),
            ("events", &self.events),
        ];
        let last = self.last.as_ref().map(|last| ("last", last));
        named
            .into_iter()
            .chain(last)
            .fold(values, |v, (name, value)| v.with(&format!("{side}.{name}"), value))
    }
}

/// The fixture's values by name (`operator`, `a.key`, `b.pointer`, …).
#[derive(Debug, Clone, Default)]
pub struct Values(pub BTreeMap<String, String>);

impl Values {
    /// Add a value.
    pub fn with(mut self, name: &str, value: &str) -> Values {
        self.0.insert(name.to_owned(), value.to_owned());
        self
    }

    fn get(&self, name: &str) -> &str {
        self.0.get(name).unwrap_or_else(|| panic!("no fixture value {name:?}"))
    }

    /// Expand every `{{token}}` of a template, verbatim (nothing is escaped).
    pub fn expand(&self, template: &str) -> Vec<u8> {
        let mut out = Vec::with_capacity(template.len());
        let mut rest = template;
        while let Some(at) = rest.find("{{") {
            out.extend_from_slice(&rest.as_bytes()[..at]);
            let end = rest[at..].find("}}").unwrap_or_else(|| panic!("an unclosed token in {template:.80}"));
            self.token(&rest[at + 2..at + end], &mut out);
            rest = &rest[at + end + 2..];
        }
        out.extend_from_slice(rest.as_bytes());
        out
    }

    /// [`Values::expand`] for a template that must stay text (a path, a key).
    pub fn text(&self, template: &str) -> String {
        String::from_utf8(self.expand(template)).unwrap_or_else(|_| panic!("{template:.80}: not UTF-8"))
    }

    fn token(&self, token: &str, out: &mut Vec<u8>) {
        let number = |n: &str| n.parse::<usize>().unwrap_or_else(|_| panic!("{{{{{token}}}}}: not a count"));
        let (word, arg) = token.split_once(' ').unwrap_or((token, ""));
        match word {
            "repeat" => {
                let (n, unit) = arg.split_once(' ').unwrap_or_else(|| panic!("{{{{{token}}}}}"));
                out.extend_from_slice(unit.repeat(number(n)).as_bytes());
            }
            "nested_arrays" => {
                out.extend_from_slice(crate::json_paths::nested_arrays(number(arg)).as_bytes())
            }
            "nested_objects" => {
                out.extend_from_slice(crate::json_paths::nested_objects(number(arg)).as_bytes())
            }
            "hex" => out.extend(
                (0..arg.len() / 2)
                    .map(|i| u8::from_str_radix(&arg[2 * i..2 * i + 2], 16).unwrap_or_default()),
            ),
            "cyrillic" => out.extend_from_slice(cyrillic(self.get(arg)).as_bytes()),
            "fullwidth" => out.extend_from_slice(fullwidth(self.get(arg)).as_bytes()),
            "upper" => out.extend_from_slice(self.get(arg).to_uppercase().as_bytes()),
            "forge" => out.extend_from_slice(forge(self.get(arg)).as_bytes()),
            _ => match token.strip_suffix(":]").and_then(|t| t.split_once('[')) {
                Some((name, from)) => out.extend_from_slice(&self.get(name).as_bytes()[number(from)..]),
                None => out.extend_from_slice(self.get(token).as_bytes()),
            },
        }
    }
}

/// A pointer with its fourth character changed (`A`, or `B` for an `A`).
pub fn forge(pointer: &str) -> String {
    let mut bytes = pointer.as_bytes().to_vec();
    bytes[3] = if bytes[3] == b'A' { b'B' } else { b'A' };
    String::from_utf8(bytes).unwrap_or_default()
}

/// An id of the same shape as `real` (its 4-character prefix kept) never issued.
pub fn never_issued(real: &str) -> String {
    format!("{}{}", &real[..4], ach_core::ids::random_alphanumeric(real.len() - 4))
}

/// Whether `message` is catalogue message `code` (`tests/hostile/support/catalogue.json`),
/// its `{}` placeholder filled with anything.
pub fn is_catalogue_message(code: u64, message: &str) -> bool {
    let catalogue = read(&dir().join("support/catalogue.json"));
    let Some(template) = catalogue[code.to_string()].as_str() else { return false };
    match template.split_once("{}") {
        None => message == template,
        Some((before, after)) => {
            message.len() >= before.len() + after.len()
                && message.starts_with(before)
                && message.ends_with(after)
        }
    }
}

/// Judge an answer (`status`, body text) against a case's `expect`:
///
/// - `{"status": 401}`: exactly `{"success":false,"message":"Authentication failed."}`;
///   with `field` and `code`, that message and exactly one problem naming them;
/// - `{"status", "message", "field", "code"}`: the refusal envelope (`success`
///   false, `error_type` `E`, at most 16 KB), `message` a catalogue number (the
///   `error_code`, its text the catalogue's) or the exact text, and the first
///   problem's `field` and `code` (`""` when there is none);
/// - `{"status": 200, "json": {pointer: value}}`: each JSON pointer holds the
///   value (a template), `null` where it must be absent;
/// - `{"status", "empty": true}`: that status and no body (HTTPS only: the HTTP
///   layer refused before the router).
pub fn check(expect: &Value, status: u16, body: &str, values: &Values) -> Result<(), String> {
    let want = expect["status"].as_u64().ok_or_else(|| format!("expected {expect}"))? as u16;
    let short: String = body.chars().take(300).collect();
    if status != want {
        return Err(format!("status {status}, expected {want}: {short}"));
    }
    if expect["empty"] == json!(true) {
        return if body.is_empty() { Ok(()) } else { Err(format!("a body: {short}")) };
    }
    let v: Value = serde_json::from_str(body).map_err(|e| format!("not JSON ({e}): {short}"))?;
    let fail = |what: &str| Err(format!("{what}: {short}"));
    if let Some(members) = expect["json"].as_object() {
        for (pointer, want) in members {
            let got = v.pointer(pointer);
            let want = want.as_str().map(|t| json!(values.text(t)));
            if got != want.as_ref() {
                return fail(&format!("{pointer} is {got:?}, expected {want:?}"));
            }
        }
        return Ok(());
    }
    if body.len() > 16 * 1024 {
        return fail(&format!("a {}-byte refusal", body.len()));
    }
    let text = |x: &Value| x.as_str().unwrap_or_default().to_owned();
    let first = &v["errors"][0];
    let problem = (text(&first["field"]), text(&first["code"]));
    let expected = (text(&expect["field"]), text(&expect["code"]));
    if status == 401 {
        let mut exact = json!({"success": false, "message": "Authentication failed."});
        if !expected.0.is_empty() {
            exact["errors"] = json!([{"field": expected.0, "code": expected.1, "message": first["message"]}]);
        }
        return if v == exact { Ok(()) } else { fail("not exactly the authentication failure") };
    }
    if v["success"] != json!(false) || v["error_type"] != json!("E") {
        return fail("not a refusal envelope");
    }
    let message = text(&v["message"]);
    let right = match &expect["message"] {
        Value::Number(n) => {
            v["error_code"] == json!(n) && is_catalogue_message(n.as_u64().unwrap_or(0), &message)
        }
        Value::String(exact) => message == *exact,
        _ => false,
    };
    if !right {
        return fail(&format!("not message {}", expect["message"]));
    }
    if problem != expected {
        return fail(&format!("first problem {problem:?}, expected {expected:?}"));
    }
    Ok(())
}

/// What an answer is, as an `expect` (printed for a new case by the router's
/// runner under `ACH_HOSTILE_SHOW=1`).
pub fn observed(status: u16, body: &str) -> Value {
    let v: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let first = &v["errors"][0];
    let mut e = json!({"status": status});
    if status != 401 {
        e["message"] = v["error_code"].clone();
    }
    if first.is_object() {
        e["field"] = first["field"].clone();
        e["code"] = first["code"].clone();
    } else if status != 401 {
        (e["field"], e["code"]) = (json!(""), json!(""));
    }
    e
}
