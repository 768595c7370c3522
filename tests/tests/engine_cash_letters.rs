//! Image cash letters through the router: the ICL items a cut-off originates
//! leave in one X9.100-187 file of their own (the NACHA file carries none),
//! their pictures made Group 4, listed and fetched by the operator, readable
//! by the checker with every item's MICR fields and amount; an item whose
//! picture does not convert is held out, named with why.
#![allow(clippy::unwrap_used)]

use ach_core::x9;
use ach_tests::router;
use ach_tests::world::{transaction, World, OPERATOR_KEY};
use base64::Engine as _;
use serde_json::{json, Value};
use sha2::Digest as _;

/// A check's picture: a PNG of `width` × 300, ink where `ink` says.
fn picture(width: u32, ink: impl Fn(u32, u32) -> bool) -> String {
    let img = image::GrayImage::from_fn(width, 300, |x, y| image::Luma([if ink(x, y) { 20 } else { 235 }]));
    let mut png = std::io::Cursor::new(Vec::new());
    img.write_to(&mut png, image::ImageFormat::Png).unwrap();
    base64::engine::general_purpose::STANDARD.encode(png.into_inner())
}

fn icl(merchant: &str, partner: &str, amount: &str, check: &str, account: &str, front: &str) -> Value {
    let mut v = transaction(merchant, "debit", amount);
    v["partner_id"] = json!(partner);
    v["standard_entry_class"] = json!("ICL");
    v["check_number"] = json!(check);
    v["customer"]["account_number"] = json!(account);
    v["check_image_front"] = json!(front);
    v["check_image_back"] = json!(picture(600, |x, _| x % 50 < 3));
    v
}

fn operator(w: &World, path: &str) -> (u16, Value) {
    router::call(&w.engine, "GET", path, Some(OPERATOR_KEY), None)
}

#[test]
fn a_cutoffs_icl_items_leave_in_one_image_cash_letter() {
    let w = World::new("2026-11-23 10:00");
    w.screening_off();
    let (partner, key, caller) = w.partner_with_key();
    let (merchant, _) = w.merchant(&partner, &caller, &["PPD", "ICL"]);
    let create = |v: &Value| {
        let (status, answer) = router::call(&w.engine, "POST", "/transactions", Some(&key), Some(v));
        assert_eq!(status, 201, "{answer}");
        answer["payload"]["id"].as_str().unwrap().to_owned()
    };
    let front = picture(1200, |x, y| (200..1000).contains(&x) && (100..140).contains(&y));
    let first = create(&icl(&merchant, &partner, "125.40", "1001", "123456789", &front));
    let second = create(&icl(&merchant, &partner, "19.99", "", "55500011", &front));
    // A PNG signature and nothing of a picture: accepted at the door, held from the letter.
    let broken = create(&icl(
        &merchant,
        &partner,
        "7.00",
        "1003",
        "123456789",
        "iVBORw0KGgoAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
    ));
    let mut ppd = transaction(&merchant, "debit", "3.00");
    ppd["partner_id"] = json!(partner);
    create(&ppd);
    let (_, before) = operator(&w, "/admin/image-cash-letters");
    assert_eq!(before["payload"], json!([]), "nothing before the cut-off");
    w.at("2026-11-23 18:00");

    let (status, list) = operator(&w, "/admin/image-cash-letters");
    assert_eq!(status, 200, "{list}");
    let letters = list["payload"].as_array().unwrap();
    assert_eq!(letters.len(), 1, "{list}");
    let summary = &letters[0];
    assert_eq!(summary["id"], "icl_20261123A");
    assert_eq!((summary["items"].as_u64(), summary["total"].as_f64()), (Some(2), Some(145.39)), "{summary}");
    assert_eq!(summary["held"][0]["transaction_id"], broken.as_str(), "{summary}");
    assert!(summary["held"][0]["problem"].as_str().unwrap().contains("front image"), "{summary}");

    let (status, letter) = operator(&w, "/admin/image-cash-letters/icl_20261123A");
    assert_eq!(status, 200, "{letter}");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(letter["payload"]["content_base64"].as_str().unwrap())
        .unwrap();
    let sha256: String = sha2::Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(summary["sha256"].as_str(), Some(sha256.as_str()));
    let report = x9::check(&bytes).unwrap();
    assert!(report.is_valid(), "{:?}", report.problems);
    assert_eq!(
        (report.summary.items, report.summary.total_amount_cents, report.summary.images),
        (2, 14_539, 4)
    );
    assert_eq!(report.summary.image_formats.get("tiff-g4"), Some(&4), "{:?}", report.summary.image_formats);
    let items = x9::items(&bytes).unwrap();
    let micr: Vec<(&str, &str, &str, i64)> = items
        .iter()
        .map(|i| {
            (i.payor_routing.as_str(), i.account_number.as_str(), i.check_number.as_str(), i.amount_cents)
        })
        .collect();
    assert_eq!(micr, [("021000021", "123456789", "1001", 12_540), ("021000021", "55500011", "", 1_999)]);
    // The picture survived: the front's ink bar is black in the Group 4 image.
    let front = image::load_from_memory(&items[0].front_image).unwrap().to_luma8();
    assert_eq!((front.width(), front.height()), (1200, 300));
    assert!(front.get_pixel(600, 120)[0] < 128 && front.get_pixel(100, 20)[0] > 128);
    // The NACHA file carries the PPD entry only; the ICL items are Originated.
    let files = w.engine.origination_files().unwrap();
    assert_eq!((files.len(), files[0].entries), (1, 1));
    for id in [&first, &second, &broken] {
        let path = format!("/transactions/{id}?partner_id={partner}");
        let (_, t) = router::call(&w.engine, "GET", &path, Some(&key), None);
        assert_eq!(t["payload"]["status"], "B", "{t}");
    }
    // Returns of ICL items come back as any other's: recorded by the
    // operator, or played by the sandbox's bank.
    w.return_(&first, "R01").unwrap();
    let path = format!("/admin/simulations/transactions/{second}/return");
    let (status, answer) =
        router::call(&w.engine, "POST", &path, Some(OPERATOR_KEY), Some(&json!({"return_code": "R08"})));
    assert_eq!(status, 200, "{answer}");
    for (id, code) in [(&first, "R01"), (&second, "R08")] {
        let (_, t) = router::call(
            &w.engine,
            "GET",
            &format!("/transactions/{id}?partner_id={partner}"),
            Some(&key),
            None,
        );
        assert_eq!(
            (&t["payload"]["status"], &t["payload"]["return"]["code"]),
            (&json!("R"), &json!(code)),
            "{t}"
        );
    }
    // Unknown letters are 404.
    assert_eq!(operator(&w, "/admin/image-cash-letters/icl_20261124A").0, 404);
}
