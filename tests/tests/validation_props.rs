//! Property tests of the validation layer: generated valid requests pass; removing
//! or corrupting any single required field is rejected with that field's path;
//! any value in a member the class does not use changes nothing; a POP state is
//! read in any letter case; nothing panics on arbitrary JSON values or bytes.
#![allow(clippy::unwrap_used)]

use ach_core::routing::RoutingDirectory;
use ach_core::validation::{check_bytes, check_value, transaction, Context, Kind, Verdict};
use chrono::NaiveDate;
use proptest::prelude::*;
use serde_json::{json, Value};

const PNG: &str = "iVBORw0KGgoAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";

fn verdict(kind: Kind, v: &Value) -> Verdict {
    let directory = RoutingDirectory::embedded();
    let ctx = Context { today: NaiveDate::from_ymd_opt(2026, 11, 22).unwrap(), directory: &directory };
    check_value(kind, v, &ctx)
}

fn routing_numbers() -> Vec<String> {
    RoutingDirectory::embedded().iter().map(|i| i.routing_number.clone()).collect()
}

fn id_body() -> impl Strategy<Value = String> {
    "[0-9A-Za-z]{22}"
}

fn amount(max_cents: i64) -> impl Strategy<Value = Value> {
    (1..=max_cents, any::<u8>()).prop_map(|(cents, style)| {
        let text = format!("{}.{:02}", cents / 100, cents % 100);
        match style % 3 {
            0 => json!(text),
            1 => serde_json::from_str::<Value>(&text).unwrap(),
            _ if cents % 100 == 0 => json!(cents / 100),
            _ => json!(text),
        }
    })
}

prop_compose! {
    fn inline_customer()(
        name in "[A-Za-z][A-Za-z .'-]{0,40}",
        rn in prop::sample::select(routing_numbers()),
        account in "[0-9]{3,16}[1-9]",
        kind in prop::sample::select(vec!["checking", "savings"]),
    ) -> Value {
        json!({"name": name, "routing_number": rn, "account_number": account, "account_type": kind})
    }
}

prop_compose! {
    /// A valid transaction of any class, with the fields its class requires.
    fn valid_transaction()(
        merchant in id_body(),
        class in prop::sample::select(vec!["PPD", "WEB", "CCD", "TEL", "BOC", "POP", "ICL"]),
        credit in any::<bool>(),
        small in amount(2_500_000),
        description in "[A-Za-z0-9][A-Za-z0-9 #.,-]{0,60}",
        customer in prop_oneof![inline_customer(), id_body().prop_map(|b| json!({"id": format!("cus_{b}")}))],
        check in "[0-9]{1,15}",
        state in prop::sample::select(vec!["NY", "CA", "PR", "DC", "TX"]),
    ) -> Value {
        let debit_only = matches!(class, "TEL" | "BOC" | "POP" | "ICL");
        let mut v = json!({
            "merchant_id": format!("mer_{merchant}"),
            "amount": small,
            "description": description,
            "type": if credit && !debit_only { "credit" } else { "debit" },
            "standard_entry_class": class,
            "customer": customer,
        });
        if matches!(class, "BOC" | "POP") {
            v["check_number"] = json!(check);
        }
        if class == "POP" {
            v["state"] = json!(state);
        }
        if matches!(class, "BOC" | "POP" | "ICL") {
            v["check_image_front"] = json!(PNG);
            v["check_image_back"] = json!(PNG);
        }
        v
    }
}

/// JSON pointers of the required fields present in `v`, with their dotted paths.
fn required_fields(v: &Value) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> =
        ["merchant_id", "amount", "description", "type", "standard_entry_class", "customer"]
            .iter()
            .map(|k| (format!("/{k}"), (*k).to_owned()))
            .collect();
    for k in ["check_number", "state", "check_image_front", "check_image_back"] {
        if v.get(k).is_some() {
            out.push((format!("/{k}"), k.to_owned()));
        }
    }
    if let Some(c) = v["customer"].as_object() {
        for k in c.keys() {
            out.push((format!("/customer/{k}"), format!("customer.{k}")));
        }
    }
    out
}

fn remove(v: &mut Value, pointer: &str) {
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    let target = if parent.is_empty() { Some(&mut *v) } else { v.pointer_mut(parent) };
    if let Some(Value::Object(o)) = target {
        o.remove(key);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn generated_valid_transactions_pass(v in valid_transaction()) {
        let verdict = verdict(Kind::Transaction, &v);
        prop_assert!(verdict.valid, "{v}\n{:?}", verdict);
    }

    #[test]
    fn removing_any_required_field_is_rejected_with_its_path(v in valid_transaction(), pick in any::<prop::sample::Index>()) {
        let fields = required_fields(&v);
        let (pointer, path) = &fields[pick.index(fields.len())];
        let mut broken = v.clone();
        remove(&mut broken, pointer);
        let verdict = verdict(Kind::Transaction, &broken);
        prop_assert!(!verdict.valid);
        // The field's own path, or its object's when removing it left the object empty.
        let parent = path.rsplit_once('.').map(|(p, _)| p.to_owned());
        prop_assert!(
            verdict.errors.iter().any(|e| &e.field == path || (Some(&e.field) == parent.as_ref() && broken.pointer(pointer.rsplit_once('/').unwrap().0).is_some_and(|o| o.as_object().is_some_and(serde_json::Map::is_empty)))),
            "removed {path}: {:?}", verdict.errors
        );
        prop_assert!(verdict.message.is_some());
    }

    #[test]
    fn corrupting_any_required_field_is_rejected_with_its_path(
        v in valid_transaction(),
        pick in any::<prop::sample::Index>(),
        junk in prop_oneof![Just(json!(true)), Just(json!([])), Just(json!({})), Just(json!("")), Just(json!("\u{0}")), Just(json!(-1))],
    ) {
        let fields = required_fields(&v);
        let (pointer, path) = &fields[pick.index(fields.len())];
        let mut broken = v.clone();
        *broken.pointer_mut(pointer).unwrap() = junk.clone();
        let verdict = verdict(Kind::Transaction, &broken);
        // A customer given as {} or [] is reported on the customer itself or its members.
        prop_assert!(!verdict.valid, "{path} = {junk} accepted");
        prop_assert!(verdict.errors.iter().any(|e| e.field == *path || e.field.starts_with(&format!("{path}."))), "{path} = {junk}: {:?}", verdict.errors);
    }

    #[test]
    fn arbitrary_json_never_panics(v in arb_json()) {
        for kind in [Kind::Transaction, Kind::Customer, Kind::Merchant] {
            let verdict = verdict(kind, &v);
            prop_assert_eq!(verdict.valid, verdict.errors.is_empty());
            prop_assert_eq!(verdict.valid, verdict.message.is_none());
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let directory = RoutingDirectory::embedded();
        let ctx = Context { today: NaiveDate::from_ymd_opt(2026, 11, 22).unwrap(), directory: &directory };
        for kind in [Kind::Transaction, Kind::Customer, Kind::Merchant] {
            let verdict = check_bytes(kind, &bytes, &ctx);
            if verdict.valid {
                // Only a JSON object is a valid body of any kind.
                let parsed = serde_json::from_slice::<Value>(&bytes).map(|v| v.is_object()).map_err(|e| e.to_string());
                prop_assert_eq!(parsed, Ok(true));
            }
        }
    }

    #[test]
    fn arbitrary_values_in_every_field_never_panic(v in valid_transaction(), pick in any::<prop::sample::Index>(), junk in arb_json()) {
        let fields = required_fields(&v);
        let (pointer, _) = &fields[pick.index(fields.len())];
        let mut broken = v.clone();
        *broken.pointer_mut(pointer).unwrap() = junk;
        let verdict = verdict(Kind::Transaction, &broken);
        prop_assert_eq!(verdict.valid, verdict.errors.is_empty());
    }
}

/// The members a class may use, each with the classes that use it.
const CLASS_MEMBERS: [(&str, &[&str]); 4] = [
    ("check_number", &["BOC", "POP", "ICL"]),
    ("state", &["POP"]),
    ("check_image_front", &["BOC", "POP", "ICL"]),
    ("check_image_back", &["BOC", "POP", "ICL"]),
];

/// The 50 states, DC and the territories: every POP terminal state.
const TERMINAL_STATES: [&str; 56] = [
    "AL", "AK", "AZ", "AR", "CA", "CO", "CT", "DE", "DC", "FL", "GA", "HI", "ID", "IL", "IN", "IA", "KS",
    "KY", "LA", "ME", "MD", "MA", "MI", "MN", "MS", "MO", "MT", "NE", "NV", "NH", "NJ", "NM", "NY", "NC",
    "ND", "OH", "OK", "OR", "PA", "RI", "SC", "SD", "TN", "TX", "UT", "VT", "VA", "WA", "WV", "WI", "WY",
    "AS", "GU", "MP", "PR", "VI",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn a_member_the_class_does_not_use_never_changes_the_verdict(
        v in valid_transaction(),
        pick in any::<prop::sample::Index>(),
        junk in arb_json(),
    ) {
        let class = v["standard_entry_class"].as_str().unwrap().to_owned();
        let unused: Vec<&str> =
            CLASS_MEMBERS.iter().filter(|(_, users)| !users.contains(&class.as_str())).map(|(k, _)| *k).collect();
        prop_assume!(!unused.is_empty());
        let mut with = v.clone();
        with[unused[pick.index(unused.len())]] = junk;
        prop_assert_eq!(verdict(Kind::Transaction, &with), verdict(Kind::Transaction, &v));
    }

    #[test]
    fn a_pop_state_is_read_in_any_letter_case(
        v in valid_transaction(),
        code in prop::sample::select(TERMINAL_STATES.to_vec()),
        lower in any::<[bool; 2]>(),
    ) {
        let mut pop = v;
        pop["standard_entry_class"] = json!("POP");
        pop["type"] = json!("debit");
        pop["check_number"] = json!("1001");
        pop["check_image_front"] = json!(PNG);
        pop["check_image_back"] = json!(PNG);
        let sent: String = code
            .chars()
            .zip(lower)
            .map(|(c, lower)| if lower { c.to_ascii_lowercase() } else { c })
            .collect();
        pop["state"] = json!(sent);
        let directory = RoutingDirectory::embedded();
        let ctx = Context { today: NaiveDate::from_ymd_opt(2026, 11, 22).unwrap(), directory: &directory };
        let read = transaction::validate_value(&pop, &ctx).map_err(|r| r.verdict());
        prop_assert_eq!(read.map(|t| t.state), Ok(Some(code.to_owned())), "{}", sent);
    }
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        "[0-9]{1,30}(\\.[0-9]{0,5})?".prop_map(|s| serde_json::from_str::<Value>(&s).unwrap_or(Value::Null)),
        ".{0,20}".prop_map(Value::String),
        prop::sample::select(vec![
            "mer_0123456789abcdefghijKL",
            "021000021",
            "debit",
            "POP",
            "checking",
            "global"
        ])
        .prop_map(|s| json!(s)),
    ];
    leaf.prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(
                prop::sample::select(vec![
                    "merchant_id",
                    "amount",
                    "description",
                    "type",
                    "standard_entry_class",
                    "customer",
                    "id",
                    "name",
                    "routing_number",
                    "account_number",
                    "account_type",
                    "check_number",
                    "state",
                    "company_info",
                    "principal",
                    "velocities",
                    "x",
                ])
                .prop_map(str::to_owned),
                inner,
                0..8
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}
