//! `achd serve --routing-directory FEDACH_FILE`: the real routing directory from
//! the start. The file goes through the operator's own operation (the one `POST
//! /admin/routing` runs), so it is parsed, checked and stored in the database by
//! the same code: a later start without the flag keeps it.

use std::path::Path;

use ach_core::engine::{Caller, Engine, Operation, Outcome};

/// Files larger than this get a line before parsing starts, so a long load is
/// never silent.
const PROGRESS_BYTES: u64 = 256 * 1024;

/// Load `file` into the engine's database; `say` prints the progress and the
/// count. `Err` says why the server cannot start with it.
pub fn load(engine: &Engine, file: &Path, say: impl Fn(&str)) -> Result<(), String> {
    let shown = file.display();
    let size = std::fs::metadata(file).map_err(|e| format!("--routing-directory {shown}: {e}"))?.len();
    if size > PROGRESS_BYTES {
        say(&format!("routing directory: loading {shown} ({:.1} MB)...", size as f64 / 1e6));
    }
    let bytes = std::fs::read(file).map_err(|e| format!("--routing-directory {shown}: {e}"))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        format!("--routing-directory {shown}: not text (UTF-8): byte {}", e.utf8_error().valid_up_to())
    })?;
    match engine.execute(&Caller::Operator, Operation::LoadDirectory { text }) {
        Ok(Outcome::DirectoryLoaded { records }) => {
            say(&format!(
                "routing directory: {records} routing numbers from {shown} (stored in the database)"
            ));
            Ok(())
        }
        Ok(other) => Err(format!("--routing-directory {shown}: unexpected outcome {other:?}")),
        Err(failure) => {
            let detail = failure.errors().first().map_or_else(|| failure.message(), |e| e.message.clone());
            Err(format!("--routing-directory {shown}: {detail}"))
        }
    }
}

/// The line that says which directory a start without the flag uses.
pub fn in_use(engine: &Engine) -> String {
    format!(
        "routing directory: {} routing numbers (load the FedACH file with --routing-directory or POST /admin/routing)",
        engine.directory().len()
    )
}
