//! The file a checking command reads: a path, or `-` for standard input.

use std::io::Read;
use std::path::Path;
use std::process::ExitCode;

/// The bytes of `file` (`-`: standard input). On failure `command` says
/// why on standard error and the answer is exit 2 (unreadable).
pub fn read(command: &str, file: &Path) -> Result<Vec<u8>, ExitCode> {
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
