//! `achd demo`: a newcomer's tour in one command. It starts a sandbox server on a
//! temporary directory, then, over real HTTPS like any client: creates a partner
//! and a merchant, submits debits and a credit, voids one, moves the clock past
//! the cut-off, records a return, moves it past settlement, reverses a settled
//! debit, and prints each step and the status-changes feed.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use ach_core::calendar;
use ach_core::secrets::KeyHash;
use base64::Engine as _;
use chrono::{Datelike, Duration, NaiveTime, Utc, Weekday};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::rt::TokioIo;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use serde_json::{json, Value};

/// The merchant application the tour submits.
const APPLICATION: &str = include_str!("../../examples/requests/merchant.json");

/// The server child process and its directory; both go away on drop.
struct Sandbox {
    child: Child,
    dir: PathBuf,
    address: String,
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn start() -> Result<Sandbox, String> {
    let dir = std::env::temp_dir().join(format!("achd-demo-{}", ach_core::ids::random_alphanumeric(10)));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut child = Command::new(exe)
        .args(["serve", "--sandbox", "--listen", "127.0.0.1:0", "--data"])
        .arg(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start the server: {e}"))?;
    let stdout = child.stdout.take().ok_or("no server output")?;
    let mut address = None;
    for line in BufReader::new(stdout).lines() {
        let line = line.map_err(|e| e.to_string())?;
        if let Some(a) = line.strip_prefix("listening on https://") {
            address = Some(a.trim().to_owned());
            break;
        }
    }
    let address = address.ok_or("the server did not start")?;
    Ok(Sandbox { child, dir, address })
}

/// One HTTPS connection to the sandbox, trusting only its generated certificate.
struct Client {
    send: hyper::client::conn::http1::SendRequest<Full<Bytes>>,
    operator: String,
}

impl Client {
    async fn connect(sandbox: &Sandbox) -> Result<Client, String> {
        let pem = std::fs::read(sandbox.dir.join(crate::tls::CERT_FILE)).map_err(|e| e.to_string())?;
        let mut roots = rustls::RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(&pem) {
            roots.add(cert.map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
        }
        let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_root_certificates(roots)
            .with_no_client_auth();
        let tcp = tokio::net::TcpStream::connect(&sandbox.address).await.map_err(|e| e.to_string())?;
        let name = ServerName::try_from("localhost").map_err(|e| e.to_string())?;
        let tls = tokio_rustls::TlsConnector::from(std::sync::Arc::new(config))
            .connect(name, tcp)
            .await
            .map_err(|e| format!("TLS: {e}"))?;
        let (send, conn) =
            hyper::client::conn::http1::handshake(TokioIo::new(tls)).await.map_err(|e| e.to_string())?;
        tokio::spawn(conn);
        let operator =
            std::fs::read_to_string(sandbox.dir.join("operator.key")).map_err(|e| e.to_string())?;
        Ok(Client { send, operator: operator.trim().to_owned() })
    }

    async fn call(
        &mut self,
        method: &str,
        path: &str,
        key: &str,
        body: Option<Value>,
    ) -> Result<(u16, Value), String> {
        let auth = base64::engine::general_purpose::STANDARD.encode(format!("{key}:"));
        let bytes = body.map(|b| b.to_string()).unwrap_or_default();
        let request = hyper::Request::builder()
            .method(method)
            .uri(path)
            .header("host", "localhost")
            .header("authorization", format!("Basic {auth}"))
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(bytes)))
            .map_err(|e| e.to_string())?;
        let response = self.send.send_request(request).await.map_err(|e| e.to_string())?;
        let status = response.status().as_u16();
        let body = response.into_body().collect().await.map_err(|e| e.to_string())?.to_bytes();
        let value = serde_json::from_slice(&body).map_err(|e| format!("{path}: not JSON: {e}"))?;
        println!("  {method} {path} → {status}");
        Ok((status, value))
    }
}

fn field<'a>(v: &'a Value, path: &[&str]) -> Result<&'a str, String> {
    let mut cur = v;
    for p in path {
        cur = &cur[*p];
    }
    cur.as_str().ok_or_else(|| format!("missing {} in {v}", path.join(".")))
}

fn masked(key: &str) -> String {
    format!("{}… (sha256 {:02x?}…)", &key[..3.min(key.len())], &KeyHash::of(key).as_bytes()[..4])
}

/// The next weekday banking day at `time` Eastern, as RFC 3339.
fn next_banking_day_at(after: chrono::NaiveDate, hour: u32, minute: u32) -> chrono::DateTime<Utc> {
    let mut day = calendar::next_banking_day(after);
    while matches!(day.weekday(), Weekday::Sat | Weekday::Sun) {
        day = calendar::next_banking_day(day);
    }
    let local = day.and_time(NaiveTime::from_hms_opt(hour, minute, 0).unwrap_or_default());
    local
        .and_local_timezone(chrono_tz::America::New_York)
        .earliest()
        .map_or_else(Utc::now, |t| t.with_timezone(&Utc))
}

async fn tour(sandbox: &Sandbox) -> Result<(), String> {
    let mut c = Client::connect(sandbox).await?;
    let op = c.operator.clone();
    let monday = next_banking_day_at(calendar::eastern_date(Utc::now()), 10, 0);
    println!("\n1. The sandbox clock moves to the next banking day, 10:00 Eastern");
    c.call("POST", "/admin/clock", &op, Some(json!({"now": monday.to_rfc3339()}))).await?;

    println!("\n2. The operator creates a partner (its API key is shown once; only its hash is stored)");
    let (_, p) = c.call("POST", "/admin/partners", &op, Some(json!({"name": "Demo Partner"}))).await?;
    let (pid, key) =
        (field(&p, &["payload", "partner_id"])?.to_owned(), field(&p, &["payload", "api_key"])?.to_owned());
    println!("  partner {pid}, key {}", masked(&key));

    println!("\n3. The partner submits a merchant; the operator approves it");
    let mut app: Value = serde_json::from_str(APPLICATION).map_err(|e| e.to_string())?;
    app["partner_id"] = json!(pid);
    app["velocities"]["decline_duplicates"] = json!(false);
    let (_, m) = c.call("POST", "/merchants", &key, Some(app)).await?;
    let mid = field(&m, &["id"])?.to_owned();
    c.call("POST", &format!("/admin/merchants/{mid}/approve"), &op, Some(json!({}))).await?;
    println!("  merchant {mid} approved");

    println!("\n4. Three debits and a credit");
    let mut ids = Vec::new();
    for (kind, amount, account) in [
        ("debit", "125.00", "1111222"),
        ("debit", "60.00", "3333444"),
        ("debit", "42.50", "5555666"),
        ("credit", "20.00", "7777888"),
    ] {
        let body = json!({"partner_id": pid, "merchant_id": mid, "amount": amount, "description": format!("demo {kind}"),
            "type": kind, "standard_entry_class": "PPD",
            "customer": {"name": "Ada Lovelace", "routing_number": "021000021", "account_number": account, "account_type": "checking"}});
        let (_, t) = c.call("POST", "/transactions", &key, Some(body)).await?;
        let id = field(&t, &["payload", "id"])?.to_owned();
        println!("  {kind} of ${amount}: {id}");
        ids.push(id);
    }

    println!("\n5. Void the first debit while it is Pending");
    c.call("PUT", &format!("/transactions/{}/void?partner_id={pid}", ids[0]), &key, None).await?;

    let cutoff = monday + Duration::hours(8) + Duration::minutes(30);
    println!("\n6. The clock passes the 6 PM Eastern cut-off: Pending → B Originated");
    let (_, moved) = c.call("POST", "/admin/clock", &op, Some(json!({"now": cutoff.to_rfc3339()}))).await?;
    println!("  originated: {}", moved["payload"]["originated"]);

    println!("\n7. The receiving bank returns the second debit (R01, insufficient funds)");
    c.call("POST", "/admin/returns", &op, Some(json!({"transaction_id": ids[1], "return_code": "R01"})))
        .await?;

    let later = next_banking_day_at(calendar::eastern_date(cutoff) + Duration::days(4), 9, 0);
    println!(
        "\n8. The clock passes settlement (credits on the effective date, debits two banking days later)"
    );
    let (_, moved) = c.call("POST", "/admin/clock", &op, Some(json!({"now": later.to_rfc3339()}))).await?;
    println!("  settled: {}", moved["payload"]["settled"]);

    println!("\n9. Reverse the settled third debit: a new credit transaction");
    let (_, r) =
        c.call("PUT", &format!("/transactions/{}/reverse?partner_id={pid}", ids[2]), &key, None).await?;
    println!("  reversal {}", field(&r, &["payload", "reversal_id"])?);

    println!("\n10. The status-changes feed (from pointer 0)");
    let (_, feed) = c.call("GET", &format!("/status-changes/0?partner_id={pid}"), &key, None).await?;
    println!(
        "  {:<27} {:<6} {:<19} {:<10} {:<10} {:<10} {:<5} reason",
        "transaction", "status", "changed (ET)", "originated", "effective", "settled", "code"
    );
    for ch in feed["payload"]["changes"].as_array().into_iter().flatten() {
        let s = |k: &str| ch[k].as_str().unwrap_or("-").to_owned();
        println!(
            "  {:<27} {:<6} {:<19} {:<10} {:<10} {:<10} {:<5} {}",
            s("transaction_id"),
            s("status"),
            s("change_timestamp"),
            s("origination_date"),
            s("effective_date"),
            s("settlement_date"),
            s("return_code"),
            s("reason")
        );
    }
    println!("  new_pointer: {}", feed["payload"]["new_pointer"].as_str().unwrap_or(""));
    Ok(())
}

/// Run the tour; exit 0 when every step answered as expected.
pub fn run() -> std::process::ExitCode {
    let sandbox = match start() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("achd demo: {e}");
            return std::process::ExitCode::from(1);
        }
    };
    println!(
        "A sandbox server is running at https://{} (data in {})",
        sandbox.address,
        display(&sandbox.dir)
    );
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("achd demo: {e}");
            return std::process::ExitCode::from(1);
        }
    };
    let result = runtime.block_on(tour(&sandbox));
    drop(sandbox);
    match result {
        Ok(()) => {
            println!("\nThe sandbox server has stopped and its directory is gone. Run your own with: achd serve --sandbox");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("achd demo: {e}");
            std::process::ExitCode::from(1)
        }
    }
}

fn display(p: &Path) -> String {
    p.display().to_string()
}
