//! Account validation (Nacha Rules 2.5.17.4), through the router: a WEB
//! debit needs an account validated for its partner, by an outside service,
//! a prenote that passed (usable from the third banking day after its
//! settlement), or micro-entries the receiver confirmed; a return that shows
//! the account closed ends its validation.
#![allow(clippy::unwrap_used)]

use ach_core::api::{route, Request};
use ach_core::engine::Engine;
use ach_core::nacha;
use ach_tests::world::{World, OPERATOR_KEY};
use serde_json::{json, Value};

struct Partner<'w> {
    w: &'w World,
    id: String,
    key: String,
    merchant: String,
}

impl Partner<'_> {
    fn call(&self, method: &str, path: &str, body: Value) -> (u16, Value) {
        call(&self.w.engine, &self.key, method, path, self.with_partner(body))
    }

    fn with_partner(&self, mut body: Value) -> Value {
        body["partner_id"] = json!(self.id);
        body
    }

    /// A customer (the merchant's) for `account`: its token.
    fn customer(&self, account: &str) -> String {
        let body = json!({"merchant_id": self.merchant, "name": "Grace Hopper", "routing_number": "026009593",
                          "account_number": account, "account_type": "checking"});
        let (status, v) = self.call("POST", "/customers", body);
        assert_eq!(status, 201, "{v}");
        v["payload"]["id"].as_str().unwrap().to_owned()
    }

    fn web_debit(&self, customer: &str) -> (u16, Value) {
        let body = json!({"merchant_id": self.merchant, "amount": "40.00", "description": "order 7", "type": "debit",
                          "standard_entry_class": "WEB", "customer": {"id": customer}});
        self.call("POST", "/transactions", body)
    }

    fn validate(&self, customer: &str, method: &str) -> (u16, Value) {
        let mut body = json!({"merchant_id": self.merchant, "method": method});
        if method == "outside" {
            body["provider"] = json!("Plaid");
            body["reference"] = json!("auth-123");
        }
        self.call("POST", &format!("/customers/{customer}/validations"), body)
    }

    /// A new customer for `account` whose validation by `method` was started:
    /// its token, the validation's id and its payload.
    fn started(&self, account: &str, method: &str) -> (String, String, Value) {
        let customer = self.customer(account);
        let (status, v) = self.validate(&customer, method);
        assert_eq!(status, 201, "{v}");
        let id = v["payload"]["id"].as_str().unwrap().to_owned();
        (customer, id, v["payload"].clone())
    }

    fn validation(&self, customer: &str, id: &str) -> Value {
        let (status, v) = self.call("GET", &format!("/customers/{customer}/validations/{id}"), json!({}));
        assert_eq!(status, 200, "{v}");
        v["payload"].clone()
    }

    fn confirm(&self, customer: &str, id: &str, amounts: [&str; 2]) -> (u16, Value) {
        let path = format!("/customers/{customer}/validations/{id}/confirm");
        self.call("POST", &path, json!({"amounts": amounts}))
    }
}

fn call(engine: &Engine, key: &str, method: &str, path: &str, body: Value) -> (u16, Value) {
    let request = Request {
        method: method.into(),
        path: path.into(),
        api_key: Some(key.into()),
        body: if method == "GET" { Vec::new() } else { body.to_string().into_bytes() },
        query: match (method, body.get("partner_id")) {
            ("GET", Some(p)) => format!("partner_id={}", p.as_str().unwrap()),
            _ => String::new(),
        },
        ..Request::default()
    };
    let response = route(engine, &request);
    (response.status, serde_json::from_str(&response.body).unwrap())
}

fn setup(w: &World) -> Partner<'_> {
    let (id, key, partner) = w.partner_with_key();
    let (merchant, _) = w.merchant(&id, &partner, &["WEB", "PPD"]);
    Partner { w, id, key, merchant }
}

/// An entry of an origination file: `(batch description, transaction code,
/// cents, identification)`.
type Sent = (String, u8, i64, String);

/// Every entry of every origination file.
fn entries(engine: &Engine) -> Vec<Sent> {
    let (_, list) = call(engine, OPERATOR_KEY, "GET", "/admin/origination-files", json!({}));
    let mut out = Vec::new();
    for summary in list["payload"].as_array().unwrap() {
        let path = format!("/admin/origination-files/{}", summary["id"].as_str().unwrap());
        let (_, file) = call(engine, OPERATOR_KEY, "GET", &path, json!({}));
        let parsed = nacha::read(file["payload"]["text"].as_str().unwrap().as_bytes()).unwrap();
        assert!(parsed.problems.is_empty(), "{:?}", parsed.problems);
        for b in parsed.file.batches {
            for e in b.entries {
                let entry = (e.transaction_code, e.amount.cents(), e.identification.to_string());
                out.push((b.company_entry_description.to_string(), entry.0, entry.1, entry.2));
            }
        }
    }
    out
}

/// Asserts `answer` refuses a WEB debit for want of a validation.
fn refused_unvalidated(answer: (u16, Value)) -> String {
    let (status, v) = answer;
    assert_eq!(status, 422, "{v}");
    assert_eq!(
        (&v["errors"][0]["field"], &v["errors"][0]["code"]),
        (&json!("customer"), &json!("account_not_validated"))
    );
    v["errors"][0]["message"].as_str().unwrap().to_owned()
}

/// Asserts `answer` refuses a WEB debit for want of a validation, saying `why`.
fn refused_because(answer: (u16, Value), why: &str) {
    let message = refused_unvalidated(answer);
    assert!(message.contains(why), "{message}");
}

/// The operator records a return of `transaction_id` with `code`.
fn record_return(engine: &Engine, transaction_id: &str, code: &str) {
    let op = json!({"transaction_id": transaction_id, "return_code": code});
    let (status, v) = call(engine, OPERATOR_KEY, "POST", "/admin/returns", op);
    assert_eq!(status, 200, "{v}");
}

#[test]
fn a_web_debit_needs_an_account_validated_for_its_partner() {
    let w = World::new("2026-11-23 10:00");
    let p = setup(&w);
    let customer = p.customer("1111222233");
    refused_because(p.web_debit(&customer), "no validation of this account");
    // A PPD debit to the same account needs none.
    let ppd = json!({"merchant_id": p.merchant, "amount": "5.00", "description": "x", "type": "debit",
                     "standard_entry_class": "PPD", "customer": {"id": customer}});
    assert_eq!(p.call("POST", "/transactions", ppd).0, 201);

    let (status, v) = p.validate(&customer, "outside");
    assert_eq!(status, 201, "{v}");
    assert_eq!((&v["payload"]["status"], &v["payload"]["method"]), (&json!("validated"), &json!("outside")));
    assert_eq!(p.web_debit(&customer).0, 201);
    // The validation is the partner's: another partner with the same account is not validated.
    let q = setup(&w);
    let theirs = q.customer("1111222233");
    refused_unvalidated(q.web_debit(&theirs));
    // ... nor can it read this partner's validation.
    let id = v["payload"]["id"].as_str().unwrap();
    let (status, _) = q.call("GET", &format!("/customers/{theirs}/validations/{id}"), json!({}));
    assert_eq!(status, 404);
}

#[test]
fn a_prenote_validates_from_the_third_banking_day_after_its_settlement() {
    let w = World::new("2026-11-23 10:00");
    let p = setup(&w);
    let (customer, id, v) = p.started("5555666677", "prenote");
    assert_eq!(v["status"], "pending");
    assert_eq!(v["transaction_ids"].as_array().unwrap().len(), 1);
    refused_because(p.web_debit(&customer), &format!("its validation {id} is pending"));
    // The cut-off sends a zero-dollar WEB debit prenote (code 28, checking).
    w.at("2026-11-23 18:00");
    let sent: Vec<_> = entries(&w.engine).into_iter().map(|e| (e.0, e.1, e.2)).collect();
    assert_eq!(sent, [("PAYMENT".to_owned(), 28, 0)]);
    // Effective 11-24, a debit settles 11-27 (Thanksgiving); passed by the
    // opening of the second banking day after (12-01), usable from the third (12-02).
    let view = p.validation(&customer, &id);
    assert_eq!((&view["status"], &view["usable_from"]), (&json!("pending"), &json!("2026-12-02")));
    w.at("2026-12-01 00:05");
    let view = p.validation(&customer, &id);
    assert_eq!(view["status"], "validated");
    refused_because(p.web_debit(&customer), "from 2026-12-02");
    w.at("2026-12-02 00:05");
    assert_eq!(p.web_debit(&customer).0, 201);
}

#[test]
fn micro_entries_are_confirmed_in_either_order_and_three_wrong_pairs_lock() {
    let w = World::new("2026-11-23 10:00");
    let p = setup(&w);
    let (locked, locked_id, _) = p.started("1212121212", "micro_entries");
    let (customer, id, v) = p.started("3434343434", "micro_entries");
    assert_eq!(v["transaction_ids"].as_array().unwrap().len(), 3);
    w.at("2026-11-23 18:00");
    // Each validation: two credits of 0.01–0.99 and a debit of their sum in ACCTVERIFY batches.
    let sent = entries(&w.engine);
    assert_eq!(sent.len(), 6, "{sent:?}");
    assert!(sent.iter().all(|e| e.0 == "ACCTVERIFY"), "{sent:?}");
    let credits: Vec<i64> = sent.iter().filter(|e| e.1 == 22).map(|e| e.2).collect();
    let debits: Vec<i64> = sent.iter().filter(|e| e.1 == 27).map(|e| e.2).collect();
    assert!(credits.iter().all(|c| (1..=99).contains(c)), "{credits:?}");
    assert_eq!(debits.iter().sum::<i64>(), credits.iter().sum::<i64>());
    // Three wrong pairs lock the first (a pair that is not its credits).
    let theirs = credits_of(&w, &v_ids(&p.validation(&locked, &locked_id)));
    let wrong = if theirs == [98, 99] || theirs == [99, 98] { ["0.01", "0.02"] } else { ["0.98", "0.99"] };
    for tries_left in ["2 tries left", "1 tries left", "now locked"] {
        let (status, v) = p.confirm(&locked, &locked_id, ["1.00", "0.00"]);
        assert_eq!(status, 422, "{v}");
        assert_eq!(v["errors"][0]["code"], "invalid_amount", "amounts outside 0.01–0.99 are malformed");
        let (status, v) = p.confirm(&locked, &locked_id, wrong);
        assert_eq!(status, 422, "{v}");
        assert_eq!(v["errors"][0]["code"], "amounts_mismatch");
        assert!(v["errors"][0]["message"].as_str().unwrap().contains(tries_left), "{v}");
    }
    assert_eq!(p.validation(&locked, &locked_id)["status"], "locked");
    let right = theirs.map(|c| format!("0.{c:02}"));
    assert_eq!(
        p.confirm(&locked, &locked_id, [&right[0], &right[1]]).0,
        409,
        "locked even for the right pair"
    );
    refused_unvalidated(p.web_debit(&locked));
    // The second is confirmed with its own credits, in the other order.
    let amounts = credits_of(&w, &v_ids(&p.validation(&customer, &id)));
    let pair = [format!("0.{:02}", amounts[1]), format!("0.{:02}", amounts[0])];
    let (status, v) = p.confirm(&customer, &id, [&pair[0], &pair[1]]);
    assert_eq!((status, &v["payload"]["status"]), (200, &json!("validated")), "{v}");
    assert_eq!(p.web_debit(&customer).0, 201);
}

fn v_ids(view: &Value) -> Vec<String> {
    view["transaction_ids"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_owned()).collect()
}

/// The cents of a validation's two credits (its first two entries), from the
/// files: an entry's identification is its transaction id's last 15 characters,
/// upper case.
fn credits_of(w: &World, ids: &[String]) -> [i64; 2] {
    let sent = entries(&w.engine);
    let cents = |id: &String| {
        let tail = &id[id.len() - 15..];
        sent.iter().find(|e| e.3.eq_ignore_ascii_case(tail)).map(|e| e.2).unwrap()
    };
    [cents(&ids[0]), cents(&ids[1])]
}

#[test]
fn an_account_closed_return_ends_its_validation_and_a_carried_one_validates_later_debits() {
    let w = World::new("2026-11-23 10:00");
    let p = setup(&w);
    // A WEB debit carrying an outside validation records it for the account.
    let inline = |validation: Option<Value>| {
        let mut body = json!({"merchant_id": p.merchant, "amount": "12.00", "description": "x", "type": "debit",
            "standard_entry_class": "WEB",
            "customer": {"name": "Ada", "routing_number": "021000021", "account_number": "9090909090", "account_type": "checking"}});
        if let Some(v) = validation {
            body["account_validation"] = v;
        }
        p.call("POST", "/transactions", body)
    };
    refused_unvalidated(inline(None));
    let (status, v) = inline(Some(json!({"method": "outside", "provider": "Plaid", "reference": "r-1"})));
    assert_eq!(status, 201, "{v}");
    let (status, second) = inline(None);
    assert_eq!(status, 201, "{second}");
    let (status, v) = inline(Some(json!({"method": "prenote"})));
    assert_eq!((status, &v["errors"][0]["field"]), (422, &json!("account_validation.method")), "{v}");
    // Returned R02 (account closed): the account needs validating again.
    w.at("2026-11-24 09:00");
    let debit = second["payload"]["id"].as_str().unwrap();
    record_return(&w.engine, debit, "R02");
    refused_because(inline(None), "is failed");
}

#[test]
fn a_merchant_that_validates_accounts_itself_skips_the_check() {
    let w = World::new("2026-11-23 10:00");
    let p = setup(&w);
    let customer = p.customer("7878787878");
    refused_unvalidated(p.web_debit(&customer));
    let path = format!("/admin/merchants/{}/settings", p.merchant);
    let (status, v) =
        call(&w.engine, OPERATOR_KEY, "PUT", &path, json!({"web_debit_validation": "merchant"}));
    assert_eq!((status, &v["payload"]["web_debit_validation"]), (200, &json!("merchant")), "{v}");
    assert_eq!(p.web_debit(&customer).0, 201);
}

#[test]
fn a_returned_prenote_fails_its_validation_with_the_code() {
    let w = World::new("2026-11-23 10:00");
    let p = setup(&w);
    let (customer, id, v) = p.started("2323232323", "prenote");
    let prenote = v["transaction_ids"][0].as_str().unwrap().to_owned();
    w.at("2026-11-24 09:00");
    record_return(&w.engine, &prenote, "R03");
    let view = p.validation(&customer, &id);
    assert_eq!((&view["status"], &view["code"]), (&json!("failed"), &json!("R03")));
    refused_because(p.web_debit(&customer), "is failed");
}

#[test]
fn micro_entries_not_confirmed_in_thirty_days_expire() {
    let w = World::new("2026-11-02 10:00");
    let p = setup(&w);
    let (customer, id, _) = p.started("6565656565", "micro_entries");
    // Created 11-02: confirmable through 12-02.
    w.at("2026-12-02 23:00");
    assert_eq!(p.validation(&customer, &id)["status"], "pending");
    w.at("2026-12-03 00:01");
    assert_eq!(p.validation(&customer, &id)["status"], "expired");
    let (status, v) = p.confirm(&customer, &id, ["0.01", "0.02"]);
    assert_eq!((status, &v["errors"][0]["message"]), (409, &json!("the validation is expired")), "{v}");
    refused_because(p.web_debit(&customer), "is expired");
}

#[test]
fn an_outside_validation_takes_over_from_a_prenote_not_yet_usable() {
    let w = World::new("2026-11-23 10:00");
    let p = setup(&w);
    let (customer, _, _) = p.started("8080808080", "prenote");
    w.at("2026-11-23 18:00");
    // 12-01: the prenote has passed, but the account takes WEB debits only from 12-02.
    w.at("2026-12-01 09:00");
    refused_unvalidated(p.web_debit(&customer));
    let (status, v) = p.validate(&customer, "outside");
    assert_eq!(status, 201, "{v}");
    assert_eq!(p.web_debit(&customer).0, 201);
    // A later prenote leaves the outside validation in force.
    let (status, v) = p.validate(&customer, "prenote");
    assert_eq!((status, &v["payload"]["status"]), (201, &json!("pending")), "{v}");
    assert_eq!(p.web_debit(&customer).0, 201);
}

#[test]
fn the_operator_may_record_an_outside_validation_for_a_partners_customer() {
    let w = World::new("2026-11-23 10:00");
    let p = setup(&w);
    let customer = p.customer("9191919191");
    refused_unvalidated(p.web_debit(&customer));
    let path = format!("/admin/customers/{customer}/validations");
    let body = |method: &str| json!({"merchant_id": p.merchant, "method": method, "provider": "Bank review", "reference": "ops-7"});
    let (status, v) = call(&w.engine, OPERATOR_KEY, "POST", &path, body("prenote"));
    assert_eq!((status, &v["errors"][0]["field"]), (422, &json!("method")), "{v}");
    let (status, v) = call(&w.engine, &p.key, "POST", &path, body("outside"));
    assert_eq!(status, 401, "a partner's key never reaches the operator plane: {v}");
    let (status, v) = call(&w.engine, OPERATOR_KEY, "POST", &path, body("outside"));
    assert_eq!((status, &v["payload"]["status"]), (201, &json!("validated")), "{v}");
    // The validation is the customer's partner's: it reads it, and its WEB debit goes.
    let id = v["payload"]["id"].as_str().unwrap();
    assert_eq!(p.validation(&customer, id)["method"], "outside");
    assert_eq!(p.web_debit(&customer).0, 201);
    let unknown = "/admin/customers/cus_0000000000000000000000/validations";
    assert_eq!(call(&w.engine, OPERATOR_KEY, "POST", unknown, body("outside")).0, 404);
}
