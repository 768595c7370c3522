//! `achd x9 check` end to end: every real file in `shared/data/x9/`, a file
//! the engine wrote, the same file damaged, standard input, and input that is
//! no X9 file.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Output;

use ach_core::x9::{self, CashLetter, CheckItem};
use chrono::NaiveDate;

mod common;

fn achd(args: &[&str], stdin: Option<&[u8]>) -> Output {
    common::run_achd(args, stdin)
}

fn check_path(path: &Path) -> Output {
    achd(&["x9", "check", path.to_str().unwrap()], None)
}

fn summary(o: &Output) -> serde_json::Value {
    let text = String::from_utf8(o.stdout.clone()).unwrap();
    assert_eq!(text.lines().count(), 1, "one line: {text}");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

fn problems(s: &serde_json::Value) -> Vec<(u64, String)> {
    s["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["record"].as_u64().unwrap(), p["field"].as_str().unwrap().to_string()))
        .collect()
}

/// `shared/data/x9/`, or `None` (with a note) where it is absent.
fn x9_dir() -> Option<PathBuf> {
    let dir = ach_tests::shared_data().join("x9");
    if dir.is_dir() {
        Some(dir)
    } else {
        println!("note: {} is absent; the real X9 files were not read", dir.display());
        None
    }
}

/// Each real file: (items, cents, problems as (record, field)); counted apart
/// from the checker (see core/src/x9/real_files.rs).
fn expected(name: &str) -> (u64, i64, Vec<(u64, &'static str)>) {
    match name {
        "valid-ascii.x937" | "valid-ebcdic.x937" => (1, 10_000, vec![]),
        "without-micrValidIndicator.icl" => {
            (1, 10_000, vec![(4, "micr_valid_indicator"), (10, "micr_valid_total_amount")])
        }
        "written-example.x937" => (1, 1_000, vec![(4, "payor_bank_check_digit"), (8, "image_indicator")]),
        "BNK20180905121042882-A.icl" => {
            let mut p = vec![(18, "items_within_bundle_count"), (36, "items_within_bundle_count")];
            p.extend([(37, "items_within_cash_letter_count"), (54, "items_within_bundle_count")]);
            p.extend([(72, "items_within_bundle_count"), (73, "items_within_cash_letter_count")]);
            p.push((74, "total_item_count"));
            for image in [9, 16, 26, 34, 45, 52, 62, 70] {
                if [16, 34, 52, 70].contains(&image) {
                    p.push((image, "item_sequence_number"));
                }
                p.push((image, "image_data"));
            }
            p.sort_by_key(|(record, _)| *record);
            (8, 800_000, p)
        }
        other => panic!("{other}: a file nobody judged"),
    }
}

#[test]
fn reads_every_real_file() {
    let Some(dir) = x9_dir() else { return };
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        if name == "MANIFEST.tsv" {
            continue;
        }
        seen += 1;
        let (items, cents, want) = expected(&name);
        let o = check_path(&path);
        let s = summary(&o);
        assert_eq!(s["items"], items, "{name}: {s}");
        assert_eq!(s["total_amount_cents"], cents, "{name}: {s}");
        let want: Vec<(u64, String)> = want.into_iter().map(|(r, f)| (r, f.to_string())).collect();
        assert_eq!(problems(&s), want, "{name}");
        assert_eq!(s["valid"], want.is_empty(), "{name}");
        assert_eq!(o.status.code(), Some(if want.is_empty() { 0 } else { 1 }), "{name}: {s}");
    }
    assert_eq!(seen, 5, "files in {}", dir.display());
}

#[test]
fn summarises_a_file_exactly() {
    let Some(dir) = x9_dir() else { return };
    let o = check_path(&dir.join("valid-ebcdic.x937"));
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        concat!(
            r#"{"bundles":1,"cash_letters":1,"credits":0,"encoding":"ebcdic","image_formats":{"tiff-g4":2},"#,
            r#""images":2,"items":1,"length_prefixed":true,"problems":[],"records":12,"returns":0,"#,
            r#""standard_level":"03","total_amount_cents":10000,"valid":true}"#,
            "\n"
        )
    );
}

/// An uncompressed 8-bit grey TIFF (BlackIsZero) of a dark bar on paper,
/// written by hand: the converter's input.
fn grey_tiff(width: u16, height: u16) -> Vec<u8> {
    let pixels: Vec<u8> = (0..height)
        .flat_map(|y| {
            (0..width).map(move |x| if y > height / 3 && y < height / 2 && x > width / 5 { 25 } else { 230 })
        })
        .collect();
    let entries: [(u16, u16, u32); 9] = [
        (256, 3, u32::from(width)),
        (257, 3, u32::from(height)),
        (258, 3, 8),
        (259, 3, 1),
        (262, 3, 1),
        (273, 4, 8 + 2 + 9 * 12 + 4),
        (277, 3, 1),
        (278, 3, u32::from(height)),
        (279, 4, u32::try_from(pixels.len()).unwrap()),
    ];
    let mut out = b"II*\0".to_vec();
    out.extend_from_slice(&8u32.to_le_bytes());
    out.extend_from_slice(&9u16.to_le_bytes());
    for (tag, kind, value) in entries {
        out.extend_from_slice(&tag.to_le_bytes());
        out.extend_from_slice(&kind.to_le_bytes());
        out.extend_from_slice(&1u32.to_le_bytes());
        out.extend_from_slice(&value.to_le_bytes());
    }
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&pixels);
    out
}

fn written(items: u64) -> Vec<u8> {
    let front = x9::to_g4_tiff(&grey_tiff(160, 72)).unwrap();
    let back = x9::to_g4_tiff(&grey_tiff(160, 70)).unwrap();
    let letter = CashLetter {
        destination_routing: "011000015".into(),
        destination_name: "FRB BOSTON".into(),
        origin_routing: "231380104".into(),
        origin_name: "CITADEL".into(),
        created: NaiveDate::from_ymd_opt(2026, 1, 30).unwrap().and_hms_opt(9, 15, 0).unwrap(),
        file_id_modifier: '1',
        cash_letter_id: "A1".into(),
        items: (1..=items)
            .map(|n| CheckItem {
                payor_routing: "121042882".into(),
                account_number: "938383".into(),
                check_number: format!("{}", 1000 + n),
                amount_cents: 2_500 * i64::try_from(n).unwrap(),
                item_sequence: n.to_string(),
                front_tiff: front.clone(),
                back_tiff: back.clone(),
            })
            .collect(),
    };
    x9::write(&letter).unwrap()
}

fn save(bytes: &[u8]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("letter.x937");
    std::fs::write(&path, bytes).unwrap();
    (dir, path)
}

#[test]
fn a_written_file_is_valid_from_a_path_and_from_stdin() {
    let bytes = written(3);
    let (_dir, path) = save(&bytes);
    let o = check_path(&path);
    let s = summary(&o);
    assert_eq!(o.status.code(), Some(0), "{s}");
    assert_eq!(s["valid"], true);
    assert_eq!((s["items"].as_u64(), s["images"].as_u64()), (Some(3), Some(6)));
    assert_eq!(s["total_amount_cents"], 2_500 + 5_000 + 7_500);
    assert_eq!(s["encoding"], "ebcdic");
    assert_eq!(s["standard_level"], "35");
    assert_eq!(s["image_formats"], serde_json::json!({"tiff-g4": 6}));
    let piped = achd(&["x9", "check", "-"], Some(&bytes));
    assert_eq!(piped.status.code(), Some(0));
    assert_eq!(piped.stdout, o.stdout);
}

/// The written file's records (without prefixes) and the file made of them.
fn records(bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let len = u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        out.push(bytes[at + 4..at + 4 + len].to_vec());
        at += 4 + len;
    }
    out
}

fn join(records: &[Vec<u8>]) -> Vec<u8> {
    records.iter().flat_map(|r| (r.len() as u32).to_be_bytes().into_iter().chain(r.iter().copied())).collect()
}

#[test]
fn a_damaged_file_is_invalid_at_its_record() {
    let bytes = written(2);
    // 1 01, 2 10, 3 20, items 4-9 and 10-15, 16 70, 17 90, 18 99.
    let mut r = records(&bytes);
    // The bundle total's last digit, 7500 cents, made 7501 (EBCDIC '1' is 0xF1).
    assert_eq!(r[15][17], 0xF0);
    r[15][17] = 0xF1;
    let o = achd(&["x9", "check", "-"], Some(&join(&r)));
    let s = summary(&o);
    assert_eq!(o.status.code(), Some(1), "{s}");
    assert_eq!(problems(&s), [(16, "bundle_total_amount".to_string())]);
    assert!(s["problems"][0]["message"].as_str().unwrap().contains("7501 cents"), "{s}");
    // A record cut: the second item's back image loses its last 100 bytes.
    let cut = &bytes[..bytes.len() - 3 * (4 + 80) - 100];
    let (_dir, path) = save(cut);
    let o = check_path(&path);
    let s = summary(&o);
    assert_eq!(o.status.code(), Some(1), "{s}");
    assert_eq!(
        problems(&s),
        [
            (2, "record".to_string()),
            (3, "record".to_string()),
            (14, "record".to_string()),
            (14, "record".to_string()),
            (15, "record_length".to_string())
        ]
    );
    assert_eq!(s["items"], 2);
}

#[test]
fn what_cannot_be_read_exits_2() {
    let missing = achd(&["x9", "check", "/nonexistent/letter.x937"], None);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("cannot read"));
    assert!(missing.stdout.is_empty());
    let garbage = achd(&["x9", "check", "-"], Some(b"101 021000021 0210000211601010000A094101"));
    assert_eq!(garbage.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&garbage.stderr).contains("not an X9 file"));
    let empty = achd(&["x9", "check", "-"], Some(b""));
    assert_eq!(empty.status.code(), Some(2));
    let usage = achd(&["x9", "check"], None);
    assert_eq!(usage.status.code(), Some(2));
    let usage = achd(&["x9", "verify", "-"], None);
    assert_eq!(usage.status.code(), Some(2));
}
