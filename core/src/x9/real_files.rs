//! The real files of `shared/data/x9/` (from the moov-io/imagecashletter test
//! corpus), each read and reported exactly.
//!
//! What each holds was counted apart from this checker, by decoding the records
//! with a few lines of Python (the standard's positions, `cp037` for EBCDIC):
//!
//! | file | text | cash letters | bundles | items (returns) | cents | image views |
//! |---|---|---|---|---|---|---|
//! | valid-ascii.x937 | ASCII | 1 | 1 | 1 | 10,000 | 2 TIFF G4 |
//! | valid-ebcdic.x937 | EBCDIC | 1 | 1 | 1 | 10,000 | 2 TIFF G4 |
//! | without-micrValidIndicator.icl | ASCII | 1 | 1 | 1 | 10,000 | 2 TIFF G4 |
//! | written-example.x937 | EBCDIC | 1 | 1 | 1 | 1,000 | 2 TIFF G4 |
//! | BNK20180905121042882-A.icl | ASCII | 2 | 4 | 8 (4) | 800,000 | 8, one blank byte each |
//!
//! Three of them break the standard, and the checker says where:
//!
//! - without-micrValidIndicator.icl: its check's MICR valid indicator is `0`
//!   (the standard allows 1 to 4, or blank), and its bundle's MICR valid total
//!   says 10,000 cents though no item has indicator 1.
//! - written-example.x937: the payor routing number 12200066 + check digit 0
//!   (the ABA digit is 1), and its back image view detail says image indicator
//!   0 (no image) over a record carrying a 7,408-byte image.
//! - BNK20180905121042882-A.icl: its controls count records, not items (14 and
//!   16 per bundle of 2 items, 30 per cash letter of 4, 60 for a file of 8);
//!   every image is one blank byte, no TIFF; and each second item's images carry
//!   the first item's sequence number.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::frame;
use super::*;

/// `shared/data/x9/` beside the repository, or under `$ACH_SHARED_DATA`;
/// `None` (with a note) where it is absent.
fn x9_dir() -> Option<PathBuf> {
    let data = std::env::var_os("ACH_SHARED_DATA")
        .map_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data").into(), PathBuf::from);
    let dir = data.join("x9");
    if dir.is_dir() {
        Some(dir)
    } else {
        println!("note: {} is absent; the real X9 files were not read", dir.display());
        None
    }
}

struct Expected {
    name: &'static str,
    encoding: Encoding,
    cash_letters: usize,
    bundles: usize,
    items: usize,
    returns: usize,
    cents: i64,
    images: usize,
    formats: &'static [(&'static str, usize)],
    problems: &'static [(usize, &'static str)],
}

const WRITTEN_EXAMPLE_PROBLEMS: &[(usize, &str)] = &[(4, "payor_bank_check_digit"), (8, "image_indicator")];
const MICR_PROBLEMS: &[(usize, &str)] = &[(4, "micr_valid_indicator"), (10, "micr_valid_total_amount")];
const BNK_PROBLEMS: &[(usize, &str)] = &[
    (9, "image_data"),
    (16, "item_sequence_number"),
    (16, "image_data"),
    (18, "items_within_bundle_count"),
    (26, "image_data"),
    (34, "item_sequence_number"),
    (34, "image_data"),
    (36, "items_within_bundle_count"),
    (37, "items_within_cash_letter_count"),
    (45, "image_data"),
    (52, "item_sequence_number"),
    (52, "image_data"),
    (54, "items_within_bundle_count"),
    (62, "image_data"),
    (70, "item_sequence_number"),
    (70, "image_data"),
    (72, "items_within_bundle_count"),
    (73, "items_within_cash_letter_count"),
    (74, "total_item_count"),
];

const ONE_CHECK: Expected = Expected {
    name: "",
    encoding: Encoding::Ascii,
    cash_letters: 1,
    bundles: 1,
    items: 1,
    returns: 0,
    cents: 10_000,
    images: 2,
    formats: &[("tiff-g4", 2)],
    problems: &[],
};

const FILES: [Expected; 5] = [
    Expected { name: "valid-ascii.x937", ..ONE_CHECK },
    Expected { name: "valid-ebcdic.x937", encoding: Encoding::Ebcdic, ..ONE_CHECK },
    Expected { name: "without-micrValidIndicator.icl", problems: MICR_PROBLEMS, ..ONE_CHECK },
    Expected {
        name: "written-example.x937",
        encoding: Encoding::Ebcdic,
        cents: 1_000,
        problems: WRITTEN_EXAMPLE_PROBLEMS,
        ..ONE_CHECK
    },
    Expected {
        name: "BNK20180905121042882-A.icl",
        encoding: Encoding::Ascii,
        cash_letters: 2,
        bundles: 4,
        items: 8,
        returns: 4,
        cents: 800_000,
        images: 8,
        formats: &[("unknown", 8)],
        problems: BNK_PROBLEMS,
    },
];

fn found(report: &Report) -> Vec<(usize, &'static str)> {
    report.problems.iter().map(|p| (p.record, p.field)).collect()
}

fn assert_reported(expected: &Expected, report: &Report, length_prefixed: bool) {
    let s = &report.summary;
    let name = expected.name;
    assert_eq!((s.encoding, s.length_prefixed), (expected.encoding, length_prefixed), "{name}");
    assert_eq!(
        (s.cash_letters, s.bundles, s.items, s.returns, s.credits),
        (expected.cash_letters, expected.bundles, expected.items, expected.returns, 0),
        "{name}"
    );
    assert_eq!(s.total_amount_cents, expected.cents, "{name}");
    assert_eq!(s.images, expected.images, "{name}");
    let formats: BTreeMap<String, usize> =
        expected.formats.iter().map(|&(f, n)| (f.to_string(), n)).collect();
    assert_eq!(s.image_formats, formats, "{name}");
    assert_eq!(found(report), expected.problems, "{name}: {:#?}", report.problems);
}

#[test]
fn every_real_file_is_reported_exactly() {
    let Some(dir) = x9_dir() else { return };
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n != "MANIFEST.tsv")
        .collect();
    names.sort();
    let mut expected: Vec<&str> = FILES.iter().map(|f| f.name).collect();
    expected.sort();
    assert_eq!(names, expected, "every file in {} is judged here", dir.display());
    for file in &FILES {
        let bytes = std::fs::read(dir.join(file.name)).unwrap();
        let report = check(&bytes).unwrap();
        assert_reported(file, &report, true);
        assert_eq!(report.summary.records, if file.cash_letters == 2 { 74 } else { 12 }, "{}", file.name);
    }
}

/// The records of a file without their length prefixes, each followed by
/// `separator`.
fn bare(bytes: &[u8], separator: &[u8]) -> Vec<u8> {
    let framed = frame::split(bytes).unwrap();
    framed.records.iter().flat_map(|r| r.bytes.iter().chain(separator).copied()).collect()
}

#[test]
fn the_real_files_read_the_same_without_length_prefixes() {
    let Some(dir) = x9_dir() else { return };
    for file in &FILES {
        let bytes = std::fs::read(dir.join(file.name)).unwrap();
        let separators: &[&[u8]] = match file.encoding {
            Encoding::Ascii => &[b"", b"\r\n", b"\n"],
            Encoding::Ebcdic => &[b"", &[0x15]],
        };
        for separator in separators {
            let report = check(&bare(&bytes, separator)).unwrap();
            assert_reported(file, &report, false);
        }
    }
}

#[test]
fn the_ascii_and_ebcdic_files_hold_the_same_check() {
    let Some(dir) = x9_dir() else { return };
    let ascii = items(&std::fs::read(dir.join("valid-ascii.x937")).unwrap()).unwrap();
    let ebcdic = items(&std::fs::read(dir.join("valid-ebcdic.x937")).unwrap()).unwrap();
    assert_eq!(ascii, ebcdic);
    let [check] = &ascii[..] else { panic!("{} items", ascii.len()) };
    assert_eq!(check.record, 4);
    assert_eq!(check.payor_routing, "122000661");
    // Its On-Us field ends with the On-Us symbol: no serial number.
    assert_eq!((check.account_number.as_str(), check.check_number.as_str()), ("1211-1234-56789", ""));
    assert_eq!(check.amount_cents, 10_000);
    assert_eq!(check.item_sequence, "000000029001104");
    assert_eq!((check.front_image.len(), check.back_image.len()), (7_408, 8_646));
    // Its images are already what a cash letter carries.
    assert_eq!(to_g4_tiff(&check.front_image).unwrap(), check.front_image);
    // A file with problems yields no items.
    let problems = items(&std::fs::read(dir.join("written-example.x937")).unwrap()).unwrap_err();
    assert_eq!(problems.len(), 2);
}

/// Every prefix of the bank file (its images are single bytes, so each check is
/// cheap), with and without length prefixes: the checker answers, never panics,
/// and finds every cut.
#[test]
fn every_prefix_of_a_real_file_is_survived() {
    let Some(dir) = x9_dir() else { return };
    let whole = std::fs::read(dir.join("BNK20180905121042882-A.icl")).unwrap();
    // The bare file's last line end is optional: cutting it loses nothing.
    let bare_len = bare(&whole, b"\r\n").len() - 2;
    for (bytes, complete) in [(whole.clone(), whole.len()), (bare(&whole, b"\r\n"), bare_len)] {
        for n in 0..complete {
            match check(&bytes[..n]) {
                Err(e) => assert!(n < 6, "{n} bytes: {e}"),
                Ok(report) => {
                    // A record cut short, or a control record missing.
                    let cut = report.problems.iter().any(|p| matches!(p.field, "record_length" | "record"));
                    assert!(cut || n == 0, "{n} bytes: {:#?}", report.problems);
                }
            }
        }
        assert_eq!(found(&check(&bytes).unwrap()), BNK_PROBLEMS);
    }
    // The file with real images: every prefix through its text records, then
    // around each record boundary (decoding a 1200 x 550 image takes tens of
    // milliseconds in a debug build; its thousands of cuts add nothing).
    let valid = std::fs::read(dir.join("valid-ascii.x937")).unwrap();
    let mut cuts: Vec<usize> = (0..500).collect();
    let mut at = 0;
    for r in &frame::split(&valid).unwrap().records {
        at += 4 + r.bytes.len();
        cuts.extend(at.saturating_sub(3)..(at + 3).min(valid.len()));
    }
    for n in cuts {
        let report = check(&valid[..n]);
        assert!(report.is_err() || !report.unwrap().is_valid(), "{n} bytes");
    }
}
