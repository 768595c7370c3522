//! `achd serve` over real HTTPS: the built binary, a client that trusts the
//! server's generated certificate (verification on), every endpoint, every router
//! error, plain HTTP refused, file modes, concurrent clients, SIGKILL and SIGTERM.
// The tests' tasks are clients, not the server's async workers.
#![allow(clippy::disallowed_methods)]
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ach_testkit::{Achd, Conn, Exit, Server, Strangers};
use serde_json::{json, Value};
use tempfile::TempDir;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

mod common;
use common::{example, Tenant};

const MAX_BODY_BYTES: usize = 3 * 1024 * 1024;

/// Where a sandbox server's clock starts: a fixed instant, never the day the
/// test runs (a Monday before Thanksgiving week's holiday).
const START: &str = "2026-11-23T10:00:00-05:00";

fn achd(data: &Path) -> Achd {
    Achd::new(env!("CARGO_BIN_EXE_achd")).data(data)
}

/// `achd serve --sandbox` on `data`, its clock at [`START`], with more flags.
fn start(data: &Path, extra: &[&str]) -> Server {
    achd(data).sandbox_start(START).flags(extra).start()
}

/// A sandbox server on a new data directory, a connection to it, and a tenant
/// made through it (the directory goes with the first).
async fn sandbox_with_tenant() -> (TempDir, Server, Conn, Tenant) {
    tenant_on(temp_dir(), &[]).await
}

/// [`sandbox_with_tenant`] whose server writes its files to the directory's
/// `outbox`.
async fn sandbox_with_outbox() -> (TempDir, Server, Conn, Tenant) {
    let dir = temp_dir();
    let outbox = dir.path().join("outbox");
    tenant_on(dir, &["--outbox", outbox.to_str().unwrap()]).await
}

/// A sandbox server on `dir` with `extra` flags, a connection to it, and a
/// tenant made through it.
async fn tenant_on(dir: TempDir, extra: &[&str]) -> (TempDir, Server, Conn, Tenant) {
    let server = start(dir.path(), extra);
    let mut c = server.conn().await;
    let t = Tenant::create(&server, &mut c).await;
    (dir, server, c, t)
}

/// A sandbox start on `dir`'s data directory with `flag file`: it must exit with
/// 1 before listening. What it said.
fn refused_start(dir: &TempDir, flag: &str, file: &Path) -> Exit {
    let refused = achd(&dir.path().join("data"))
        .sandbox()
        .flags([OsStr::new(flag), file.as_os_str()])
        .try_start()
        .err();
    let refused = refused.unwrap_or_else(|| panic!("{flag} {} did not stop the start", file.display()));
    assert_eq!(refused.code, Some(1), "{refused}");
    assert!(!refused.stdout.contains("listening"));
    refused
}

/// Assert that the server said a line starting with `prefix`.
#[track_caller]
fn said_a_line_starting(server: &Server, prefix: &str) {
    assert!(server.said().iter().any(|l| l.starts_with(prefix)), "{:?}", server.said());
}

fn temp_dir() -> TempDir {
    tempfile::Builder::new().prefix("achd-https-").tempdir().unwrap()
}

fn fedach_path() -> PathBuf {
    std::env::var_os("ACH_SHARED_DATA").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data/fedach/FedACHdir.txt"),
        |d| PathBuf::from(d).join("fedach/FedACHdir.txt"),
    )
}

impl Tenant {
    /// Every change of the partner's status-changes feed, from the start.
    async fn all_changes(&self, conn: &mut Conn) -> Vec<Value> {
        let (mut pointer, mut out) = ("0".to_owned(), Vec::new());
        loop {
            let path = format!("/status-changes/{pointer}?partner_id={}", self.partner_id);
            let (status, page) = conn.call("GET", &path, Some(&self.partner_key), None).await;
            assert_eq!(status, 200, "{page}");
            let changes = page["payload"]["changes"].as_array().unwrap().clone();
            if changes.is_empty() {
                return out;
            }
            out.extend(changes);
            pointer = page["payload"]["new_pointer"].as_str().unwrap().to_owned();
        }
    }
}

/// Every transaction acknowledged (201) appears exactly once as status A.
fn assert_each_once(acknowledged: &[String], changes: &[Value]) {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for change in changes.iter().filter(|c| c["status"] == "A") {
        *seen.entry(change["transaction_id"].as_str().unwrap()).or_default() += 1;
    }
    for id in acknowledged {
        assert_eq!(seen.get(id.as_str()).copied(), Some(1), "{id} is not in the feed exactly once");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_endpoint_and_every_router_error_over_https() {
    let (_dir, server, mut c, t) = sandbox_with_tenant().await;
    let (op, pkey, pid) = (t.operator.as_str(), t.partner_key.as_str(), t.partner_id.as_str());

    let (status, v) = c
        .call("POST", &format!("/admin/partners/{pid}/limits"), Some(op), Some(json!({"daily_count": 1000})))
        .await;
    assert_eq!(status, 200, "{v}");
    let (status, v) = c
        .call(
            "POST",
            &format!("/admin/merchants/{}/limits", t.merchant_id),
            Some(op),
            Some(json!({"daily_count": 1000})),
        )
        .await;
    assert_eq!(status, 200, "{v}");

    let mut customer = example("customer.json");
    customer["partner_id"] = json!(pid);
    let (status, v) = c.call("POST", "/customers", Some(pkey), Some(customer)).await;
    assert_eq!((status, v["success"].clone()), (201, json!("true")), "{v}");
    let customer_id = v["payload"]["id"].as_str().unwrap().to_owned();

    // The account validated by an outside service (Nacha Rules 2.5.17.4), read back.
    let path = format!("/customers/{customer_id}/validations");
    let body = json!({"partner_id": pid, "merchant_id": t.merchant_id, "method": "outside",
                      "provider": "Acme Verify", "reference": "https-1"});
    let (status, v) = c.call("POST", &path, Some(pkey), Some(body)).await;
    assert_eq!((status, &v["payload"]["status"]), (201, &json!("validated")), "{v}");
    let validation = v["payload"]["id"].as_str().unwrap();
    let (status, read) =
        c.call("GET", &format!("{path}/{validation}?partner_id={pid}"), Some(pkey), None).await;
    assert_eq!((status, &read["payload"]), (200, &v["payload"]));

    // A transaction by customer token, made idempotent by the header.
    let mut by_token = t.transaction("10.00");
    by_token["customer"] = json!({"id": customer_id});
    let body = by_token.to_string().into_bytes();
    let headers = [("idempotency-key", "order-1"), ("content-type", "application/json")];
    let first = c.send("POST", "/transactions", Some(pkey), &headers, body.clone()).await.unwrap();
    assert_eq!(first.status, 201, "{}", first.text());
    let again = c.send("POST", "/transactions", Some(pkey), &headers, body).await.unwrap();
    assert_eq!((again.status, again.json()), (201, first.json()));
    let settled = first.json()["payload"]["id"].as_str().unwrap().to_owned();
    let other = t.transaction("11.00").to_string().into_bytes();
    let conflict = c.send("POST", "/transactions", Some(pkey), &headers, other).await.unwrap();
    assert_eq!(
        (conflict.status, conflict.json()["message"].clone()),
        (409, json!("This transaction has already been submitted for processing"))
    );

    // Every member in the query string, no body; then void it.
    let form = format!(
        "merchant_id={}&amount=12.34&description=form&type=debit&standard_entry_class=PPD&customer[name]=Ada&customer[routing_number]=021000021&customer[account_number]=5551234&customer[account_type]=checking",
        t.merchant_id
    );
    let formed = c
        .send("POST", &format!("/transactions?partner_id={pid}&{form}"), Some(pkey), &[], Vec::new())
        .await
        .unwrap();
    assert_eq!(formed.status, 201, "{}", formed.text());
    let voided = formed.json()["payload"]["id"].as_str().unwrap().to_owned();
    let (status, v) =
        c.call("PUT", &format!("/transactions/{voided}/void?partner_id={pid}"), Some(pkey), None).await;
    assert_eq!((status, v), (200, json!({"success": true, "payload": {"id": voided, "status": "voided"}})));

    let (status, v) = c.call("POST", "/transactions", Some(pkey), Some(t.transaction("13.00"))).await;
    assert_eq!(status, 201, "{v}");
    let returned = v["payload"]["id"].as_str().unwrap().to_owned();

    let (status, v) =
        c.call("DELETE", &format!("/customers/{customer_id}?partner_id={pid}"), Some(pkey), None).await;
    assert_eq!((status, v), (200, json!({"success": "true"})));

    // The sandbox clock: two weeks on, everything has originated and settled.
    let later = (ach_core::calendar::parse_instant(START).unwrap() + chrono::Duration::days(14)).to_rfc3339();
    let (status, v) = c.call("POST", "/admin/clock", Some(op), Some(json!({"now": later}))).await;
    assert_eq!(status, 200, "{v}");
    assert_eq!((v["payload"]["originated"].clone(), v["payload"]["settled"].clone()), (json!(2), json!(2)));

    let (status, v) =
        c.call("PUT", &format!("/transactions/{settled}/reverse?partner_id={pid}"), Some(pkey), None).await;
    assert_eq!(status, 200, "{v}");
    assert!(v["payload"]["reversal_id"].as_str().unwrap().starts_with("txn_"));
    let (status, v) = c
        .call(
            "POST",
            "/admin/returns",
            Some(op),
            Some(json!({"transaction_id": returned, "return_code": "R01"})),
        )
        .await;
    assert_eq!(status, 200, "{v}");
    // Void is only for Pending: a settled transaction is a 409.
    let (status, v) =
        c.call("PUT", &format!("/transactions/{settled}/void?partner_id={pid}"), Some(pkey), None).await;
    assert_eq!(status, 409, "{v}");

    let changes = t.all_changes(&mut c).await;
    let statuses = |id: &str| -> Vec<String> {
        changes
            .iter()
            .filter(|ch| ch["transaction_id"] == id)
            .map(|ch| ch["status"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(statuses(&settled), ["A", "B", "S"]);
    assert_eq!(statuses(&voided), ["A", "R"]);
    assert_eq!(statuses(&returned), ["A", "B", "S", "R"]);

    let (status, events) = c.call("GET", "/events", Some(&t.merchant_key), None).await;
    assert_eq!(status, 200, "{events}");
    assert!(!events["events"].as_array().unwrap().is_empty());
    assert_eq!(events["exists_more_events"], json!(false));
    let next = events["new_pointer"].as_str().unwrap();
    let (status, more) = c.call("GET", &format!("/events/{next}"), Some(&t.merchant_key), None).await;
    assert_eq!((status, more["events"].clone()), (200, json!([])));

    let (status, v) = c.call("GET", "/institutions/021000021", Some(pkey), None).await;
    assert_eq!((status, v["payload"]["name"].clone()), (200, json!("JPMORGAN CHASE")));
    let (status, v) = c.call("GET", "/categories", Some(pkey), None).await;
    assert_eq!(status, 200, "{v}");
    let (status, v) = c.call("GET", "/openapi.json", None, None).await;
    assert_eq!(status, 200);
    assert!(v["openapi"].is_string(), "{v}");
    let home = c.send("GET", "/", None, &[], Vec::new()).await.unwrap();
    assert_eq!(home.status, 200);
    assert!(home.content_type.starts_with("text/html"), "{}", home.content_type);
    assert!(home.text().contains("/openapi.json"));
    // A page loads only its own site's files, is never framed, leaks no referrer.
    let csp = home.headers["content-security-policy"].to_str().unwrap();
    assert!(csp.contains("default-src 'self'") && csp.contains("frame-ancestors 'none'"), "{csp}");
    assert_eq!(
        (
            home.headers["x-frame-options"].to_str().unwrap(),
            home.headers["referrer-policy"].to_str().unwrap()
        ),
        ("DENY", "no-referrer")
    );
    assert_eq!(home.headers["strict-transport-security"], "max-age=31536000");

    // The whole FedACH directory: a body near the limit.
    let fedach = std::fs::read(fedach_path()).unwrap();
    assert!(fedach.len() < MAX_BODY_BYTES);
    let loaded = c.send("POST", "/admin/routing", Some(op), &[], fedach).await.unwrap();
    assert_eq!((loaded.status, loaded.json()["payload"]["records"].clone()), (200, json!(18_198)));
    let (status, _) = c.call("GET", "/institutions/231380104", Some(pkey), None).await;
    assert_eq!(status, 200);

    // Errors, each exactly as the router renders it.
    let exact_401 = json!({"success": false, "message": "Authentication failed."});
    let tx = Some(t.transaction("1.00"));
    assert_eq!(c.call("POST", "/transactions", None, tx.clone()).await, (401, exact_401.clone()));
    assert_eq!(c.call("POST", "/transactions", Some("pk_wrong"), tx.clone()).await, (401, exact_401.clone()));
    assert_eq!(
        c.call("POST", "/admin/partners", Some(pkey), Some(json!({"name": "x"}))).await,
        (401, exact_401)
    );
    let exact = c.send("GET", "/events", Some(pkey), &[], Vec::new()).await.unwrap();
    assert_eq!(
        (exact.status, exact.text()),
        (401, r#"{"success":false,"message":"Authentication failed."}"#.into())
    );

    let (status, v) = c.call("GET", "/nope", Some(pkey), None).await;
    assert_eq!(
        (status, v["message"].clone(), v["errors"][0]["field"].clone()),
        (404, json!("Failed to accept this transaction"), json!("path"))
    );
    let (status, v) = c.call("DELETE", "/transactions", Some(pkey), None).await;
    assert_eq!(status, 405);
    assert!(v["errors"][0]["message"].as_str().unwrap().contains("POST"), "{v}");
    let bad = c.send("POST", "/transactions", Some(pkey), &[], b"{\"partner_id\": ".to_vec()).await.unwrap();
    assert_eq!((bad.status, bad.json()["errors"][0]["code"].clone()), (400, json!("invalid_json")));
    let (status, v) = c.call("POST", "/transactions", Some(pkey), Some(t.transaction("abc"))).await;
    assert_eq!(
        (status, v["message"].clone(), v["error_code"].clone()),
        (422, json!("'abc' is an invalid Amount"), json!(14))
    );

    let mut big = server.conn().await;
    let huge =
        big.send("POST", "/transactions", Some(pkey), &[], vec![b' '; MAX_BODY_BYTES + 1]).await.unwrap();
    assert_eq!(huge.status, 413, "{}", huge.text());
    assert_eq!(huge.content_type, "application/json");
    let v = huge.json();
    assert_eq!(
        (v["success"].clone(), v["message"].clone()),
        (json!(false), json!("Failed to accept this transaction"))
    );
    assert_eq!(v["errors"][0]["code"], json!("over_limit"));

    // The log has no key, account number, SSN or body.
    let log = server.log();
    assert!(log.contains("path=/transactions status=201"), "{log}");
    let ssn = example("merchant.json")["principal"][0]["ssn"].to_string();
    for secret in
        [op, pkey, t.merchant_key.as_str(), "000123456789", "5551234", "Grace Hopper", ssn.trim_matches('"')]
    {
        assert!(!log.contains(secret), "the log contains {secret}");
    }
}

/// Fraud monitoring over HTTPS: a large first credit is held, listed,
/// released by the operator, and the merchant's events say so; the report
/// and the exposure answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_entry_is_reviewed_and_released_over_https() {
    let (_dir, _server, mut c, t) = sandbox_with_tenant().await;
    let (op, pkey) = (t.operator.as_str(), t.partner_key.as_str());
    let mut credit = t.transaction("2500.00");
    credit["type"] = json!("credit");
    let (status, v) = c.call("POST", "/transactions", Some(pkey), Some(credit)).await;
    assert_eq!(status, 201, "{v}");
    let held = v["payload"]["id"].as_str().unwrap().to_owned();
    let (status, v) = c.call("GET", "/admin/reviews", Some(op), None).await;
    assert_eq!(status, 200, "{v}");
    let reviews = v["payload"]["reviews"].as_array().unwrap();
    assert_eq!(reviews.len(), 1, "{v}");
    assert_eq!(
        (&reviews[0]["transaction_id"], &reviews[0]["rules"]),
        (&json!(held), &json!(["new_account_credit"]))
    );
    // Not the partner's to see or decide.
    assert_eq!(c.call("GET", "/admin/reviews", Some(pkey), None).await.0, 401);
    let path = format!("/admin/reviews/{held}/release");
    assert_eq!(c.call("POST", &path, Some(pkey), Some(json!({}))).await.0, 401);
    let (status, v) = c.call("POST", &path, Some(op), Some(json!({"note": "payee confirmed"}))).await;
    assert_eq!((status, &v["payload"]["status"]), (200, &json!("released")), "{v}");
    let (status, v) = c.call("GET", "/events", Some(&t.merchant_key), None).await;
    assert_eq!(status, 200, "{v}");
    let kinds: Vec<&str> =
        v["events"].as_array().unwrap().iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["transaction.status_changed", "transaction.held_for_review", "transaction.released_from_review"]
    );
    let (status, v) = c.call("GET", "/admin/risk-report?from=2026-01-01&to=2027-12-31", Some(op), None).await;
    assert_eq!(status, 200, "{v}");
    let line =
        v["payload"]["rules"].as_array().unwrap().iter().find(|l| l["rule"] == "new_account_credit").unwrap();
    assert_eq!((&line["screened"], &line["held"], &line["released"]), (&json!(1), &json!(1), &json!(1)));
    let (status, v) =
        c.call("GET", &format!("/admin/merchants/{}/exposure", t.merchant_id), Some(op), None).await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["payload"]["unsettled_credits"].to_string(), "2500.00");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partner_reads_and_lists_what_it_sent_over_https() {
    let (_dir, _server, mut c, t) = sandbox_with_tenant().await;
    let (pkey, pid) = (t.partner_key.as_str(), t.partner_id.as_str());
    let mut ids = Vec::new();
    for amount in ["1.00", "2.00", "3.00"] {
        let (status, v) = c.call("POST", "/transactions", Some(pkey), Some(t.transaction(amount))).await;
        assert_eq!(status, 201, "{v}");
        ids.push(v["payload"]["id"].as_str().unwrap().to_owned());
    }
    let (status, v) =
        c.call("GET", &format!("/transactions/{}?partner_id={pid}", ids[1]), Some(pkey), None).await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(
        (v["payload"]["amount"].to_string(), &v["payload"]["status"]),
        ("2.00".to_owned(), &json!("A"))
    );
    assert_eq!(v["payload"]["history"].as_array().map(Vec::len), Some(1));
    // Newest first, two a page, by the merchant's own key.
    let (status, v) = c.call("GET", "/transactions?limit=2", Some(&t.merchant_key), None).await;
    assert_eq!(status, 200, "{v}");
    let listed = |v: &Value| -> Vec<String> {
        v["payload"]["transactions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(listed(&v), [ids[2].clone(), ids[1].clone()]);
    let cursor = v["payload"]["next_cursor"].as_str().unwrap().to_owned();
    let (_, v) =
        c.call("GET", &format!("/transactions?limit=2&after={cursor}"), Some(&t.merchant_key), None).await;
    assert_eq!((listed(&v), &v["payload"]["next_cursor"]), (vec![ids[0].clone()], &Value::Null));
    // The merchant as it stands, and nothing of it for another partner.
    let (status, v) =
        c.call("GET", &format!("/merchants/{}?partner_id={pid}", t.merchant_id), Some(pkey), None).await;
    assert_eq!((status, &v["payload"]["status"]), (200, &json!("approved")), "{v}");
    let (_, other) =
        c.call("POST", "/admin/partners", Some(&t.operator), Some(json!({"name": "Other"}))).await;
    let (oid, okey) =
        (other["payload"]["partner_id"].as_str().unwrap(), other["payload"]["api_key"].as_str().unwrap());
    let (status, _) =
        c.call("GET", &format!("/transactions/{}?partner_id={oid}", ids[1]), Some(okey), None).await;
    assert_eq!(status, 404);
    let (status, v) = c.call("GET", &format!("/merchants?partner_id={oid}"), Some(okey), None).await;
    assert_eq!((status, &v["payload"]["merchants"]), (200, &json!([])), "{v}");
    // A request made again with its Idempotency-Key: the first answer, marked.
    let body = t.transaction("4.00").to_string().into_bytes();
    let headers = [("idempotency-key", "order-7")];
    let first = c.send("POST", "/transactions", Some(pkey), &headers, body.clone()).await.unwrap();
    let again = c.send("POST", "/transactions", Some(pkey), &headers, body).await.unwrap();
    assert_eq!((first.status, &first.body), (again.status, &again.body));
    assert_eq!(first.headers.get("idempotent-replayed"), None);
    assert_eq!(again.headers.get("idempotent-replayed").and_then(|v| v.to_str().ok()), Some("true"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_http_is_not_served_and_secret_files_are_private() {
    let dir = temp_dir();
    let server = start(dir.path(), &[]);
    let mut tcp = TcpStream::connect(server.addr()).await.unwrap();
    tcp.write_all(format!("GET /openapi.json HTTP/1.1\r\nHost: {}\r\n\r\n", server.addr()).as_bytes())
        .await
        .unwrap();
    let mut answer = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), tcp.read_to_end(&mut answer)).await;
    let read = read.expect("the server kept a plain HTTP connection open").map_err(|e| e.kind());
    assert_eq!(read, Ok(7), "the server kept a plain HTTP connection open");
    // A fatal TLS alert (record type 21, TLS 1.2, 2 bytes): decode_error (50).
    assert_eq!(answer, [21, 3, 3, 0, 2, 2, 50]);
    assert!(!String::from_utf8_lossy(&answer).contains("HTTP/1.1 200"), "{answer:?}");
    assert!(!answer.starts_with(b"HTTP/"), "{answer:?}");
    // Still serving HTTPS.
    let (status, _) = server.conn().await.call("GET", "/openapi.json", None, None).await;
    assert_eq!(status, 200);

    use std::os::unix::fs::PermissionsExt;
    let key = if ach_testkit::on_postgres() { "ach.key" } else { "ach.redb.key" };
    for file in ["operator.key", "tls-key.pem", key] {
        let mode = std::fs::metadata(dir.path().join(file)).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{file}");
    }
    assert!(server.operator_key().starts_with("ok_"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn thirty_two_concurrent_clients_lose_nothing() {
    let dir = temp_dir();
    let server = Arc::new(start(dir.path(), &[]));
    let t = Arc::new(Tenant::create(&server, &mut server.conn().await).await);
    let mut acknowledged = Vec::new();
    for client in creating_clients(&server, &t, 32, 8) {
        acknowledged.extend(client.await.unwrap());
    }
    assert_eq!(acknowledged.len(), 256);
    let changes = t.all_changes(&mut server.conn().await).await;
    assert_eq!(changes.len(), 256);
    assert_each_once(&acknowledged, &changes);
}

/// `clients` clients, each on its own connection creating `each`
/// transactions of distinct amounts, every one acknowledged: their ids.
fn creating_clients(
    server: &Arc<Server>,
    t: &Arc<Tenant>,
    clients: usize,
    each: usize,
) -> Vec<tokio::task::JoinHandle<Vec<String>>> {
    (0..clients)
        .map(|i| {
            let (server, t) = (Arc::clone(server), Arc::clone(t));
            tokio::spawn(async move {
                let mut conn = server.conn().await;
                let mut ids = Vec::new();
                for j in 0..each {
                    let body = t.transaction(&format!("{}.{:02}", i + 1, j));
                    let (status, v) =
                        conn.call("POST", "/transactions", Some(&t.partner_key), Some(body)).await;
                    assert_eq!(status, 201, "{v}");
                    ids.push(v["payload"]["id"].as_str().unwrap().to_owned());
                }
                ids
            })
        })
        .collect()
}

/// Clients creating transactions until the server goes away: the ids acknowledged.
async fn load(server: &Server, t: &Arc<Tenant>, clients: usize) -> tokio::task::JoinSet<Vec<String>> {
    let mut set = tokio::task::JoinSet::new();
    for i in 0..clients {
        let mut conn = server.conn().await;
        let t = Arc::clone(t);
        set.spawn(async move {
            let mut ids = Vec::new();
            for j in 0.. {
                let body = t.transaction(&format!("{}.{:02}", i + 1, j % 100)).to_string().into_bytes();
                match conn.send("POST", "/transactions", Some(&t.partner_key), &[], body).await {
                    Ok(a) if a.status == 201 => {
                        ids.push(a.json()["payload"]["id"].as_str().unwrap().to_owned())
                    }
                    // Over the partner's request rate: wait as told, as a client does.
                    Ok(a) if a.status == 429 => {
                        let retry: u64 = a.headers["retry-after"].to_str().unwrap().parse().unwrap();
                        tokio::time::sleep(Duration::from_secs(retry)).await;
                    }
                    Ok(a) => panic!("{} {}", a.status, a.text()),
                    Err(_) => break,
                }
            }
            ids
        });
    }
    set
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigkill_mid_load_loses_no_acknowledged_transaction() {
    let dir = temp_dir();
    let mut server = start(dir.path(), &[]);
    let t = Arc::new(Tenant::create(&server, &mut server.conn().await).await);
    let key_before = server.operator_key();
    let cert_before = std::fs::read(dir.path().join("tls-cert.pem")).unwrap();
    let mut running = load(&server, &t, 16).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    server.kill(); // SIGKILL
    let mut acknowledged = Vec::new();
    while let Some(ids) = running.join_next().await {
        acknowledged.extend(ids.unwrap());
    }
    assert!(acknowledged.len() > 16, "too little load: {}", acknowledged.len());
    drop(server);

    let server = start(dir.path(), &[]);
    assert_eq!(server.operator_key(), key_before, "the operator key is reused");
    assert_eq!(
        std::fs::read(dir.path().join("tls-cert.pem")).unwrap(),
        cert_before,
        "the certificate is reused"
    );
    let changes = t.all_changes(&mut server.conn().await).await;
    assert_each_once(&acknowledged, &changes);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigterm_finishes_requests_in_flight_and_exits_0() {
    let dir = temp_dir();
    let mut server = start(dir.path(), &[]);
    let t = Arc::new(Tenant::create(&server, &mut server.conn().await).await);
    let mut running = load(&server, &t, 8).await;
    tokio::time::sleep(Duration::from_millis(700)).await;
    server.signal("TERM");
    let status = tokio::task::block_in_place(|| server.wait_exit(Duration::from_secs(30)));
    assert_eq!(status.code(), Some(0), "log: {}", server.log());
    let mut acknowledged = Vec::new();
    while let Some(ids) = running.join_next().await {
        acknowledged.extend(ids.unwrap());
    }
    assert!(server.log().contains("database closed"));
    drop(server);

    let server = start(dir.path(), &[]);
    let changes = t.all_changes(&mut server.conn().await).await;
    assert_each_once(&acknowledged, &changes);
    assert_eq!(changes.len(), acknowledged.len(), "nothing committed without an answer");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_web_directory_is_served_at_root_without_leaving_it() {
    let dir = temp_dir();
    let site = dir.path().join("site");
    std::fs::create_dir_all(site.join("js")).unwrap();
    std::fs::write(site.join("index.html"), "<p>console</p>").unwrap();
    std::fs::write(site.join("js/app.js"), "let x = 1;").unwrap();
    std::fs::write(dir.path().join("outside.txt"), "secret").unwrap();
    let server = start(dir.path(), &["--web", site.to_str().unwrap()]);
    let mut c = server.conn().await;
    let home = c.send("GET", "/", None, &[], Vec::new()).await.unwrap();
    assert_eq!((home.status, home.text()), (200, "<p>console</p>".to_owned()));
    let js = c.send("GET", "/js/app.js", None, &[], Vec::new()).await.unwrap();
    assert_eq!((js.status, js.content_type.as_str()), (200, "text/javascript; charset=utf-8"));
    for path in ["/../outside.txt", "/%2e%2e/outside.txt", "/js/..%2f..%2foutside.txt", "/nope.html"] {
        let a = c.send("GET", path, None, &[], Vec::new()).await.unwrap();
        assert_eq!((a.status, a.content_type.as_str()), (404, "application/json"), "{path}");
        assert!(!a.text().contains("secret"));
    }
    // API paths win over files.
    assert_eq!(c.call("GET", "/categories", None, None).await.0, 401);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn production_mode_runs_on_the_wall_clock_and_stops_cleanly() {
    let dir = temp_dir();
    // Production makes a new service only when asked.
    let mut server = achd(dir.path()).flags(["--init"]).start();
    let mut c = server.conn().await;
    let t = Tenant::create(&server, &mut c).await;
    let (status, v) =
        c.call("POST", "/transactions", Some(&t.partner_key), Some(t.transaction("5.00"))).await;
    assert_eq!(status, 201, "{v}");
    // The clock is the operator's only in a sandbox.
    let later = (chrono::Utc::now() + chrono::Duration::days(14)).to_rfc3339();
    let (status, v) = c.call("POST", "/admin/clock", Some(&t.operator), Some(json!({"now": later}))).await;
    assert_ne!(status, 200, "{v}");
    drop(c);
    server.signal("INT");
    let status = tokio::task::block_in_place(|| server.wait_exit(Duration::from_secs(30)));
    assert_eq!(status.code(), Some(0), "log: {}", server.log());
}

/// A routing number of the FedACH file that the embedded default lacks.
fn routing_number_only_in_the_file() -> String {
    let text = std::fs::read_to_string(fedach_path()).unwrap();
    let embedded = ach_core::routing::RoutingDirectory::embedded();
    text.lines().map(|l| l[..9].to_owned()).find(|rn| embedded.get(rn).is_none()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_routing_directory_flag_loads_before_listening_and_is_kept() {
    let dir = temp_dir();
    let fedach = fedach_path();
    let rn = routing_number_only_in_the_file();
    let institution = format!("/institutions/{rn}");

    // Without the flag: the embedded default, which does not know the number.
    let server = start(dir.path(), &[]);
    assert!(server
        .said()
        .iter()
        .any(|l| l.starts_with("routing directory: ") && l.contains("--routing-directory")));
    let op = server.operator_key();
    let (status, v) = server.conn().await.call("GET", &institution, Some(&op), None).await;
    assert_eq!((status, v["message"].clone()), (422, json!(format!("Routing Number '{rn}' was not found"))));
    drop(server);

    // With it: loaded (a progress line, then the count) before the listening line.
    let server = start(dir.path(), &["--routing-directory", fedach.to_str().unwrap()]);
    said_a_line_starting(&server, "routing directory: loading ");
    let count = format!("routing directory: 18198 routing numbers from {}", fedach.display());
    said_a_line_starting(&server, &count);
    let (status, v) = server.conn().await.call("GET", &institution, Some(&op), None).await;
    assert_eq!(status, 200, "{v}");
    drop(server);

    // A restart without the flag keeps it (it is in the database) ...
    let server = start(dir.path(), &[]);
    said_a_line_starting(&server, "routing directory: 18198 routing numbers");
    let mut c = server.conn().await;
    assert_eq!(c.call("GET", &institution, Some(&op), None).await.0, 200);
    // ... and POST /admin/routing still replaces it.
    let one = std::fs::read_to_string(&fedach).unwrap().lines().next().unwrap().to_owned();
    let answer = c.send("POST", "/admin/routing", Some(&op), &[], one.into_bytes()).await.unwrap();
    assert_eq!(
        (answer.status, answer.json()["payload"]["records"].clone()),
        (200, json!(1)),
        "{}",
        answer.text()
    );
    drop(c);
    drop(server);
    let server = start(dir.path(), &[]);
    said_a_line_starting(&server, "routing directory: 1 routing numbers");
}

#[test]
fn a_routing_directory_that_cannot_be_loaded_stops_the_start() {
    let dir = temp_dir();
    let empty = dir.path().join("empty.txt");
    std::fs::write(&empty, "").unwrap();
    let broken = dir.path().join("broken.txt");
    std::fs::write(&broken, "not a directory record\n").unwrap();
    let missing = dir.path().join("missing.txt");
    for (file, why) in [(&empty, "no records"), (&broken, "line 1"), (&missing, "No such file")] {
        let refused = refused_start(&dir, "--routing-directory", file);
        assert!(refused.log.contains("--routing-directory") && refused.log.contains(why), "{refused}");
    }
}

/// A connection that asks for `path` with `key` and never reads.
async fn never_reading(server: &Server, path: &str, key: &str) -> ach_testkit::TlsStream<TcpStream> {
    let mut stream = server.tls_stream_not_reading([127, 0, 0, 1].into()).await.unwrap();
    let request = format!(
        "GET {path} HTTP/1.1\r\nhost: achd\r\nauthorization: {}\r\n\r\n",
        ach_testkit::basic_auth(key)
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    stream
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_key_holds_two_feed_pages_not_taken_at_most() {
    let dir = temp_dir();
    let server = Arc::new(start(dir.path(), &[]));
    let t = Arc::new(Tenant::create(&server, &mut server.conn().await).await);
    for client in creating_clients(&server, &t, 16, 90) {
        client.await.unwrap();
    }
    let mut c = server.conn().await;
    let page = c.send("GET", "/events", Some(&t.merchant_key), &[], Vec::new()).await.unwrap();
    assert!(page.body.len() > 300_000, "a page larger than the socket buffers: {}", page.body.len());
    // Two pages asked for and never read, each served (its request line
    // logged: its answer built, its place held) before the next: the key's
    // third waits for one of them.
    let served =
        |server: &Server| server.log().matches(r#"path=/events status=200 caller="merchant""#).count();
    let before = served(&server);
    let mut held = Vec::new();
    for n in 1..=2 {
        held.push(never_reading(&server, "/events", &t.merchant_key).await);
        let deadline = Instant::now() + Duration::from_secs(20);
        while served(&server) < before + n {
            assert!(Instant::now() < deadline, "page {n} was never served: {}", server.log());
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    let refused = c.send("GET", "/events", Some(&t.merchant_key), &[], Vec::new()).await.unwrap();
    let v = refused.json();
    assert_eq!((refused.status, v["errors"][0]["code"].clone()), (429, json!("rate_limited")), "{v}");
    assert_eq!(refused.headers["retry-after"], "1");
    assert_eq!(
        v["errors"][0]["message"],
        "this key has 2 large answers (feed pages) not yet taken; read them, then ask again"
    );
    // Another key is untouched; once the pages are dropped, the key reads again.
    let feed = format!("/status-changes/0?partner_id={}", t.partner_id);
    assert_eq!(c.send("GET", &feed, Some(&t.partner_key), &[], Vec::new()).await.unwrap().status, 200);
    drop(held);
    let deadline = Instant::now() + Duration::from_secs(20);
    while c.send("GET", "/events", Some(&t.merchant_key), &[], Vec::new()).await.unwrap().status != 200 {
        assert!(Instant::now() < deadline, "the pages' places never came back");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(server.log().contains("a large read refused: answers not yet taken"), "{}", server.log());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_partner_is_held_to_its_request_rate() {
    let dir = temp_dir();
    let server = start(dir.path(), &["--requests-per-second", "1"]);
    let mut c = server.conn().await;
    let (a, b) = (Tenant::create(&server, &mut c).await, Tenant::create(&server, &mut c).await);
    let path = format!("/admin/partners/{}/limits", b.partner_id);
    let (status, v) =
        c.call("POST", &path, Some(&a.operator), Some(json!({"requests_per_second": 1000}))).await;
    assert_eq!(status, 200, "{v}");
    let path = format!("/admin/merchants/{}/limits", b.merchant_id);
    let (status, v) = c.call("POST", &path, Some(&a.operator), Some(json!({"requests_per_second": 5}))).await;
    assert_eq!((status, v["errors"][0]["field"].clone()), (422, json!("requests_per_second")), "{v}");

    // A holds the default of 1 a second (bursts of 2); B the 1000 the operator gave it.
    let mut refused = 0;
    for t in [&a, &b] {
        let feed = format!("/status-changes/0?partner_id={}", t.partner_id);
        for _ in 0..20 {
            let answer = c.send("GET", &feed, Some(&t.partner_key), &[], Vec::new()).await.unwrap();
            if answer.status == 200 {
                continue;
            }
            assert_eq!(t.partner_id, a.partner_id, "B is within its rate: {}", answer.text());
            let v = answer.json();
            assert_eq!(
                (answer.status, v["error_code"].clone(), v["errors"][0]["code"].clone()),
                (429, json!(1), json!("rate_limited"))
            );
            let retry: u64 = answer.headers["retry-after"].to_str().unwrap().parse().unwrap();
            assert!((1..=2).contains(&retry), "{retry}");
            refused += 1;
        }
    }
    assert!(refused >= 1, "A went past its rate");
    // The operator is never rated.
    for _ in 0..20 {
        assert_eq!(c.call("GET", "/admin/return-rates", Some(&a.operator), None).await.0, 200);
    }
    assert!(server.log().contains("requests over the caller's rate refused (429)"), "{}", server.log());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_answers_as_clients_expect_them() {
    let (_dir, server, mut c, t) = sandbox_with_tenant().await;

    // No 401 asks a browser for the key (it would send it to every site's
    // forms after); a wrong key says nothing more. Every answer says HTTPS only.
    let body = t.transaction("1.00").to_string().into_bytes();
    let answer = c.send("POST", "/transactions", Some("pk_wrong"), &[], body.clone()).await.unwrap();
    assert_eq!(answer.status, 401);
    assert_eq!(answer.headers.get("www-authenticate"), None);
    assert_eq!(answer.headers["strict-transport-security"], "max-age=31536000");
    assert_eq!(answer.json(), json!({"success": false, "message": "Authentication failed."}));
    let answer = c.send("GET", "/status-changes/0", None, &[], Vec::new()).await.unwrap();
    assert_eq!(answer.status, 401);
    assert_eq!(answer.headers.get("www-authenticate"), None);

    // The right key without partner_id: the answer names partner_id.
    let mut without = t.transaction("1.00");
    without.as_object_mut().unwrap().remove("partner_id");
    let answer = c
        .send("POST", "/transactions", Some(&t.partner_key), &[], without.to_string().into_bytes())
        .await
        .unwrap();
    assert_eq!(answer.status, 401);
    let v = answer.json();
    assert_eq!(v["message"], "Authentication failed.");
    assert_eq!(
        (v["errors"][0]["field"].clone(), v["errors"][0]["code"].clone()),
        (json!("partner_id"), json!("required"))
    );
    let answer = c.send("GET", "/status-changes/0", Some(&t.partner_key), &[], Vec::new()).await.unwrap();
    assert_eq!((answer.status, answer.json()["errors"][0]["field"].clone()), (401, json!("partner_id")));
    // Another partner's id with this key: still only "Authentication failed.".
    let mut foreign = t.transaction("1.00");
    foreign["partner_id"] = json!("par_0000000000000000000000");
    let answer = c
        .send("POST", "/transactions", Some(&t.partner_key), &[], foreign.to_string().into_bytes())
        .await
        .unwrap();
    assert_eq!(answer.json(), json!({"success": false, "message": "Authentication failed."}));

    // A body is read only as JSON: what another site's form or `text/plain`
    // fetch can send (a JSON text included, as `curl -d` sends it) is 415.
    let fields = format!(
        "partner_id={}&merchant_id={}&amount=2.00&description=form&type=debit&standard_entry_class=PPD\
         &customer[name]=Ada&customer[routing_number]=021000021&customer[account_number]=12345678\
         &customer[account_type]=checking",
        t.partner_id, t.merchant_id
    );
    let feed = format!("/status-changes/0?partner_id={}", t.partner_id);
    let before = c.call("GET", &feed, Some(&t.partner_key), None).await;
    for (content_type, sent) in [
        ("application/x-www-form-urlencoded", &body),
        ("application/x-www-form-urlencoded", &fields.clone().into_bytes()),
        ("text/plain;charset=UTF-8", &body),
        ("multipart/form-data; boundary=x", &body),
    ] {
        let headers = [("content-type", content_type)];
        let answer =
            c.send("POST", "/transactions", Some(&t.partner_key), &headers, sent.clone()).await.unwrap();
        let v = answer.json();
        assert_eq!(
            (answer.status, v["errors"][0]["code"].as_str()),
            (415, Some("unsupported_media_type")),
            "{v}"
        );
        let named = content_type.split(';').next().unwrap();
        assert_eq!(
            v["errors"][0]["message"],
            format!("the body was sent as {named}; send JSON as application/json (curl: -H 'Content-Type: application/json')")
        );
    }
    // No Content-Type at all (a no-cors fetch of a Blob): 415 too.
    let bare = ach_testkit::request_bytes(
        "POST",
        b"/transactions",
        "localhost",
        &[("authorization", ach_testkit::basic_auth(&t.partner_key).as_bytes())],
        &body,
    );
    let answer = server.raw(bare).await;
    assert_eq!(answer.status, 415, "{}", answer.text());
    assert!(answer.text().contains("the body was sent without a Content-Type"), "{}", answer.text());
    // A write a browser sent from another site: 403, whatever its type.
    let json_type = ("content-type", "application/json");
    for header in [("origin", "https://evil.example"), ("sec-fetch-site", "cross-site"), ("origin", "null")] {
        let answer = c
            .send("POST", "/transactions", Some(&t.partner_key), &[json_type, header], body.clone())
            .await
            .unwrap();
        assert_eq!(
            (answer.status, answer.json()["errors"][0]["code"].clone()),
            (403, json!("cross_site")),
            "{header:?}"
        );
    }
    assert_eq!(c.call("GET", &feed, Some(&t.partner_key), None).await, before, "nothing was created");
    // The same origin, and any read, pass.
    let own =
        [json_type, ("origin", &format!("https://{}", server.addr())), ("sec-fetch-site", "same-origin")];
    let answer = c.send("POST", "/transactions", Some(&t.partner_key), &own, body.clone()).await.unwrap();
    assert_eq!(answer.status, 201, "{}", answer.text());
    let answer = c
        .send("GET", &feed, Some(&t.partner_key), &[("sec-fetch-site", "cross-site")], Vec::new())
        .await
        .unwrap();
    assert_eq!(answer.status, 200);
    // Two keys in one request: neither is chosen.
    let second = ach_testkit::basic_auth(&t.partner_key);
    let answer =
        c.send("GET", &feed, Some(&t.partner_key), &[("authorization", &second)], Vec::new()).await.unwrap();
    assert_eq!(
        (answer.status, answer.json()["errors"][0]["message"].clone()),
        (400, json!("the request carries 2 Authorization headers; send one"))
    );
}

/// Wait (up to 10 s) for the outbox file `path` to exist and be recorded.
async fn wait_for_file(path: &Path, server: &Server) {
    // The outbox records a file in `.exported` right after its rename: both
    // are awaited.
    let id = path.file_stem().unwrap().to_string_lossy().into_owned();
    let record = path.with_file_name(".exported");
    let recorded = || std::fs::read_to_string(&record).is_ok_and(|r| r.lines().any(|l| l == id));
    let deadline = Instant::now() + Duration::from_secs(10);
    while !(path.exists() && recorded()) {
        assert!(Instant::now() < deadline, "{} did not appear; log: {}", path.display(), server.log());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_outbox_gets_each_origination_file_once() {
    use sha2::Digest as _;
    use std::os::unix::fs::PermissionsExt;
    let dir = temp_dir();
    let outbox = dir.path().join("outbox");
    let args = ["--outbox", outbox.to_str().unwrap()];
    let server = start(dir.path(), &args);
    assert!(
        server.said().iter().any(|l| l.starts_with("outbox: ") && l.contains("(0 files")),
        "{:?}",
        server.said()
    );
    let mut c = server.conn().await;
    let t = Tenant::create(&server, &mut c).await;
    for amount in ["10.00", "20.00", "30.00"] {
        let (status, v) =
            c.call("POST", "/transactions", Some(&t.partner_key), Some(t.transaction(amount))).await;
        assert_eq!(status, 201, "{v}");
    }
    let (status, v) = c
        .call("POST", "/admin/clock", Some(&t.operator), Some(json!({"now": "2026-11-23T18:00:00-05:00"})))
        .await;
    assert_eq!(status, 200, "{v}");

    let first = outbox.join("fil_20261123A.ach");
    wait_for_file(&first, &server).await;
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!((mode(&first), mode(&outbox)), (0o600, 0o700));
    let bytes = std::fs::read(&first).unwrap();
    let (status, file) =
        c.call("GET", "/admin/origination-files/fil_20261123A", Some(&t.operator), None).await;
    assert_eq!(status, 200, "{file}");
    assert_eq!(String::from_utf8(bytes.clone()).unwrap(), file["payload"]["text"].as_str().unwrap());
    let (status, list) = c.call("GET", "/admin/origination-files", Some(&t.operator), None).await;
    assert_eq!(status, 200, "{list}");
    assert_eq!(list["payload"][0]["id"], "fil_20261123A");
    assert_eq!(list["payload"][0]["entries"], 3);
    let sha256: String = sha2::Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(list["payload"][0]["sha256"].as_str().unwrap(), sha256);
    assert_eq!(names(&outbox), [".exported", "fil_20261123A.ach"], "no temporary file left");

    // The bank returns the file's first entry: applied once over HTTPS.
    let returns = return_file_for_first_entry(&bytes);
    for (returned, already) in [(1, 0), (0, 1)] {
        let answer = c
            .send(
                "POST",
                "/admin/return-files",
                Some(&t.operator),
                &[("content-type", "text/plain")],
                returns.clone(),
            )
            .await
            .unwrap();
        let v = answer.json();
        assert_eq!(answer.status, 200, "{v}");
        assert_eq!(
            (v["payload"]["returns"].as_u64(), v["payload"]["already_applied"].as_u64()),
            (Some(returned), Some(already)),
            "{v}"
        );
    }

    // The transfer job takes the file; a restart on the same database does not
    // write it again, and the next cut-off's file comes (after the earlier one
    // would have: files go out oldest first).
    std::fs::rename(&first, dir.path().join("sent.ach")).unwrap();
    drop(c);
    drop(server);
    let server = start(dir.path(), &args);
    assert!(server.said().iter().any(|l| l.contains("(1 files exported before)")), "{:?}", server.said());
    let mut c = server.conn().await;
    let (status, v) =
        c.call("POST", "/transactions", Some(&t.partner_key), Some(t.transaction("40.00"))).await;
    assert_eq!(status, 201, "{v}");
    let (status, v) = c
        .call("POST", "/admin/clock", Some(&t.operator), Some(json!({"now": "2026-11-24T18:00:00-05:00"})))
        .await;
    assert_eq!(status, 200, "{v}");
    wait_for_file(&outbox.join("fil_20261124A.ach"), &server).await;
    assert_eq!(names(&outbox), [".exported", "fil_20261124A.ach"]);
    assert_eq!(std::fs::read_to_string(outbox.join(".exported")).unwrap(), "fil_20261123A\nfil_20261124A\n");
    let log = server.log();
    assert!(!log.contains("could not be written"), "{log}");
}

#[test]
fn an_outbox_that_cannot_be_written_stops_the_start() {
    let dir = temp_dir();
    let file = dir.path().join("not-a-directory");
    std::fs::write(&file, "").unwrap();
    let refused = refused_start(&dir, "--outbox", &file);
    let log = &refused.log;
    assert!(log.contains("cannot create the outbox") && log.contains("not-a-directory"), "{refused}");
}

/// A bank's return file (R01) for the first entry of an origination file, built
/// with the engine's own NACHA writer.
fn return_file_for_first_entry(origination: &[u8]) -> Vec<u8> {
    use ach_core::nacha::{self, Addenda, ReturnEntry, Text};
    let parsed = nacha::read(origination).unwrap();
    let mut batch = parsed.file.batches[0].clone();
    let original = batch.entries[0].clone();
    let trace = Text::from("021000020000001");
    let mut entry = original.clone();
    entry.transaction_code = original.transaction_code - 1;
    entry.trace_number = trace.clone();
    entry.addenda = vec![Addenda::Return(ReturnEntry {
        return_code: Text::from("R01"),
        original_trace: original.trace_number.clone(),
        date_of_death: Text::new(),
        original_receiving_dfi: original.receiving_dfi.clone(),
        information: Text::new(),
        trace_number: trace,
    })];
    batch.entries = vec![entry];
    batch.odfi_identification = Text::from("02100002");
    batch.service_class_code = nacha::service_class_for(&batch.entries);
    nacha::write(&nacha::NachaFile { header: parsed.file.header, batches: vec![batch] }).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_operator_plane_answers_only_on_its_own_address() {
    let dir = temp_dir();
    let server = start(dir.path(), &[]);
    let op = server.operator_key();
    assert!(server.admin_addr().ip().is_loopback() && server.admin_addr() != server.addr());
    // On the public address /admin/* is an unknown path, even with the operator key.
    let mut public = server.connect(server.addr()).await.unwrap();
    for (method, path) in [("POST", "/admin/partners"), ("GET", "/admin/return-rates"), ("GET", "/admin")] {
        let (status, v) = public.call(method, path, Some(&op), Some(json!({"name": "x"}))).await;
        assert_eq!(status, 404, "{method} {path}: {v}");
        assert_eq!(v["errors"][0]["message"], json!(format!("there is no endpoint {method} {path}")));
    }
    let (status, _) = public.call("GET", "/openapi.json", None, None).await;
    assert_eq!(status, 200);
    // On the operator address only /admin/* is answered.
    let mut admin = server.connect(server.admin_addr()).await.unwrap();
    let (status, v) = admin.call("POST", "/admin/partners", Some(&op), Some(json!({"name": "Acme"}))).await;
    assert_eq!(status, 201, "{v}");
    let (status, _) = admin.call("GET", "/openapi.json", None, None).await;
    assert_eq!(status, 404);

    // Rotating the operator key rewrites the key file; the old key is refused.
    let rotate = json!({"grace_seconds": 0});
    let (status, r) = admin.call("POST", "/admin/operator-key/rotate", Some(&op), Some(rotate)).await;
    assert_eq!(status, 200, "{r}");
    let new = r["payload"]["api_key"].as_str().unwrap().to_owned();
    assert_eq!(server.operator_key(), new, "operator.key holds the new key");
    assert_eq!(admin.call("GET", "/admin/return-rates", Some(&op), None).await.0, 401);
    assert_eq!(admin.call("GET", "/admin/return-rates", Some(&new), None).await.0, 200);
    // Every operator action is in the log with what it changed, never a key.
    let log = server.log();
    assert!(log.contains("operator action") && log.contains("keys_rotated"), "{log}");
    assert!(log.contains("partner_created"), "{log}");
    assert!(
        !log.contains(&new) && !log.contains(&op) && !log.contains(v["payload"]["api_key"].as_str().unwrap())
    );
    drop(server);

    // A restart reads the new key from the file; the old one stays refused.
    let server = start(dir.path(), &[]);
    let mut admin = server.connect(server.admin_addr()).await.unwrap();
    assert_eq!(admin.call("GET", "/admin/return-rates", Some(&new), None).await.0, 200);
    assert_eq!(admin.call("GET", "/admin/return-rates", Some(&op), None).await.0, 401);
}

#[test]
fn the_operator_plane_needs_its_own_address_loopback_by_default() {
    let help = Command::new(env!("CARGO_BIN_EXE_achd")).args(["serve", "--help"]).output().unwrap();
    assert!(String::from_utf8_lossy(&help.stdout).contains("[default: 127.0.0.1:8444]"));
    let dir = temp_dir();
    let same = Command::new(env!("CARGO_BIN_EXE_achd"))
        .args(["serve", "--data"])
        .arg(dir.path())
        .args(["--listen", "127.0.0.1:1", "--admin-listen", "127.0.0.1:1"])
        .output()
        .unwrap();
    assert_eq!(same.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&same.stderr).contains("--admin-listen must differ from --listen"));
}

/// 2,000 requests with made-up keys to made-up and real paths, while 8 clients
/// create transactions: every flood request is refused (401, or 404 for a
/// path the API lacks) and every create is acknowledged and in the feed. No
/// request reaches storage from an async worker (the server's drop fails the
/// test if one did), so the refusals never stall the creates' connections.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_flood_of_made_up_keys_is_refused_while_every_create_is_acknowledged() {
    let (_dir, server, _c, t) = sandbox_with_tenant().await;
    let (server, t) = (Arc::new(server), Arc::new(t));
    let flood: Vec<_> = (0..4u64)
        .map(|f| {
            let server = Arc::clone(&server);
            tokio::spawn(async move {
                let mut strangers = Strangers::new(f + 1);
                let mut conn = server.conn().await;
                let mut seen = HashMap::<u16, usize>::new();
                for _ in 0..500 {
                    let s = strangers.next_request();
                    let answer = conn.send(s.method, &s.path, Some(&s.key), &[], s.body).await.unwrap();
                    assert_eq!(answer.status, s.expected, "{} {}: {}", s.method, s.path, answer.text());
                    *seen.entry(answer.status).or_default() += 1;
                }
                seen
            })
        })
        .collect();
    let creates = creating_clients(&server, &t, 8, 25);
    let mut refused = HashMap::<u16, usize>::new();
    for f in flood {
        for (status, n) in f.await.unwrap() {
            *refused.entry(status).or_default() += n;
        }
    }
    let mut acknowledged = Vec::new();
    for c in creates {
        acknowledged.extend(c.await.unwrap());
    }
    assert_eq!(refused.values().sum::<usize>(), 2_000);
    assert!(refused[&401] > 1_000 && refused[&404] > 400, "{refused:?}");
    assert_eq!(acknowledged.len(), 200);
    let changes = t.all_changes(&mut server.conn().await).await;
    assert_each_once(&acknowledged, &changes);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_same_day_entry_leaves_in_its_windows_file_over_https() {
    let (dir, server, mut c, t) = sandbox_with_outbox().await;
    let outbox = dir.path().join("outbox");
    let (pkey, pid) = (t.partner_key.as_str(), t.partner_id.as_str());
    let mut body = t.transaction("25.00");
    body["same_day"] = json!(true);
    let (status, v) = c.call("POST", "/transactions", Some(pkey), Some(body)).await;
    assert_eq!(status, 201, "{v}");
    let id = v["payload"]["id"].as_str().unwrap().to_owned();
    let (status, v) = c.call("POST", "/transactions", Some(pkey), Some(t.transaction("26.00"))).await;
    assert_eq!(status, 201, "{v}");
    // Created at 10:00 ET: the 14:15 window, in a file of its own.
    let clock = json!({"now": "2026-11-23T14:15:00-05:00"});
    let (status, v) = c.call("POST", "/admin/clock", Some(&t.operator), Some(clock)).await;
    assert_eq!((status, v["payload"]["originated"].as_u64()), (200, Some(1)), "{v}");
    let file = outbox.join("fil_20261123A.ach");
    wait_for_file(&file, &server).await;
    let text = std::fs::read_to_string(&file).unwrap();
    let batch = text.lines().find(|l| l.starts_with('5')).unwrap();
    assert_eq!(&batch[69..75], "261123", "effective entry date: {batch}");
    assert_eq!(text.lines().filter(|l| l.starts_with('6')).count(), 1);
    let clock = json!({"now": "2026-11-23T17:00:00-05:00"});
    let (status, v) = c.call("POST", "/admin/clock", Some(&t.operator), Some(clock)).await;
    assert_eq!((status, v["payload"]["settled"].as_u64()), (200, Some(1)), "{v}");
    let (status, v) = c.call("GET", &format!("/transactions/{id}?partner_id={pid}"), Some(pkey), None).await;
    assert_eq!(status, 200, "{v}");
    let p = &v["payload"];
    assert_eq!(
        (&p["same_day"], &p["status"], &p["effective_date"], &p["settlement_date"]),
        (&json!(true), &json!("S"), &json!("2026-11-23"), &json!("2026-11-23"))
    );
}

/// A check picture as a PNG, base64: `width` × 300, a bar of ink.
fn check_picture(width: u32) -> String {
    use base64::Engine as _;
    let img = image::GrayImage::from_fn(width, 300, |x, y| {
        image::Luma([if (100..width - 100).contains(&x) && (120..150).contains(&y) { 10 } else { 240 }])
    });
    let mut png = std::io::Cursor::new(Vec::new());
    img.write_to(&mut png, image::ImageFormat::Png).unwrap();
    base64::engine::general_purpose::STANDARD.encode(png.into_inner())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn icl_items_leave_in_an_image_cash_letter_over_https() {
    let (dir, server, mut c, t) = sandbox_with_outbox().await;
    let outbox = dir.path().join("outbox");
    // A merchant that takes checks.
    let mut app = example("merchant.json");
    app["partner_id"] = json!(t.partner_id);
    app["standard_entry_classes"] = json!(["PPD", "ICL"]);
    let (status, m) = c.call("POST", "/merchants", Some(&t.partner_key), Some(app)).await;
    assert_eq!(status, 201, "{m}");
    let merchant = m["id"].as_str().unwrap().to_owned();
    let path = format!("/admin/merchants/{merchant}/approve");
    let (status, a) = c.call("POST", &path, Some(&t.operator), Some(json!({}))).await;
    assert_eq!(status, 200, "{a}");
    let mut check = t.transaction("42.10");
    check["merchant_id"] = json!(merchant);
    check["standard_entry_class"] = json!("ICL");
    check["check_number"] = json!("5001");
    check["check_image_front"] = json!(check_picture(1000));
    check["check_image_back"] = json!(check_picture(800));
    let (status, v) = c.call("POST", "/transactions", Some(&t.partner_key), Some(check)).await;
    assert_eq!(status, 201, "{v}");
    let clock = json!({"now": "2026-11-23T18:00:00-05:00"});
    let (status, v) = c.call("POST", "/admin/clock", Some(&t.operator), Some(clock)).await;
    assert_eq!(status, 200, "{v}");

    let (status, list) = c.call("GET", "/admin/image-cash-letters", Some(&t.operator), None).await;
    assert_eq!(status, 200, "{list}");
    assert_eq!(
        (&list["payload"][0]["id"], &list["payload"][0]["items"]),
        (&json!("icl_20261123A"), &json!(1))
    );
    let file = outbox.join("icl_20261123A.x937");
    wait_for_file(&file, &server).await;
    let written = std::fs::read(&file).unwrap();
    let answer = c
        .send("GET", "/admin/image-cash-letters/icl_20261123A", Some(&t.operator), &[], Vec::new())
        .await
        .unwrap();
    assert_eq!((answer.status, answer.content_type.as_str()), (200, "application/octet-stream"));
    assert_eq!(answer.body, written, "the outbox holds the bytes the operator plane answers");
    assert_eq!(
        answer.headers.get("content-disposition").and_then(|v| v.to_str().ok()),
        Some("attachment; filename=\"icl_20261123A.x937\"")
    );
    // achd's own checker reads it: one item, $42.10, two Group 4 images.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_achd"))
        .args(["x9", "check"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (&summary["items"], &summary["total_amount_cents"], &summary["image_formats"]),
        (&json!(1), &json!(4210), &json!({"tiff-g4": 2}))
    );
    let (status, _) = c.call("GET", "/admin/image-cash-letters/icl_20991231A", Some(&t.operator), None).await;
    assert_eq!(status, 404);
}
