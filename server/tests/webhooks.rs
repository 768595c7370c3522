//! Webhooks from a running `achd serve --sandbox` to a real local receiver:
//! each event POSTed with the Standard Webhooks headers, its signature
//! checked here with an HMAC of our own, a failed try retried on the
//! sandbox's clock with the same `webhook-id`, and the deliveries listed.
// The tests' tasks are clients and the receiver, not the server's async workers.
#![allow(clippy::disallowed_methods)]
#![allow(clippy::unwrap_used)]

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ach_testkit::{Achd, Conn};
use base64::Engine as _;
use hmac::{Hmac, Mac};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};
use sha2::Sha256;

mod common;
use common::{Tenant, START};

/// What the receiver was sent: each request's headers and body.
#[derive(Clone, Default)]
struct Received(Arc<Mutex<Vec<(hyper::HeaderMap, String)>>>);

/// A receiver on a loopback port answering each request with the next status
/// of `answers` (200 once they run out).
async fn receiver(answers: Vec<u16>) -> (u16, Received) {
    let (port, received, _) = switchable(answers).await;
    (port, received)
}

/// [`receiver`], answering 503 to everything (and keeping none of it) while
/// its switch is off.
async fn switchable(answers: Vec<u16>) -> (u16, Received, Arc<AtomicBool>) {
    let up = Arc::new(AtomicBool::new(true));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let received = Received::default();
    let answers = Arc::new(Mutex::new(VecDeque::from(answers)));
    let shared = (received.clone(), answers, Arc::clone(&up));
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else { return };
            let shared = shared.clone();
            tokio::spawn(async move {
                let service =
                    hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                        let (log, answers, up) = shared.clone();
                        async move {
                            let headers = req.headers().clone();
                            let body =
                                req.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
                            let status = if up.load(Ordering::SeqCst) {
                                log.0
                                    .lock()
                                    .unwrap()
                                    .push((headers, String::from_utf8_lossy(&body).into_owned()));
                                answers.lock().unwrap().pop_front().unwrap_or(200)
                            } else {
                                503
                            };
                            let mut answer = hyper::Response::new(Full::new(Bytes::new()));
                            *answer.status_mut() = hyper::StatusCode::from_u16(status).unwrap();
                            Ok::<_, Infallible>(answer)
                        }
                    });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    (port, received, up)
}

impl Received {
    /// Wait (at most 20 s) until at least `n` requests came; all of them.
    async fn at_least(&self, n: usize) -> Vec<(hyper::HeaderMap, String)> {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let got = self.0.lock().unwrap().clone();
            if got.len() >= n {
                return got;
            }
            assert!(Instant::now() < deadline, "{} requests after 20 s, waiting for {n}", got.len());
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// Whether the request's `webhook-signature` holds a `v1` signature by `secret`.
fn verified(secret: &str, headers: &hyper::HeaderMap, body: &str) -> bool {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    let key = base64::engine::general_purpose::STANDARD.decode(secret.trim_start_matches("whsec_")).unwrap();
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&key).unwrap();
    mac.update(format!("{}.{}.{}", text("webhook-id"), text("webhook-timestamp"), body).as_bytes());
    let expected =
        format!("v1,{}", base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes()));
    text("webhook-signature").split(' ').any(|s| s == expected)
}

/// The operator plane's `GET /metrics` text.
async fn scrape(admin: &mut Conn) -> String {
    let answer = admin.send("GET", "/metrics", None, &[], Vec::new()).await.unwrap();
    assert_eq!(answer.status, 200);
    answer.text()
}

/// A webhook endpoint of partner `pid` to the receiver on `port`: the answer.
async fn hook_endpoint(c: &mut Conn, pkey: &str, pid: &str, port: u16) -> Value {
    let url = format!("http://127.0.0.1:{port}/hook");
    c.expect("POST", "/webhook-endpoints", pkey, Some(json!({"partner_id": pid, "url": url})), 201).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_reach_a_real_receiver_signed_and_a_failure_is_retried() {
    let (port, received) = receiver(vec![500]).await;
    let dir = tempfile::tempdir().unwrap();
    let server = Achd::new(env!("CARGO_BIN_EXE_achd")).data(dir.path()).sandbox_start(START).start();
    let mut c = server.conn().await;
    let t = Tenant::create(&server, &mut c).await;
    let (pkey, pid) = (t.partner_key.as_str(), t.partner_id.as_str());
    let v = hook_endpoint(&mut c, pkey, pid, port).await;
    let endpoint = v["payload"]["id"].as_str().unwrap().to_owned();
    let secret = v["payload"]["secret"].as_str().unwrap().to_owned();
    // The list never shows the secret.
    let (_, list) = c.call("GET", &format!("/webhook-endpoints?partner_id={pid}"), Some(pkey), None).await;
    assert_eq!(list["payload"]["endpoints"][0]["id"], json!(endpoint));
    assert!(!list.to_string().contains(&secret));
    // A create: its event is POSTed, signed.
    let (status, v) = c.call("POST", "/transactions", Some(pkey), Some(t.transaction("125.50"))).await;
    assert_eq!(status, 201, "{v}");
    let id = v["payload"]["id"].as_str().unwrap().to_owned();
    let first = received.at_least(1).await;
    let (headers, body) = &first[0];
    assert_eq!(headers["content-type"], "application/json");
    assert!(verified(&secret, headers, body), "{headers:?} {body}");
    let webhook_id = headers["webhook-id"].to_str().unwrap().to_owned();
    assert_eq!(webhook_id, format!("{}.evt_1", t.merchant_id));
    let sent_at: i64 = headers["webhook-timestamp"].to_str().unwrap().parse().unwrap();
    assert!((chrono::Utc::now().timestamp() - sent_at).abs() < 60, "signed at the wall clock");
    let event: Value = serde_json::from_str(body).unwrap();
    assert_eq!(
        (&event["type"], &event["data"]["transaction_id"]),
        (&json!("transaction.status_changed"), &json!(id))
    );
    // The 500 is recorded and retried 5 s (of the sandbox's clock) after the first try.
    let deliveries = format!("/webhook-endpoints/{endpoint}/deliveries?partner_id={pid}");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (_, v) = c.call("GET", &deliveries, Some(pkey), None).await;
        let d = &v["payload"]["deliveries"][0];
        if d["attempts"] == 1 {
            assert_eq!((&d["status"], &d["last_response"]), (&json!("pending"), &json!(500)), "{d}");
            break;
        }
        assert!(Instant::now() < deadline, "{v}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The operator's figures: one try refused, its delivery pending.
    let mut admin = server.connect(server.admin_addr()).await.unwrap();
    let figures = scrape(&mut admin).await;
    assert!(figures.contains("\nachd_webhook_tries_total{outcome=\"refused\"} 1\n"), "{figures}");
    assert!(figures.contains("\nachd_webhook_pending 1\n"), "{figures}");
    let (status, _) = c
        .call("POST", "/admin/clock", Some(&t.operator), Some(json!({"now": "2026-11-23T10:00:06-05:00"})))
        .await;
    assert_eq!(status, 200);
    let again = received.at_least(2).await;
    assert_eq!(again[1].0["webhook-id"].to_str().unwrap(), webhook_id, "the same id on every try");
    assert_eq!(again[1].1, *body, "the same body on every try");
    assert!(verified(&secret, &again[1].0, &again[1].1));
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (_, v) = c.call("GET", &deliveries, Some(pkey), None).await;
        if v["payload"]["deliveries"][0]["status"] == "delivered" {
            assert_eq!(v["payload"]["deliveries"][0]["attempts"], 2);
            break;
        }
        assert!(Instant::now() < deadline, "{v}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let figures = scrape(&mut admin).await;
    assert!(figures.contains("\nachd_webhook_tries_total{outcome=\"delivered\"} 1\n"), "{figures}");
    assert!(figures.contains("\nachd_webhook_pending 0\n"), "{figures}");
    // Another partner sees nothing of it.
    let (_, other) =
        c.call("POST", "/admin/partners", Some(&t.operator), Some(json!({"name": "Other"}))).await;
    let (oid, okey) =
        (other["payload"]["partner_id"].as_str().unwrap(), other["payload"]["api_key"].as_str().unwrap());
    let (status, _) = c
        .call("GET", &format!("/webhook-endpoints/{endpoint}/deliveries?partner_id={oid}"), Some(okey), None)
        .await;
    assert_eq!(status, 404);
    // Deleted: nothing more is delivered.
    let (status, _) =
        c.call("DELETE", &format!("/webhook-endpoints/{endpoint}?partner_id={pid}"), Some(pkey), None).await;
    assert_eq!(status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_down_for_a_day_gets_every_event_after_a_sigkill() {
    let (port, received, up) = switchable(Vec::new()).await;
    up.store(false, Ordering::SeqCst);
    let dir = tempfile::tempdir().unwrap();
    let achd = || Achd::new(env!("CARGO_BIN_EXE_achd")).data(dir.path()).sandbox_start(START);
    let mut server = achd().start();
    let mut c = server.conn().await;
    let t = Tenant::create(&server, &mut c).await;
    let (pkey, pid) = (t.partner_key.as_str(), t.partner_id.as_str());
    let v = hook_endpoint(&mut c, pkey, pid, port).await;
    let endpoint = v["payload"]["id"].as_str().unwrap().to_owned();
    let mut created = Vec::new();
    for i in 0..30 {
        let txn = t.transaction(&format!("{}.00", i + 1));
        let (status, v) = c.call("POST", "/transactions", Some(pkey), Some(txn)).await;
        assert_eq!(status, 201, "{v}");
        created.push(v["payload"]["id"].as_str().unwrap().to_owned());
    }
    // Every delivery tried at least once against the receiver that is down.
    let deliveries = format!("/webhook-endpoints/{endpoint}/deliveries?partner_id={pid}");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (_, v) = c.call("GET", &deliveries, Some(pkey), None).await;
        let all = v["payload"]["deliveries"].as_array().unwrap();
        let tried =
            all.iter().filter(|d| d["attempts"] != 0 && d["event_type"] == "transaction.status_changed");
        if tried.count() >= created.len() {
            assert!(all.iter().all(|d| d["status"] == "pending"), "{v}");
            break;
        }
        assert!(Instant::now() < deadline, "{v}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    server.kill();
    drop(c);
    // Back a day later: every event arrives.
    let server = achd().start();
    let mut c = server.conn().await;
    up.store(true, Ordering::SeqCst);
    let (status, v) = c
        .call(
            "POST",
            "/admin/clock",
            Some(&server.operator_key()),
            Some(json!({"now": "2026-11-24T12:00:00-05:00"})),
        )
        .await;
    assert_eq!(status, 200, "{v}");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let got = received.0.lock().unwrap().clone();
        let mut seen: Vec<String> = got
            .iter()
            .filter_map(|(_, body)| serde_json::from_str::<Value>(body).ok())
            .filter(|e| e["data"]["status"] == "A")
            .filter_map(|e| e["data"]["transaction_id"].as_str().map(str::to_owned))
            .collect();
        seen.sort();
        seen.dedup();
        let mut wanted = created.clone();
        wanted.sort();
        if seen == wanted {
            break;
        }
        assert!(Instant::now() < deadline, "{} of {} events arrived", seen.len(), wanted.len());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
