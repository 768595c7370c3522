//! Storage: a file database survives a reopen, batches commit each operation on its
//! own terms, and secrets never reach the database file in clear.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use ach_core::engine::{key_file_for, Caller, Engine, Operation, Outcome, Refusal};
use ach_core::model::{Status, StatusChange};
use ach_core::secrets::EncryptionKey;
use ach_core::validation::{FieldError, ProblemCode};
use ach_core::AchError;
use ach_tests::world::{
    amount, body, customer_body, et, open_application, options, pointer_position, transaction, World,
    OPERATOR_KEY,
};
use serde_json::json;

const START: &str = "2026-11-23 10:00";

/// A new temporary directory and the database path in it (gone with the
/// directory).
fn new_db() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ach.redb");
    (dir, path)
}

fn open(path: &Path) -> World {
    World::with(Engine::open(path, options(START)).unwrap())
}

/// What the first life of a database left behind.
struct Before {
    partner: String,
    partner_key: String,
    caller: Caller,
    merchant: String,
    merchant_key: String,
    merchant_caller: Caller,
    underwriting: String,
    customer: String,
    deleted: String,
    originated: String,
    pending: String,
    feed: Vec<StatusChange>,
    /// Every pointer handed out while reading in steps, with its position.
    pointers: Vec<(String, usize)>,
    events: Vec<ach_core::model::Event>,
}

fn first_life(path: &Path) -> Before {
    let w = open(path);
    let (partner, partner_key, caller) = w.partner_with_key();
    let (merchant, merchant_key, merchant_caller) = w.roomy_merchant(&partner, &caller, &["PPD"]);
    let underwriting = w.submit(&partner, &caller, &open_application(&["PPD"]));
    let customer = w.customer(&partner, &caller, "global", "918273645500");
    let deleted = w.customer(&partner, &caller, &merchant, "918273645501");
    let delete = Operation::DeleteCustomer { partner_id: partner.clone(), customer_id: deleted.clone() };
    assert_eq!(w.run(&caller, delete), Ok(Outcome::CustomerDeleted { customer_id: deleted.clone() }));
    let mut pointers = vec![("0".to_owned(), 0)];
    let mut step = |w: &World| {
        let (last, _) = pointers.last().unwrap().clone();
        let page = w.engine.status_changes(&caller, &partner, &last).unwrap();
        let position = pointer_position(&page.new_pointer).unwrap() as usize;
        pointers.push((page.new_pointer, position));
    };
    let originated = w.debit(&partner, &caller, &merchant, "10.00");
    let returned = w.debit(&partner, &caller, &merchant, "11.00");
    step(&w);
    w.at("2026-11-24 12:00");
    step(&w);
    w.return_(&returned, "R01").unwrap();
    let pending = w.debit(&partner, &caller, &merchant, "12.00");
    step(&w);
    let feed = w.changes(&partner, &caller);
    assert_eq!(feed.len(), 6, "2 × A, 2 × B, R, A");
    Before {
        events: w.events(&merchant_caller),
        partner,
        partner_key,
        caller,
        merchant,
        merchant_key,
        merchant_caller,
        underwriting,
        customer,
        deleted,
        originated,
        pending,
        feed,
        pointers,
    }
}

#[test]
fn a_reopened_database_has_everything_and_old_pointers_still_work() {
    let (_dir, path) = new_db();
    let b = first_life(&path);
    let w = open(&path);
    // Keys authenticate the same callers.
    assert_eq!(w.engine.authenticate(&b.partner_key), Ok(b.caller.clone()));
    assert_eq!(w.engine.authenticate(&b.merchant_key), Ok(b.merchant_caller.clone()));
    assert_eq!(w.engine.authenticate("pk_not_a_key"), Err(Refusal::Authentication));
    // The whole feed, and every pointer issued before continues where it was.
    assert_eq!(w.changes(&b.partner, &b.caller), b.feed);
    for (pointer, position) in &b.pointers {
        let page = w.engine.status_changes(&b.caller, &b.partner, pointer).unwrap();
        assert_eq!(page.changes, b.feed[*position..], "pointer at {position}");
    }
    assert_eq!(w.events(&b.merchant_caller), b.events);
    // Move the clock past the first life's last instant before writing anything.
    w.at("2026-11-24 12:00");
    // Transactions kept their states and their places in the schedule.
    let refused = w.void(&b.partner, &b.caller, &b.originated).unwrap_err();
    assert!(refused.errors()[0].message.contains("Originated"), "{refused:?}");
    assert_eq!(
        w.return_(&b.feed[4].transaction_id, "R02"),
        Err(Refusal::problem_with_status(
            AchError::FailedToAccept,
            409,
            "",
            ProblemCode::Conflict,
            "this transaction is already returned"
        )),
        "already returned"
    );
    w.at("2026-12-10 12:00");
    let status = |id: &str| w.history(&b.partner, &b.caller, id).last().map(|c| c.status);
    assert_eq!(status(&b.originated), Some(Status::S));
    assert_eq!(status(&b.pending), Some(Status::S), "the pending index survived");
    // Merchants: approved still transacts, underwriting still waits.
    let mut v = transaction(&b.merchant, "debit", "13.00");
    v["customer"] = json!({"id": b.customer});
    let by_token = w.create(&b.partner, &b.caller, &v).unwrap();
    let refused =
        w.create(&b.partner, &b.caller, &transaction(&b.underwriting, "debit", "1.00")).unwrap_err();
    assert_eq!(refused.message(), "Unable to accept PPD transactions for this merchant");
    // Customers: the deleted one is still deleted.
    v["customer"] = json!({"id": b.deleted});
    let refused = w.create(&b.partner, &b.caller, &v).unwrap_err();
    assert!(refused.errors()[0].message.contains("deleted"), "{refused:?}");
    // New changes continue the same feed: the last old pointer sees exactly them.
    let (last, position) = b.pointers.last().unwrap();
    let page = w.engine.status_changes(&b.caller, &b.partner, last).unwrap();
    let all = w.changes(&b.partner, &b.caller);
    assert_eq!(page.changes, all[*position..]);
    assert!(page.changes.iter().any(|c| c.transaction_id == by_token));
    assert_eq!(all[..b.feed.len()], b.feed[..]);
    drop(w);
    // A third open of the untouched file works too.
    let w = open(&path);
    assert_eq!(w.changes(&b.partner, &b.caller), all);
    assert_eq!(w.engine.audit_usage(), Ok(Ok(())));
}

#[test]
fn a_reopened_sandbox_clock_does_not_move_backwards() {
    let (_dir, path) = new_db();
    let b = first_life(&path);
    let last = b.feed.last().unwrap().change_timestamp.clone();
    let w = open(&path);
    assert!(w.engine.now() >= et("2026-11-24 12:00"), "clock reads {}", w.engine.now());
    let id = w.debit(&b.partner, &b.caller, &b.merchant, "14.00");
    let created = w.history(&b.partner, &b.caller, &id)[0].change_timestamp.clone();
    assert!(created >= last, "{created} is before {last}, already in the feed");
}

#[test]
fn a_batch_answers_each_operation_in_order_and_refusals_write_nothing() {
    let w = World::new(START);
    let (p, pc) = w.partner();
    let (m, _, _) = w.roomy_merchant(&p, &pc, &["PPD"]);
    let create = |v: serde_json::Value| {
        (pc.clone(), Operation::CreateTransaction { partner_id: p.clone(), body: body(&v) })
    };
    let mut bad_amount = transaction(&m, "debit", "1.00");
    bad_amount["amount"] = json!("abc");
    let batch = vec![
        create(transaction(&m, "debit", "1.01")),
        create(transaction("mer_0123456789abcdefghijKL", "debit", "1.02")),
        (
            pc.clone(),
            Operation::CreateCustomer {
                partner_id: p.clone(),
                body: body(&customer_body("global", "55556666")),
            },
        ),
        (
            pc.clone(),
            Operation::DeleteCustomer {
                partner_id: p.clone(),
                customer_id: "cus_0123456789abcdefghijKL".into(),
            },
        ),
        create(transaction(&m, "credit", "1.03")),
        (
            pc.clone(),
            Operation::VoidTransaction {
                partner_id: p.clone(),
                transaction_id: "txn_0123456789abcdefghijKL".into(),
            },
        ),
        (pc.clone(), Operation::CreatePartner { name: "Mallory".into() }),
        create(bad_amount),
        create(transaction(&m, "debit", "1.04")),
    ];
    let results = w.engine.execute_batch(batch);
    assert_eq!(results.len(), 9);
    let created: Vec<String> = [0, 4, 8]
        .iter()
        .map(|&i| match &results[i] {
            Ok(Outcome::TransactionCreated { transaction_id }) => transaction_id.clone(),
            other => panic!("{i}: {other:?}"),
        })
        .collect();
    assert!(matches!(results[2], Ok(Outcome::CustomerCreated { .. })));
    let messages: Vec<String> =
        [1, 3, 5, 6, 7].iter().map(|&i| results[i].clone().unwrap_err().message()).collect();
    assert_eq!(
        messages,
        [
            "'mer_0123456789abcdefghijKL' is an invalid Merchant ID",
            "Failed to accept this transaction",
            "Failed to accept this transaction",
            "Authentication failed.",
            "'abc' is an invalid Amount",
        ]
    );
    let page = w.engine.status_changes(&pc, &p, "0").unwrap();
    let ids: Vec<&str> = page.changes.iter().map(|c| c.transaction_id.as_str()).collect();
    assert_eq!(ids, created.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(pointer_position(&page.new_pointer), Some(3), "refusals took no sequence number");

    // Operations see their neighbours' writes: void, void again, reverse.
    let t = created[0].clone();
    let void =
        || (pc.clone(), Operation::VoidTransaction { partner_id: p.clone(), transaction_id: t.clone() });
    let reverse =
        (pc.clone(), Operation::ReverseTransaction { partner_id: p.clone(), transaction_id: t.clone() });
    let results = w.engine.execute_batch(vec![void(), void(), reverse]);
    assert!(matches!(results[0], Ok(Outcome::TransactionVoided { .. })));
    assert_eq!(results[1].clone().unwrap_err().status(), 409);
    assert_eq!(results[2].clone().unwrap_err().status(), 409);
    let after = w.engine.status_changes(&pc, &p, &page.new_pointer).unwrap();
    assert_eq!(
        after.changes.iter().map(|c| (c.transaction_id.as_str(), c.status)).collect::<Vec<_>>(),
        [(t.as_str(), Status::R)]
    );

    // A batch of refusals only writes nothing at all.
    let results = w.engine.execute_batch(vec![void(), void()]);
    assert!(results.iter().all(Result::is_err));
    assert!(w.engine.status_changes(&pc, &p, &after.new_pointer).unwrap().changes.is_empty());
    assert!(w.engine.execute_batch(Vec::new()).is_empty());

    // The sandbox clock moved inside a batch applies to the operations after it.
    let results = w.engine.execute_batch(vec![
        create(transaction(&m, "debit", "2.01")),
        (Caller::Operator, Operation::SetClock { now: et("2026-11-24 09:00") }),
        create(transaction(&m, "debit", "2.02")),
    ]);
    let (
        Ok(Outcome::TransactionCreated { transaction_id: a }),
        Ok(Outcome::TransactionCreated { transaction_id: c }),
    ) = (&results[0], &results[2])
    else {
        panic!("{results:?}")
    };
    assert_eq!(w.engine.now(), et("2026-11-24 09:00"));
    let tail = w.engine.status_changes(&pc, &p, &after.new_pointer).unwrap().changes;
    let tail: Vec<(&str, Status, &str)> =
        tail.iter().map(|c| (c.transaction_id.as_str(), c.status, &c.change_timestamp[..])).collect();
    assert_eq!(tail[0], (a.as_str(), Status::A, "2026-11-23 10:00:00"));
    assert_eq!(tail.last().copied(), Some((c.as_str(), Status::A, "2026-11-24 09:00:00")));
    assert!(tail.contains(&(a.as_str(), Status::B, "2026-11-23 18:00:00")));
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[test]
fn secrets_never_reach_the_database_file_in_clear() {
    let (dir, path) = new_db();
    let w = open(&path);
    let (p, partner_key, pc) = w.partner_with_key();
    let mut app = open_application(&["PPD"]);
    app["principal"][0]["ssn"] = json!("472-83-1956");
    app["principal"][0]["driver_license"] = json!("Q555-1234-9876");
    app["custodial_bank_account"]["account"] = json!("55501234987");
    app["business_data"]["federal_tax_id"] = json!("98-7650123");
    let m = w.submit(&p, &pc, &app);
    let (merchant_key, _) = w.approve(&m, ach_tests::world::roomy_limits());
    let token = w.customer(&p, &pc, "global", "918273645500");
    let mut inline = transaction(&m, "debit", "21.00");
    inline["customer"]["account_number"] = json!("918273645500");
    w.create(&p, &pc, &inline).unwrap();
    let mut by_token = transaction(&m, "debit", "22.00");
    by_token["customer"] = json!({"id": token});
    w.create(&p, &pc, &by_token).unwrap();
    // A refused request carrying the account writes nothing either.
    inline["merchant_id"] = json!("mer_0123456789abcdefghijKL");
    let unknown = "mer_0123456789abcdefghijKL";
    let message = format!("'{unknown}' is an invalid Merchant ID");
    assert_eq!(
        w.create(&p, &pc, &inline),
        Err(Refusal::Refused {
            error: AchError::InvalidMerchantId { value: unknown.into() },
            status: 422,
            errors: vec![FieldError { field: "merchant_id".into(), code: ProblemCode::NotFound, message }],
        })
    );
    // A refusal stored for idempotent replay does not echo the secrets it refused.
    let mut bad = app.clone();
    bad["principal"][0]["ssn"] = json!("666-83-1957");
    bad["custodial_bank_account"]["account"] = json!("0000000");
    bad["billing_bank_account"] = app["custodial_bank_account"].clone();
    bad["billing_bank_account"]["account"] = json!("55509876123");
    bad["billing_bank_account"]["routing"] = json!("021000022");
    let submit = Operation::SubmitMerchant { partner_id: p.clone(), body: body(&bad) };
    let op = Operation::Idempotent { key: "application-1".into(), operation: Box::new(submit) };
    let refused = w.run(&pc, op).unwrap_err();
    let fields: Vec<&str> = refused.errors().iter().map(|e| e.field.as_str()).collect();
    assert!(fields.iter().any(|f| f.contains("ssn")), "{fields:?}");
    assert!(fields.iter().any(|f| f.contains("billing_bank_account")), "{fields:?}");
    drop(w);

    let bytes = std::fs::read(&path).unwrap();
    let key_file = key_file_for(&path);
    assert_eq!(key_file, dir.path().join("ach.redb.key"));
    let key_text = std::fs::read_to_string(&key_file).unwrap();
    assert!(EncryptionKey::from_hex(key_text.trim_end()).is_some(), "64 hex digits");
    assert_eq!(key_text.len(), 65, "the key file holds the key and a newline, nothing else");
    assert!(
        contains(&bytes, &p) && contains(&bytes, &m) && contains(&bytes, &token),
        "the scan reads records"
    );
    for secret in [
        "918273645500",
        "472-83-1956",
        "472831956",
        "Q555-1234-9876",
        "55501234987",
        "98-7650123",
        "987650123",
        "666-83-1957",
        "666831957",
        "55509876123",
        partner_key.as_str(),
        merchant_key.as_str(),
        OPERATOR_KEY,
        key_text.trim_end(),
    ] {
        assert!(!contains(&bytes, secret), "{secret} is in the database file");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&key_file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    }
}

#[test]
fn operator_operations_are_never_idempotent_so_no_api_key_is_stored() {
    let (_dir, path) = new_db();
    let w = open(&path);
    let idem = |key: &str, op: Operation| Operation::Idempotent { key: key.into(), operation: Box::new(op) };
    let refused = w
        .run(&Caller::Operator, idem("partner-1", Operation::CreatePartner { name: "Idem".into() }))
        .unwrap_err();
    assert_eq!(refused.errors()[0].field, "idempotency_key");
    let Ok(Outcome::PartnerCreated { partner_id: p, api_key: partner_key }) =
        w.run(&Caller::Operator, Operation::CreatePartner { name: "Plain".into() })
    else {
        panic!()
    };
    let pc = w.engine.authenticate(&partner_key).unwrap();
    let m = w.submit(&p, &pc, &open_application(&["PPD"]));
    let approve =
        Operation::ApproveMerchant { merchant_id: m.clone(), limits: ach_tests::world::roomy_limits() };
    let partner_only = Refusal::problem_with_status(
        AchError::FailedToAccept,
        422,
        "idempotency_key",
        ProblemCode::InvalidValue,
        "idempotency keys apply to partner operations only",
    );
    assert_eq!(refused, partner_only);
    assert_eq!(w.run(&Caller::Operator, idem("approve-1", approve)), Err(partner_only));
    let (merchant_key, _) = w.approve(&m, ach_tests::world::roomy_limits());
    drop(w);
    let bytes = std::fs::read(&path).unwrap();
    assert!(!contains(&bytes, &partner_key), "the partner's API key is in the database file");
    assert!(!contains(&bytes, &merchant_key), "the merchant's API key is in the database file");
}

#[test]
fn idempotent_requests_leave_no_unkeyed_hash_of_the_account_number() {
    let (_dir, path) = new_db();
    let w = open(&path);
    let (p, pc) = w.partner();
    let (m, _, _) = w.roomy_merchant(&p, &pc, &["PPD"]);
    let mut v = transaction(&m, "debit", "21.00");
    v["customer"]["account_number"] = json!("918273645500");
    let op = Operation::CreateTransaction { partner_id: p.clone(), body: body(&v) };
    let discriminant = format!("{:?}", std::mem::discriminant(&op));
    w.run(&pc, Operation::Idempotent { key: "order-9".into(), operation: Box::new(op) }).unwrap();
    drop(w);
    // What an attacker holding the file computes for each guess of the account.
    let guess = |account: &str| {
        let mut g = v.clone();
        g["customer"]["account_number"] = json!(account);
        let canonical = serde_json::to_string(&g).unwrap();
        let digest = ach_core::secrets::KeyHash::of(&format!("{discriminant}{p}\0{canonical}"));
        digest.as_bytes().iter().map(|b| format!("{b:02x}")).collect::<String>()
    };
    let bytes = std::fs::read(&path).unwrap();
    assert!(!contains(&bytes, &guess("000000005500")), "sanity: a wrong guess is not there");
    assert!(!contains(&bytes, &guess("918273645500")), "the right guess is found in the file");
}

#[test]
fn an_explicit_key_writes_no_key_file_and_another_key_is_refused() {
    let (_dir, path) = new_db();
    let key = EncryptionKey::generate();
    let w = World::with(Engine::open(&path, options(START).with_encryption_key(key.clone())).unwrap());
    let (p, api_key, pc) = w.partner_with_key();
    let (m, _, _) = w.roomy_merchant(&p, &pc, &["PPD"]);
    let token = w.customer(&p, &pc, "global", "918273645500");
    drop(w);
    assert!(!key_file_for(&path).exists());
    // Another key is refused: sealed accounts would not open and duplicate
    // fingerprints would silently reset.
    let other = options(START).with_encryption_key(EncryptionKey::generate());
    assert!(matches!(Engine::open(&path, other), Err(ach_core::engine::OpenError::WrongKey)));
    // The right key still opens it, and everything works.
    let w = World::with(Engine::open(&path, options(START).with_encryption_key(key)).unwrap());
    assert_eq!(w.engine.authenticate(&api_key), Ok(pc.clone()));
    let mut v = transaction(&m, "debit", &amount(2_500));
    v["customer"] = json!({"id": token});
    let id = w.create(&p, &pc, &v).unwrap();
    assert_eq!(w.changes(&p, &pc).len(), 1);
    assert_eq!(w.history(&p, &pc, &id).iter().map(|c| c.status).collect::<Vec<_>>(), [Status::A]);
}

#[test]
fn a_spent_check_stays_spent_across_a_key_change() {
    let (_dir, path) = new_db();
    let w = World::with(
        Engine::open(&path, options(START).with_encryption_key(EncryptionKey::generate())).unwrap(),
    );
    let (p, pc) = w.partner();
    let (m, _, _) = w.roomy_merchant(&p, &pc, &["BOC"]);
    let mut v = transaction(&m, "debit", "31.00");
    v["standard_entry_class"] = json!("BOC");
    v["check_number"] = json!("1001");
    v["check_image_front"] = json!("iVBORw0KGgoAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=");
    v["check_image_back"] = json!("iVBORw0KGgoAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=");
    w.create(&p, &pc, &v).unwrap();
    let again = w.create(&p, &pc, &v).unwrap_err();
    assert_eq!(again.message(), "Duplicate transaction for this check. Check number: 1001");
    drop(w);
    let other = options(START).with_encryption_key(EncryptionKey::generate());
    // Either the engine refuses the wrong key, or the check is still spent.
    if let Ok(engine) = Engine::open(&path, other) {
        let w = World::with(engine);
        let refused = w.create(&p, &pc, &v).unwrap_err();
        assert_eq!(refused.message(), "Duplicate transaction for this check. Check number: 1001");
    }
}

#[test]
fn a_database_open_twice_at_once_is_an_error_not_a_panic() {
    let (_dir, path) = new_db();
    let w = open(&path);
    let (p, pc) = w.partner();
    let refused = Engine::open(&path, options(START)).map(drop).map_err(|e| e.to_string());
    assert_eq!(refused, Err("storage: Database already open. Cannot acquire lock.".into()));
    // The first engine is unharmed: its partner's feed reads, empty.
    let page = w.engine.status_changes(&pc, &p, "0").unwrap();
    assert_eq!(page.changes, []);
    drop(w);
    // Once it is closed the database opens, with the same partner and feed.
    let reopened = Engine::open(&path, options(START)).unwrap();
    assert_eq!(reopened.status_changes(&pc, &p, "0"), Ok(page));
}

#[test]
fn a_clock_beyond_the_calendar_is_refused_not_a_panic() {
    use ach_core::engine::{EngineOptions, OpenError};
    use chrono::{DateTime, Duration, Utc};
    // Near chrono's limits the calendar arithmetic of a create would overflow.
    for at in [DateTime::<Utc>::MAX_UTC, DateTime::<Utc>::MIN_UTC] {
        let refused = Engine::in_memory(EngineOptions::manual(at).sandbox());
        assert!(matches!(refused, Err(OpenError::Clock(_))), "{at}");
    }
    // The last instant of 9999 is a clock; a sandbox cannot be moved past it.
    let last: DateTime<Utc> = "9999-12-31T23:59:59Z".parse().unwrap();
    let engine = Engine::in_memory(EngineOptions::manual(last - Duration::days(3)).sandbox()).unwrap();
    let past = engine.execute(&Caller::Operator, Operation::SetClock { now: last + Duration::days(1) });
    let Err(Refusal::Refused { errors, .. }) = past else { panic!("{past:?}") };
    assert_eq!(errors[0].field, "now");
}

#[test]
fn transaction_ids_follow_creation_order_on_a_stopped_clock_a_clock_set_back_and_a_reopen() {
    let (_dir, path) = new_db();
    let mut ids = Vec::new();
    let (p, pc, m) = {
        let w = open(&path);
        let (p, pc) = w.partner();
        let (m, _, _) = w.roomy_merchant(&p, &pc, &["PPD"]);
        // The sandbox clock stands still: one by one, then batches.
        for _ in 0..20 {
            ids.push(w.debit(&p, &pc, &m, "1.00"));
        }
        for _ in 0..3 {
            let ops = (0..50)
                .map(|_| {
                    let body = body(&transaction(&m, "debit", "2.00"));
                    (pc.clone(), Operation::CreateTransaction { partner_id: p.clone(), body })
                })
                .collect();
            for answer in w.engine.execute_batch(ops) {
                match answer {
                    Ok(Outcome::TransactionCreated { transaction_id }) => ids.push(transaction_id),
                    other => panic!("{other:?}"),
                }
            }
        }
        (p, pc, m)
    };
    // Reopened: the engine learns the newest id from the table.
    let w = open(&path);
    ids.push(w.debit(&p, &pc, &m, "3.00"));
    // The clock moves on (past cut-offs): the time digits follow it.
    w.at("2026-11-30 19:00");
    let later = w.debit(&p, &pc, &m, "4.00");
    assert!(later[4..12] > ids.last().unwrap()[4..12], "the time digits move with the clock");
    ids.push(later);
    for pair in ids.windows(2) {
        assert!(pair[0] < pair[1], "{} was created before {}", pair[0], pair[1]);
    }
    assert_eq!(ids.len(), 172);
}

/// The duplicate window lives in memory and is rebuilt from the stored
/// transactions when the engine opens: a reopened engine still refuses a duplicate
/// made before, still accepts the twin of a voided one, and forgets what the
/// window no longer reaches.
#[test]
fn a_reopened_engine_still_knows_the_duplicate_window() {
    let (_dir, path) = new_db();
    let duplicate = "This is a duplicate transaction";
    let debit = |w: &World, p: &str, pc: &Caller, m: &str, amount: &str| {
        w.create(p, pc, &transaction(m, "debit", amount)).map_err(|f| f.message().to_owned())
    };
    let (p, pc, m) = {
        let w = open(&path);
        let (p, pc) = w.partner();
        let m = w
            .merchant_with(
                &p,
                &pc,
                &ach_tests::world::application(&["PPD"]),
                ach_tests::world::roomy_limits(),
            )
            .0;
        let first = debit(&w, &p, &pc, &m, "10.00").unwrap();
        assert_eq!(w.history(&p, &pc, &first).iter().map(|c| c.status).collect::<Vec<_>>(), [Status::A]);
        let voided = debit(&w, &p, &pc, &m, "20.00").unwrap();
        w.run(&pc, Operation::VoidTransaction { partner_id: p.clone(), transaction_id: voided }).unwrap();
        assert_eq!(debit(&w, &p, &pc, &m, "10.00").unwrap_err(), duplicate);
        (p, pc, m)
    };
    {
        let w = open(&path);
        assert_eq!(debit(&w, &p, &pc, &m, "10.00").unwrap_err(), duplicate, "known after a reopen");
        let twin = debit(&w, &p, &pc, &m, "20.00").unwrap();
        assert_eq!(
            w.history(&p, &pc, &twin).iter().map(|c| c.status).collect::<Vec<_>>(),
            [Status::A],
            "a voided transaction is no one's duplicate"
        );
        assert_eq!(debit(&w, &p, &pc, &m, "20.00").unwrap_err(), duplicate);
        assert_eq!(w.engine.audit_records().unwrap(), Ok(()));
        w.at("2026-11-24 10:30");
    }
    let w = open(&path);
    let later = debit(&w, &p, &pc, &m, "10.00").unwrap();
    assert_eq!(
        w.history(&p, &pc, &later).iter().map(|c| c.status).collect::<Vec<_>>(),
        [Status::A],
        "24 hours later the window no longer reaches it"
    );
    assert_eq!(w.engine.audit_records().unwrap(), Ok(()));
}

/// Many threads submitting the same transaction at once through one engine: the
/// duplicate window is locked for each whole write transaction, so exactly one is
/// accepted and every other is refused as a duplicate.
#[test]
fn the_same_transaction_from_many_threads_at_once_is_accepted_once() {
    let w = World::new(START);
    let (p, pc) = w.partner();
    let m = w
        .merchant_with(&p, &pc, &ach_tests::world::application(&["PPD"]), ach_tests::world::roomy_limits())
        .0;
    let engine = std::sync::Arc::new(w.engine);
    let body = body(&transaction(&m, "debit", "42.00"));
    let answers: Vec<Result<Outcome, Refusal>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..8)
            .map(|_| {
                let (engine, pc, p, body) = (&engine, &pc, &p, &body);
                s.spawn(move || {
                    (0..4)
                        .map(|_| {
                            let op =
                                Operation::CreateTransaction { partner_id: p.clone(), body: body.clone() };
                            engine.execute(pc, op)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(answers.len(), 32);
    assert_eq!(answers.iter().filter(|a| a.is_ok()).count(), 1);
    for a in answers.iter().filter_map(|a| a.as_ref().err()) {
        assert_eq!(a.message(), "This is a duplicate transaction");
    }
}
