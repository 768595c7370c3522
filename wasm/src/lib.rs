//! # ach-wasm: the ACH engine in the browser
//!
//! Built out in its own issue (wasm-bindgen exports, a browser page); today it
//! exposes the version.

/// The module version.
pub fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[cfg(test)]
mod tests {
    #[test]
    fn version_matches_the_crate() {
        assert_eq!(super::version(), env!("CARGO_PKG_VERSION"));
    }
}
