//! Structured logs (`tracing`) on standard error. Request lines carry the client's
//! address, the method, the path with anything that is not a route word or a
//! resource id replaced by `*`, the status, the caller's kind and id and the
//! latency: never the query string, a header, the body, an API key, an account
//! number or an SSN. `ACHD_LOG` sets the level (`info` by
//! default; `debug` adds batch sizes and failed handshakes).

use std::io::{IsTerminal, Write as _};
use std::time::{Duration, Instant};

use ach_core::engine::Caller;
use ach_core::engine::{StorageEvent, StorageHook};
use hyper::Method;
use tracing::{error, info, warn};
use tracing_subscriber::filter::LevelFilter;

/// Install the subscriber (once; later calls do nothing).
pub fn init() {
    let level = std::env::var("ACHD_LOG")
        .ok()
        .and_then(|v| v.trim().parse::<LevelFilter>().ok())
        .unwrap_or(LevelFilter::INFO);
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_max_level(level)
        .with_target(false)
        .try_init();
}

/// The engine's storage events as log lines: every fault (a failed
/// transaction with its storage error, a failed reopen) at error level, the
/// reopen after one as a warning, writes committing again as information.
pub fn storage_hook() -> StorageHook {
    StorageHook::new(|event| match event {
        StorageEvent::Reopened => warn!(%event, "storage"),
        StorageEvent::Resumed => info!(%event, "storage"),
        event => error!(%event, "storage fault"),
    })
}

/// The method as logged: a standard method's name, `OTHER` for anything else
/// (a method is client text).
pub fn method(method: &Method) -> &'static str {
    const KNOWN: [Method; 9] = [
        Method::GET,
        Method::POST,
        Method::PUT,
        Method::DELETE,
        Method::HEAD,
        Method::OPTIONS,
        Method::PATCH,
        Method::TRACE,
        Method::CONNECT,
    ];
    KNOWN.iter().find(|m| *m == method).map_or("OTHER", Method::as_str)
}

/// Who made a request, as logged: `(kind, id)`, `operator` with id `-`, the
/// partner's or the merchant's id, or `none` and `-` without a valid key.
pub fn caller(caller: Option<&Caller>) -> (&'static str, &str) {
    match caller {
        None => ("none", "-"),
        Some(Caller::Operator) => ("operator", "-"),
        Some(Caller::Partner { partner_id }) => ("partner", partner_id),
        Some(Caller::Merchant { merchant_id, .. }) => ("merchant", merchant_id),
    }
}

/// How often one kind of throttled warning is written at most.
const WARNING_EVERY: Duration = Duration::from_secs(10);

/// A warning that a client may cause very fast (a body turned away or cut):
/// written at most once per 10 s per kind, with the caller that caused the
/// line written and the count of those left out.
pub fn throttled_warning(what: &'static str, caller: Option<&Caller>) {
    static THROTTLES: std::sync::LazyLock<
        std::sync::Mutex<std::collections::HashMap<&'static str, Throttle>>,
    > = std::sync::LazyLock::new(Default::default);
    let mut throttles = THROTTLES.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let throttle = throttles.entry(what).or_insert_with(|| Throttle::new(WARNING_EVERY));
    if let Some(suppressed) = throttle.allow(Instant::now()) {
        let (kind, id) = self::caller(caller);
        warn!(caller = kind, caller_id = id, suppressed, "{what}");
    }
}

/// At most one line per interval for a warning that may repeat very fast (a
/// failing `accept`), with the count of those left out.
pub struct Throttle {
    every: Duration,
    last: Option<Instant>,
    suppressed: u64,
}

impl Throttle {
    /// One line per `every` at most.
    pub fn new(every: Duration) -> Throttle {
        Throttle { every, last: None, suppressed: 0 }
    }

    /// Whether to log the warning happening `now`: `Some(n)` when it is due,
    /// `n` being how many were left out since the last line.
    pub fn allow(&mut self, now: Instant) -> Option<u64> {
        match self.last {
            Some(last) if now.saturating_duration_since(last) < self.every => {
                self.suppressed += 1;
                None
            }
            _ => {
                self.last = Some(now);
                Some(std::mem::take(&mut self.suppressed))
            }
        }
    }
}

/// Segments of a path worth logging at most.
const MAX_SEGMENTS: usize = 8;

/// The path as logged: route words (`transactions`, `status-changes`,
/// `openapi.json`) and resource ids (`txn_…`, `cus_…`, `mer_…`, `par_…`) are kept;
/// every other segment (pointers, routing numbers, whatever a client typed) is `*`.
pub fn path(path: &str) -> String {
    let mut out = String::new();
    for (i, segment) in path.split('/').skip(1).enumerate() {
        if i == MAX_SEGMENTS {
            out.push_str("/…");
            break;
        }
        out.push('/');
        out.push_str(if loggable(segment) { segment } else { "*" });
    }
    if out.is_empty() {
        out.push('/');
    }
    out
}

fn loggable(segment: &str) -> bool {
    let word = segment.len() <= 32
        && segment.bytes().all(|b| b.is_ascii_lowercase() || b == b'-' || b == b'.' || b == b'_');
    let id = ["txn_", "cus_", "mer_", "par_"].iter().any(|prefix| {
        segment
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.len() == 22 && rest.bytes().all(|b| b.is_ascii_alphanumeric()))
    });
    word || id
}

/// A line for the person who started the server (standard output, flushed).
pub fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_keep_route_words_and_ids_only() {
        assert_eq!(path("/"), "/");
        assert_eq!(path(""), "/");
        assert_eq!(path("/transactions"), "/transactions");
        let txn = "txn_0123456789abcdefghijKL";
        assert_eq!(path(&format!("/transactions/{txn}/void")), format!("/transactions/{txn}/void"));
        assert_eq!(path("/status-changes/0a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P"), "/status-changes/*");
        assert_eq!(path("/institutions/021000021"), "/institutions/*");
        assert_eq!(path("/123-45-6789"), "/*");
        assert_eq!(path("/pk_0123456789abcdefghijKLMNOPQRSTUV"), "/*");
        assert_eq!(path("/customers/000123456789"), "/customers/*");
        assert_eq!(path("/a/b/c/d/e/f/g/h/i/j"), "/a/b/c/d/e/f/g/h/…");
        assert_eq!(path("/openapi.json"), "/openapi.json");
    }

    #[test]
    fn a_repeating_warning_is_logged_once_per_interval_with_a_count() {
        let every = Duration::from_secs(10);
        let mut throttle = Throttle::new(every);
        let t0 = Instant::now();
        assert_eq!(throttle.allow(t0), Some(0));
        for i in 1..=99 {
            assert_eq!(throttle.allow(t0 + Duration::from_millis(100 * i)), None);
        }
        assert_eq!(throttle.allow(t0 + every), Some(99));
        assert_eq!(throttle.allow(t0 + every + Duration::from_secs(1)), None);
        assert_eq!(throttle.allow(t0 + every * 5), Some(1));
    }

    #[test]
    fn callers_are_logged_by_kind_and_id_only() {
        assert_eq!(caller(None), ("none", "-"));
        assert_eq!(caller(Some(&Caller::Operator)), ("operator", "-"));
        let partner = Caller::Partner { partner_id: "par_1".into() };
        assert_eq!(caller(Some(&partner)), ("partner", "par_1"));
        let merchant = Caller::Merchant { partner_id: "par_1".into(), merchant_id: "mer_2".into() };
        assert_eq!(caller(Some(&merchant)), ("merchant", "mer_2"));
    }

    #[test]
    fn unusual_methods_are_not_echoed() {
        assert_eq!(method(&Method::POST), "POST");
        assert_eq!(method(&Method::from_bytes(b"X123456789").unwrap_or_default()), "OTHER");
    }
}
