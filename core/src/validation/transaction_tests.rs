//! Unit tests: one per transaction and customer rule and message.
#![allow(clippy::unwrap_used)]

use base64::Engine as _;
use chrono::NaiveDate;
use serde_json::{json, Value};

use super::{check_value, Context, Kind, Verdict};
use crate::model::{CustomerRef, Direction, EntryClass};
use crate::routing::RoutingDirectory;
use crate::validation::{customer, transaction};

const MER: &str = "mer_0123456789abcdefghijKL";

fn dir() -> RoutingDirectory {
    RoutingDirectory::embedded()
}

fn ctx(d: &RoutingDirectory) -> Context<'_> {
    Context { today: NaiveDate::from_ymd_opt(2026, 11, 22).unwrap(), directory: d }
}

fn png() -> String {
    let mut b = vec![0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];
    b.extend([0u8; 24]);
    base64::engine::general_purpose::STANDARD.encode(b)
}

fn ppd() -> Value {
    json!({
        "partner_id": "par_x",
        "merchant_id": MER,
        "amount": 125.50,
        "description": "Invoice 42",
        "type": "debit",
        "standard_entry_class": "PPD",
        "customer": {"name": "Ada Lovelace", "routing_number": "021000021", "account_number": "123456789", "account_type": "checking"}
    })
}

fn pop() -> Value {
    let mut v = ppd();
    v["standard_entry_class"] = json!("POP");
    v["check_number"] = json!("1001");
    v["state"] = json!("NY");
    v["check_image_front"] = json!(png());
    v["check_image_back"] = json!(png());
    v
}

fn verdict(v: &Value) -> Verdict {
    let d = dir();
    check_value(Kind::Transaction, v, &ctx(&d))
}

/// The verdict's message and its (field, code) list.
fn summary(v: &Value) -> (Option<String>, Vec<(String, String)>) {
    let verdict = verdict(v);
    let fields = verdict
        .errors
        .iter()
        .map(|e| (e.field.clone(), serde_json::to_value(e.code).unwrap().as_str().unwrap().to_owned()))
        .collect();
    (verdict.message, fields)
}

/// Assert that `v` is refused with `message` and one problem, `code` at `field`.
#[track_caller]
fn refused(v: &Value, message: &str, field: &str, code: &str) {
    assert_eq!(summary(v), (Some(message.to_owned()), one(field, code)));
}

fn one(field: &str, code: &str) -> Vec<(String, String)> {
    vec![(field.to_owned(), code.to_owned())]
}

#[test]
fn a_valid_ppd_debit_converts_exactly() {
    let d = dir();
    let t = transaction::validate_value(&ppd(), &ctx(&d)).unwrap();
    assert_eq!(t.amount.cents(), 12550);
    assert_eq!(t.direction, Direction::Debit);
    assert_eq!(t.standard_entry_class, EntryClass::PPD);
    assert!(matches!(t.customer, CustomerRef::Inline(ref a) if a.account_number == "123456789"));
    assert!(verdict(&pop()).valid);
}

#[test]
fn amounts_as_strings_and_numbers() {
    for (sent, cents) in
        [(json!("10"), 1000), (json!("0.01"), 1), (json!(99_999_999.99), 9_999_999_999i64), (json!(7), 700)]
    {
        let mut v = ppd();
        v["amount"] = sent;
        let d = dir();
        assert_eq!(transaction::validate_value(&v, &ctx(&d)).unwrap().amount.cents(), cents);
    }
}

#[test]
fn message_14_echoes_the_amount_as_sent() {
    // The body is built as text so every literal reaches the validator exactly.
    let message = |literal: &str| -> (Option<String>, String) {
        let mut v = ppd();
        v["amount"] = json!("AMOUNT");
        let body = serde_json::to_string(&v).unwrap().replace("\"AMOUNT\"", literal);
        let d = dir();
        let verdict = super::check_bytes(Kind::Transaction, body.as_bytes(), &ctx(&d));
        (verdict.message, verdict.errors.first().map(|e| e.field.clone()).unwrap_or_default())
    };
    for (literal, shown) in [
        ("\"abc\"", "abc"),
        ("\"-5\"", "-5"),
        ("-5", "-5"),
        ("1.234", "1.234"),
        ("1e2", "1e2"),
        ("1E+2", "1E+2"),
        ("\"1e2\"", "1e2"),
        ("0", "0"),
        ("0.00", "0.00"),
        ("-0", "-0"),
        ("-0.0", "-0.0"),
        ("true", "true"),
        ("[1]", "[1]"),
        ("100000000", "100000000"),
    ] {
        let expected = format!("'{shown}' is an invalid Amount");
        assert_eq!(message(literal), (Some(expected), "amount".to_owned()), "{literal}");
    }
    // An escaped string is unescaped first: "12\u0033" is the valid amount 123.
    assert_eq!(message("\"12\\u0033\""), (None, String::new()));
    let long = "9".repeat(400);
    assert_eq!(message(&long).0, Some(format!("'{}...' is an invalid Amount", "9".repeat(40))));
}

#[test]
fn message_15_caps_credits_at_fifty_million() {
    let mut v = ppd();
    v["type"] = json!("credit");
    v["amount"] = json!("50000000.00");
    assert!(verdict(&v).valid);
    v["amount"] = json!("50000000.01");
    refused(&v, "Credits are limited to 50,000,000 USD", "amount", "over_limit");
    v["type"] = json!("debit");
    assert!(verdict(&v).valid);
}

#[test]
fn message_11_merchant_id() {
    for (sent, shown) in [
        (json!("mer_123"), "mer_123"),
        (json!("cus_0123456789abcdefghijKL"), "cus_0123456789abcdefghijKL"),
        (json!(""), ""),
        (json!(12), "12"),
    ] {
        let mut v = ppd();
        v["merchant_id"] = sent;
        let (msg, fields) = summary(&v);
        assert_eq!(msg, Some(format!("'{shown}' is an invalid Merchant ID")));
        assert_eq!(fields[0].0, "merchant_id");
    }
    let mut v = ppd();
    v.as_object_mut().unwrap().remove("merchant_id");
    refused(&v, "'' is an invalid Merchant ID", "merchant_id", "required");
}

#[test]
fn message_12_routing_number() {
    let mut v = ppd();
    v["customer"]["routing_number"] = json!("021000022");
    refused(&v, "'021000022' is an invalid Routing Number", "customer.routing_number", "invalid_check_digit");
    v["customer"]["routing_number"] = json!("2100002");
    assert_eq!(summary(&v).1, one("customer.routing_number", "invalid_format"));
    v["customer"]["routing_number"] = json!(21000021);
    assert_eq!(summary(&v).0, Some("'21000021' is an invalid Routing Number".into()));
}

#[test]
fn message_13_masks_the_account_number() {
    let mut v = ppd();
    v["customer"]["account_number"] = json!("12 3456789");
    let (msg, fields) = summary(&v);
    assert_eq!(msg, Some("'******6789' is an invalid Account Number".into()));
    assert_eq!(fields, one("customer.account_number", "invalid_format"));
    let verdict = verdict(&v);
    assert!(!serde_json::to_string(&verdict).unwrap().contains("12 3456789"));
    v["customer"]["account_number"] = json!("123456789012345678");
    assert_eq!(summary(&v).0, Some("'**************5678' is an invalid Account Number".into()));
}

#[test]
fn message_16_routing_not_in_directory() {
    let mut v = ppd();
    v["customer"]["routing_number"] = json!("231380104");
    refused(&v, "Routing Number '231380104' was not found", "customer.routing_number", "not_found");
}

#[test]
fn message_8_check_number_for_boc_and_pop() {
    for class in ["BOC", "POP"] {
        let mut v = pop();
        v["standard_entry_class"] = json!(class);
        v.as_object_mut().unwrap().remove("check_number");
        refused(&v, &format!("Check Number Required For {class} Transactions"), "check_number", "required");
    }
    let mut v = pop();
    v["check_number"] = json!("12a");
    refused(&v, "Failed to accept this transaction", "check_number", "invalid_format");
    v["check_number"] = json!(1001);
    assert!(verdict(&v).valid);
}

#[test]
fn message_9_state_for_pop() {
    let mut v = pop();
    v.as_object_mut().unwrap().remove("state");
    refused(&v, "State Required For POP Transactions", "state", "required");
    v["state"] = json!("XX");
    refused(&v, "State Required For POP Transactions", "state", "invalid_value");
    let mut boc = pop();
    boc["standard_entry_class"] = json!("BOC");
    boc.as_object_mut().unwrap().remove("state");
    assert!(verdict(&boc).valid);
}

#[test]
fn images_required_for_pop_icl_boc_and_must_be_real() {
    for class in ["POP", "BOC", "ICL"] {
        let mut v = pop();
        v["standard_entry_class"] = json!(class);
        v.as_object_mut().unwrap().remove("check_image_back");
        refused(&v, "Failed to accept this transaction", "check_image_back", "required");
    }
    let mut v = pop();
    v["check_image_front"] = json!("@@@");
    assert_eq!(summary(&v).1, one("check_image_front", "invalid_base64"));
    v["check_image_front"] =
        json!(base64::engine::general_purpose::STANDARD.encode(b"GIF89a-not-a-check-image"));
    assert_eq!(summary(&v).1, one("check_image_front", "not_an_image"));
}

/// The verdict of a transaction body given as text (exact number literals).
fn raw_verdict(body: &str) -> Verdict {
    let d = dir();
    super::check_bytes(Kind::Transaction, body.as_bytes(), &ctx(&d))
}

/// `v` as JSON text with the member `key` written as `literal`.
fn with_literal(v: &Value, key: &str, literal: &str) -> String {
    let mut v = v.clone();
    v[key] = json!("@@LITERAL@@");
    serde_json::to_string(&v).unwrap().replace("\"@@LITERAL@@\"", literal)
}

#[test]
fn members_a_class_does_not_use_are_ignored_not_refused() {
    let big = "9".repeat(1 << 20);
    let junk = [
        json!("12a"),
        json!("XX"),
        json!("@@@"),
        json!(5),
        json!(true),
        json!([1]),
        json!({"a": 1}),
        json!(big),
    ];
    let d = dir();
    for class in ["PPD", "WEB", "CCD", "TEL"] {
        for value in &junk {
            let mut v = ppd();
            v["standard_entry_class"] = json!(class);
            for key in ["check_number", "state", "check_image_front", "check_image_back"] {
                v[key] = value.clone();
            }
            let t = transaction::validate_value(&v, &ctx(&d)).unwrap_or_else(|r| panic!("{class}: {r:?}"));
            assert_eq!(t.standard_entry_class.as_str(), class);
            let unused = (&t.check_number, &t.state, &t.check_image_front, &t.check_image_back);
            assert_eq!(unused, (&None, &None, &None, &None), "{class}: nothing unused is stored");
        }
        // Well-formed values are not stored either.
        let mut v = pop();
        v["standard_entry_class"] = json!(class);
        let t = transaction::validate_value(&v, &ctx(&d)).unwrap();
        assert_eq!((t.check_number, t.state, t.check_image_front), (None, None, None), "{class}");
    }
    // BOC and ICL do not use the terminal state; ICL does use a check number.
    for class in ["BOC", "ICL"] {
        let mut v = pop();
        v["standard_entry_class"] = json!(class);
        v["state"] = json!(big);
        let t = transaction::validate_value(&v, &ctx(&d)).unwrap();
        assert_eq!((t.state, t.check_number.as_deref()), (None, Some("1001")), "{class}");
        v["check_number"] = json!("12a");
        assert_eq!(summary(&v).1, one("check_number", "invalid_format"), "{class}");
    }
    // Without a valid class no class member is read: only the class is reported,
    // and a hostile value is not reflected.
    let mut v = pop();
    v["standard_entry_class"] = json!("XYZ");
    v["check_number"] = json!(big);
    v["state"] = json!(big);
    let verdict = verdict(&v);
    let fields: Vec<&str> = verdict.errors.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(fields, ["standard_entry_class"]);
    assert!(verdict.to_json().len() < 1024);
}

#[test]
fn the_pop_state_is_read_in_any_letter_case_and_stored_upper_case() {
    let d = dir();
    for sent in ["ny", "Ny", "nY", "NY"] {
        let mut v = pop();
        v["state"] = json!(sent);
        let t = transaction::validate_value(&v, &ctx(&d)).unwrap();
        assert_eq!(t.state.as_deref(), Some("NY"), "{sent}");
    }
    let mut v = pop();
    v["state"] = json!("pr");
    assert_eq!(transaction::validate_value(&v, &ctx(&d)).unwrap().state.as_deref(), Some("PR"));
    // Still a code: not a military mail code, not a look-alike, not a name.
    for sent in ["ae", "zz", "ｎｙ", "New York", "n"] {
        v["state"] = json!(sent);
        let (message, fields) = summary(&v);
        assert_eq!(message.as_deref(), Some("State Required For POP Transactions"), "{sent}");
        assert_eq!(fields.len(), 1, "{sent}");
        assert_eq!(fields[0].0, "state", "{sent}");
    }
}

#[test]
fn class_rules_debit_only_and_the_25000_cap() {
    for class in ["TEL", "BOC", "POP", "ICL"] {
        let mut v = pop();
        v["standard_entry_class"] = json!(class);
        v["type"] = json!("credit");
        refused(
            &v,
            &format!("Unable to accept {class} credit transactions for this merchant"),
            "type",
            "direction_not_allowed",
        );
    }
    let mut icl = pop();
    icl["standard_entry_class"] = json!("ICL");
    icl["amount"] = json!("90000");
    assert!(verdict(&icl).valid);
}

#[test]
fn the_boc_and_pop_network_cap_is_message_14_not_the_merchants_limit() {
    for class in ["BOC", "POP"] {
        let mut v = pop();
        v["standard_entry_class"] = json!(class);
        for at_cap in ["25000.00", "25000", "25000.0"] {
            assert!(raw_verdict(&with_literal(&v, "amount", at_cap)).valid, "{class} {at_cap}");
        }
        // The amount is echoed exactly as sent, string or number.
        for (literal, shown) in [
            ("\"25000.01\"", "25000.01"),
            ("25000.5", "25000.5"),
            ("30000", "30000"),
            ("99999999.99", "99999999.99"),
        ] {
            let verdict = raw_verdict(&with_literal(&v, "amount", literal));
            let expected = format!("'{shown}' is an invalid Amount");
            assert_eq!(verdict.message.as_deref(), Some(expected.as_str()), "{class} {literal}");
            assert_eq!(verdict.errors.len(), 1, "{class} {literal}");
            let e = &verdict.errors[0];
            assert_eq!((e.field.as_str(), e.code.as_str()), ("amount", "over_limit"));
            let limit = format!("{class} entries are limited to $25,000.00 each by the Nacha rules");
            assert!(e.message.contains(&limit) && e.message.starts_with(&expected), "{}", e.message);
            assert!(!e.message.contains("for this merchant"), "{}", e.message);
        }
    }
    let d = dir();
    let mut v = pop();
    v["amount"] = json!("25000.01");
    let report = transaction::validate_value(&v, &ctx(&d)).unwrap_err();
    let error = report.first_error().unwrap();
    assert_eq!((error.code(), error.http_status()), (14, 422));
    // An amount problem: it comes before the class rules (a POP credit over the cap).
    v["type"] = json!("credit");
    assert_eq!(
        summary(&v),
        (
            Some("'25000.01' is an invalid Amount".into()),
            vec![("amount".into(), "over_limit".into()), ("type".into(), "direction_not_allowed".into())]
        )
    );
}

#[test]
fn one_amount_however_it_is_written() {
    let d = dir();
    let parse = |literal: &str| {
        transaction::validate_bytes(with_literal(&ppd(), "amount", literal).as_bytes(), &ctx(&d))
    };
    let forms = ["1200.0", "1200", "\"1200.00\"", "1200.00", "\"1200\"", "\"1200.0\""];
    let first = parse(forms[0]).unwrap();
    assert_eq!(first.amount.cents(), 120_000);
    for literal in forms {
        assert_eq!(parse(literal).unwrap(), first, "{literal}");
    }
    // Message 14 echoes the amount exactly as sent, never normalised.
    for (literal, shown) in
        [("1200.000", "1200.000"), ("\"1200.000\"", "1200.000"), ("1.2e3", "1.2e3"), ("\"01200\"", "01200")]
    {
        let body = with_literal(&ppd(), "amount", literal);
        let expected = format!("'{shown}' is an invalid Amount");
        assert_eq!(raw_verdict(&body).message.as_deref(), Some(expected.as_str()), "{literal}");
    }
}

#[test]
fn unknown_class_and_type_are_clear_errors() {
    let mut v = ppd();
    v["standard_entry_class"] = json!("ARC");
    refused(
        &v,
        "Unable to accept ARC transactions for this merchant",
        "standard_entry_class",
        "invalid_value",
    );
    v["standard_entry_class"] = json!("ppd");
    assert_eq!(summary(&v).1, one("standard_entry_class", "invalid_value"));
    let mut t = ppd();
    t["type"] = json!("refund");
    refused(&t, "Failed to accept this transaction", "type", "invalid_value");
}

#[test]
fn customer_token_or_inline_not_both() {
    let mut v = ppd();
    v["customer"] = json!({"id": "cus_0123456789abcdefghijKL"});
    let d = dir();
    let t = transaction::validate_value(&v, &ctx(&d)).unwrap();
    assert!(matches!(t.customer, CustomerRef::Token { .. }));
    v["customer"]["name"] = json!("x");
    assert_eq!(summary(&v).1, one("customer", "conflict"));
    v["customer"] = json!({"id": "cus_short"});
    assert_eq!(summary(&v).1, one("customer.id", "invalid_format"));
    v["customer"] = json!("cus_0123456789abcdefghijKL");
    assert_eq!(summary(&v).1, one("customer", "invalid_type"));
    v["customer"] = json!({"name": "A", "routing_number": "021000021", "account_number": "1234", "account_type": "brokerage"});
    assert_eq!(summary(&v).1, one("customer.account_type", "invalid_value"));
}

#[test]
fn every_problem_is_reported_at_once_in_precedence_order() {
    let v = json!({
        "merchant_id": "bad",
        "amount": "x",
        "type": "debit",
        "standard_entry_class": "POP",
        "customer": {"name": "", "routing_number": "123", "account_number": "1", "account_type": "checking"}
    });
    let (msg, fields) = summary(&v);
    assert_eq!(msg, Some("Failed to accept this transaction".into()));
    let names: Vec<&str> = fields.iter().map(|(f, _)| f.as_str()).collect();
    assert_eq!(
        names,
        [
            "description",
            "customer.name",
            "merchant_id",
            "customer.routing_number",
            "customer.account_number",
            "amount",
            "check_number",
            "state",
            "check_image_front",
            "check_image_back"
        ]
    );
}

#[test]
fn non_object_bodies_and_hostile_strings() {
    for body in [json!(null), json!([]), json!("x"), json!(5)] {
        refused(&body, "Failed to accept this transaction", "", "invalid_type");
    }
    let mut v = ppd();
    v["description"] = json!("a\u{0}b");
    assert_eq!(summary(&v).1, one("description", "invalid_format"));
    v["description"] = json!("x".repeat(1 << 20));
    assert_eq!(summary(&v).1, one("description", "too_long"));
}

#[test]
fn bytes_that_are_not_json_or_not_utf8() {
    let d = dir();
    for bytes in [&b"{"[..], b"\xff\xfe", b"", b"{\"a\":1}x"] {
        let v = super::check_bytes(Kind::Transaction, bytes, &ctx(&d));
        assert!(!v.valid);
        assert_eq!(v.errors[0].field, "");
        assert_eq!(serde_json::to_value(v.errors[0].code).unwrap(), json!("invalid_json"));
        assert_eq!(v.message.as_deref(), Some("Failed to accept this transaction"));
    }
    let deep = "[".repeat(100_000);
    assert!(!super::check_bytes(Kind::Transaction, deep.as_bytes(), &ctx(&d)).valid);
}

#[test]
fn customers_may_be_global_or_a_merchant() {
    let d = dir();
    let body = json!({"merchant_id": "global", "name": "Ada", "routing_number": "021000021", "account_number": "000123456", "account_type": "savings"});
    let c = customer::validate_value(&body, &ctx(&d)).unwrap();
    assert_eq!(c.merchant_id.as_str(), "global");
    let mut m = body.clone();
    m["merchant_id"] = json!(MER);
    let mine = customer::validate_value(&m, &ctx(&d)).unwrap();
    assert_eq!((mine.merchant_id.as_str(), &mine.account), (MER, &c.account));
    m["merchant_id"] = json!("Global");
    let v = check_value(Kind::Customer, &m, &ctx(&d));
    assert_eq!(v.message.as_deref(), Some("'Global' is an invalid Merchant ID"));
}

#[test]
fn names_and_descriptions_are_kept_in_nfkc() {
    let d = dir();
    let mut v = ppd();
    v["description"] = json!("ﬁne Cafe\u{301}");
    v["customer"]["name"] = json!("ＡＤＡ Jose\u{301}");
    let t = transaction::validate_value(&v, &ctx(&d)).unwrap();
    assert_eq!(t.description, "fine Café");
    match t.customer {
        CustomerRef::Inline(account) => assert_eq!(account.name, "ADA José"),
        other => panic!("{other:?}"),
    }
}
