//! The request router (`api::route`) on arbitrary requests: the input's first line
//! is the method and path, header lines give the key, query, idempotency key and
//! content type, the rest is the body (see `Sandbox::request`). Every answer must
//! pass the oracle (`Sandbox::check`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let sandbox = ach_fuzz::sandbox();
    let request = sandbox.request(data);
    let response = ach_core::api::route(&sandbox.engine, &request);
    sandbox.check(&response, data.len());
});
