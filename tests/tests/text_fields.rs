//! Text that reaches the file: names and descriptions are refused at creation
//! when they hold format characters or characters that do not fold to the
//! ASCII a NACHA file carries, and what is accepted is written folded
//! (`José Núñez` → `JOSE NUNEZ`, full-width letters as plain ones).
#![allow(clippy::unwrap_used)]

use ach_core::engine::{Operation, Refusal};
use ach_core::nacha;
use ach_core::validation::ProblemCode;
use ach_tests::router;
use ach_tests::world::{transaction, World, OPERATOR_KEY};
use serde_json::{json, Value};

/// The one problem of a refusal: its field, code and message.
fn problem(refusal: &Refusal) -> (String, ProblemCode, String) {
    let e = &refusal.errors()[0];
    (e.field.clone(), e.code, e.message.clone())
}

fn with_name(name: &str) -> Value {
    let mut t = transaction("MERCHANT", "debit", "1.00");
    t["customer"]["name"] = json!(name);
    t
}

#[test]
fn names_and_descriptions_that_cannot_reach_the_file_are_refused() {
    let w = World::new("2026-11-23 10:00");
    let (partner_id, partner, merchant) = w.tenant(&["PPD"]);
    let create = |v: &Value| {
        let text = v.to_string().replace("MERCHANT", &merchant);
        w.create(&partner_id, &partner, &serde_json::from_str(&text).unwrap())
    };
    let before = w.changes(&partner_id, &partner).len();
    for (name, shown) in
        [("Аdа Lоvеlасе", "'А' (U+0410)"), ("山田 太郎", "'山' (U+5C71)"), ("محمد علي", "'م' (U+0645)")]
    {
        let refused = create(&with_name(name)).unwrap_err();
        assert_eq!(refused.status(), 422, "{name}");
        assert_eq!(
            problem(&refused),
            (
                "customer.name".into(),
                ProblemCode::UnsupportedCharacters,
                format!("customer.name has a character a NACHA file cannot carry: {shown}")
            )
        );
    }
    for (name, shown) in [
        ("\u{200b}\u{200b}", "U+200B"),
        ("Ada\u{202e}ecalevol", "U+202E"),
        ("\u{feff}Ada", "U+FEFF"),
        ("Ada\u{e0041}", "U+E0041"),
        ("Ada\u{2028}Lovelace", "U+2028"),
    ] {
        let refused = create(&with_name(name)).unwrap_err();
        assert_eq!(
            problem(&refused),
            (
                "customer.name".into(),
                ProblemCode::InvalidFormat,
                format!("customer.name must not contain format characters ({shown})")
            ),
            "{name:?}"
        );
    }
    let mut t = with_name("Ada Lovelace");
    t["description"] = json!("Rent \u{202e}devorppa");
    let refused = create(&t).unwrap_err();
    assert_eq!(
        (problem(&refused).0, problem(&refused).1),
        ("description".into(), ProblemCode::InvalidFormat)
    );
    t["description"] = json!("Миля");
    assert_eq!(problem(&create(&t).unwrap_err()).1, ProblemCode::UnsupportedCharacters);
    assert_eq!(w.changes(&partner_id, &partner).len(), before, "nothing refused was stored");

    // A customer of the partner, and a partner named by the operator, alike.
    let customer = json!({"partner_id": partner_id, "merchant_id": "global", "name": "Аdа", "routing_number": "021000021",
        "account_number": "123456789", "account_type": "checking"});
    let refused = w
        .run(
            &partner,
            Operation::CreateCustomer {
                partner_id: partner_id.clone(),
                body: customer.to_string().into_bytes(),
            },
        )
        .unwrap_err();
    assert_eq!(
        (problem(&refused).0, problem(&refused).1),
        ("name".into(), ProblemCode::UnsupportedCharacters)
    );
    let (status, v) = router::call(
        &w.engine,
        "POST",
        "/admin/partners",
        Some(OPERATOR_KEY),
        Some(&json!({"name": "Acme\u{202e}yaP"})),
    );
    assert_eq!((status, v["errors"][0]["field"].clone()), (422, json!("name")), "{v}");
}

#[test]
fn what_is_accepted_is_written_folded_to_ascii() {
    let w = World::new("2026-11-23 10:00");
    w.screening_off();
    let (partner_id, partner, merchant) = w.tenant(&["PPD"]);
    for (name, description) in
        [("José Núñez", "Café"), ("ＡＣＭＥ Straße", "ﬁne rent"), ("Jose\u{301} Lo\u{308}w", "x")]
    {
        let mut t = transaction(&merchant, "debit", "1.00");
        t["customer"]["name"] = json!(name);
        t["description"] = json!(description);
        w.create(&partner_id, &partner, &t).unwrap();
    }
    w.at("2026-11-23 18:00");
    let files = w.engine.origination_files().unwrap();
    assert_eq!(files.len(), 1);
    let (_, bytes) = w.engine.origination_file(&files[0].id).unwrap().unwrap();
    let parsed = nacha::read(&bytes).unwrap();
    assert!(parsed.problems.is_empty(), "{:?}", parsed.problems);
    let mut names: Vec<String> =
        parsed.file.batches.iter().flat_map(|b| b.entries.iter().map(|e| e.name.to_string())).collect();
    names.sort();
    assert_eq!(names, ["ACME STRASSE", "JOSE LOW", "JOSE NUNEZ"]);
}
