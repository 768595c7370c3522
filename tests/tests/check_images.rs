//! Check images (BOC, POP, ICL) at rest: sealed in the database file, readable
//! back through the engine, kept for two years after settlement, dropped on void.
#![allow(clippy::unwrap_used)]

use std::path::Path;

use ach_core::engine::{CheckSide, Engine};
use ach_tests::world::{et, options, World};
use base64::Engine as _;
use serde_json::{json, Value};

/// The account number a check's MICR line carries (what the review found).
const ACCOUNT: &str = "ACCT-778899001122";

/// A PNG whose bytes carry `text` (a check's MICR line), as base64.
fn image(text: &str) -> String {
    let mut bytes = vec![0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];
    bytes.extend_from_slice(format!("MICR 021000021 {text} 1001 ").repeat(4).as_bytes());
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn boc(merchant_id: &str, front: &str, back: &str) -> Value {
    json!({"merchant_id": merchant_id, "amount": "10.00", "description": "check", "type": "debit",
           "standard_entry_class": "BOC", "check_number": "1001",
           "check_image_front": front, "check_image_back": back,
           "customer": {"name": "Ada", "routing_number": "021000021", "account_number": "778899001122",
                        "account_type": "checking"}})
}

/// Every form in which `secret` could sit in the file: as it is, and in each
/// of the three base64 alignments (the characters that do not depend on what
/// surrounds it).
fn forms(secret: &str) -> Vec<String> {
    let mut out = vec![secret.to_owned()];
    for shift in 0..3 {
        let padded: Vec<u8> = std::iter::repeat_n(b'x', shift).chain(secret.bytes()).collect();
        let text = base64::engine::general_purpose::STANDARD.encode(&padded);
        // Drop the characters touched by the prefix and by the end.
        let start = (shift * 4).div_ceil(3) + 1;
        out.push(text[start..text.len() - 4].to_owned());
    }
    out
}

fn count(haystack: &[u8], needle: &str) -> usize {
    haystack.windows(needle.len()).filter(|w| *w == needle.as_bytes()).count()
}

fn open(path: &Path) -> World {
    World::with(Engine::open(path, options("2026-11-23 10:00")).unwrap())
}

#[test]
fn a_check_image_never_reaches_the_database_file_in_clear() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ach.redb");
    let (front, back) = (image(ACCOUNT), image(&format!("back {ACCOUNT}")));
    let id = {
        let w = open(&path);
        let (p, pc) = w.partner();
        let (m, _, _) = w.roomy_merchant(&p, &pc, &["BOC"]);
        let id = w.create(&p, &pc, &boc(&m, &front, &back)).unwrap();
        // More checks after it: redb copies the images' page on write and the
        // freed copy stays in the file (in clear, the image was there twice).
        for i in 0..5 {
            let mut more = boc(&m, &image(&format!("other {i}")), &image("other back"));
            more["check_number"] = json!(format!("{}", 2000 + i));
            w.create(&p, &pc, &more).unwrap();
        }
        id
    };
    let raw = std::fs::read(&path).unwrap();
    for form in forms(ACCOUNT).iter().chain([&front, &back]) {
        assert_eq!(count(&raw, form), 0, "{form} is in the database file");
    }
    // The scan does find what is stored in clear (the routing number's text).
    assert!(count(&raw, "021000021") > 0);
    // Read back through the engine after a reopen, as submitted.
    let w = open(&path);
    assert_eq!(w.engine.check_image(&id, CheckSide::Front).unwrap(), Some(front));
    assert_eq!(w.engine.check_image(&id, CheckSide::Back).unwrap(), Some(back));
}

/// The sandbox clock drives retention: a voided check's images go at once, a
/// settled one's two years after its settlement.
#[test]
fn check_images_are_kept_two_years_after_settlement_and_dropped_on_void() {
    let w = World::new("2026-11-23 10:00");
    let (p, pc) = w.partner();
    let (m, _, _) = w.roomy_merchant(&p, &pc, &["BOC"]);
    let kept = w.create(&p, &pc, &boc(&m, &image("kept"), &image("kept back"))).unwrap();
    let mut second = boc(&m, &image("voided"), &image("voided back"));
    second["check_number"] = json!("1002");
    let voided = w.create(&p, &pc, &second).unwrap();
    assert!(w.engine.check_image(&voided, CheckSide::Front).unwrap().is_some());
    w.void(&p, &pc, &voided).unwrap();
    let image_of = |id: &str, side| w.engine.check_image(id, side).unwrap();
    assert_eq!(
        (image_of(&voided, CheckSide::Front), image_of(&voided, CheckSide::Back)),
        (None, None),
        "dropped on void"
    );
    assert_eq!(image_of(&kept, CheckSide::Front).as_deref(), Some(image("kept").as_str()));
    assert_eq!(image_of(&kept, CheckSide::Back).as_deref(), Some(image("kept back").as_str()));
    // Originated at tonight's cut-off, then settled.
    w.at("2026-12-07 12:00");
    let settled = w.history(&p, &pc, &kept);
    let last = settled.last().unwrap();
    assert_eq!(last.status, ach_core::model::Status::S);
    let date = last.settlement_date.clone().unwrap();
    let settles_at = et(&format!("{date} 08:30"));
    let expires = settles_at.checked_add_months(chrono::Months::new(24)).unwrap();
    w.set_clock(expires - chrono::Duration::seconds(1));
    assert!(image_of(&kept, CheckSide::Front).is_some(), "kept until two years after settlement");
    // The production path: the host's clock tick (`advance_to`) deletes them.
    w.engine.advance_to(expires).unwrap();
    assert_eq!(
        (image_of(&kept, CheckSide::Front), image_of(&kept, CheckSide::Back)),
        (None, None),
        "gone after two years"
    );
    // The transaction itself stays.
    assert_eq!(w.history(&p, &pc, &kept).len(), settled.len());
}
