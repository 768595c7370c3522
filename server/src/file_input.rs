//! What a checking command does: read a file (a path, or `-` for standard
//! input), check it, print one JSON summary line, and exit 0 (valid), 1
//! (invalid) or 2 (unreadable).

use std::fmt::Display;
use std::io::Read;
use std::path::Path;
use std::process::ExitCode;

use serde_json::{Map, Value};

/// The bytes of `file` (`-`: standard input). On failure `command` says
/// why on standard error and the answer is exit 2 (unreadable).
fn read(command: &str, file: &Path) -> Result<Vec<u8>, ExitCode> {
    let bytes = if file.as_os_str() == "-" {
        let mut buf = Vec::new();
        std::io::stdin().read_to_end(&mut buf).map(|_| buf)
    } else {
        std::fs::read(file)
    };
    bytes.map_err(|e| {
        eprintln!("{command}: cannot read {}: {e}", file.display());
        ExitCode::from(2)
    })
}

/// Runs `command` on `file`: `check` answers whether the bytes are valid and
/// the summary's fields, or why they are not a file of its `kind` at all.
pub fn check<E: Display>(
    command: &str,
    kind: &str,
    file: &Path,
    check: impl FnOnce(&[u8]) -> Result<(bool, Map<String, Value>), E>,
) -> ExitCode {
    let bytes = match read(command, file) {
        Ok(bytes) => bytes,
        Err(code) => return code,
    };
    match check(&bytes) {
        Ok((valid, mut line)) => {
            line.insert("valid".into(), Value::Bool(valid));
            println!("{}", Value::Object(line));
            ExitCode::from(if valid { 0 } else { 1 })
        }
        Err(e) => {
            eprintln!("{command}: {}: not {kind}: {e}", file.display());
            ExitCode::from(2)
        }
    }
}
