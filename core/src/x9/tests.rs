//! The writer: exact record layouts, bundles, and every refusal.
#![allow(clippy::unwrap_used)]

use chrono::NaiveDate;

use super::convert::encode_g4;
use super::frame;
use super::tiff_write::wrap_g4;
use super::*;

/// A small Group 4 TIFF (`width` × 12 pixels) with a pattern of its own per
/// `variant`: cheap to write, check and decode thousands of times.
pub(super) fn tiny_g4(variant: u8, width: u16) -> Vec<u8> {
    let height = 12u16;
    let grey: Vec<u8> = (0..height)
        .flat_map(|y| {
            (0..width).map(move |x| {
                let ink = (x + y * 3 + u16::from(variant) * 5) % 7 < 2 || y == u16::from(variant % 12);
                if ink {
                    0
                } else {
                    255
                }
            })
        })
        .collect();
    wrap_g4(&encode_g4(&grey, width, 127), width, height).unwrap()
}

pub(super) fn item(sequence: u64) -> CheckItem {
    CheckItem {
        payor_routing: "122000661".into(),
        account_number: "1211-1234-56789".into(),
        check_number: "1001".into(),
        amount_cents: 12_345,
        item_sequence: sequence.to_string(),
        front_tiff: tiny_g4(0, 40),
        back_tiff: tiny_g4(1, 40),
    }
}

pub(super) fn letter(items: Vec<CheckItem>) -> CashLetter {
    CashLetter {
        destination_routing: "011000015".into(),
        destination_name: "FRB BOSTON".into(),
        origin_routing: "026073150".into(),
        origin_name: "WAVE BANK".into(),
        created: NaiveDate::from_ymd_opt(2026, 3, 9).unwrap().and_hms_opt(14, 5, 59).unwrap(),
        file_id_modifier: 'A',
        cash_letter_id: "CL1".into(),
        items,
    }
}

/// Each record of a file as (type, text in ASCII); a `52` record's text stops
/// where its image begins.
pub(super) fn texts(bytes: &[u8]) -> Vec<(u8, String)> {
    let framed = frame::split(bytes).unwrap();
    framed
        .records
        .iter()
        .map(|r| {
            let len = match r.kind {
                Some(52) => frame::image_span(r).unwrap().0,
                _ => r.bytes.len(),
            };
            (r.kind.unwrap(), r.text_at(0, len).unwrap())
        })
        .collect()
}

#[test]
fn a_letter_is_laid_out_field_by_field() {
    let one = item(42);
    let bytes = write(&letter(vec![one.clone()])).unwrap();
    // The file begins with the length of the file header, then "01" in EBCDIC.
    assert_eq!(bytes[..6], [0, 0, 0, 80, 0xF0, 0xF1]);
    let records = texts(&bytes);
    let kinds: Vec<u8> = records.iter().map(|r| r.0).collect();
    assert_eq!(kinds, [1, 10, 20, 25, 26, 50, 52, 50, 52, 70, 90, 99]);
    let text = |i: usize| records[i].1.as_str();
    let blanks = |n: usize| " ".repeat(n);
    let expected_01 = ["01", "35", "P", "011000015", "026073150", "20260309", "1405", "N"].concat()
        + "FRB BOSTON        WAVE BANK         A"
        + "US"
        + &blanks(5);
    assert_eq!(text(0), expected_01);
    let expected_10 =
        ["10", "01", "011000015", "026073150", "20260309", "20260309", "1405", "I", "G", "CL1     "].concat()
            + &blanks(28);
    assert_eq!(text(1), expected_10);
    let expected_20 = ["20", "01", "011000015", "026073150", "20260309", "20260309", "0000000001", "0001"]
        .concat()
        + &blanks(28);
    assert_eq!(text(2), expected_20);
    // The On-Us field: account number, '/', serial number, right-justified.
    let expected_25 = ["25", &blanks(16), "12200066", "1", "1211-1234-56789/1001", "0000012345"].concat()
        + "000000000000042"
        + "G  Y01  ";
    assert_eq!(text(3), expected_25);
    let expected_26 =
        ["26", "1", "026073150", "20260309", "000000000000042", &blanks(38), "Y20", &blanks(4)].concat();
    assert_eq!(text(4), expected_26);
    let front = format!("{:07}", one.front_tiff.len());
    let expected_50 =
        ["50", "1", "026073150", "20260309", "00", "00", &front, "0", "00", "0", &blanks(21), "0"].concat()
            + &blanks(23);
    assert_eq!(text(5), expected_50);
    assert_eq!(&text(7)[31..32], "1", "the second view is the back");
    let expected_52 = ["52", "026073150", "20260309", "  ", "000000000000042", &blanks(48), "0"].concat()
        + &blanks(16)
        + "0000"
        + "00000"
        + &front;
    assert_eq!(text(6), expected_52);
    let images = one.front_tiff.len() + one.back_tiff.len();
    assert_eq!(
        text(9),
        ["70", "0001", "000000012345", &blanks(12), "00002", &blanks(20), "0"].concat() + &blanks(24)
    );
    let expected_90 = ["90", "000001", "00000001", "00000000012345", "000000002", "WAVE BANK         "]
        .concat()
        + &blanks(8)
        + "0"
        + &blanks(14);
    assert_eq!(text(10), expected_90);
    let expected_99 =
        ["99", "000001", "00000012", "00000001", "0000000000012345", &blanks(24), "0"].concat() + &blanks(15);
    assert_eq!(text(11), expected_99);
    // The images are carried byte for byte after their record's text.
    let framed = frame::split(&bytes).unwrap();
    let (start, len) = frame::image_span(&framed.records[6]).unwrap();
    assert_eq!(framed.records[6].bytes[start..start + len], one.front_tiff[..]);
    assert_eq!(bytes.len(), 10 * (4 + 80) + 2 * (4 + 117) + images);
}

#[test]
fn a_written_letter_checks_clean_and_reads_back() {
    let items_in: Vec<CheckItem> = (1..=3).map(item).collect();
    let bytes = write(&letter(items_in.clone())).unwrap();
    let report = check(&bytes).unwrap();
    assert_eq!(report.problems, vec![]);
    let s = &report.summary;
    assert_eq!((s.encoding, s.length_prefixed, s.standard_level.as_str()), (Encoding::Ebcdic, true, "35"));
    assert_eq!((s.cash_letters, s.bundles, s.items, s.returns, s.images), (1, 1, 3, 0, 6));
    assert_eq!(s.total_amount_cents, 3 * 12_345);
    assert_eq!(s.image_formats.get("tiff-g4"), Some(&6));
    let read = items(&bytes).unwrap();
    assert_eq!(read.len(), 3);
    for (got, given) in read.iter().zip(&items_in) {
        assert_eq!(got.payor_routing, given.payor_routing);
        assert_eq!(got.account_number, given.account_number);
        assert_eq!(got.check_number, given.check_number);
        assert_eq!(got.amount_cents, given.amount_cents);
        assert_eq!(got.item_sequence, format!("{:0>15}", given.item_sequence));
        assert_eq!(got.front_image, given.front_tiff);
        assert_eq!(got.back_image, given.back_tiff);
    }
}

#[test]
fn bundles_split_after_three_hundred_items() {
    for (count, bundles) in [(300, vec![300]), (301, vec![300, 1]), (601, vec![300, 300, 1])] {
        let bytes = write(&letter((1..=count).map(item).collect())).unwrap();
        let report = check(&bytes).unwrap();
        assert_eq!(report.problems, vec![], "{count}");
        assert_eq!(report.summary.bundles, bundles.len());
        let in_controls: Vec<usize> = texts(&bytes)
            .into_iter()
            .filter(|(kind, _)| *kind == 70)
            .map(|(_, text)| text[2..6].parse().unwrap())
            .collect();
        assert_eq!(in_controls, bundles, "{count}");
        let sequences: Vec<String> =
            texts(&bytes).into_iter().filter(|(k, _)| *k == 20).map(|(_, t)| t[48..52].to_string()).collect();
        let expected: Vec<String> = (1..=bundles.len()).map(|n| format!("{n:04}")).collect();
        assert_eq!(sequences, expected);
    }
}

fn refused(change: impl FnOnce(&mut CashLetter)) -> X9Error {
    let mut l = letter(vec![item(1), item(2)]);
    change(&mut l);
    write(&l).unwrap_err()
}

fn item_field(e: &X9Error) -> (usize, &'static str) {
    match e {
        X9Error::Item { index, field, .. } => (*index, *field),
        other => panic!("not an item error: {other:?}"),
    }
}

fn letter_field(e: &X9Error) -> &'static str {
    match e {
        X9Error::Letter { field, .. } => field,
        other => panic!("not a letter error: {other:?}"),
    }
}

#[test]
fn refuses_bad_routing_numbers() {
    let e = refused(|l| l.items[1].payor_routing = "122000660".into());
    assert_eq!(item_field(&e), (1, "payor_routing"));
    assert!(e.to_string().contains("check digit 0") && e.to_string().contains("need 1"), "{e}");
    let e = refused(|l| l.items[0].payor_routing = "12200066".into());
    assert_eq!(item_field(&e), (0, "payor_routing"));
    assert!(e.to_string().contains("nine digits"), "{e}");
    let e = refused(|l| l.items[0].payor_routing = "12200066a".into());
    assert_eq!(item_field(&e), (0, "payor_routing"));
    assert_eq!(letter_field(&refused(|l| l.destination_routing = "011000016".into())), "destination_routing");
    assert_eq!(letter_field(&refused(|l| l.origin_routing = "0260731500".into())), "origin_routing");
    // A correct check digit under a prefix no Federal Reserve district uses.
    let e = refused(|l| l.origin_routing = "990000000".into());
    assert!(e.to_string().contains("prefix"), "{e}");
}

#[test]
fn refuses_amounts_outside_ten_digits_of_cents() {
    for bad in [0, -1, -12_345, 10_000_000_000, i64::MAX, i64::MIN] {
        let e = refused(|l| l.items[0].amount_cents = bad);
        assert_eq!(item_field(&e), (0, "amount_cents"), "{bad}");
    }
    let mut l = letter(vec![item(1)]);
    l.items[0].amount_cents = 9_999_999_999;
    let written = write(&l).expect("the largest amount ten digits hold");
    assert!(!written.is_empty());
}

#[test]
fn refuses_fields_that_do_not_fit() {
    let e = refused(|l| l.items[0].account_number = "1211-1234-567890".into());
    assert_eq!(item_field(&e), (0, "account_number"), "21 characters of On-Us");
    assert_eq!(item_field(&refused(|l| l.items[0].account_number = "12AB".into())), (0, "account_number"));
    assert_eq!(item_field(&refused(|l| l.items[0].account_number = String::new())), (0, "account_number"));
    assert_eq!(item_field(&refused(|l| l.items[0].account_number = "--".into())), (0, "account_number"));
    assert_eq!(item_field(&refused(|l| l.items[0].check_number = "10/1".into())), (0, "check_number"));
    assert_eq!(item_field(&refused(|l| l.items[0].item_sequence = "1".repeat(16))), (0, "item_sequence"));
    assert_eq!(item_field(&refused(|l| l.items[0].item_sequence = String::new())), (0, "item_sequence"));
    assert_eq!(item_field(&refused(|l| l.items[0].item_sequence = "-1".into())), (0, "item_sequence"));
    assert_eq!(letter_field(&refused(|l| l.destination_name = "X".repeat(19))), "destination_name");
    assert_eq!(letter_field(&refused(|l| l.origin_name = "BANQUE Ü".into())), "origin_name");
    assert_eq!(letter_field(&refused(|l| l.cash_letter_id = "123456789".into())), "cash_letter_id");
    assert_eq!(letter_field(&refused(|l| l.cash_letter_id = String::new())), "cash_letter_id");
    assert_eq!(letter_field(&refused(|l| l.file_id_modifier = 'a')), "file_id_modifier");
    let e =
        refused(|l| l.created = NaiveDate::from_ymd_opt(10_000, 1, 1).unwrap().and_hms_opt(0, 0, 0).unwrap());
    assert_eq!(letter_field(&e), "created");
    assert_eq!(refused(|l| l.items.clear()), X9Error::NoItems);
}

#[test]
fn refuses_a_repeated_item_sequence_number() {
    let e = refused(|l| {
        l.items[0].item_sequence = "7".into();
        l.items[1].item_sequence = "007".into();
    });
    assert_eq!(e, X9Error::DuplicateSequence { first: 0, second: 1, sequence: "007".into() });
}

#[test]
fn refuses_images_that_are_not_group_4_tiffs() {
    let png = super::image_tests::png_of(&super::image_tests::picture(40, 20));
    let e = refused(|l| l.items[1].back_tiff = png);
    assert_eq!(item_field(&e), (1, "back_tiff"));
    assert!(e.to_string().contains("not a TIFF (png)"), "{e}");
    let rgb = super::image_tests::tiff_of(&super::image_tests::picture(40, 20));
    let e = refused(|l| l.items[0].front_tiff = rgb);
    assert_eq!(item_field(&e), (0, "front_tiff"));
    assert!(e.to_string().contains("not bitonal Group 4"), "{e}");
    let mut cut = tiny_g4(3, 40);
    cut.truncate(cut.len() - 6);
    let e = refused(|l| l.items[0].front_tiff = cut);
    assert!(e.to_string().contains("does not decode"), "{e}");
    assert_eq!(item_field(&refused(|l| l.items[0].back_tiff = Vec::new())), (0, "back_tiff"));
}

#[test]
fn refuses_a_bundle_total_past_twelve_digits() {
    let mut items: Vec<CheckItem> = (1..=101).map(item).collect();
    for i in &mut items {
        i.amount_cents = 9_999_999_999;
    }
    let e = write(&letter(items)).unwrap_err();
    assert_eq!(
        e,
        X9Error::TotalTooLarge { field: "bundle_total_amount", cents: 1_009_999_999_899, digits: 12 }
    );
}
