//! A merchant's origination settings, set by the operator
//! (`PUT /admin/merchants/{id}/settings`, the whole set at once): its company
//! entry description, the word its receivers' statements show for a batch
//! that no Nacha standard description names (`PAYMENT` when unset), and who
//! validates the accounts of its WEB debits (the engine, unless its bank
//! agreement lets the merchant do it itself).

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::engine::tenancy::tenant_lookup;
use crate::engine::{Outcome, Refusal, Stop, WriteContext};
use crate::storage::Table;
use crate::validation::{FieldError, ProblemCode};
use crate::AchError;

/// The description a batch carries when neither a Nacha standard value
/// (`PURCHASE`, `PAYROLL`) nor the engine's own (`REVERSAL`, `REFUND`) applies
/// and the merchant has set none.
pub const DEFAULT_DESCRIPTION: &str = "PAYMENT";

/// Descriptions a merchant may not choose: the engine's own, and those the
/// Nacha Operating Rules reserve for entries of one particular kind.
pub const RESERVED_DESCRIPTIONS: [&str; 12] = [
    "REVERSAL",
    "REFUND",
    "PAYROLL",
    "PURCHASE",
    "RETRY PYMT",
    "RECLAIM",
    "NONSETTLED",
    "AUTOENROLL",
    "REDEPCHECK",
    "NO CHECK",
    "RETURN FEE",
    "HEALTHCARE",
];

/// A merchant's origination settings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MerchantSettings {
    /// 1–10 printable ASCII characters, stored in upper case; `None` (or JSON
    /// `null`) means [`DEFAULT_DESCRIPTION`]; spaces around it are dropped.
    #[serde(default)]
    pub company_entry_description: Option<String>,
    /// Who validates the accounts of the merchant's WEB debits (`engine`
    /// when absent).
    #[serde(default)]
    pub web_debit_validation: WebDebitValidation,
}

pub use crate::engine::rows::records::WebDebitValidation;

/// What is wrong with `s`, field by field (empty: usable).
pub(crate) fn problems(s: &MerchantSettings) -> Vec<FieldError> {
    let field = "company_entry_description";
    let Some(d) = &s.company_entry_description else { return Vec::new() };
    let d = d.trim_matches(' ');
    let upper = d.to_ascii_uppercase();
    let message = if d.is_empty() || d.len() > 10 || !d.bytes().all(|b| (b' '..=b'~').contains(&b)) {
        format!("{field} must be 1 to 10 printable ASCII characters (spaces around it are dropped)")
    } else if RESERVED_DESCRIPTIONS.contains(&upper.as_str()) {
        format!("{field} '{upper}' is reserved: the engine writes it where the Nacha rules call for it")
    } else {
        return Vec::new();
    };
    vec![FieldError { field: field.into(), code: ProblemCode::InvalidFormat, message }]
}

/// Operator: set `merchant_id`'s settings (validated when prepared).
pub(crate) fn set(
    cx: &mut WriteContext<'_, '_>,
    merchant_id: &str,
    settings: Result<MerchantSettings, Vec<FieldError>>,
) -> Result<Outcome, Stop> {
    let settings = settings.map_err(|errors| Refusal::Refused {
        error: AchError::FailedToAccept,
        status: 422,
        errors,
    })?;
    let mut m = Arc::unwrap_or_clone(tenant_lookup::load_merchant(cx, merchant_id)?);
    m.company_entry_description =
        settings.company_entry_description.map(|d| d.trim_matches(' ').to_ascii_uppercase());
    m.web_debit_validation = settings.web_debit_validation;
    cx.write.put(Table::Merchants, m.id.as_bytes(), &m)?;
    let settings = MerchantSettings {
        company_entry_description: m.company_entry_description.clone(),
        web_debit_validation: m.web_debit_validation,
    };
    Ok(Outcome::MerchantSettingsSet { merchant_id: m.id, settings })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(d: Option<&str>) -> Option<String> {
        let s = MerchantSettings {
            company_entry_description: d.map(String::from),
            ..MerchantSettings::default()
        };
        problems(&s).pop().map(|p| p.message)
    }

    #[test]
    fn descriptions_are_short_printable_and_not_reserved() {
        assert_eq!(problem(None), None);
        assert_eq!(problem(Some("Subscribe")), None);
        assert_eq!(problem(Some("RENT 12")), None);
        assert!(problem(Some("")).unwrap_or_default().contains("1 to 10"));
        assert!(problem(Some("   ")).unwrap_or_default().contains("1 to 10"));
        assert!(problem(Some("ELEVENCHARS")).unwrap_or_default().contains("1 to 10"));
        assert!(problem(Some("CAFÉ")).unwrap_or_default().contains("1 to 10"));
        assert!(problem(Some("tab\there")).unwrap_or_default().contains("1 to 10"));
        assert!(problem(Some("reversal")).unwrap_or_default().contains("'REVERSAL' is reserved"));
        assert!(problem(Some(" Payroll ")).unwrap_or_default().contains("'PAYROLL' is reserved"));
    }
}
