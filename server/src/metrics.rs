//! `GET /metrics` on the operator plane: the server's own figures in the
//! Prometheus / OpenMetrics text format (the `prometheus-client` crate), for a
//! scraper on the operator's network.
//!
//! Labels name endpoints by their route pattern (`/transactions/{}`), planes,
//! methods, statuses and outcomes: never an identifier, a key or an account
//! number. What the store holds (files written, entries in them, held entries,
//! return counts) is read when scraped, on a blocking thread, so it is the same
//! whichever process or host wrote it.

use std::sync::Arc;
use std::time::Duration;

use ach_core::engine::{Engine, TryResult};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::metrics::info::Info;
use prometheus_client::registry::{Registry, Unit};

/// The content type of the answer (OpenMetrics text, which Prometheus reads).
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Registers each metric of a [`Metrics`] under its name and help text (and
/// unit, when it has one).
macro_rules! register {
    ($m:ident; $($name:literal $(in $unit:path)?: $help:literal => $field:ident;)*) => {
        $(register!(@one $m, $name, $help, $field $(, $unit)?);)*
    };
    (@one $m:ident, $name:literal, $help:literal, $field:ident) => {
        $m.registry.register($name, $help, $m.$field.clone())
    };
    (@one $m:ident, $name:literal, $help:literal, $field:ident, $unit:path) => {
        $m.registry.register_with_unit($name, $help, $unit, $m.$field.clone())
    };
}

/// A request as counted.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    plane: &'static str,
    route: &'static str,
    method: &'static str,
    status: u16,
}

/// An endpoint as timed.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    plane: &'static str,
    route: &'static str,
}

/// A webhook try's outcome.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: &'static str,
}

/// A return group's count in the Nacha window.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct GroupLabels {
    group: &'static str,
}

type Seconds = Family<RouteLabels, Histogram, fn() -> Histogram>;

/// Every figure the server keeps, and the registry that writes them.
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    request_seconds: Seconds,
    commit_groups: Counter,
    commit_operations: Histogram,
    commit_seconds: Histogram,
    cutoff_runs: Counter,
    cutoff_seconds: Histogram,
    cutoff_originated: Counter,
    cutoff_settled: Counter,
    webhook_tries: Family<OutcomeLabels, Counter>,
    webhook_batch: Gauge,
    webhook_pending: Gauge,
    files: Gauge,
    file_entries: Gauge,
    held: Gauge,
    retired_opens: Gauge,
    window_debits: Gauge,
    window_returns: Family<GroupLabels, Gauge>,
}

/// Latency buckets: 100 µs to about 3.3 s, doubling.
fn latency() -> Histogram {
    Histogram::new(exponential_buckets(0.000_1, 2.0, 16))
}

impl Metrics {
    /// The figures at zero, registered.
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("achd");
        let info = Info::new(vec![("version", env!("CARGO_PKG_VERSION"))]);
        registry.register("build", "The achd build", info);
        let m = Metrics {
            requests: Family::default(),
            request_seconds: Family::new_with_constructor(latency),
            commit_groups: Counter::default(),
            commit_operations: Histogram::new(exponential_buckets(1.0, 2.0, 12)),
            commit_seconds: latency(),
            cutoff_runs: Counter::default(),
            cutoff_seconds: Histogram::new(exponential_buckets(0.001, 2.0, 16)),
            cutoff_originated: Counter::default(),
            cutoff_settled: Counter::default(),
            webhook_tries: Family::default(),
            webhook_batch: Gauge::default(),
            webhook_pending: Gauge::default(),
            files: Gauge::default(),
            file_entries: Gauge::default(),
            held: Gauge::default(),
            retired_opens: Gauge::default(),
            window_debits: Gauge::default(),
            window_returns: Family::default(),
            registry,
        };
        m.register()
    }

    fn register(mut self) -> Metrics {
        // Each row: name (in its unit): help => the metric.
        register!(self;
            "requests": "Requests answered, by plane, route, method and status" => requests;
            "request_duration" in Unit::Seconds:
                "Time to answer a request, by plane and route" => request_seconds;
            "commit_groups": "Group commits of the writer" => commit_groups;
            "commit_group_operations": "Operations per group commit" => commit_operations;
            "commit_duration" in Unit::Seconds:
                "Time of a group commit, its fsync included" => commit_seconds;
            "cutoff_runs": "Runs of the clock's cut-offs and settlements that did work" => cutoff_runs;
            "cutoff_duration" in Unit::Seconds: "Time of a run of cut-offs and settlements" => cutoff_seconds;
            "cutoff_originated": "Entries the clock's cut-offs originated" => cutoff_originated;
            "cutoff_settled": "Entries the clock's settlements settled" => cutoff_settled;
            "webhook_tries": "Webhook delivery tries, by outcome" => webhook_tries;
            "webhook_batch": "Deliveries taken in the last batch (the queue's head)" => webhook_batch;
            "webhook_pending":
                "Webhook deliveries taken and not yet done (a try in flight or a retry waiting)" => webhook_pending;
            "origination_files": "Origination files written (in the store)" => files;
            "origination_file_entries": "Entry detail records in those files" => file_entries;
            "held_entries": "Entries held for the operator's review" => held;
            "sealed_values_opened_by_retired_keys":
                "Sealed values a retired data key opened since the start (a re-seal has not reached them)" => retired_opens;
            "return_window_debits": "Debits in the Nacha return-rate window, every merchant" => window_debits;
            "return_window_returns": "Returns of those debits, by Nacha group" => window_returns;
        );
        self
    }

    /// One request answered.
    pub fn request(
        &self,
        operator_plane: bool,
        route: Option<&'static str>,
        method: &'static str,
        status: u16,
        took: Duration,
    ) {
        let plane = if operator_plane { "operator" } else { "public" };
        let route = route.unwrap_or("unknown");
        self.requests.get_or_create(&RequestLabels { plane, route, method, status }).inc();
        self.request_seconds.get_or_create(&RouteLabels { plane, route }).observe(took.as_secs_f64());
    }

    /// One group commit of `operations`, durable after `took`.
    pub fn commit(&self, operations: usize, took: Duration) {
        self.commit_groups.inc();
        self.commit_operations.observe(operations as f64);
        self.commit_seconds.observe(took.as_secs_f64());
    }

    /// One run of the clock that originated and settled entries.
    pub fn cutoff(&self, originated: u64, settled: u64, took: Duration) {
        self.cutoff_runs.inc();
        self.cutoff_seconds.observe(took.as_secs_f64());
        self.cutoff_originated.inc_by(originated);
        self.cutoff_settled.inc_by(settled);
    }

    /// A batch of webhook tries' results (one a delivery taken).
    pub fn webhooks(&self, results: &[(String, String, TryResult)]) {
        self.webhook_batch.set(count(results.len() as u64));
        for (_, _, result) in results {
            let outcome = match result {
                TryResult::Answered(200..=299) => "delivered",
                TryResult::Answered(410) => "gone",
                TryResult::Answered(_) => "refused",
                TryResult::NoAnswer(_) => "no_answer",
            };
            self.webhook_tries.get_or_create(&OutcomeLabels { outcome }).inc();
        }
    }

    /// The text a scrape answers, with what the store holds read now (a
    /// blocking call: never on an async worker).
    pub fn render(&self, engine: &Engine) -> Result<String, String> {
        let files = engine.origination_files().map_err(|e| e.to_string())?;
        self.files.set(count(files.len() as u64));
        self.file_entries.set(count(files.iter().map(|f| f.entries).sum()));
        self.held.set(count(engine.held_count().map_err(|e| e.to_string())?));
        self.webhook_pending.set(count(engine.webhook_pending().map_err(|e| e.to_string())?));
        self.retired_opens.set(count(engine.retired_opens()));
        let rates = engine.return_rates().map_err(|e| e.to_string())?;
        self.window_debits.set(count(rates.iter().map(|r| r.debits).sum()));
        for (group, of) in [
            ("unauthorized", rates.iter().map(|r| r.unauthorized.count).sum::<u64>()),
            ("administrative", rates.iter().map(|r| r.administrative.count).sum()),
            ("overall", rates.iter().map(|r| r.overall.count).sum()),
        ] {
            self.window_returns.get_or_create(&GroupLabels { group }).set(count(of));
        }
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &self.registry).map_err(|e| e.to_string())?;
        Ok(text)
    }
}

impl Default for Metrics {
    fn default() -> Metrics {
        Metrics::new()
    }
}

/// A count as a gauge's value.
fn count(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// The shared figures.
pub type Shared = Arc<Metrics>;
