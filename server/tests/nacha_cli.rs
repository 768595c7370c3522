//! `achd nacha check` end to end: every real file in `shared/data/nacha/`, a
//! broken file, and input that is no NACHA file.
#![allow(clippy::unwrap_used)]

use std::process::{Command, Output};

use ach_tests::real_nacha::{nacha_dir, REUSED_TRACES_20110805A};

fn check(path: &std::path::Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_achd")).args(["nacha", "check"]).arg(path).output().unwrap()
}

fn summary(o: &Output) -> serde_json::Value {
    let text = String::from_utf8(o.stdout.clone()).unwrap();
    assert_eq!(text.lines().count(), 1, "one line: {text}");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// The real files with problems: the reader's or the checker's findings, as
/// (record, field); `None` for a file without any.
fn invalid(name: &str) -> Option<Vec<(u64, String)>> {
    let expected: Vec<(usize, &str)> = match name {
        "tel-debit.ach" => vec![(3, "payment_type_code")],
        "NACHA_SAMPLE_TEL_REVERSAL.ach" => vec![(4, "payment_type_code")],
        "return-WEB.ach" => vec![(2, "effective_entry_date"), (6, "effective_entry_date")],
        "issue702.ach" => vec![(1, "record"), (7, "payment_type_code"), (11, "payment_type_code")],
        // Its file control's batch count and block count (record 93) come last.
        "20110805A.ach" => {
            REUSED_TRACES_20110805A.into_iter().chain([(93, "batch_count"), (93, "block_count")]).collect()
        }
        _ => return None,
    };
    Some(expected.into_iter().map(|(r, f)| (u64::try_from(r).unwrap(), f.to_string())).collect())
}

#[test]
fn reads_every_real_file() {
    let mut seen = 0;
    for entry in std::fs::read_dir(nacha_dir()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        if !name.ends_with(".ach") {
            continue;
        }
        seen += 1;
        let o = check(&path);
        let s = summary(&o);
        assert!(s["batches"].as_u64().unwrap() >= 1, "{name}: {s}");
        assert!(s["entries"].as_u64().unwrap() >= 1, "{name}: {s}");
        let found: Vec<(u64, String)> = s["problems"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p["record"].as_u64().unwrap(), p["field"].as_str().unwrap().to_string()))
            .collect();
        match invalid(&name) {
            Some(expected) => {
                assert_eq!(found, expected, "{name}");
                assert_eq!(o.status.code(), Some(1), "{name}: {s}");
                assert_eq!(s["valid"], false);
            }
            None => {
                assert_eq!(found, vec![], "{name}");
                assert_eq!(o.status.code(), Some(0), "{name}: {s}");
                assert_eq!(s["valid"], true);
            }
        }
    }
    assert!(seen >= 12, "only {seen} files in {}", nacha_dir().display());
}

#[test]
fn summarises_a_file_exactly() {
    let o = check(&nacha_dir().join("web-debit.ach"));
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        "{\"batches\":3,\"entries\":6,\"problems\":[],\"total_credit\":268.20,\"total_debit\":150.00,\"valid\":true}\n"
    );
}

#[test]
fn a_broken_file_is_invalid_with_record_and_field() {
    let text = std::fs::read_to_string(nacha_dir().join("ppd-debit.ach")).unwrap();
    // The entry's amount no longer matches the controls.
    let broken = text.replacen("0100000000", "0100000001", 1);
    let dir = std::env::temp_dir().join(format!("achd-nacha-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("broken.ach");
    std::fs::write(&path, broken).unwrap();
    let o = check(&path);
    let s = summary(&o);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(o.status.code(), Some(1), "{s}");
    let problems = s["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 2, "{s}");
    assert_eq!(problems[0]["record"], 4);
    assert_eq!(problems[0]["field"], "total_debit_entry_dollar_amount");
    assert_eq!(problems[1]["record"], 5);
    assert_eq!(s["total_debit"].to_string(), "1000000.01");
}

#[test]
fn unreadable_input_exits_2() {
    let dir = std::env::temp_dir().join(format!("achd-nacha-garbage-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let garbage = dir.join("garbage.ach");
    std::fs::write(&garbage, [0xff, 0xfe, 0x00, b'x', b'\n']).unwrap();
    let empty = dir.join("empty.ach");
    std::fs::write(&empty, b"").unwrap();
    for path in [garbage, empty, dir.join("missing.ach")] {
        let o = check(&path);
        assert_eq!(o.status.code(), Some(2), "{}", path.display());
        assert!(o.stdout.is_empty());
        assert!(!o.stderr.is_empty());
    }
    std::fs::remove_dir_all(&dir).unwrap();
    // Usage errors are 2 as well.
    let o = Command::new(env!("CARGO_BIN_EXE_achd")).args(["nacha", "check"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
}
