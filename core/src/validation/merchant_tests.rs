//! Tests of the merchant application rules.

#![allow(clippy::unwrap_used)]

use std::sync::OnceLock;

use base64::Engine as _;
use chrono::NaiveDate;
use proptest::prelude::*;
use serde_json::{json, Value};

use super::validate_value;
use crate::model::{AccountType, EntryClass, MerchantApplication};
use crate::money::Money;
use crate::routing::RoutingDirectory;
use crate::validation::{check_value, Context, FieldError, Kind, ProblemCode as C, Verdict};

fn directory() -> &'static RoutingDirectory {
    static DIR: OnceLock<RoutingDirectory> = OnceLock::new();
    DIR.get_or_init(RoutingDirectory::embedded)
}

fn ctx() -> Context<'static> {
    Context { today: NaiveDate::from_ymd_opt(2026, 11, 22).unwrap(), directory: directory() }
}

/// A 16-byte "PNG": the signature and the start of an IHDR chunk.
fn png() -> String {
    let bytes = [0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, b'I', b'H', b'D', b'R'];
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn bank(routing: &str, account: &str) -> Value {
    json!({
        "name": "JPMorgan Chase",
        "contact_name": "Pat Banker",
        "contact_title": "Branch Manager",
        "routing": routing,
        "account": account,
        "type": "checking",
        "check_image_front": png(),
        "check_image_back": png(),
        "address": {"address1": "270 Park Ave", "city": "New York", "state": "NY", "zip": "10017"}
    })
}

/// One complete, valid application.
fn valid() -> Value {
    json!({
        "company_info": {
            "check_guarantee": false,
            "name": "Acme Groceries LLC",
            "dba": "Acme Market",
            "website": "https://www.acme-market.example.com",
            "address": {
                "address1": "100 Main St",
                "address2": "Suite 4",
                "city": "Springfield",
                "state": "IL",
                "zip": "62701"
            }
        },
        "velocities": {
            "expected_checks_per_year": 1200,
            "expected_average_check_amount": 85.50,
            "expected_sales_per_year": "2500000",
            "lowest_amount_allowed": 1.00,
            "highest_amount_allowed": 5000,
            "decline_duplicates": true
        },
        "business_data": {
            "authorization_method": "Signed paper authorization at the counter",
            "business_start_date": "2015-06-01",
            "merchant_category_code": 5411,
            "goods_or_service": "Groceries",
            "federal_tax_id": "12-3456789",
            "corporate_structure": "LLC"
        },
        "custodial_bank_account": bank("021000021", "123456789"),
        "billing_bank_account": bank("026009593", "987654321"),
        "support_contact": {
            "name": "Acme Support",
            "email": "support@acme-market.example.com",
            "phone": "(217) 555-0100",
            "fax": "217-555-0101"
        },
        "principal": [{
            "name": "Jane Owner",
            "title": "Managing Member",
            "ssn": 123456789,
            "driver_license": "D123-4567-8901",
            "driver_license_state": "IL",
            "phone": "217.555.0102",
            "fax": "217.555.0103",
            "email": "jane@acme-market.example.com",
            "address": {"address1": "PO Box 12", "city": "Springfield", "state": "IL", "zip": "62702-1234"}
        }, {
            "name": "John Partner",
            "title": "Member",
            "ssn": "234-56-7890",
            "driver_license": "P9876543",
            "driver_license_state": "MO",
            "phone": "+1 314 555 0104",
            "email": "john@acme-market.example.com",
            "address": {"address1": "9 Elm St", "city": "St. Louis", "state": "MO", "zip": "63101"}
        }],
        "standard_entry_classes": ["PPD", "WEB"],
        "references": [{
            "name": "Wholesale Foods Inc",
            "contact_name": "Sam Supplier",
            "phone": "312-555-0105",
            "state": "IL",
            "account_number": "ACCT-99881"
        }],
        "something_unknown": {"ignored": true}
    })
}

fn check(v: &Value) -> Verdict {
    check_value(Kind::Merchant, v, &ctx())
}

/// Replace (or add) the member at a JSON pointer; an index one past the end of an
/// array appends.
fn set(v: &mut Value, pointer: &str, new: Value) {
    if let Some(slot) = v.pointer_mut(pointer) {
        *slot = new;
        return;
    }
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    match v.pointer_mut(parent).unwrap() {
        Value::Array(a) => a.push(new),
        other => {
            other.as_object_mut().unwrap().insert(key.to_owned(), new);
        }
    }
}

/// Remove the member at a JSON pointer.
fn remove(v: &mut Value, pointer: &str) {
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    let object = v.pointer_mut(parent).unwrap().as_object_mut().unwrap();
    object.remove(key).unwrap();
}

/// `/principal/0/address/zip` as the JSON path `principal[0].address.zip`.
fn json_path(pointer: &str) -> String {
    let mut out = String::new();
    for seg in pointer.split('/').skip(1) {
        if seg.bytes().all(|b| b.is_ascii_digit()) {
            out.push_str(&format!("[{seg}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(seg);
        }
    }
    out
}

/// Set the member at `pointer` to `new` in the valid application: the verdict must
/// list exactly one problem, at `pointer`, with `code`, and carry `envelope`.
fn only(pointer: &str, new: Value, code: C, envelope: &str) -> FieldError {
    let mut v = valid();
    set(&mut v, pointer, new.clone());
    let verdict = check(&v);
    let case = format!("{pointer} = {new}: {:#?}", verdict.errors);
    assert_eq!(verdict.errors.len(), 1, "{case}");
    let e = verdict.errors[0].clone();
    assert_eq!((e.field.as_str(), e.code), (json_path(pointer).as_str(), code), "{case}");
    assert_eq!(verdict.message.as_deref(), Some(envelope), "{case}");
    e
}

/// The valid application with members replaced: `with! { "/pointer" => value, ... }`.
macro_rules! with {
    ($($pointer:literal => $value:expr),* $(,)?) => {{
        let mut v = valid();
        $(set(&mut v, $pointer, $value);)*
        v
    }};
}

fn assert_valid(v: &Value) {
    let verdict = check(v);
    assert!(verdict.valid, "{v}: {:#?}", verdict.errors);
}

const TEN: &str = "Failed to accept this transaction";

/// `pointer => value, code, envelope [, message fragment];` rows of one-problem cases.
macro_rules! cases {
    ($($pointer:literal => $value:expr, $code:ident, $envelope:expr $(, $msg:literal)?;)*) => {
        vec![$(($pointer, $value, C::$code, $envelope, None $(.or(Some($msg)))?)),*]
    };
}

/// A typed client writes a "number" as `1200.0`: a zero fraction is the
/// same count.
#[test]
fn a_count_with_a_zero_fraction_is_the_whole_number() {
    for sent in [json!(1200.0), json!("1200.00")] {
        let mut v = valid();
        v["velocities"]["expected_checks_per_year"] = sent.clone();
        let m = validate_value(&v, &ctx()).unwrap_or_else(|e| panic!("{sent}: {e:?}"));
        assert_eq!(m.velocities.expected_checks_per_year, 1200, "{sent}");
    }
}

#[test]
fn a_complete_application_validates_and_converts() {
    let v = valid();
    let verdict = check(&v);
    assert!(verdict.valid, "{:#?}", verdict.errors);
    assert_eq!(verdict.message, None);
    let m = validate_value(&v, &ctx()).unwrap();
    assert_eq!(m.company_info.name, "Acme Groceries LLC");
    assert_eq!(m.company_info.address.address2.as_deref(), Some("Suite 4"));
    let vel = &m.velocities;
    assert_eq!(vel.expected_checks_per_year, 1200);
    assert_eq!(vel.expected_average_check_amount, Money::from_cents(8550));
    assert_eq!(vel.expected_sales_per_year, Money::from_cents(250_000_000));
    assert_eq!(vel.lowest_amount_allowed, Some(Money::from_cents(100)));
    assert_eq!(vel.highest_amount_allowed, Money::from_cents(500_000));
    let biz = &m.business_data;
    assert_eq!(biz.business_start_date.to_string(), "2015-06-01");
    assert_eq!(biz.merchant_category_code, Some(5411));
    assert_eq!(biz.business_type.as_deref(), Some("Retail outlet services"));
    assert_eq!(biz.federal_tax_id, "123456789");
    assert_eq!(m.custodial_bank_account.routing, "021000021");
    assert_eq!(m.custodial_bank_account.account_type, AccountType::Checking);
    assert!(m.billing_bank_account.is_some());
    let ssns: Vec<&str> = m.principal.iter().map(|p| p.ssn.as_str()).collect();
    assert_eq!(ssns, ["123456789", "234567890"]);
    assert_eq!(m.principal[1].fax, None);
    assert_eq!(m.standard_entry_classes, [EntryClass::PPD, EntryClass::WEB]);
    assert_eq!(m.references.as_ref().map(Vec::len), Some(1));
    assert!(!format!("{:?}", m.principal[0]).contains("123456789"));

    let json = serde_json::to_value(&m).unwrap();
    assert_eq!(json["custodial_bank_account"]["type"], "checking");
    assert_eq!(json["business_data"]["merchant_category_code"], 5411);
    let back: MerchantApplication = serde_json::from_value(json).unwrap();
    assert_eq!(back, m);
}

#[test]
fn each_rule_reports_its_field_code_and_envelope() {
    assert!(directory().lookup("123456780").is_none());
    let gif = "R0lGODlhAQABAIAAAP///wAAACwAAAAAAQABAAACAkQBADs=";
    let cases = cases! {
        // company_info
        "/company_info/address/address1" => json!("P.O. Box 77"), PoBox, TEN, "must be a physical street address, not a PO box";
        "/company_info/address/zip" => json!("1001"), InvalidFormat, TEN;
        "/company_info/address/state" => json!("ny"), InvalidValue, TEN;
        "/company_info/check_guarantee" => json!("no"), InvalidType, TEN;
        "/company_info/website" => json!("not a website"), InvalidFormat, TEN;
        "/company_info/name" => json!("N".repeat(101)), TooLong, TEN;
        "/company_info/dba" => json!("tab\there"), InvalidFormat, TEN;
        "/company_info/address/city" => json!("C".repeat(51)), TooLong, TEN;
        "/company_info/address" => json!("100 Main St"), InvalidType, TEN;
        "/company_info/address/address2" => json!(5), InvalidType, TEN;
        // velocities (amounts: message 14)
        "/velocities/expected_average_check_amount" => json!(0), InvalidAmount, "'0' is an invalid Amount";
        "/velocities/highest_amount_allowed" => json!("12.345"), InvalidAmount, "'12.345' is an invalid Amount";
        "/velocities/expected_sales_per_year" => json!(-5), InvalidAmount, "'-5' is an invalid Amount";
        "/velocities/lowest_amount_allowed" => json!(6000), Conflict, "'6000' is an invalid Amount", "is more than velocities.highest_amount_allowed (5000.00)";
        "/velocities/lowest_amount_allowed" => json!("1e2"), InvalidAmount, "'1e2' is an invalid Amount";
        "/velocities/expected_average_check_amount" => json!([]), InvalidType, TEN;
        "/velocities/expected_checks_per_year" => json!(12.5), InvalidFormat, TEN;
        "/velocities/expected_checks_per_year" => json!("012"), InvalidFormat, TEN;
        "/velocities/expected_checks_per_year" => json!(12.05), InvalidFormat, TEN;
        "/velocities/expected_checks_per_year" => json!("12."), InvalidFormat, TEN;
        "/velocities/expected_checks_per_year" => json!(".0"), InvalidFormat, TEN;
        "/velocities/expected_checks_per_year" => json!("12.0000000"), InvalidFormat, TEN;
        "/velocities/decline_duplicates" => json!("yes"), InvalidType, TEN;
        // business_data
        "/business_data/business_start_date" => json!("2026-11-23"), FutureDate, TEN, "(2026-11-23) is in the future (today is 2026-11-22)";
        "/business_data/business_start_date" => json!("06/01/2015"), InvalidFormat, TEN;
        "/business_data/business_start_date" => json!(20150601), InvalidType, TEN;
        "/business_data/federal_tax_id" => json!("00-0000000"), InvalidFormat, TEN;
        "/business_data/federal_tax_id" => json!(1234567890), InvalidFormat, TEN, "a JSON number for it has at most nine digits";
        "/business_data/federal_tax_id" => json!(0), InvalidFormat, TEN;
        "/business_data/corporate_structure" => json!("S".repeat(256)), TooLong, TEN;
        "/business_data/merchant_category_code" => json!(0), InvalidValue, TEN;
        "/business_data/merchant_category_code" => json!("0000"), InvalidValue, TEN;
        "/business_data/merchant_category_code" => json!("742"), InvalidFormat, TEN;
        "/business_data/merchant_category_code" => json!(10000), InvalidFormat, TEN;
        "/business_data/merchant_category_code" => json!(5411.5), InvalidFormat, TEN;
        "/business_data/merchant_category_code" => json!("54111"), InvalidFormat, TEN;
        "/business_data/merchant_category_code" => json!(true), InvalidType, TEN;
        // bank accounts (routing: 12/16, account: 13)
        "/custodial_bank_account/routing" => json!("021000022"), InvalidCheckDigit, "'021000022' is an invalid Routing Number";
        "/custodial_bank_account/routing" => json!("123456780"), NotFound, "Routing Number '123456780' was not found";
        "/billing_bank_account/routing" => json!(26009593), InvalidType, "'26009593' is an invalid Routing Number";
        "/custodial_bank_account/account" => json!("12"), InvalidFormat, "'12' is an invalid Account Number";
        "/billing_bank_account/account" => json!("0000-0000"), InvalidFormat, "'*****0000' is an invalid Account Number";
        "/custodial_bank_account/type" => json!("business"), InvalidValue, TEN;
        "/custodial_bank_account/check_image_front" => json!("not base64!"), InvalidBase64, TEN;
        "/billing_bank_account/check_image_back" => json!(gif), NotAnImage, TEN;
        "/billing_bank_account/check_image_back" => json!(7), InvalidType, TEN;
        "/custodial_bank_account/address/zip" => json!("1001"), InvalidFormat, TEN;
        "/custodial_bank_account/contact_title" => json!("T".repeat(101)), TooLong, TEN;
        "/billing_bank_account" => json!("none"), InvalidType, TEN;
        // support_contact
        "/support_contact/email" => json!("support@"), InvalidFormat, TEN;
        "/support_contact/phone" => json!("555-0100"), InvalidFormat, TEN;
        "/support_contact/fax" => json!("fax me"), InvalidFormat, TEN;
        // principal
        "/principal/0/ssn" => json!("123-45-678"), InvalidFormat, TEN, "principal[0].ssn is not a valid SSN";
        "/principal/0/ssn" => json!(12345), InvalidFormat, TEN, "principal[0].ssn is not a valid SSN";
        "/principal/0/ssn" => json!(-123456789), InvalidFormat, TEN, "must not have a sign";
        "/principal/0/ssn" => json!(123456789.5), InvalidFormat, TEN, "must not have a fraction";
        "/principal/1/ssn" => json!("666-12-3456"), InvalidFormat, TEN;
        "/principal/0/ssn" => json!(true), InvalidType, TEN;
        "/principal/1/address/zip" => json!("6310"), InvalidFormat, TEN;
        "/principal/0/driver_license_state" => json!("XX"), InvalidValue, TEN;
        "/principal/0/driver_license" => json!("D".repeat(33)), TooLong, TEN;
        "/principal/0/email" => json!("jane at acme"), InvalidFormat, TEN;
        "/principal" => json!([]), Required, TEN;
        "/principal" => json!({}), InvalidType, TEN;
        "/principal/1" => json!(5), InvalidType, TEN;
        // standard_entry_classes
        "/standard_entry_classes/2" => json!("PPD"), Conflict, TEN, "standard_entry_classes[2] repeats 'PPD'";
        "/standard_entry_classes/1" => json!("XYZ"), InvalidValue, TEN;
        "/standard_entry_classes/1" => json!(7), InvalidType, TEN;
        "/standard_entry_classes" => json!([]), Required, TEN;
        "/standard_entry_classes" => json!("WEB"), InvalidType, TEN;
        // references
        "/references/0/phone" => json!("555-0105"), InvalidFormat, TEN;
        "/references/0/state" => json!("ZZ"), InvalidValue, TEN;
        "/references/0/account_number" => json!("AC 34-5678"), InvalidFormat, "'******5678' is an invalid Account Number";
        "/references/0" => json!("x"), InvalidType, TEN;
        "/references" => json!({}), InvalidType, TEN;
    };
    for (pointer, value, code, envelope, fragment) in cases {
        let e = only(pointer, value, code, envelope);
        if let Some(fragment) = fragment {
            assert!(e.message.contains(fragment), "{pointer}: {}", e.message);
        }
    }
}

#[test]
fn edge_values_are_accepted() {
    assert_valid(&with! { "/business_data/business_start_date" => json!("2026-11-22") });
    assert_valid(&with! { "/custodial_bank_account/address/address1" => json!("PO Box 1") });
    assert_valid(&with! { "/principal/0/address/address1" => json!("P.O. Box 9") });
    assert_valid(&with! { "/business_data/federal_tax_id" => json!(987654321) });
    assert_valid(&with! { "/velocities/expected_checks_per_year" => json!("1200") });
    assert_valid(&with! { "/company_info/name" => json!("N".repeat(100)) });
    assert_valid(&with! { "/company_info/address/city" => json!("C".repeat(50)) });
    assert_valid(&with! { "/standard_entry_classes" => json!(["TEL", "WEB", "CCD", "PPD"]) });
    assert_valid(&with! {
        "/velocities/expected_sales_per_year" => json!(0),
        "/velocities/expected_checks_per_year" => json!("0"),
        "/velocities/lowest_amount_allowed" => json!(5000),
    });
    // Yearly sales are not an entry amount: a large business is not refused.
    assert_valid(&with! { "/velocities/expected_sales_per_year" => json!("250000000.00") });
    let later = Context { today: NaiveDate::from_ymd_opt(2026, 11, 23).unwrap(), ..ctx() };
    let v = with! { "/business_data/business_start_date" => json!("2026-11-23") };
    assert!(check_value(Kind::Merchant, &v, &later).valid);
}

#[test]
fn a_website_is_required_for_web_only_but_always_valid() {
    let mut v = valid();
    remove(&mut v, "/company_info/website");
    let verdict = check(&v);
    assert_eq!(verdict.errors.len(), 1);
    let e = &verdict.errors[0];
    assert_eq!((e.field.as_str(), e.code), ("company_info.website", C::Required));
    assert_eq!(e.message, "company_info.website is required for WEB entries");
    assert_eq!(verdict.message.as_deref(), Some(TEN));

    set(&mut v, "/standard_entry_classes", json!(["PPD", "CCD"]));
    assert_valid(&v);
    set(&mut v, "/company_info/website", json!("ftp://example.com"));
    let verdict = check(&v);
    let fields: Vec<_> = verdict.errors.iter().map(|e| (e.field.as_str(), e.code)).collect();
    assert_eq!(fields, [("company_info.website", C::InvalidFormat)]);
}

#[test]
fn the_billing_account_may_be_null_but_not_incomplete() {
    let mut v = with! { "/billing_bank_account" => Value::Null };
    assert_valid(&v);
    assert_eq!(validate_value(&v, &ctx()).unwrap().billing_bank_account, None);
    remove(&mut v, "/billing_bank_account");
    assert_valid(&v);

    let verdict = check(&with! { "/billing_bank_account" => json!({}) });
    let mut fields: Vec<String> = verdict
        .errors
        .iter()
        .inspect(|e| assert_eq!(e.code, C::Required, "{}", e.field))
        .map(|e| e.field.clone())
        .collect();
    fields.sort();
    let keys = "account address check_image_back check_image_front name routing type";
    let expected: Vec<String> = keys.split(' ').map(|k| format!("billing_bank_account.{k}")).collect();
    assert_eq!(fields, expected);
    assert_eq!(verdict.message.as_deref(), Some(TEN));
}

#[test]
fn references_may_be_null_or_empty() {
    let mut v = with! { "/references" => Value::Null };
    assert_valid(&v);
    assert_eq!(validate_value(&v, &ctx()).unwrap().references, None);
    set(&mut v, "/references", json!([]));
    assert_valid(&v);
    remove(&mut v, "/references");
    assert_valid(&v);
    let mut v = valid();
    remove(&mut v, "/references/0/account_number");
    assert_valid(&v);
}

#[test]
fn an_ssn_tax_id_or_account_number_is_never_echoed() {
    for bad in [json!(12345), json!("666-12-3456"), json!("12345678"), json!("1234567890")] {
        let e = only("/principal/0/ssn", bad, C::InvalidFormat, TEN);
        assert_eq!(e.message, "principal[0].ssn is not a valid SSN");
    }
    for (bad, why) in [
        ("-123456789", "a JSON number for it must not have a sign"),
        ("123456789.0", "a JSON number for it must not have a fraction"),
        ("1.5", "a JSON number for it must not have a fraction"),
        ("123456789e0", "a JSON number for it must not have an exponent"),
        ("1234567890", "a JSON number for it has at most nine digits"),
    ] {
        let e = only("/principal/0/ssn", number(bad), C::InvalidFormat, TEN);
        assert_eq!(e.message, format!("principal[0].ssn is not a valid SSN: {why}"), "{bad}");
        let e = only("/business_data/federal_tax_id", number(bad), C::InvalidFormat, TEN);
        let what = "federal tax id (nine digits, like 12-3456789)";
        assert_eq!(e.message, format!("business_data.federal_tax_id is not a valid {what}: {why}"), "{bad}");
    }
    let v = with! {
        "/principal/1/ssn" => json!("999-45-1357"),
        "/principal/0/ssn" => json!(false),
        "/business_data/federal_tax_id" => json!("98-765432"),
        "/references/0/account_number" => json!("SECRET 2468"),
        "/custodial_bank_account/account" => json!("TOPSECRET 13579-X"),
    };
    let text = serde_json::to_string(&check(&v)).unwrap();
    for secret in ["999", "1357", "765432", "SECRET", "13579"] {
        assert!(!text.contains(secret), "{secret} in {text}");
    }
}

/// A JSON number with exactly this literal text.
fn number(literal: &str) -> Value {
    serde_json::from_str(literal).unwrap()
}

#[test]
fn numeric_ssns_and_tax_ids_are_left_padded_to_nine_digits() {
    let ids = |v: &Value| {
        let m = validate_value(v, &ctx()).unwrap_or_else(|r| panic!("{:?}", r.verdict()));
        (m.principal[0].ssn.clone(), m.business_data.federal_tax_id)
    };
    // A JSON number loses its leading zeros: 012345678 arrives as 12345678.
    let v = with! {
        "/principal/0/ssn" => json!(12345678),
        "/business_data/federal_tax_id" => json!(12345678),
    };
    assert_eq!(ids(&v), ("012345678".to_owned(), "012345678".to_owned()));
    let v = with! {
        "/principal/0/ssn" => json!(1234567),
        "/business_data/federal_tax_id" => json!(1),
    };
    assert_eq!(ids(&v), ("001234567".to_owned(), "000000001".to_owned()));
    // Strings are read as written: eight digits in a string are not nine.
    for pointer in ["/principal/0/ssn", "/business_data/federal_tax_id"] {
        only(pointer, json!("12345678"), C::InvalidFormat, TEN);
    }
    let v = with! {
        "/principal/0/ssn" => json!("012-34-5678"),
        "/business_data/federal_tax_id" => json!("01-2345678"),
    };
    assert_eq!(ids(&v), ("012345678".to_owned(), "012345678".to_owned()));
    // Padding happens before the SSN rules: 12345 is 000012345, area 000.
    only("/principal/0/ssn", json!(12345), C::InvalidFormat, TEN);
    only("/business_data/federal_tax_id", json!(0), C::InvalidFormat, TEN);
}

proptest! {
    #[test]
    fn a_numeric_id_reads_as_its_nine_digit_string(n in 0u64..=999_999_999) {
        let text = format!("{n:09}");
        let as_number = with! {
            "/principal/0/ssn" => json!(n),
            "/business_data/federal_tax_id" => json!(n),
        };
        let as_string = with! {
            "/principal/0/ssn" => json!(text),
            "/business_data/federal_tax_id" => json!(text),
        };
        let (number, string) = (validate_value(&as_number, &ctx()), validate_value(&as_string, &ctx()));
        prop_assert_eq!(check(&as_number), check(&as_string));
        if let (Ok(number), Ok(string)) = (number, string) {
            prop_assert_eq!(&number.principal[0].ssn, &text);
            prop_assert_eq!(&number.business_data.federal_tax_id, &text);
            prop_assert_eq!(number, string);
        }
    }
}

#[test]
fn the_category_code_gives_the_business_type() {
    let business = |v: &Value| validate_value(v, &ctx()).unwrap().business_data;
    let mut v = with! { "/business_data/merchant_category_code" => json!("0742") };
    let biz = business(&v);
    assert_eq!(biz.merchant_category_code, Some(742));
    assert_eq!(biz.business_type.as_deref(), Some("Agricultural services"));
    set(&mut v, "/business_data/business_type", json!("Veterinary clinic"));
    assert_eq!(business(&v).business_type.as_deref(), Some("Veterinary clinic"));
    remove(&mut v, "/business_data/merchant_category_code");
    remove(&mut v, "/business_data/business_type");
    let biz = business(&v);
    assert_eq!((biz.merchant_category_code, biz.business_type), (None, None));
    set(&mut v, "/business_data/merchant_category_code", json!(9999));
    assert_eq!(business(&v).business_type.as_deref(), Some("Government services"));
}

#[test]
fn every_problem_is_reported_in_precedence_order() {
    let v = with! {
        "/velocities/highest_amount_allowed" => json!("abc"),
        "/custodial_bank_account/routing" => json!("123456780"),
        "/custodial_bank_account/account" => json!("1"),
        "/principal/0/email" => json!("nope"),
    };
    let verdict = check(&v);
    let fields: Vec<&str> = verdict.errors.iter().map(|e| e.field.as_str()).collect();
    let expected = [
        "principal[0].email",
        "custodial_bank_account.account",
        "velocities.highest_amount_allowed",
        "custodial_bank_account.routing",
    ];
    assert_eq!(fields, expected);
    assert_eq!(verdict.message.as_deref(), Some(TEN));
    let verdict = check(&json!([1, 2]));
    let e = &verdict.errors[0];
    assert_eq!((e.field.as_str(), e.code), ("", C::InvalidType));
}

/// Every required member of the fixture, as JSON pointers.
const REQUIRED: &str = "
    /company_info /company_info/check_guarantee /company_info/name /company_info/website
    /company_info/address /company_info/address/address1 /company_info/address/city
    /company_info/address/state /company_info/address/zip
    /velocities /velocities/expected_checks_per_year /velocities/expected_average_check_amount
    /velocities/expected_sales_per_year /velocities/highest_amount_allowed
    /velocities/decline_duplicates
    /business_data /business_data/authorization_method /business_data/business_start_date
    /business_data/federal_tax_id /business_data/corporate_structure
    /custodial_bank_account /custodial_bank_account/name /custodial_bank_account/routing
    /custodial_bank_account/account /custodial_bank_account/type
    /custodial_bank_account/check_image_front /custodial_bank_account/check_image_back
    /custodial_bank_account/address /custodial_bank_account/address/address1
    /custodial_bank_account/address/city /custodial_bank_account/address/state
    /custodial_bank_account/address/zip
    /billing_bank_account/name /billing_bank_account/routing /billing_bank_account/account
    /billing_bank_account/type /billing_bank_account/check_image_front
    /billing_bank_account/check_image_back /billing_bank_account/address
    /billing_bank_account/address/zip
    /support_contact /support_contact/name /support_contact/email /support_contact/phone
    /principal /principal/0/name /principal/0/title /principal/0/ssn /principal/0/driver_license
    /principal/0/driver_license_state /principal/0/phone /principal/0/email /principal/0/address
    /principal/0/address/address1 /principal/0/address/city /principal/0/address/state
    /principal/0/address/zip /principal/1/ssn /principal/1/address/city
    /standard_entry_classes
    /references/0/name /references/0/contact_name /references/0/phone /references/0/state
";

fn required() -> Vec<&'static str> {
    REQUIRED.split_whitespace().collect()
}

fn assert_required_only(pointer: &str, as_null: bool) -> Result<(), TestCaseError> {
    let mut v = valid();
    if as_null {
        set(&mut v, pointer, Value::Null);
    } else {
        remove(&mut v, pointer);
    }
    let verdict = check(&v);
    let got: Vec<(&str, C)> = verdict.errors.iter().map(|e| (e.field.as_str(), e.code)).collect();
    let path = json_path(pointer);
    prop_assert_eq!(got, vec![(path.as_str(), C::Required)]);
    Ok(())
}

#[test]
fn every_required_member_is_reported_alone() {
    for pointer in required() {
        for as_null in [false, true] {
            assert_required_only(pointer, as_null).unwrap();
        }
    }
}

proptest! {
    #[test]
    fn removing_any_required_member_lists_exactly_that_member(
        pointer in prop::sample::select(required()),
        as_null in any::<bool>(),
    ) {
        assert_required_only(pointer, as_null)?;
    }

    #[test]
    fn validation_never_panics_on_any_string_in_any_field(
        pointer in prop::sample::select(required()),
        text in ".{0,40}",
    ) {
        let mut v = valid();
        set(&mut v, pointer, json!(text));
        let _ = check(&v);
    }
}
