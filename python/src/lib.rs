//! The Python package `ach` (its native module `ach._ach`): validation and an
//! engine in the Python process, over the same `ach_core` functions as the
//! HTTPS server, the C library and the browser module, so every host answers
//! alike.
//!
//! Built by maturin (`pip install ./python`); see `python/README.md`. The
//! crate is a `cdylib` only, built with PyO3's `extension-module` feature: it
//! never links `libpython` (the interpreter that imports it provides the
//! symbols), so `cargo build` and `cargo test` of the workspace need no Python
//! headers or library.

mod engine;
mod errors;
mod json;
mod validate;

use pyo3::prelude::*;

/// The module `ach._ach`, re-exported by the package `ach`.
#[pymodule]
#[pyo3(name = "_ach")]
fn ach_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("AchError", py.get_type::<errors::AchError>())?;
    m.add("InvalidArgument", py.get_type::<errors::InvalidArgument>())?;
    m.add("ClosedError", py.get_type::<errors::ClosedError>())?;
    m.add("StorageError", py.get_type::<errors::StorageError>())?;
    m.add("KeyFileError", py.get_type::<errors::KeyFileError>())?;
    m.add("WrongKeyError", py.get_type::<errors::WrongKeyError>())?;
    m.add_class::<engine::PyEngine>()?;
    m.add_function(wrap_pyfunction!(validate::validate_transaction, m)?)?;
    m.add_function(wrap_pyfunction!(validate::validate_customer, m)?)?;
    m.add_function(wrap_pyfunction!(validate::validate_merchant, m)?)?;
    m.add_function(wrap_pyfunction!(validate::validate, m)?)?;
    m.add_function(wrap_pyfunction!(validate::validate_routing_number, m)?)?;
    m.add_function(wrap_pyfunction!(validate::to_json_text, m)?)?;
    Ok(())
}
