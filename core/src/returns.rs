//! The NACHA return reason codes (`R01`–`R85`, `R90`) with their standard titles.
//!
//! A receiving bank that sends an entry back names one of these codes; the engine
//! records it on the transaction's `R` status change (`return_code`, with the title
//! as `reason`). The table is public NACHA data, embedded here so every host (the
//! browser module included) validates return codes the same way. It is kept equal
//! to `shared/data/return-codes.tsv` by a test: same codes, same titles, same order.

/// One NACHA return reason code and its standard title.
///
/// Only the values of the embedded table exist: obtain one with [`lookup`] or
/// [`all`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ReturnCode {
    code: &'static str,
    reason: &'static str,
}

impl ReturnCode {
    /// The code, `R` followed by two digits (e.g. `R01`): the status change's
    /// `return_code`.
    pub const fn code(self) -> &'static str {
        self.code
    }

    /// The standard NACHA title (e.g. `Insufficient Funds`): the status change's
    /// `reason`.
    pub const fn reason(self) -> &'static str {
        self.reason
    }
}

const fn rc(code: &'static str, reason: &'static str) -> ReturnCode {
    ReturnCode { code, reason }
}

/// Every code, sorted by code (the order of `return-codes.tsv`). Titles are NACHA's,
/// verbatim (R10 contains a typographic apostrophe, U+2019).
static RETURN_CODES: [ReturnCode; 71] = [
    rc("R01", "Insufficient Funds"),
    rc("R02", "Account Closed"),
    rc("R03", "No Account/Unable to Locate Account"),
    rc("R04", "Invalid Account Number"),
    rc("R05", "Improper Debit to Consumer Account"),
    rc("R06", "Returned per ODFI's Request"),
    rc("R07", "Authorization Revoked by Customer"),
    rc("R08", "Payment Stopped"),
    rc("R09", "Uncollected Funds"),
    rc(
        "R10",
        "Customer Advises Originator is Not Known to Receiver and/or Originator is Not Authorized \
         by Receiver to Debit Receiver’s Account",
    ),
    rc("R11", "Customer Advises Entry Not in Accordance with the Terms of the Authorization"),
    rc("R12", "Branch Sold to Another DFI"),
    rc("R13", "RDFI not qualified to participate"),
    rc("R14", "Representative payee deceased or unable to continue in that capacity"),
    rc("R15", "Beneficiary or bank account holder"),
    rc("R16", "Bank account frozen"),
    rc(
        "R17",
        "File Record Edit Criteria/Entry with Invalid Account Number Initiated Under Questionable \
         Circumstances",
    ),
    rc("R18", "Improper effective entry date"),
    rc("R19", "Amount field error"),
    rc("R20", "Non-payment bank account"),
    rc("R21", "Invalid company ID number"),
    rc("R22", "Invalid individual ID number"),
    rc("R23", "Credit entry refused by receiver"),
    rc("R24", "Duplicate entry"),
    rc("R25", "Addenda error"),
    rc("R26", "Mandatory field error"),
    rc("R27", "Trace number error"),
    rc("R28", "Transit routing number check digit error"),
    rc("R29", "Corporate customer advises not authorized"),
    rc("R30", "RDFI not participant in check truncation program"),
    rc("R31", "Permissible return entry (CCD and CTX only)"),
    rc("R32", "RDFI non-settlement"),
    rc("R33", "Return of XCK entry"),
    rc("R34", "Limited participation RDFI"),
    rc("R35", "Return of improper debit entry"),
    rc("R36", "Return of improper credit entry"),
    rc("R37", "Source Document Presented for Payment (Adjustment Entry)"),
    rc("R38", "Stop Payment on Source Document (Adjustment Entry)"),
    rc("R39", "Improper Source Document"),
    rc("R40", "Return of ENR Entry by Federal Government Agency (ENR Only)"),
    rc("R41", "Invalid Transaction Code (ENR only)"),
    rc("R42", "Routing Number/Check Digit Error (ENR Only)"),
    rc("R43", "Invalid DFI Account Number (ENR Only)"),
    rc("R44", "Invalid Individual ID Number/Identification Number (ENR only)"),
    rc("R45", "Invalid Individual Name/Company Name (ENR only)"),
    rc("R46", "Invalid Representative Payee Indicator (ENR Only)"),
    rc("R47", "Duplicate Enrollment (ENR Only)"),
    rc("R50", "State Law Affecting RCK Acceptance"),
    rc("R51", "Item Related to RCK Entry is Ineligible or RCK Entry is Improper"),
    rc("R52", "Stop Payment on Item (Adjustment Entry)"),
    rc("R53", "Item and RCK Entry Presented for Payment (Adjustment Entry)"),
    rc("R61", "Misrouted Return"),
    rc("R62", "Return of Erroneous or Reversing Debt"),
    rc("R67", "Duplicate Return"),
    rc("R68", "Untimely Return"),
    rc("R69", "Field Error(s)"),
    rc("R70", "Permissible Return Entry Not Accepted/Return Not Requested by ODFI"),
    rc("R71", "Misrouted Dishonored Return"),
    rc("R72", "Untimely Dishonored Return"),
    rc("R73", "Timely Original Return"),
    rc("R74", "Corrected Return"),
    rc("R75", "Return Not a Duplicate"),
    rc("R76", "No Errors Found"),
    rc("R77", "Non-Acceptance of R62 Dishonored Return"),
    rc("R80", "IAT Entry Coding Error"),
    rc("R81", "Non-Participant in IAT Program"),
    rc("R82", "Invalid Foreign Receiving DFI Identification"),
    rc("R83", "Foreign Receiving DFI Unable to Settle"),
    rc("R84", "Entry Not Processed by Gateway"),
    rc("R85", "Incorrectly Coded Outbound International Payment"),
    rc("R90", "Entry Returned Due to RDFI's Sanctions Compliance Obligations"),
];

/// Every NACHA return reason code the service knows, sorted by code (71 codes:
/// `R01`–`R47`, `R50`–`R53`, `R61`, `R62`, `R67`–`R77`, `R80`–`R85`, `R90`).
pub fn all() -> &'static [ReturnCode] {
    &RETURN_CODES
}

/// Whether `code` has the shape of a return code: `R` followed by two ASCII digits,
/// uppercase, nothing around it. Says nothing about whether NACHA defines it (`R00`
/// is well-formed); see [`lookup`].
pub fn is_well_formed(code: &str) -> bool {
    matches!(code.as_bytes(), [b'R', tens, units] if tens.is_ascii_digit() && units.is_ascii_digit())
}

/// The return reason code named exactly `code`: `R` followed by two digits,
/// uppercase, nothing around it (`R01`, not `r01`, `R1`, `R011` or ` R01`).
/// `None` for any other text, and for a well-formed code NACHA does not define
/// (`R00`, `R48`, `R99`).
pub fn lookup(code: &str) -> Option<ReturnCode> {
    if !is_well_formed(code) {
        return None;
    }
    RETURN_CODES.binary_search_by(|entry| entry.code.cmp(code)).ok().map(|i| RETURN_CODES[i])
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// `shared/data/return-codes.tsv` beside the repository, or under
    /// `$ACH_SHARED_DATA` when that is set.
    fn tsv_path() -> std::path::PathBuf {
        match std::env::var_os("ACH_SHARED_DATA") {
            Some(dir) => std::path::PathBuf::from(dir).join("return-codes.tsv"),
            None => concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data/return-codes.tsv").into(),
        }
    }

    #[test]
    fn embedded_table_equals_the_shared_tsv_exactly() {
        let path = tsv_path();
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {} (set ACH_SHARED_DATA): {e}", path.display()));
        let mut rendered = String::from("code\treason\n");
        for entry in all() {
            rendered.push_str(entry.code());
            rendered.push('\t');
            rendered.push_str(entry.reason());
            rendered.push('\n');
        }
        // Row by row first, for a readable failure.
        let file_rows: Vec<&str> = text.lines().collect();
        let our_rows: Vec<&str> = rendered.lines().collect();
        assert_eq!(our_rows, file_rows);
        assert_eq!(rendered, text);
        assert_eq!(all().len(), 71);
    }

    #[test]
    fn table_is_sorted_unique_and_well_formed() {
        for pair in all().windows(2) {
            assert!(pair[0].code() < pair[1].code(), "{:?} then {:?}", pair[0], pair[1]);
        }
        for entry in all() {
            assert_eq!(lookup(entry.code()), Some(*entry));
            assert!(!entry.reason().is_empty() && entry.reason().trim() == entry.reason());
        }
        assert_eq!(all().first().map(|e| e.code()), Some("R01"));
        assert_eq!(all().last().map(|e| e.code()), Some("R90"));
    }

    #[test]
    fn lookup_known_codes() {
        let r01 = lookup("R01").unwrap();
        assert_eq!((r01.code(), r01.reason()), ("R01", "Insufficient Funds"));
        assert_eq!(lookup("R02").unwrap().reason(), "Account Closed");
        assert_eq!(lookup("R29").unwrap().reason(), "Corporate customer advises not authorized");
        assert_eq!(
            lookup("R90").unwrap().reason(),
            "Entry Returned Due to RDFI's Sanctions Compliance Obligations"
        );
        assert!(lookup("R10").unwrap().reason().ends_with("Receiver\u{2019}s Account"));
    }

    #[test]
    fn well_formed_is_only_the_shape() {
        assert!(is_well_formed("R00") && is_well_formed("R99") && is_well_formed("R01"));
        for bad in ["r01", "R1", "R011", "", "R", "X01", "R0a", " R01", "Ｒ01"] {
            assert!(!is_well_formed(bad), "{bad:?}");
        }
    }

    #[test]
    fn lookup_refuses_everything_else() {
        for bad in [
            "R00", "R48", "R49", "R54", "R60", "R63", "R78", "R86", "R89", "R91", "R99", "r01", "R1", "R011",
            "R01 ", " R01", "01", "R", "", "RR1", "R0a", "C01", "R٠١", "Ｒ01", "R01\0",
        ] {
            assert_eq!(lookup(bad), None, "{bad:?}");
        }
    }
}
