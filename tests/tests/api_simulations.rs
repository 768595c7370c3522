//! The sandbox's simulations of what the bank sends back: a return and a
//! notification of change applied to one transaction exactly as a bank file
//! would apply them (feeds, events, the stored customer, the read), and no
//! such endpoint on a production engine.
#![allow(clippy::unwrap_used)]

use ach_core::engine::{Engine, EngineOptions};
use ach_tests::router::{call, roomy_limit_values, Router};
use ach_tests::world::{application, et, OPERATOR_KEY};
use serde_json::{json, Value};

struct Shop {
    api: Router,
    partner: String,
    key: String,
    merchant: String,
    merchant_key: String,
}

fn shop() -> Shop {
    let api = Router::new();
    let (partner, key) = api.partner("Sim");
    let merchant = api.submit(&partner, &key, application(&["PPD"]));
    let merchant_key = api.approve(&merchant, roomy_limit_values());
    Shop { api, partner, key, merchant, merchant_key }
}

impl Shop {
    fn partner_call(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let sep = if path.contains('?') { '&' } else { '?' };
        self.api.call(method, &format!("{path}{sep}partner_id={}", self.partner), Some(&self.key), body)
    }

    /// A debit to a stored customer: (the customer, the transaction).
    fn debit_to_customer(&self) -> (String, String) {
        let (status, v) = self.partner_call(
            "POST",
            "/customers",
            Some(json!({"merchant_id": self.merchant, "name": "Grace Hopper", "routing_number": "026009593",
                "account_number": "11112222", "account_type": "checking"})),
        );
        assert_eq!(status, 201, "{v}");
        let customer = v["payload"]["id"].as_str().unwrap().to_owned();
        let (status, v) = self.partner_call(
            "POST",
            "/transactions",
            Some(
                json!({"merchant_id": self.merchant, "amount": "25.00", "description": "sim", "type": "debit",
                "standard_entry_class": "PPD", "customer": {"id": customer}}),
            ),
        );
        assert_eq!(status, 201, "{v}");
        (customer, v["payload"]["id"].as_str().unwrap().to_owned())
    }

    fn simulate(&self, id: &str, what: &str, body: Value) -> (u16, Value) {
        self.api.op("POST", &format!("/admin/simulations/transactions/{id}/{what}"), body)
    }
}

#[test]
fn a_simulated_notification_of_change_corrects_the_customer_as_a_bank_file_would() {
    let s = shop();
    let (customer, id) = s.debit_to_customer();
    // Before it leaves there is nothing to correct.
    let (status, v) = s.simulate(
        &id,
        "notification-of-change",
        json!({"change_code": "C01", "corrected_data": "99998888"}),
    );
    assert_eq!((status, v["errors"][0]["field"].as_str()), (422, Some("transaction_id")), "{v}");
    assert_eq!(v["errors"][0]["code"], "conflict");
    s.api.op("POST", "/admin/clock", json!({"now": "2026-11-23T18:30:00-05:00"}));
    let (status, v) = s.simulate(
        &id,
        "notification-of-change",
        json!({"change_code": "C01", "corrected_data": "99998888"}),
    );
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["payload"], json!({"id": id, "customer_updated": true}));
    // The stored customer carries the corrected account; the merchant hears of it.
    let (_, c) = s.partner_call("GET", &format!("/customers/{customer}"), None);
    assert_eq!(c["payload"]["account_number_last4"], "8888", "{c}");
    let (_, events) = s.api.call("GET", "/events", Some(&s.merchant_key), None);
    let notice =
        events["events"].as_array().unwrap().iter().find(|e| e["type"] == "transaction.notice_of_change");
    let notice = notice.unwrap_or_else(|| panic!("{events}"));
    assert_eq!(
        (&notice["notice_of_change"]["change_code"], &notice["notice_of_change"]["account_number"]),
        (&json!("C01"), &json!("99998888"))
    );
    // A change code the engine does not read is kept as sent.
    let (status, v) = s.simulate(
        &id,
        "notification-of-change",
        json!({"change_code": "C09", "corrected_data": "NEW NAME"}),
    );
    assert_eq!((status, &v["payload"]["customer_updated"]), (200, &json!(false)), "{v}");
    // Malformed requests.
    for (body, field) in [
        (json!({"change_code": "X01", "corrected_data": "1"}), "change_code"),
        (json!({"change_code": "C01", "corrected_data": "1".repeat(30)}), "corrected_data"),
    ] {
        let (status, v) = s.simulate(&id, "notification-of-change", body);
        assert_eq!((status, v["errors"][0]["field"].as_str()), (422, Some(field)), "{v}");
    }
    // Only the operator simulates.
    let path = format!("/admin/simulations/transactions/{id}/return");
    assert_eq!(s.api.call("POST", &path, Some(&s.key), Some(json!({"return_code": "R01"}))).0, 401);
}

#[test]
fn a_simulated_return_is_what_a_return_file_does() {
    let s = shop();
    let (_, id) = s.debit_to_customer();
    s.api.op("POST", "/admin/clock", json!({"now": "2026-11-23T18:30:00-05:00"}));
    let (status, v) = s.simulate(&id, "return", json!({"return_code": "R01"}));
    assert_eq!((status, &v["payload"]["id"]), (200, &json!(id)), "{v}");
    let (_, read) = s.partner_call("GET", &format!("/transactions/{id}"), None);
    assert_eq!(read["payload"]["return"]["code"], "R01", "{read}");
    let statuses: Vec<&str> = read["payload"]["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["A", "B", "R"]);
    // Returned once: a second return is refused as a second return file entry would be ignored.
    assert_eq!(s.simulate(&id, "return", json!({"return_code": "R01"})).0, 409);
    assert_eq!(s.simulate("txn_0123456789abcdefghijKL", "return", json!({"return_code": "R01"})).0, 404);
}

#[test]
fn a_production_engine_has_no_simulations() {
    let engine =
        Engine::in_memory(EngineOptions::manual(et("2026-11-23 10:00")).with_operator_key(OPERATOR_KEY))
            .unwrap();
    for what in ["return", "notification-of-change"] {
        let path = format!("/admin/simulations/transactions/txn_0123456789abcdefghijKL/{what}");
        let (status, v) =
            call(&engine, "POST", &path, Some(OPERATOR_KEY), Some(&json!({"return_code": "R01"})));
        assert_eq!((status, v["errors"][0]["field"].as_str()), (404, Some("path")), "{v}");
    }
}
