//! Re-sealing under a new data key while the engine serves: every kind of
//! sealed value (a partner's name, a merchant's application, a customer's
//! and a transaction's account, a description, check images, origination
//! files, image cash letters, a notification of change, a webhook secret)
//! reads the same after it, each opened by the new key alone; a re-seal
//! stopped part way leaves everything readable and goes on where it stood.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use ach_core::engine::{webhook_signature, CheckSide, Engine, Operation, Outcome, ResealFigures};
use ach_core::secrets::EncryptionKey;
use ach_tests::router;
use ach_tests::world::{options, transaction, World, OPERATOR_KEY};
use base64::Engine as _;
use serde_json::{json, Value};

const START: &str = "2026-11-23 10:00";
const WALL: i64 = 1_795_000_000;

/// A database file in a directory of its own (which goes with it), sealed
/// under `key`.
struct Store {
    _dir: tempfile::TempDir,
    path: PathBuf,
    key: EncryptionKey,
}

impl Store {
    fn open(&self) -> World {
        World::with(Engine::open(&self.path, options(START).with_encryption_key(self.key.clone())).unwrap())
    }
}

/// A check's picture (PNG) for an ICL item.
fn picture(width: u32) -> String {
    let img = image::GrayImage::from_fn(width, 300, |x, y| {
        image::Luma([if (100..140).contains(&y) && x % 7 < 4 { 20 } else { 235 }])
    });
    let mut png = std::io::Cursor::new(Vec::new());
    img.write_to(&mut png, image::ImageFormat::Png).unwrap();
    base64::engine::general_purpose::STANDARD.encode(png.into_inner())
}

/// What the service holds, as its readers show it: everything that is read
/// through a sealed value.
#[derive(PartialEq)]
struct Shown {
    partners: Value,
    merchant: Value,
    customer: Value,
    transactions: Vec<Value>,
    images: Vec<Option<String>>,
    files: Vec<Vec<u8>>,
    letters: Vec<Vec<u8>>,
    /// The merchant's events (a later one may follow them).
    events: Vec<Value>,
}

struct Made {
    partner: String,
    partner_key: String,
    merchant: String,
    merchant_key: String,
    customer: String,
    transactions: Vec<String>,
    icl: String,
    secret: String,
}

fn call(w: &World, method: &str, path: &str, key: &str, body: Option<&Value>) -> Value {
    let (status, v) = router::call(&w.engine, method, path, Some(key), body);
    assert!((200..300).contains(&status), "{method} {path}: {status} {v}");
    v
}

fn make(w: &World) -> Made {
    w.screening_off();
    let (partner, partner_key, caller) = w.partner_with_key();
    let (merchant, merchant_key, _) = w.roomy_merchant(&partner, &caller, &["PPD", "ICL"]);
    let secret = match w
        .run(
            &caller,
            Operation::CreateWebhookEndpoint {
                partner_id: partner.clone(),
                url: "http://127.0.0.1:9/hook".into(),
                event_types: None,
            },
        )
        .unwrap()
    {
        Outcome::WebhookEndpointCreated { endpoint } => endpoint.secret.unwrap(),
        other => panic!("{other:?}"),
    };
    let customer = w.customer(&partner, &caller, &merchant, "918273645500");
    let mut transactions = Vec::new();
    for (n, amount) in ["10.00", "11.00", "12.00"].iter().enumerate() {
        let mut v = transaction(&merchant, "debit", amount);
        v["partner_id"] = json!(partner);
        v["description"] = json!(format!("Rent {n}"));
        let t = call(w, "POST", "/transactions", &partner_key, Some(&v));
        transactions.push(t["payload"]["id"].as_str().unwrap().to_owned());
    }
    let by_token = json!({"partner_id": partner, "merchant_id": merchant, "amount": "13.00",
        "description": "by token", "type": "debit", "standard_entry_class": "PPD", "customer": {"id": customer}});
    let t = call(w, "POST", "/transactions", &partner_key, Some(&by_token));
    transactions.push(t["payload"]["id"].as_str().unwrap().to_owned());
    let mut icl = transaction(&merchant, "debit", "14.00");
    icl["partner_id"] = json!(partner);
    icl["standard_entry_class"] = json!("ICL");
    icl["check_number"] = json!("1001");
    icl["check_image_front"] = json!(picture(1200));
    icl["check_image_back"] = json!(picture(600));
    let t = call(w, "POST", "/transactions", &partner_key, Some(&icl));
    let icl = t["payload"]["id"].as_str().unwrap().to_owned();
    w.at("2026-11-23 18:30");
    let noc = json!({"change_code": "C01", "corrected_data": "99998888"});
    let path = format!("/admin/simulations/transactions/{}/notification-of-change", transactions[3]);
    call(w, "POST", &path, OPERATOR_KEY, Some(&noc));
    Made { partner, partner_key, merchant, merchant_key, customer, transactions, icl, secret }
}

/// A new store holding what [`make`] makes: the store, its world, what was
/// made and what it shows.
fn made() -> (Store, World, Made, Shown) {
    let dir = tempfile::tempdir().unwrap();
    let s = Store { path: dir.path().join("ach.redb"), _dir: dir, key: EncryptionKey::generate() };
    let w = s.open();
    let m = make(&w);
    let before = shown(&w, &m);
    (s, w, m, before)
}

/// `now` is `before`, each part compared on its own (named, never printed:
/// the parts are large).
fn same(now: &Shown, before: &Shown, when: &str) {
    let parts = [
        ("partners", now.partners == before.partners),
        ("merchant", now.merchant == before.merchant),
        ("customer", now.customer == before.customer),
        ("transactions", now.transactions == before.transactions),
        ("images", now.images == before.images),
        ("files", now.files == before.files),
        ("letters", now.letters == before.letters),
        ("events", now.events.get(..before.events.len()) == Some(&before.events[..])),
    ];
    let differ: Vec<&str> = parts.iter().filter(|(_, equal)| !equal).map(|(name, _)| *name).collect();
    assert!(differ.is_empty(), "{when}: {differ:?} differ");
}

fn shown(w: &World, m: &Made) -> Shown {
    let e = &w.engine;
    Shown {
        partners: call(w, "GET", "/admin/partners", OPERATOR_KEY, None),
        merchant: call(
            w,
            "GET",
            &format!("/merchants/{}?partner_id={}", m.merchant, m.partner),
            &m.partner_key,
            None,
        ),
        customer: call(
            w,
            "GET",
            &format!("/customers/{}?partner_id={}", m.customer, m.partner),
            &m.partner_key,
            None,
        ),
        transactions: m
            .transactions
            .iter()
            .chain([&m.icl])
            .map(|id| {
                call(w, "GET", &format!("/transactions/{id}?partner_id={}", m.partner), &m.partner_key, None)
            })
            .collect(),
        images: [CheckSide::Front, CheckSide::Back].map(|s| e.check_image(&m.icl, s).unwrap()).to_vec(),
        files: e
            .origination_files()
            .unwrap()
            .iter()
            .map(|f| e.origination_file(&f.id).unwrap().unwrap().1)
            .collect(),
        letters: e
            .image_cash_letters()
            .unwrap()
            .iter()
            .map(|l| e.image_cash_letter(&l.id).unwrap().unwrap().1)
            .collect(),
        events: call(w, "GET", "/events", &m.merchant_key, None)["events"].as_array().unwrap().clone(),
    }
}

/// Every delivery taken now is signed by the endpoint's secret.
fn deliveries_signed(w: &World, secret: &str) -> usize {
    let attempts = w.engine.webhook_take(100, WALL).unwrap();
    let key = base64::engine::general_purpose::STANDARD.decode(secret.trim_start_matches("whsec_")).unwrap();
    for a in &attempts {
        let expected = webhook_signature(std::slice::from_ref(&key), &a.delivery_id, a.timestamp, &a.body);
        assert!(a.signature.split(' ').any(|s| s == expected), "{}", a.delivery_id);
    }
    attempts.len()
}

#[test]
fn every_sealed_value_reads_the_same_after_a_reseal_opened_by_the_new_key_alone() {
    let (s, w, m, before) = made();
    assert!(
        before.images.iter().all(Option::is_some) && !before.files.is_empty() && !before.letters.is_empty()
    );
    assert!(
        before.events.iter().any(|e| e["notice_of_change"]["account_number"] == "99998888"),
        "the notice's corrected data"
    );
    let stored_before = std::fs::read(&s.path).unwrap();

    let figures = w.engine.reseal().unwrap();
    assert!(figures.resealed >= 10, "{figures:?}");
    assert_eq!(figures.unopened, 0, "{figures:?}");
    same(&shown(&w, &m), &before, "after the re-seal");
    drop(w);

    let w = s.open();
    same(&shown(&w, &m), &before, "after a reopen");
    assert!(deliveries_signed(&w, &m.secret) > 0);
    assert_eq!(w.engine.retired_opens(), 0, "every value read was opened by the new data key");
    // New values are sealed by the new key; a second re-seal finds only
    // the first's values to seal again.
    w.debit(&m.partner, &w.engine.authenticate(&m.partner_key).unwrap(), &m.merchant, "15.00");
    let again = w.engine.reseal().unwrap();
    assert!(again.resealed >= figures.resealed, "{again:?} after {figures:?}");
    same(&shown(&w, &m), &before, "after a second re-seal");
    assert_eq!(w.engine.retired_opens(), 0);
    drop(w);
    let stored_after = std::fs::read(&s.path).unwrap();
    assert!(!stored_after.windows(9).any(|x| x == b"918273645"), "account numbers stay sealed");
    assert_ne!(stored_before.len(), 0);
}

#[test]
fn a_reseal_stopped_part_way_leaves_everything_readable_and_goes_on() {
    let (s, w, m, before) = made();
    // Three chunks: partners, merchants and customers re-sealed; the
    // transactions, images, files, events and secrets not yet.
    assert_eq!(w.engine.reseal_some(3).unwrap(), None);
    same(&shown(&w, &m), &before, "part way");
    assert!(w.engine.retired_opens() > 0, "values not yet re-sealed open with the retired key");
    drop(w);

    // As after a crash: reopened, everything reads, new values are sealed,
    // and the re-seal goes on from where it stood.
    let w = s.open();
    same(&shown(&w, &m), &before, "reopened part way");
    let caller = w.engine.authenticate(&m.partner_key).unwrap();
    let late = w.debit(&m.partner, &caller, &m.merchant, "16.00");
    let done: ResealFigures = w.engine.reseal().unwrap();
    assert_eq!(done.unopened, 0, "{done:?}");
    drop(w);
    let w = s.open();
    let mut now = shown(&w, &m);
    now.files.truncate(before.files.len());
    same(&now, &before, "after the re-seal went on");
    call(&w, "GET", &format!("/transactions/{late}?partner_id={}", m.partner), &m.partner_key, None);
    assert!(deliveries_signed(&w, &m.secret) > 0);
    assert_eq!(w.engine.retired_opens(), 0);
    drop(w);
    // A wrong key still opens nothing.
    let wrong = Engine::open(&s.path, options(START).with_encryption_key(EncryptionKey::generate()));
    assert!(matches!(wrong, Err(ach_core::engine::OpenError::WrongKey)));
}
