//! Form validation in the browser: the same validators as `achd validate`.

use std::sync::{Arc, OnceLock, RwLock};

use ach_core::calendar;
use ach_core::routing::RoutingDirectory;
use ach_core::validation::{check_bytes, routing_number_verdict, Context, Kind, Verdict};
use chrono::NaiveDate;
use wasm_bindgen::prelude::*;

use crate::convert::{now, verdict_to_js, with_json_text};

static DIRECTORY: RwLock<Option<Arc<RoutingDirectory>>> = RwLock::new(None);
static EMBEDDED: OnceLock<Arc<RoutingDirectory>> = OnceLock::new();

/// The routing directory in use: the loaded one, or the embedded default (built
/// once, not on every call).
pub(crate) fn directory() -> Arc<RoutingDirectory> {
    let loaded = DIRECTORY.read().ok().and_then(|d| d.clone());
    loaded.unwrap_or_else(|| Arc::clone(EMBEDDED.get_or_init(|| Arc::new(RoutingDirectory::embedded()))))
}

/// The verdict JSON for a request body (pure: testable natively): what
/// `validate` gives as an object.
#[cfg(test)]
fn verdict_json(kind: Kind, body: &str, today: NaiveDate, directory: &RoutingDirectory) -> String {
    check_bytes(kind, body.as_bytes(), &Context { today, directory }).to_json()
}

/// The verdict JSON of `checkRoutingNumber` (pure).
#[cfg(test)]
fn routing_verdict_json(routing_number: &str, directory: &RoutingDirectory) -> String {
    routing_verdict(routing_number, directory).to_json()
}

/// The verdict of `checkRoutingNumber` (pure): the core's one routing-number rule.
fn routing_verdict(routing_number: &str, directory: &RoutingDirectory) -> Verdict {
    routing_number_verdict(routing_number, directory)
}

/// A FedACH file's text as a directory (pure). A file without records is
/// refused by the parser (it would make every routing number "not found").
pub fn parse_directory(text: &str) -> Result<RoutingDirectory, String> {
    RoutingDirectory::parse_fedach(text).map_err(|e| format!("not a FedACH directory: {e}"))
}

#[wasm_bindgen(typescript_custom_section)]
const VERDICT_TYPES: &str = r#"
/** One problem of a form: the field's JSON path (`principal[0].address.zip`), a
 * stable code (`required`, `invalid_format`, …) and the message to show. */
export interface FieldProblem {
    field: string;
    code: string;
    message: string;
}

/** A verdict: an invalid form is data, never an exception. `message` is the
 * service's envelope message for the first problem (null when valid). */
export interface Verdict {
    valid: boolean;
    message: string | null;
    errors: FieldProblem[];
}
"#;

/// The argument's JSON text goes to the validator as UTF-8 (no `String` of it),
/// the verdict comes back as a JS object built from its texts (no JSON of it):
/// the same values as parsing `verdict_json`, for less work at the boundary.
fn validate(kind: Kind, value: &JsValue, function: &str) -> Result<JsValue, JsError> {
    let today = today();
    let directory = directory();
    let verdict = with_json_text(value, function, |body| {
        check_bytes(kind, body, &Context { today, directory: &directory })
    })?;
    Ok(verdict_to_js(&verdict))
}

/// Today in US Eastern time by the browser's clock.
fn today() -> NaiveDate {
    calendar::eastern_date_cached(now())
}

/// Define the exported validator `$name` (`$js` in JavaScript) of the requests
/// of `$kind`, documented by `$doc`: a plain string literal, which the
/// TypeScript declarations carry as they carry `///` comments.
macro_rules! validator {
    ($doc:literal, $name:ident, $js:ident, $kind:expr) => {
        #[doc = $doc]
        #[wasm_bindgen(js_name = $js, unchecked_return_type = "Verdict")]
        pub fn $name(
            #[wasm_bindgen(unchecked_param_type = "object | string")] request: &JsValue,
        ) -> Result<JsValue, JsError> {
            validate($kind, request, stringify!($js))
        }
    };
}

validator!(
    " Validate a transaction request: `{valid, message, errors}`.",
    validate_transaction,
    validateTransaction,
    Kind::Transaction
);
validator!(
    " Validate a customer request: `{valid, message, errors}`.",
    validate_customer,
    validateCustomer,
    Kind::Customer
);
validator!(
    " Validate a merchant application: `{valid, message, errors}`.",
    validate_merchant,
    validateMerchant,
    Kind::Merchant
);

/// Check one routing number (format, check digit, directory): `{valid, message,
/// errors}`.
#[wasm_bindgen(js_name = checkRoutingNumber, unchecked_return_type = "Verdict")]
pub fn check_routing_number(
    #[wasm_bindgen(unchecked_param_type = "string")] routing_number: &JsValue,
) -> Result<JsValue, JsError> {
    let text =
        routing_number.as_string().ok_or_else(|| JsError::new("checkRoutingNumber expects a string"))?;
    Ok(verdict_to_js(&routing_verdict(&text, &directory())))
}

/// Load a FedACH directory file's text for "not found" checks; returns the
/// number of records. Throws when the file is not a FedACH directory.
#[wasm_bindgen(js_name = loadRoutingDirectory)]
pub fn load_routing_directory(
    #[wasm_bindgen(unchecked_param_type = "string")] text: &JsValue,
) -> Result<u32, JsError> {
    let text =
        text.as_string().ok_or_else(|| JsError::new("loadRoutingDirectory expects the file's text"))?;
    let parsed = parse_directory(&text).map_err(|e| JsError::new(&e))?;
    let count = u32::try_from(parsed.len()).unwrap_or(u32::MAX);
    if let Ok(mut slot) = DIRECTORY.write() {
        *slot = Some(Arc::new(parsed));
    }
    Ok(count)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn routing_numbers_are_checked_like_the_server() {
        let dir = RoutingDirectory::embedded();
        assert_eq!(routing_verdict_json("021000021", &dir), r#"{"valid":true,"message":null,"errors":[]}"#);
        assert!(routing_verdict_json("021000022", &dir).contains("'021000022' is an invalid Routing Number"));
        assert!(routing_verdict_json("231380104", &dir).contains("Routing Number '231380104' was not found"));
    }

    #[test]
    fn a_directory_without_records_is_refused() {
        for text in ["", " \n\r\n", "\n\n"] {
            assert_eq!(
                parse_directory(text).err().as_deref(),
                Some("not a FedACH directory: the file has no records")
            );
        }
        assert!(parse_directory(&"9".repeat(1 << 20)).unwrap_err().len() < 200);
    }

    #[test]
    fn verdicts_are_the_same_text_as_achd_validate() {
        let dir = RoutingDirectory::embedded();
        let today = NaiveDate::from_ymd_opt(2026, 11, 22).unwrap();
        let v = verdict_json(Kind::Transaction, r#"{"amount":"abc"}"#, today, &dir);
        let direct =
            check_bytes(Kind::Transaction, br#"{"amount":"abc"}"#, &Context { today, directory: &dir })
                .to_json();
        assert_eq!(v, direct);
    }
}
