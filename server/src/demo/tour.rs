//! The tour's script, independent of how requests travel: `achd demo` runs it over
//! real HTTPS against a sandbox server; its tests run it in process, through the
//! router, for every start day of two years.
//!
//! Every clock step comes from the engine's own calendar: the cut-off is the next
//! one after the start ([`calendar::next_cutoff_after`]), and settlement waits
//! until the latest settlement date the feed reports has been reached
//! ([`lifecycle::settlement_instant`]). No step assumes a number of days, so
//! weekends, Federal Reserve holidays and daylight-saving switches are the
//! calendar's business, not the tour's.

use ach_core::secrets::KeyHash;
use ach_core::{calendar, lifecycle};
use chrono::{DateTime, Duration, NaiveDate, NaiveTime, TimeZone, Utc};
use chrono_tz::America::New_York;
use serde_json::{json, Value};

/// The merchant application the tour submits.
const APPLICATION: &str = include_str!("../../../examples/requests/merchant.json");

/// The Eastern time of day the tour starts at.
const START_TIME: NaiveTime = match NaiveTime::from_hms_opt(10, 0, 0) {
    Some(t) => t,
    None => panic!("10:00 is a time of day"),
};

/// One request of the tour.
pub struct Call<'a> {
    /// The HTTP method.
    pub method: &'a str,
    /// The path, with its query.
    pub path: &'a str,
    /// The API key, sent as the Basic-auth user name.
    pub key: &'a str,
    /// The JSON body, if any.
    pub body: Option<Value>,
}

/// How requests reach the service.
pub trait Api {
    /// Send one request and answer its HTTP status and JSON body.
    fn call(&mut self, call: Call<'_>) -> Result<(u16, Value), String>;
    /// The operator's key.
    fn operator_key(&self) -> String;
}

/// What the tour saw: enough to check its whole lifecycle.
#[derive(Debug)]
pub struct TourSummary {
    /// The voided debit, the returned debit, the settled debit, the credit.
    pub ids: [String; 4],
    /// Transactions the cut-off moved to B.
    pub originated: u64,
    /// Transactions the settlement step moved to S.
    pub settled: u64,
    /// The reversal of the settled debit.
    pub reversal: String,
    /// The partner's status-changes feed from the start.
    pub changes: Vec<Value>,
}

/// The instant the tour starts on `day`: 10:00 Eastern.
pub fn start_instant(day: NaiveDate) -> DateTime<Utc> {
    eastern(day, START_TIME)
}

fn eastern(day: NaiveDate, time: NaiveTime) -> DateTime<Utc> {
    // 10:00 and 09:00 exist on every day (daylight-saving switches happen at 02:00).
    New_York.from_local_datetime(&day.and_time(time)).earliest().map_or_else(
        || DateTime::from_naive_utc_and_offset(day.and_time(time), Utc),
        |t| t.with_timezone(&Utc),
    )
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

/// One step's call, which must answer `want`.
fn expect(
    api: &mut dyn Api,
    say: &mut dyn FnMut(String),
    (method, path, key): (&str, &str, &str),
    body: Option<Value>,
    want: u16,
) -> Result<Value, String> {
    let (status, value) = api.call(Call { method, path, key, body })?;
    say(format!("  {method} {path} → {status}"));
    if status != want {
        return Err(format!("{method} {path} answered {status}, not {want}: {value}"));
    }
    Ok(value)
}

/// Run the tour from 10:00 Eastern on `day`; `say` gets every line to show.
pub fn run(api: &mut dyn Api, day: NaiveDate, say: &mut dyn FnMut(String)) -> Result<TourSummary, String> {
    let op = api.operator_key();
    let start = start_instant(day);
    let (pid, key) = open_partner(api, say, &op, day, start)?;
    let mid = approve_merchant(api, say, &op, &key, &pid)?;
    let ids = create_transactions(api, say, &key, &pid, &mid)?;

    say("\n5. Void the first debit while it is Pending".into());
    let void = format!("/transactions/{}/void?partner_id={pid}", ids[0]);
    expect(api, say, ("PUT", &void, &key), None, 200)?;

    let originated = pass_cutoff(api, say, &op, start)?;

    say("\n7. The receiving bank returns the second debit (R01, insufficient funds)".into());
    let ret = json!({"transaction_id": ids[1], "return_code": "R01"});
    expect(api, say, ("POST", "/admin/returns", &op), Some(ret), 200)?;

    let feed = format!("/status-changes/0?partner_id={pid}");
    let settled = pass_settlement(api, say, (&op, &key), &feed, &ids[2..])?;

    say("\n9. Reverse the settled third debit: a new credit transaction".into());
    let reverse = format!("/transactions/{}/reverse?partner_id={pid}", ids[2]);
    let r = expect(api, say, ("PUT", &reverse, &key), None, 200)?;
    let reversal = field(&r, &["payload", "reversal_id"])?.to_owned();
    say(format!("  reversal {reversal}"));

    say("\n10. The status-changes feed (from pointer 0)".into());
    let page = expect(api, say, ("GET", &feed, &key), None, 200)?;
    let changes = page["payload"]["changes"].as_array().cloned().unwrap_or_default();
    print_feed(&changes, say);
    say(format!("  new_pointer: {}", page["payload"]["new_pointer"].as_str().unwrap_or("")));
    Ok(TourSummary { ids, originated, settled, reversal, changes })
}

/// Steps 1 and 2: set the sandbox clock to `start`, and create a partner; its id
/// and API key.
fn open_partner(
    api: &mut dyn Api,
    say: &mut dyn FnMut(String),
    op: &str,
    day: NaiveDate,
    start: DateTime<Utc>,
) -> Result<(String, String), String> {
    say(format!("\n1. The sandbox clock stands at {day}, 10:00 Eastern"));
    expect(api, say, ("POST", "/admin/clock", op), Some(json!({"now": start.to_rfc3339()})), 200)?;

    say("\n2. The operator creates a partner (its API key is shown once; only its hash is stored)".into());
    let p = expect(api, say, ("POST", "/admin/partners", op), Some(json!({"name": "Demo Partner"})), 201)?;
    let (pid, key) =
        (field(&p, &["payload", "partner_id"])?.to_owned(), field(&p, &["payload", "api_key"])?.to_owned());
    say(format!("  partner {pid}, key {}", masked(&key)));
    Ok((pid, key))
}

/// Step 3: the partner submits the example merchant, the operator approves it;
/// the merchant's id.
fn approve_merchant(
    api: &mut dyn Api,
    say: &mut dyn FnMut(String),
    op: &str,
    key: &str,
    pid: &str,
) -> Result<String, String> {
    say("\n3. The partner submits a merchant; the operator approves it".into());
    let mut app: Value = serde_json::from_str(APPLICATION).map_err(|e| e.to_string())?;
    app["partner_id"] = json!(pid);
    app["velocities"]["decline_duplicates"] = json!(false);
    let m = expect(api, say, ("POST", "/merchants", key), Some(app), 201)?;
    let mid = field(&m, &["id"])?.to_owned();
    let approve = format!("/admin/merchants/{mid}/approve");
    expect(api, say, ("POST", &approve, op), Some(json!({})), 200)?;
    say(format!("  merchant {mid} approved"));
    Ok(mid)
}

/// Step 4: three debits and a credit; their ids in that order.
fn create_transactions(
    api: &mut dyn Api,
    say: &mut dyn FnMut(String),
    key: &str,
    pid: &str,
    mid: &str,
) -> Result<[String; 4], String> {
    say("\n4. Three debits and a credit".into());
    let mut ids = Vec::new();
    // Four payees, each with their own account (a credit to a second
    // account under one name would be held for review).
    for (kind, amount, name, account) in [
        ("debit", "125.00", "Ada Lovelace", "1111222"),
        ("debit", "60.00", "Grace Hopper", "3333444"),
        ("debit", "42.50", "Alan Turing", "5555666"),
        ("credit", "20.00", "Edsger Dijkstra", "7777888"),
    ] {
        let body = json!({"partner_id": pid, "merchant_id": mid, "amount": amount,
            "description": format!("demo {kind}"), "type": kind, "standard_entry_class": "PPD",
            "customer": {"name": name, "routing_number": "021000021", "account_number": account,
                         "account_type": "checking"}});
        let t = expect(api, say, ("POST", "/transactions", key), Some(body), 201)?;
        let id = field(&t, &["payload", "id"])?.to_owned();
        say(format!("  {kind} of ${amount}: {id}"));
        ids.push(id);
    }
    ids.try_into().map_err(|_| "four transactions".to_owned())
}

/// Step 6: move the clock past the next cut-off after `start`; how many
/// transactions it originated (three).
fn pass_cutoff(
    api: &mut dyn Api,
    say: &mut dyn FnMut(String),
    op: &str,
    start: DateTime<Utc>,
) -> Result<u64, String> {
    let (cutoff_day, cutoff) = calendar::next_cutoff_after(start);
    let after_cutoff = cutoff + Duration::minutes(30);
    say(format!(
        "\n6. The clock passes the next cut-off, 6 PM Eastern on {cutoff_day}: Pending → B Originated"
    ));
    let moved =
        expect(api, say, ("POST", "/admin/clock", op), Some(json!({"now": after_cutoff.to_rfc3339()})), 200)?;
    let originated = moved["payload"]["originated"].as_u64().unwrap_or_default();
    say(format!("  originated: {originated}"));
    if originated != 3 {
        return Err(format!("the cut-off originated {originated} transactions, not 3"));
    }
    Ok(originated)
}

/// Step 8: read the settlement dates of `ids` from the `feed`, and move the clock
/// past the latest; how many transactions settled (two).
fn pass_settlement(
    api: &mut dyn Api,
    say: &mut dyn FnMut(String),
    (op, key): (&str, &str),
    feed: &str,
    ids: &[String],
) -> Result<u64, String> {
    let page = expect(api, say, ("GET", feed, key), None, 200)?;
    let settles = latest_settlement(&page, ids)?;
    let after_settlement = lifecycle::settlement_instant(settles) + Duration::minutes(30);
    say(format!(
        "\n8. The clock passes settlement on {settles} (credits settle on the effective date, debits two banking days later)"
    ));
    let moved = expect(
        api,
        say,
        ("POST", "/admin/clock", op),
        Some(json!({"now": after_settlement.to_rfc3339()})),
        200,
    )?;
    let settled = moved["payload"]["settled"].as_u64().unwrap_or_default();
    say(format!("  settled: {settled}"));
    if settled != 2 {
        return Err(format!("settlement settled {settled} transactions, not 2"));
    }
    Ok(settled)
}

/// The latest settlement date the feed's B changes give for `ids`.
fn latest_settlement(page: &Value, ids: &[String]) -> Result<NaiveDate, String> {
    let changes = page["payload"]["changes"].as_array().ok_or("the feed has no changes")?;
    let mut latest = None;
    for id in ids {
        let change = changes
            .iter()
            .find(|c| c["transaction_id"] == id.as_str() && c["status"] == "B")
            .ok_or_else(|| format!("{id} did not originate"))?;
        let date = calendar::parse_date(field(change, &["settlement_date"])?).map_err(|e| e.to_string())?;
        latest = latest.max(Some(date));
    }
    latest.ok_or_else(|| "no transaction to settle".to_owned())
}

fn print_feed(changes: &[Value], say: &mut dyn FnMut(String)) {
    say(format!(
        "  {:<27} {:<6} {:<19} {:<10} {:<10} {:<10} {:<5} reason",
        "transaction", "status", "changed (ET)", "originated", "effective", "settled", "code"
    ));
    for ch in changes {
        let s = |k: &str| ch[k].as_str().unwrap_or("-").to_owned();
        say(format!(
            "  {:<27} {:<6} {:<19} {:<10} {:<10} {:<10} {:<5} {}",
            s("transaction_id"),
            s("status"),
            s("change_timestamp"),
            s("origination_date"),
            s("effective_date"),
            s("settlement_date"),
            s("return_code"),
            s("reason")
        ));
    }
}
