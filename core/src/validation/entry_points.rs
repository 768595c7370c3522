//! The public entry points every validator module has, written once: the same
//! three functions over the module's own `walk`, differing only in what they
//! produce.

/// Define `validate_bytes`, `validate_value` and `validate` in a validator
/// module, over its `fn walk(&mut Report, &JsonBody, &Context) -> Option<$out>`;
/// `$what` names the request in `validate`'s documentation.
macro_rules! entry_points {
    ($out:ty, $what:literal) => {
        /// Validate a request body given as bytes (what the engine receives).
        pub fn validate_bytes(bytes: &[u8], ctx: &Context<'_>) -> Result<$out, Report> {
            super::over_bytes(bytes, ctx, validate)
        }

        /// Validate a `serde_json::Value` (for Rust hosts that hold one).
        pub fn validate_value(value: &serde_json::Value, ctx: &Context<'_>) -> Result<$out, Report> {
            validate_bytes(value.to_string().as_bytes(), ctx)
        }

        #[doc = concat!("Validate ", $what, "; every problem is recorded in the report.")]
        pub fn validate(value: &JsonBody<'_>, ctx: &Context<'_>) -> Result<$out, Report> {
            super::walk_all(|r| walk(r, value, ctx))
        }
    };
}
