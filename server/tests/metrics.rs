//! `GET /metrics` on the operator plane: requests by route and status, group
//! commits, origination files and their entries, held entries and return
//! counts read from the store, and no identifier, key or account number in
//! any label. The text is also parsed by the Python `prometheus_client`
//! parsers in `scripts/metrics-check`.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeMap;

use ach_testkit::{Achd, Conn};
use serde_json::json;

use common::{example, Tenant, START};

/// The scrape's samples: `name{labels}` → value, labels as written.
async fn scrape(admin: &mut Conn) -> (String, BTreeMap<String, f64>) {
    let answer = admin.send("GET", "/metrics", None, &[], Vec::new()).await.unwrap();
    assert_eq!(answer.status, 200, "{}", answer.text());
    assert!(answer.content_type.starts_with("application/openmetrics-text"), "{}", answer.content_type);
    let text = answer.text();
    assert!(text.ends_with("# EOF\n"), "an OpenMetrics exposition ends with # EOF");
    let samples = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let (name, value) = l.rsplit_once(' ').unwrap();
            (name.to_owned(), value.parse::<f64>().unwrap())
        })
        .collect();
    (text, samples)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_operator_plane_counts_requests_commits_and_what_the_store_holds() {
    let dir = tempfile::tempdir().unwrap();
    let server = Achd::new(env!("CARGO_BIN_EXE_achd")).data(dir.path()).sandbox_start(START).start();
    let mut c = server.conn().await;
    let t = Tenant::create(&server, &mut c).await;
    let mut created = Vec::new();
    for amount in ["10.00", "20.00", "30.00"] {
        let v = c.expect("POST", "/transactions", &t.partner_key, Some(t.transaction(amount)), 201).await;
        created.push(v["payload"]["id"].as_str().unwrap().to_owned());
    }
    let (status, _) = c
        .call(
            "GET",
            &format!("/transactions/{}?partner_id={}", created[0], t.partner_id),
            Some(&t.partner_key),
            None,
        )
        .await;
    assert_eq!(status, 200);
    let (status, _) = c.call("GET", "/no/such/path", Some(&t.partner_key), None).await;
    assert_eq!(status, 404);
    // The 18:00 cut-off writes one file of the three entries.
    c.expect("POST", "/admin/clock", &t.operator, Some(json!({"now": "2026-11-23T18:00:00-05:00"})), 200)
        .await;

    let mut admin = server.connect(server.admin_addr()).await.unwrap();
    let (text, samples) = scrape(&mut admin).await;
    // scripts/metrics-check parses this very text with Python's parsers.
    if let Some(out) = std::env::var_os("ACH_METRICS_OUT") {
        std::fs::write(out, &text).unwrap();
    }
    let get = |name: &str| samples.get(name).copied().unwrap_or_else(|| panic!("{name} missing:\n{text}"));
    let created_label =
        r#"achd_requests_total{plane="public",route="/transactions",method="POST",status="201"}"#;
    assert_eq!(get(created_label), 3.0);
    assert_eq!(
        get(r#"achd_requests_total{plane="public",route="/transactions/{}",method="GET",status="200"}"#),
        1.0,
        "a read is named by its route, never its id"
    );
    assert_eq!(get(r#"achd_requests_total{plane="public",route="unknown",method="GET",status="404"}"#), 1.0);
    assert_eq!(get(r#"achd_request_duration_seconds_count{plane="public",route="/transactions"}"#), 3.0);
    assert_eq!(get("achd_origination_files"), 1.0);
    assert_eq!(get("achd_origination_file_entries"), 3.0);
    assert_eq!(get("achd_held_entries"), 0.0);
    assert_eq!(get("achd_sealed_values_opened_by_retired_keys"), 0.0, "no re-seal: no retired key");
    assert!(get("achd_commit_groups_total") >= 5.0, "the partner, merchant, approval and three creates");
    assert_eq!(get("achd_commit_groups_total"), get("achd_commit_duration_seconds_count"));
    assert_eq!(get(r#"achd_build_info{version="0.1.0"}"#), 1.0);
    // No identifier, key or account number anywhere in the text.
    let customer = example("transaction.json")["customer"]["account_number"].as_str().unwrap().to_owned();
    for secret in
        [&t.partner_id, &t.merchant_id, &t.partner_key, &t.merchant_key, &t.operator, &customer, &created[0]]
    {
        assert!(!text.contains(secret.as_str()), "{secret} in the metrics");
    }
    for prefix in ["txn_", "par_", "mer_", "cus_", "pk_", "mk_", "ok_"] {
        assert!(!text.contains(&format!("\"{prefix}")), "a label value {prefix}… in the metrics");
    }

    // Counted once more: the scrape itself is a request of the operator plane.
    let (_, again) = scrape(&mut admin).await;
    assert_eq!(
        again[r#"achd_requests_total{plane="operator",route="/metrics",method="GET",status="200"}"#],
        1.0
    );
    // Only GET, only on the operator plane.
    let posted = admin.send("POST", "/metrics", None, &[], Vec::new()).await.unwrap();
    assert_eq!(posted.status, 405);
    assert_eq!(posted.headers["allow"], "GET");
    let public = c.send("GET", "/metrics", None, &[], Vec::new()).await.unwrap();
    assert_eq!(public.status, 404, "the public plane has no metrics");
}
