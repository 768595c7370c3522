//! The checker on written files damaged one way at a time: each damage is one
//! problem (or the few it must cause) at the record that carries it.
#![allow(clippy::unwrap_used)]

use super::ebcdic;
use super::frame;
use super::records::{bundle_control, cash_letter_control, check_detail, file_control, image_view_data};
use super::tests::{item, letter, tiny_g4};
use super::*;

/// A written file of `n` items, as its records (EBCDIC, without prefixes).
fn records(n: u64) -> Vec<Vec<u8>> {
    let bytes = write(&letter((1..=n).map(item).collect())).unwrap();
    frame::split(&bytes).unwrap().records.iter().map(|r| r.bytes.to_vec()).collect()
}

fn join(records: &[Vec<u8>]) -> Vec<u8> {
    records
        .iter()
        .flat_map(|r| u32::try_from(r.len()).unwrap().to_be_bytes().into_iter().chain(r.iter().copied()))
        .collect()
}

/// `text` written over `record` at 0-based `start`, in EBCDIC.
fn set(record: &mut [u8], start: usize, text: &str) {
    for (i, b) in text.bytes().enumerate() {
        record[start + i] = ebcdic::encode_byte(b);
    }
}

/// A `52` record carrying `image` instead of its own.
fn with_image(record: &[u8], image: &[u8]) -> Vec<u8> {
    let text_len = image_view_data::LEN + 5 + 7;
    let mut out = record[..text_len].to_vec();
    set(&mut out, text_len - 7, &format!("{:07}", image.len()));
    out.extend_from_slice(image);
    out
}

fn problems(records: &[Vec<u8>]) -> Vec<(usize, &'static str)> {
    check(&join(records)).unwrap().problems.iter().map(|p| (p.record, p.field)).collect()
}

// One item: 1 01, 2 10, 3 20, 4 25, 5 26, 6 50, 7 52, 8 50, 9 52, 10 70, 11 90, 12 99.

#[test]
fn a_written_file_has_no_problem() {
    assert_eq!(problems(&records(1)), []);
}

#[test]
fn a_changed_total_or_count_is_found_in_its_control() {
    let mut r = records(1);
    set(&mut r[9], bundle_control::TOTAL_AMOUNT.start, "000000012346");
    assert_eq!(problems(&r), [(10, "bundle_total_amount")]);
    let mut r = records(1);
    set(&mut r[9], bundle_control::IMAGES_COUNT.start, "00003");
    assert_eq!(problems(&r), [(10, "images_within_bundle_count")]);
    let mut r = records(1);
    set(&mut r[10], cash_letter_control::TOTAL_AMOUNT.start, "00000000000000");
    assert_eq!(problems(&r), [(11, "cash_letter_total_amount")]);
    let mut r = records(1);
    set(&mut r[10], cash_letter_control::BUNDLE_COUNT.start, "000002");
    assert_eq!(problems(&r), [(11, "bundle_count")]);
    let mut r = records(1);
    set(&mut r[11], file_control::ITEMS_COUNT.start, "00000002");
    set(&mut r[11], file_control::RECORD_COUNT.start, "00000011");
    assert_eq!(problems(&r), [(12, "total_record_count"), (12, "total_item_count")]);
    // The item's own amount: every control now disagrees with it.
    let mut r = records(1);
    set(&mut r[3], check_detail::AMOUNT.start, "0000012346");
    assert_eq!(
        problems(&r),
        [(10, "bundle_total_amount"), (11, "cash_letter_total_amount"), (12, "file_total_amount")]
    );
    let mut r = records(1);
    set(&mut r[3], check_detail::AMOUNT.start, "00000123 5");
    assert_eq!(problems(&r)[0], (4, "item_amount"));
}

#[test]
fn a_cut_record_is_found() {
    let whole = join(&records(1));
    // Cut inside the back image (record 9): the records before it are read,
    // then every missing control is named.
    let cut = &whole[..whole.len() - 4 * (4 + 80) - 10];
    let found: Vec<(usize, &str)> =
        check(cut).unwrap().problems.iter().map(|p| (p.record, p.field)).collect();
    assert_eq!(found, [(2, "record"), (3, "record"), (8, "record"), (8, "record"), (9, "record_length")]);
    // A record one byte short of its type's length, the prefix saying so.
    let mut r = records(1);
    r[3].pop();
    assert_eq!(problems(&r), [(4, "record_length")]);
    // A prefix longer than what follows.
    let mut bytes = join(&records(1));
    bytes[3] = 81;
    assert_eq!(check(&bytes).unwrap().problems[0].field, "record_length");
}

#[test]
fn records_out_of_order_are_found() {
    // The addendum before its check detail.
    let mut r = records(1);
    r.swap(3, 4);
    assert_eq!(problems(&r), [(4, "record_type"), (5, "check_detail_addendum_count")]);
    // No file control.
    let mut r = records(1);
    r.pop();
    assert_eq!(problems(&r), [(11, "record")]);
    // A record after the file control.
    let mut r = records(1);
    r.push(r[2].clone());
    assert_eq!(problems(&r), [(12, "total_record_count"), (13, "record")]);
    // An image view detail without its data.
    let mut r = records(1);
    r.remove(8);
    assert_eq!(problems(&r), [(8, "record"), (11, "total_record_count")]);
    // A check detail outside any bundle.
    let mut r = records(1);
    let detail = r[3].clone();
    r.insert(10, detail);
    let found = problems(&r);
    assert_eq!(found[0], (11, "record_type"));
    // A record of no type the standard has.
    let mut r = records(1);
    set(&mut r[4], 0, "42");
    assert_eq!(problems(&r), [(4, "check_detail_addendum_count"), (5, "record_type")]);
}

#[test]
fn bad_images_are_found() {
    let mut r = records(1);
    r[6] = with_image(&r[6], b"\x89PNG\r\n\x1a\n not really");
    assert_eq!(problems(&r), [(7, "image_data")]);
    let mut g4 = tiny_g4(2, 40);
    g4.truncate(g4.len() - 5);
    let mut r = records(1);
    r[8] = with_image(&r[8], &g4);
    let report = check(&join(&r)).unwrap();
    assert_eq!(report.problems.len(), 1);
    assert!(report.problems[0].message.contains("does not decode"), "{}", report.problems[0]);
    assert_eq!(report.summary.image_formats.get("tiff-damaged"), Some(&1));
    // A TIFF, but not the Group 4 its image view detail promises.
    let rgb = super::image_tests::tiff_of(&super::image_tests::picture(8, 8));
    let mut r = records(1);
    r[6] = with_image(&r[6], &rgb);
    assert_eq!(problems(&r), [(7, "image_data")]);
    // The image view detail says there is no image.
    let mut r = records(1);
    set(&mut r[5], 2, "0");
    assert_eq!(problems(&r), [(6, "image_indicator")]);
    // The image data record names another item.
    let mut r = records(1);
    set(&mut r[6], image_view_data::SEQUENCE.start, "000000000000002");
    assert_eq!(problems(&r), [(7, "item_sequence_number")]);
    // No image at all where the detail says there is one.
    let mut r = records(1);
    r[8] = with_image(&r[8], &[]);
    assert_eq!(problems(&r), [(9, "image_data")]);
}

#[test]
fn micr_valid_totals_add_up_when_given() {
    let mut r = records(2);
    set(&mut r[3], check_detail::MICR_VALID.start, "1");
    assert_eq!(problems(&r), [], "a blank MICR valid total is not checked");
    let bundle_control_at = r.iter().position(|rec| rec[..2] == [0xF7, 0xF0]).unwrap();
    set(&mut r[bundle_control_at], bundle_control::MICR_VALID_TOTAL.start, "000000012345");
    assert_eq!(problems(&r), []);
    set(&mut r[bundle_control_at], bundle_control::MICR_VALID_TOTAL.start, "000000024690");
    assert_eq!(problems(&r), [(bundle_control_at + 1, "micr_valid_total_amount")]);
    set(&mut r[3], check_detail::MICR_VALID.start, "0");
    assert_eq!(problems(&r)[0], (4, "micr_valid_indicator"));
}

#[test]
fn credits_count_only_where_the_control_says_so() {
    // A credit reconciliation record (61) of 500 cents opening the bundle.
    let mut credit = vec![0x40; 80];
    set(&mut credit, 0, "61");
    set(&mut credit, 47, "0000000500");
    let mut r = records(1);
    r.insert(3, credit);
    set(&mut r[12], file_control::RECORD_COUNT.start, "00000013");
    assert_eq!(problems(&r), []);
    assert_eq!(check(&join(&r)).unwrap().summary.credits, 1);
    // Credits included in the bundle's totals, which do not include it.
    set(&mut r[10], bundle_control::CREDIT_TOTAL.start, "1");
    assert_eq!(problems(&r), [(11, "items_within_bundle_count"), (11, "bundle_total_amount")]);
    set(&mut r[10], bundle_control::ITEMS_COUNT.start, "0002");
    set(&mut r[10], bundle_control::TOTAL_AMOUNT.start, "000000012845");
    assert_eq!(problems(&r), []);
}

#[test]
fn bare_and_ascii_files_read_the_same() {
    let r = records(3);
    let prefixed = check(&join(&r)).unwrap();
    let bare: Vec<u8> = r.iter().flat_map(|rec| rec.iter().copied()).collect();
    let report = check(&bare).unwrap();
    assert!(!report.summary.length_prefixed);
    assert_eq!(report.problems, []);
    assert_eq!(Summary { length_prefixed: true, ..report.summary }, prefixed.summary);
    // The same records in ASCII: text translated, images untouched.
    let ascii: Vec<Vec<u8>> = frame::split(&join(&r))
        .unwrap()
        .records
        .iter()
        .map(|rec| {
            let text_len =
                if rec.kind == Some(52) { frame::image_span(rec).unwrap().0 } else { rec.bytes.len() };
            let mut out = rec.text_at(0, text_len).unwrap().into_bytes();
            out.extend_from_slice(&rec.bytes[text_len..]);
            out
        })
        .collect();
    let report = check(&join(&ascii)).unwrap();
    assert_eq!(report.problems, []);
    assert_eq!(Summary { encoding: Encoding::Ebcdic, ..report.summary }, prefixed.summary);
    assert_eq!(items(&join(&ascii)).unwrap(), items(&join(&r)).unwrap());
}

#[test]
fn what_is_no_x9_file_is_refused_whole() {
    assert_eq!(check(b""), Err(NotX9::Empty));
    assert_eq!(check(b"101 021000021"), Err(NotX9::NoFileHeader));
    assert_eq!(check(&[0, 0, 0, 80, b'1', b'0']), Err(NotX9::NoFileHeader));
    assert_eq!(items(b"").unwrap_err()[0].record, 0);
    // A file header alone: read, and everything after it missing.
    let report = check(b"01").unwrap();
    assert_eq!(report.summary.records, 0);
    assert_eq!(report.problems[0].field, "record_length");
}
