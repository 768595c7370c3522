//! Webhook deliveries as the engine hands them to a host: every event of the
//! partner's merchants once taken (none of another partner's), signed with
//! each secret in force, leased and taken again when no answer was
//! recorded, retried on the schedule from the first try, failed after the
//! last, ended by a 2xx, and the endpoint disabled by a 410.
#![allow(clippy::unwrap_used)]

use ach_core::engine::{
    secret_key, webhook_signature, Caller, DeliveryStatus, Operation, Outcome, TryResult, WebhookAttempt,
    RETRY_AFTER,
};
use ach_tests::world::{et, World};
use base64::Engine as _;
use hmac::{Hmac, Mac};
use serde_json::Value;
use sha2::Sha256;

const WALL: i64 = 1_795_000_000;

fn endpoint(w: &World, p: &str, pc: &Caller, types: Option<Vec<&str>>) -> (String, String) {
    let op = Operation::CreateWebhookEndpoint {
        partner_id: p.into(),
        url: "http://127.0.0.1:9/hook".into(),
        event_types: types.map(|t| t.into_iter().map(str::to_owned).collect()),
    };
    match w.run(pc, op).unwrap() {
        Outcome::WebhookEndpointCreated { endpoint } => (endpoint.id, endpoint.secret.unwrap()),
        other => panic!("{other:?}"),
    }
}

fn take(w: &World) -> Vec<WebhookAttempt> {
    w.engine.webhook_take(100, WALL).unwrap()
}

fn answer(w: &World, attempts: &[WebhookAttempt], status: u16) {
    let results: Vec<_> = attempts
        .iter()
        .map(|a| (a.endpoint_id.clone(), a.delivery_id.clone(), TryResult::Answered(status)))
        .collect();
    w.engine.webhook_record(&results).unwrap();
}

/// Whether `signature` holds a `v1` signature of the message by `secret`,
/// computed here from the Standard Webhooks text, not by the engine.
fn signed_by(secret: &str, a: &WebhookAttempt) -> bool {
    let key = base64::engine::general_purpose::STANDARD.decode(secret.trim_start_matches("whsec_")).unwrap();
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&key).unwrap();
    mac.update(format!("{}.{}.{}", a.delivery_id, a.timestamp, a.body).as_bytes());
    let expected =
        format!("v1,{}", base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes()));
    a.signature.split(' ').any(|s| s == expected)
}

#[test]
fn each_event_of_the_partners_merchants_is_delivered_signed_once() {
    let w = World::new("2026-11-23 10:00");
    let (p, pc, m) = w.tenant(&["PPD"]);
    let before = w.debit(&p, &pc, &m, "1.00");
    let (e, secret) = endpoint(&w, &p, &pc, None);
    assert!(secret.starts_with("whsec_") && secret_key(&secret).is_some_and(|k| k.len() == 24));
    assert!(take(&w).is_empty(), "the events before the endpoint are not delivered");
    let (q, qc) = w.partner();
    let (qm, _) = w.merchant(&q, &qc, &["PPD"]);
    w.debit(&q, &qc, &qm, "2.00");
    let id = w.debit(&p, &pc, &m, "3.00");
    // A merchant made after the endpoint is delivered from its first event.
    let (later, _) = w.merchant(&p, &pc, &["PPD"]);
    let id2 = w.debit(&p, &pc, &later, "4.00");
    let (approved, attempts): (Vec<_>, Vec<_>) =
        take(&w).into_iter().partition(|a| a.body.contains(r#""type":"merchant.approved""#));
    assert_eq!((approved.len(), attempts.len()), (1, 2), "{attempts:?}");
    assert!(approved[0].delivery_id.starts_with(&format!("{p}.evt_")));
    let attempts = [approved.clone(), attempts].concat();
    answer(&w, &approved, 204);
    let attempts = &attempts[1..];
    for a in attempts {
        assert_eq!(
            (a.endpoint_id.as_str(), a.timestamp, a.url.as_str()),
            (e.as_str(), WALL, "http://127.0.0.1:9/hook")
        );
        assert!(signed_by(&secret, a), "{a:?}");
        assert_eq!(
            a.signature,
            webhook_signature(&[secret_key(&secret).unwrap()], &a.delivery_id, WALL, &a.body)
        );
        let body: Value = serde_json::from_str(&a.body).unwrap();
        assert_eq!(body["type"], "transaction.status_changed");
        assert_eq!(body["data"]["status"], "A");
        assert!(body["timestamp"].as_str().unwrap().starts_with("2026-11-23T15:00:00"));
    }
    let ids: Vec<&str> = attempts.iter().map(|a| a.delivery_id.as_str()).collect();
    assert!(
        ids.contains(&format!("{m}.evt_2").as_str()) && ids.contains(&format!("{later}.evt_1").as_str()),
        "{ids:?}"
    );
    let bodies: Vec<Value> = attempts.iter().map(|a| serde_json::from_str(&a.body).unwrap()).collect();
    assert!(bodies.iter().any(|b| b["data"]["transaction_id"] == id.as_str()));
    assert!(bodies.iter().any(|b| b["data"]["transaction_id"] == id2.as_str()));
    assert!(!bodies.iter().any(|b| b["data"]["transaction_id"] == before.as_str()));
    answer(&w, attempts, 204);
    assert!(take(&w).is_empty(), "a 2xx ends a delivery");
    let listed = w.engine.webhook_deliveries(&pc, &p, &e).unwrap();
    assert_eq!(listed.len(), 3);
    assert!(listed
        .iter()
        .all(|d| d.status == DeliveryStatus::Delivered && d.attempts == 1 && d.last_response == Some(204)));
    // Nobody else reads them.
    let refused = w.engine.webhook_deliveries(&qc, &q, &e).unwrap_err();
    assert_eq!(
        (refused.status(), refused.errors()[0].field.as_str()),
        (404, "endpoint_id"),
        "as if it did not exist"
    );
}

#[test]
fn a_try_never_answered_is_taken_again_after_its_lease_with_the_same_id() {
    let w = World::new("2026-11-23 10:00");
    let (p, pc, m) = w.tenant(&["PPD"]);
    endpoint(&w, &p, &pc, None);
    w.debit(&p, &pc, &m, "1.00");
    let first = take(&w);
    assert_eq!(first.len(), 1);
    // The host died before recording anything: nothing is due within the lease.
    assert!(take(&w).is_empty());
    w.set_clock(et("2026-11-23 10:01") + chrono::TimeDelta::seconds(1));
    let again = take(&w);
    assert_eq!(
        (again.len(), &again[0].delivery_id, &again[0].body),
        (1, &first[0].delivery_id, &first[0].body)
    );
}

#[test]
fn failures_are_retried_on_the_schedule_then_fail_and_a_410_disables() {
    let w = World::new("2026-11-23 10:00");
    let (p, pc, m) = w.tenant(&["PPD"]);
    let (e, _) = endpoint(&w, &p, &pc, None);
    w.debit(&p, &pc, &m, "1.00");
    let start = et("2026-11-23 10:00");
    let mut a = take(&w);
    let id = a[0].delivery_id.clone();
    // This delivery's tries; any other (the cut-off's B) is answered at once.
    let mine = |w: &World| -> Vec<WebhookAttempt> {
        let (mine, others): (Vec<_>, Vec<_>) = take(w).into_iter().partition(|a| a.delivery_id == id);
        answer(w, &others, 200);
        mine
    };
    for (i, after) in RETRY_AFTER.iter().enumerate() {
        answer(&w, &a, 503);
        let d = w.engine.webhook_deliveries(&pc, &p, &e).unwrap().into_iter().find(|d| d.id == id).unwrap();
        assert_eq!(
            (d.status, d.attempts, d.last_response),
            (DeliveryStatus::Pending, i as u32 + 1, Some(503))
        );
        assert_eq!(d.next_try, Some(start + chrono::TimeDelta::seconds(*after)));
        // Not before its time.
        w.set_clock(start + chrono::TimeDelta::seconds(*after - 1));
        assert!(mine(&w).is_empty(), "retry {i} too early");
        w.set_clock(start + chrono::TimeDelta::seconds(*after));
        a = mine(&w);
        assert_eq!(a.len(), 1, "retry {i}");
    }
    answer(&w, &a, 500);
    let d = &w.engine.webhook_deliveries(&pc, &p, &e).unwrap().into_iter().find(|d| d.id == id).unwrap();
    assert_eq!(
        (d.status, d.attempts, d.next_try),
        (DeliveryStatus::Failed, RETRY_AFTER.len() as u32 + 1, None)
    );
    // The partner asks for it again: it goes out at once.
    let op = Operation::RetryWebhookDelivery {
        partner_id: p.clone(),
        endpoint_id: e.clone(),
        delivery_id: d.id.clone(),
    };
    w.run(&pc, op).unwrap();
    let again = mine(&w);
    assert_eq!(again.len(), 1);
    // A 410 disables the endpoint: nothing more goes to it.
    answer(&w, &again, 410);
    let views = w.engine.webhook_endpoints(&pc, &p).unwrap();
    assert_eq!(views[0].status, "disabled");
    w.debit(&p, &pc, &m, "2.00");
    assert!(take(&w).is_empty());
}

#[test]
fn a_rotated_secret_signs_beside_the_new_one_for_a_day() {
    let w = World::new("2026-11-23 10:00");
    let (p, pc, m) = w.tenant(&["PPD"]);
    let (e, old) = endpoint(&w, &p, &pc, Some(vec!["transaction.status_changed"]));
    let new = match w
        .run(&pc, Operation::RotateWebhookSecret { partner_id: p.clone(), endpoint_id: e.clone() })
        .unwrap()
    {
        Outcome::WebhookSecretRotated { endpoint } => endpoint.secret.unwrap(),
        other => panic!("{other:?}"),
    };
    assert_ne!(old, new);
    w.debit(&p, &pc, &m, "1.00");
    let a = take(&w);
    assert!(signed_by(&old, &a[0]) && signed_by(&new, &a[0]), "{}", a[0].signature);
    answer(&w, &a, 200);
    w.set_clock(et("2026-11-24 10:01"));
    w.debit(&p, &pc, &m, "1.00");
    let a: Vec<_> = take(&w).into_iter().filter(|a| a.body.contains("\"status\":\"A\"")).collect();
    assert!(signed_by(&new, &a[0]) && !signed_by(&old, &a[0]), "{}", a[0].signature);
    assert_eq!(a[0].signature.split(' ').count(), 1);
}

#[test]
fn only_the_types_asked_for_are_delivered_and_only_good_urls_are_taken() {
    let w = World::new("2026-11-23 10:00");
    let (p, pc, m) = w.tenant(&["PPD"]);
    endpoint(&w, &p, &pc, Some(vec!["transaction.notice_of_change"]));
    w.debit(&p, &pc, &m, "1.00");
    assert!(take(&w).is_empty());
    let bad = |url: &str, types: Option<Vec<String>>| {
        let op =
            Operation::CreateWebhookEndpoint { partner_id: p.clone(), url: url.into(), event_types: types };
        w.run(&pc, op).unwrap_err().errors()[0].field.clone()
    };
    assert_eq!(bad("ftp://example.com/", None), "url");
    assert_eq!(bad("https://example.com/", Some(vec!["transaction.nope".into()])), "event_types[0]");
    assert_eq!(bad("https://example.com/", Some(vec![])), "event_types");
    // A production engine takes only public https receivers.
    let prod = World::with(
        ach_core::engine::Engine::in_memory(
            ach_core::engine::EngineOptions::manual(et("2026-11-23 10:00"))
                .with_operator_key(ach_tests::world::OPERATOR_KEY),
        )
        .unwrap(),
    );
    let (pp, ppc) = prod.partner();
    let create = |url: &str| {
        prod.run(
            &ppc,
            Operation::CreateWebhookEndpoint { partner_id: pp.clone(), url: url.into(), event_types: None },
        )
    };
    let why = |url: &str| create(url).unwrap_err().errors()[0].message.clone();
    assert_eq!(why("http://127.0.0.1:9/hook"), "url must be https:// (http:// only on a sandbox)");
    assert_eq!(
        why("https://127.0.0.1/hook"),
        "url must reach a public address (loopback and private ones only on a sandbox)"
    );
    match create("https://hooks.example.com/ach").unwrap() {
        Outcome::WebhookEndpointCreated { endpoint } => {
            assert_eq!(endpoint.url, "https://hooks.example.com/ach")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_partner_has_at_most_sixteen_endpoints_and_deletes_free_a_place() {
    let w = World::new("2026-11-23 10:00");
    let (p, pc) = w.partner();
    let ids: Vec<String> = (0..16).map(|_| endpoint(&w, &p, &pc, None).0).collect();
    let create = || {
        w.run(
            &pc,
            Operation::CreateWebhookEndpoint {
                partner_id: p.clone(),
                url: "https://hooks.example.com/".into(),
                event_types: None,
            },
        )
    };
    let refused = create().unwrap_err();
    assert_eq!((refused.errors()[0].field.as_str(), refused.status()), ("url", 422), "{refused:?}");
    let op = Operation::DeleteWebhookEndpoint { partner_id: p.clone(), endpoint_id: ids[0].clone() };
    w.run(&pc, op).unwrap();
    assert!(matches!(create().unwrap(), Outcome::WebhookEndpointCreated { .. }));
    assert_eq!(w.engine.webhook_endpoints(&pc, &p).unwrap().len(), 16);
}

#[test]
fn an_approval_is_delivered_once_with_the_merchant_as_a_read_shows_it() {
    let w = World::new("2026-11-23 10:00");
    let (p, pc, before) = w.tenant(&["PPD"]);
    let (e, secret) = endpoint(&w, &p, &pc, None);
    let (only_tx, _) = endpoint(&w, &p, &pc, Some(vec!["transaction.status_changed"]));
    let (only_approvals, _) = endpoint(&w, &p, &pc, Some(vec!["merchant.approved"]));
    // Another partner's approvals go to its own endpoints only.
    let (q, qc) = w.partner();
    w.merchant(&q, &qc, &["PPD"]);
    let (m, mc) = w.merchant(&p, &pc, &["PPD", "WEB"]);
    let attempts = take(&w);
    let to = |id: &str| attempts.iter().filter(|a| a.endpoint_id == id).collect::<Vec<_>>();
    assert!(to(&only_tx).is_empty(), "{attempts:?}");
    let (all, approvals) = (to(&e), to(&only_approvals));
    assert_eq!((all.len(), approvals.len()), (1, 1), "{attempts:?}");
    assert_eq!(all[0].delivery_id, approvals[0].delivery_id);
    assert!(signed_by(&secret, all[0]));
    let body: Value = serde_json::from_str(&all[0].body).unwrap();
    assert_eq!(body["type"], "merchant.approved");
    assert_eq!(body["data"]["type"], "merchant.approved");
    assert_eq!(body["data"]["occurred_at"], "2026-11-23 10:00:00");
    let read = w.engine.merchant(&pc, Some(&p), &m).unwrap();
    assert_eq!(body["data"]["merchant"], serde_json::to_value(&read).unwrap());
    assert_eq!(body["data"]["merchant"]["status"], "approved");
    assert_ne!(body["data"]["merchant"]["id"], before.as_str());
    // The merchant's own key sees no such event in its events feed.
    let feed = w.events(&mc);
    assert!(feed.iter().all(|ev| ev.kind != "merchant.approved"), "{feed:?}");
    answer(&w, &attempts, 200);
    assert!(take(&w).is_empty());
    let listed = w.engine.webhook_deliveries(&pc, &p, &e).unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (listed[0].event_type.as_str(), listed[0].merchant_id.as_str()),
        ("merchant.approved", m.as_str())
    );
    // An unanswered approval is taken again after its lease, unchanged.
    w.merchant(&p, &pc, &["PPD"]);
    let first: Vec<_> = take(&w).into_iter().filter(|a| a.endpoint_id == e).collect();
    w.set_clock(et("2026-11-23 10:01") + chrono::TimeDelta::seconds(1));
    let again: Vec<_> = take(&w).into_iter().filter(|a| a.endpoint_id == e).collect();
    assert_eq!(
        (again.len(), &again[0].delivery_id, &again[0].body),
        (1, &first[0].delivery_id, &first[0].body)
    );
}
