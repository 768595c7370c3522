//! `include/ach.h` is generated, committed, and must equal a fresh generation.
//!
//! The header is generated here with the cbindgen library (pinned exactly in
//! `ffi/Cargo.toml`, so no separately installed cbindgen is needed) from
//! `ffi/src/lib.rs` and `ffi/cbindgen.toml`, and compared byte for byte with the
//! committed `include/ach.h`: CI fails when someone changes the API or its docs
//! without regenerating.
//!
//! Regenerate (after reviewing the change): `ACH_BLESS=1 cargo test -p ach-ffi --test header`.

use std::path::PathBuf;

fn generate() -> String {
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml"))
        .unwrap_or_else(|e| panic!("ffi/cbindgen.toml: {e}"));
    // with_src follows the `mod` declarations from lib.rs and needs no `cargo
    // metadata` run: the output depends on the sources and the config only.
    let bindings = cbindgen::Builder::new()
        .with_config(config)
        .with_src(crate_dir.join("src/lib.rs"))
        .generate()
        .unwrap_or_else(|e| panic!("cbindgen: {e}"));
    let mut out = Vec::new();
    bindings.write(&mut out);
    String::from_utf8(out).unwrap_or_else(|e| panic!("cbindgen wrote non-UTF-8: {e}"))
}

#[test]
fn committed_header_is_up_to_date() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../include/ach.h");
    let fresh = generate();
    if std::env::var_os("ACH_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &fresh).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed != fresh {
        let line = committed.lines().zip(fresh.lines()).position(|(a, b)| a != b);
        panic!(
            "include/ach.h is stale (first difference at line {}); regenerate it with \
             `ACH_BLESS=1 cargo test -p ach-ffi --test header` and commit it",
            line.map_or_else(|| "end of file".to_owned(), |l| (l + 1).to_string())
        );
    }
}

#[test]
fn every_item_in_the_header_has_a_doc_comment() {
    let header = generate();
    let lines: Vec<&str> = header.lines().collect();
    let mut undocumented = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        let is_item = t.starts_with("#define ACH_")
            || t.starts_with("typedef ")
            || t.starts_with("enum ")
            || (t.starts_with("ACH_") && t.contains('='))
            || (line.starts_with(|c: char| c.is_ascii_alphabetic()) && t.contains("ach_") && t.contains('('))
            || (line.starts_with("    ") && t.ends_with(';') && !t.starts_with("*"));
        // The include guard, and the C23 / older-C typedefs that follow the enum's
        // own documented definition.
        let exempt = ["#define ACH_H", "typedef uint32_t AchResult;", "typedef enum AchResult AchResult;"];
        if !is_item || exempt.contains(&t) {
            continue;
        }
        let documented = i > 0 && lines[i - 1].trim_start().ends_with("*/");
        if !documented {
            undocumented.push(format!("{}: {}", i + 1, line));
        }
    }
    assert!(undocumented.is_empty(), "items without a doc comment:\n{}", undocumented.join("\n"));
}
