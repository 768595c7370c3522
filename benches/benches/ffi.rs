//! The C library: the cost of the C boundary.
//!
//! The same work through the C ABI (`ach::ach_engine_request`, `ach::ach_validate`,
//! called from Rust through the rlib exactly as C calls them: a C string in, an
//! `AchBuffer` out and freed) and through `ach-core` directly, in one run:
//!
//! 1. `status_changes`: `GET /status-changes/0` for a partner with 50 transactions,
//!    on ONE engine (the handle's engine, `ach::engine::shared_engine`), through
//!    `ach_engine_request` vs `ach_core::api::route_json`. Both answers are the same
//!    bytes (asserted).
//! 2. `validate`: a typical transaction through `ach_validate` vs
//!    `check_bytes(..).to_json()`.
//!
//! Target: C ABI ≤ 1.05 × direct.
//!
//! Besides criterion's medians (one function after the other, so a shared, noisy
//! machine can favour either), each pair is also timed interleaved: blocks of
//! iterations alternate between the two ways, and the median of the per-pair time
//! ratios is printed (`paired ratio`), which load changes during the run cancel out
//! of.
#![allow(missing_docs, clippy::unwrap_used)]

use std::ffi::{CStr, CString};
use std::hint::black_box;
use std::time::Instant;

use ach::engine::shared_engine;
use ach::{
    ach_buffer_free, ach_engine_close, ach_engine_open, ach_engine_request, ach_validate, AchBuffer,
    AchEngine,
};
use ach::{AchResult, ACH_VERSION_MAJOR};
use ach_benches::TYPICAL_TRANSACTION;
use ach_core::api::route_json;
use ach_core::calendar;
use ach_core::clock::{Clock, SystemClock};
use ach_core::routing::RoutingDirectory;
use ach_core::validation::{check_bytes, Context, Kind};
use criterion::{criterion_group, Criterion, Throughput};
use serde_json::{json, Value};

const OPERATOR: &str = "ok_bench_ffi_operator_key_0123456789";

/// One request through the C ABI: the answer's bytes, the buffer freed.
fn c_request(engine: *mut AchEngine, envelope: &CStr) -> String {
    let mut out = AchBuffer::default();
    // SAFETY: a valid C string and out-buffer; `engine` is a handle.
    let r = unsafe { ach_engine_request(engine, envelope.as_ptr(), &mut out) };
    assert_eq!(r, AchResult::ACH_OK);
    let text = out.to_text();
    ach_buffer_free(out);
    text
}

fn call(engine: *mut AchEngine, envelope: Value) -> Value {
    let envelope = CString::new(envelope.to_string()).unwrap();
    let answer: Value = serde_json::from_str(&c_request(engine, &envelope)).unwrap();
    assert!(answer["status"].as_u64().is_some_and(|s| s < 300), "{answer}");
    answer["body"].clone()
}

/// A sandbox engine with a partner, an approved merchant and 50 transactions; the
/// handle and the partner's status-changes request.
fn setup() -> (*mut AchEngine, String) {
    let options = CString::new(json!({"sandbox": true, "operator_key": OPERATOR}).to_string()).unwrap();
    let mut engine = std::ptr::null_mut();
    // SAFETY: a valid C string and out-pointer.
    assert_eq!(unsafe { ach_engine_open(options.as_ptr(), &mut engine) }, AchResult::ACH_OK);
    let partner = call(
        engine,
        json!({"method": "POST", "path": "/admin/partners", "api_key": OPERATOR, "body": {"name": "Bench"}}),
    );
    let (pid, key) = (partner["payload"]["partner_id"].clone(), partner["payload"]["api_key"].clone());
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/requests/merchant.json"))
            .unwrap();
    let mut application: Value = serde_json::from_str(&text).unwrap();
    application["partner_id"] = pid.clone();
    application["velocities"]["decline_duplicates"] = json!(false);
    let merchant =
        call(engine, json!({"method": "POST", "path": "/merchants", "api_key": key, "body": application}));
    let mid = merchant["id"].as_str().unwrap().to_owned();
    call(
        engine,
        json!({"method": "POST", "path": format!("/admin/merchants/{mid}/approve"), "api_key": OPERATOR, "body": {}}),
    );
    for i in 0..50 {
        let mut t: Value = serde_json::from_str(TYPICAL_TRANSACTION).unwrap();
        t["partner_id"] = pid.clone();
        t["merchant_id"] = json!(mid);
        t["amount"] = json!(format!("{}.{:02}", 10 + i, i));
        call(engine, json!({"method": "POST", "path": "/transactions", "api_key": key, "body": t}));
    }
    let request =
        json!({"method": "GET", "path": "/status-changes/0", "query": {"partner_id": pid}, "api_key": key});
    (engine, request.to_string())
}

/// The median over `blocks` pairs of (time of `iters` runs of `c_abi`) / (time of
/// `iters` runs of `direct`), the two alternating, which comes first swapping.
fn paired_ratio(blocks: usize, iters: usize, mut direct: impl FnMut(), mut c_abi: impl FnMut()) -> f64 {
    let time = |f: &mut dyn FnMut()| {
        let start = Instant::now();
        for _ in 0..iters {
            f();
        }
        start.elapsed().as_secs_f64()
    };
    let mut ratios: Vec<f64> = (0..blocks)
        .map(|i| {
            if i % 2 == 0 {
                let d = time(&mut direct);
                time(&mut c_abi) / d
            } else {
                let c = time(&mut c_abi);
                c / time(&mut direct)
            }
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    ratios[ratios.len() / 2]
}

fn test_mode() -> bool {
    std::env::args().any(|a| a == "--test")
}

fn ffi(c: &mut Criterion) {
    assert_eq!(ACH_VERSION_MAJOR, 0);
    let (handle, request) = setup();
    let engine = shared_engine(handle).unwrap();
    let request_c = CString::new(request.clone()).unwrap();
    let direct = route_json(&engine, &request);
    assert_eq!(c_request(handle, &request_c), direct, "the same bytes both ways");
    assert!(direct.contains(r#""status":"A""#));

    let c_status = || {
        let mut out = AchBuffer::default();
        // SAFETY: a valid C string and out-buffer; `handle` is open.
        let r = unsafe { ach_engine_request(handle, black_box(request_c.as_ptr()), &mut out) };
        black_box((r, out.len));
        ach_buffer_free(out);
    };
    let (blocks, iters) = if test_mode() { (2, 1) } else { (400, 20) };
    let ratio =
        paired_ratio(blocks, iters, || drop(black_box(route_json(&engine, black_box(&request)))), c_status);
    println!("status_changes: paired ratio ach_engine_request / route_json = {ratio:.3}");

    let mut group = c.benchmark_group("status_changes");
    group.throughput(Throughput::Elements(1));
    group.bench_function("route_json", |b| b.iter(|| black_box(route_json(&engine, black_box(&request)))));
    group.bench_function("ach_engine_request", |b| b.iter(c_status));
    group.finish();

    let directory = RoutingDirectory::embedded();
    let ctx = Context { today: calendar::eastern_date(SystemClock.now()), directory: &directory };
    let body = TYPICAL_TRANSACTION.as_bytes();
    let body_c = CString::new(TYPICAL_TRANSACTION).unwrap();
    let c_validate = || {
        let mut out = AchBuffer::default();
        // SAFETY: valid C strings and out-buffer.
        let r = unsafe { ach_validate(c"transaction".as_ptr(), black_box(body_c.as_ptr()), &mut out) };
        black_box((r, out.len));
        ach_buffer_free(out);
    };
    let direct_validate = || drop(black_box(check_bytes(Kind::Transaction, black_box(body), &ctx).to_json()));
    let (blocks, iters) = if test_mode() { (2, 1) } else { (400, 2_000) };
    let ratio = paired_ratio(blocks, iters, direct_validate, c_validate);
    println!("validate: paired ratio ach_validate / check_bytes_to_json = {ratio:.3}");

    let mut group = c.benchmark_group("validate");
    group.throughput(Throughput::Elements(1));
    group.bench_function("check_bytes_to_json", |b| b.iter(direct_validate));
    group.bench_function("ach_validate", |b| b.iter(c_validate));
    group.finish();
    drop(engine);
    ach_engine_close(handle);
}

/// `ACH_FFI_LOOP=<way> ACH_FFI_LOOP_N=<n>`: run one way `n` times and exit, for
/// instruction counts (`valgrind --tool=callgrind`), which are repeatable where wall
/// time on a shared machine is not. Ways: `route_json`, `ach_engine_request`,
/// `check_bytes`, `ach_validate`. Per call = (count at n) − (count at 0), / n.
fn instruction_loop(way: &str, n: usize) {
    let (handle, request) = setup();
    let engine = shared_engine(handle).unwrap();
    let request_c = CString::new(request.clone()).unwrap();
    let directory = RoutingDirectory::embedded();
    let ctx = Context { today: calendar::eastern_date(SystemClock.now()), directory: &directory };
    let body_c = CString::new(TYPICAL_TRANSACTION).unwrap();
    for _ in 0..n {
        match way {
            "route_json" => drop(black_box(route_json(&engine, black_box(&request)))),
            "ach_engine_request" => {
                let mut out = AchBuffer::default();
                // SAFETY: a valid C string and out-buffer; `handle` is open.
                let r = unsafe { ach_engine_request(handle, black_box(request_c.as_ptr()), &mut out) };
                black_box((r, out.len));
                ach_buffer_free(out);
            }
            "check_bytes" => drop(black_box(
                check_bytes(Kind::Transaction, TYPICAL_TRANSACTION.as_bytes(), &ctx).to_json(),
            )),
            _ => {
                let mut out = AchBuffer::default();
                // SAFETY: valid C strings and out-buffer.
                let r =
                    unsafe { ach_validate(c"transaction".as_ptr(), black_box(body_c.as_ptr()), &mut out) };
                black_box((r, out.len));
                ach_buffer_free(out);
            }
        }
    }
    drop(engine);
    ach_engine_close(handle);
}

criterion_group!(benches, ffi);

fn main() {
    if let Ok(way) = std::env::var("ACH_FFI_LOOP") {
        let n = std::env::var("ACH_FFI_LOOP_N").ok().and_then(|n| n.parse().ok()).unwrap_or(1000);
        instruction_loop(&way, n);
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
