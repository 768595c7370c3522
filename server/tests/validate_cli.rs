//! `achd validate` end to end: output shape, exit codes, stdin, directory option.
#![allow(clippy::unwrap_used)]

use std::process::Output;

mod common;

fn achd(args: &[&str], stdin: Option<&[u8]>) -> Output {
    common::run_achd(args, stdin)
}

fn example(name: &str) -> String {
    format!("{}/../examples/requests/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn stdout_json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout)))
}

#[test]
fn a_valid_transaction_prints_valid_and_exits_0() {
    let o = achd(&["validate", "transaction", &example("transaction.json")], None);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "{\"valid\":true,\"message\":null,\"errors\":[]}\n");
}

#[test]
fn an_invalid_body_on_stdin_prints_every_problem_and_exits_1() {
    let body = br#"{"merchant_id":"mer_1","amount":"abc","type":"debit","standard_entry_class":"PPD","description":"x","customer":{"id":"cus_0123456789abcdefghijKL"}}"#;
    let o = achd(&["validate", "transaction", "-"], Some(body));
    assert_eq!(o.status.code(), Some(1));
    let v = stdout_json(&o);
    assert_eq!(v["valid"], false);
    assert_eq!(v["message"], "'mer_1' is an invalid Merchant ID");
    assert_eq!(v["errors"][0]["field"], "merchant_id");
    assert_eq!(v["errors"][1]["field"], "amount");
    assert_eq!(v["errors"][1]["code"], "invalid_amount");
    assert_eq!(
        v["errors"][1]["message"],
        "'abc' is an invalid Amount: amount must be a positive amount with at most two decimals"
    );
}

#[test]
fn malformed_json_is_a_verdict_not_a_crash() {
    let o = achd(&["validate", "customer"], Some(b"{\"merchant_id\": \xff"));
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stdout_json(&o)["errors"][0]["code"], "invalid_json");
}

#[test]
fn unreadable_input_and_bad_usage_exit_2() {
    let o = achd(&["validate", "transaction", "/nonexistent/body.json"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot read"));
    assert_eq!(achd(&["validate", "invoice", "-"], Some(b"{}")).status.code(), Some(2));
    assert_eq!(achd(&["validate"], None).status.code(), Some(2));
    assert_eq!(achd(&["frobnicate"], None).status.code(), Some(2));
    let o = achd(
        &["validate", "transaction", &example("transaction.json"), "--routing-directory", "/nonexistent"],
        None,
    );
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn the_real_directory_finds_numbers_the_default_does_not() {
    let body = br#"{"merchant_id":"global","name":"A","routing_number":"231380104","account_number":"12345","account_type":"checking"}"#;
    let default = achd(&["validate", "customer", "-"], Some(body));
    assert_eq!(default.status.code(), Some(1));
    assert_eq!(stdout_json(&default)["message"], "Routing Number '231380104' was not found");
    let fedach = ach_fedach_path();
    let real = achd(&["validate", "customer", "-", "--routing-directory", &fedach], Some(body));
    assert_eq!(real.status.code(), Some(0), "{}", String::from_utf8_lossy(&real.stdout));
}

fn ach_fedach_path() -> String {
    std::env::var("ACH_SHARED_DATA")
        .map(|d| format!("{d}/fedach/FedACHdir.txt"))
        .unwrap_or_else(|_| format!("{}/../../shared/data/fedach/FedACHdir.txt", env!("CARGO_MANIFEST_DIR")))
}

#[test]
fn every_example_request_is_valid() {
    for (kind, file) in [
        ("transaction", "transaction.json"),
        ("transaction", "transaction-pop.json"),
        ("customer", "customer.json"),
        ("merchant", "merchant.json"),
    ] {
        let o = achd(&["validate", kind, &example(file)], None);
        assert_eq!(o.status.code(), Some(0), "{file}: {}", String::from_utf8_lossy(&o.stdout));
    }
}

#[test]
fn values_are_read_as_the_spec_types_them() {
    let pop = std::fs::read_to_string(example("transaction-pop.json")).unwrap();
    let run = |kind: &str, body: &str| {
        let o = achd(&["validate", kind, "-"], Some(body.as_bytes()));
        (o.status.code(), stdout_json(&o))
    };
    // A POP terminal state in any letter case.
    let (code, v) = run("transaction", &pop.replace("\"NY\"", "\"ny\""));
    assert_eq!(code, Some(0), "{v}");
    // The BOC/POP cap is message 14, echoing the amount exactly as sent.
    let (code, v) = run("transaction", &pop.replace("\"42.00\"", "25000.50"));
    assert_eq!(code, Some(1));
    assert_eq!(v["message"], "'25000.50' is an invalid Amount");
    assert_eq!(
        (v["errors"][0]["field"].as_str(), v["errors"][0]["code"].as_str()),
        (Some("amount"), Some("over_limit"))
    );
    // A PPD ignores the members it does not use.
    let ppd = pop.replace("\"POP\"", "\"PPD\"").replace("\"1001\"", "\"12a\"").replace("\"NY\"", "[]");
    let (code, v) = run("transaction", &ppd);
    assert_eq!(code, Some(0), "{v}");
    // SSN and tax id as JSON numbers that lost a leading zero.
    let merchant = std::fs::read_to_string(example("merchant.json")).unwrap();
    let numeric = merchant.replace("\"123-45-6789\"", "12345678").replace("\"12-3456789\"", "1234567");
    assert_ne!(numeric, merchant);
    let (code, v) = run("merchant", &numeric);
    assert_eq!(code, Some(0), "{v}");
    let (code, v) = run("merchant", &merchant.replace("\"123-45-6789\"", "1.2345678e8"));
    assert_eq!(code, Some(1));
    assert_eq!(v["errors"][0]["field"], "principal[0].ssn");
    assert_eq!(
        v["errors"][0]["message"],
        "principal[0].ssn is not a valid SSN: a JSON number for it must not have an exponent"
    );
}
