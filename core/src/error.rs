//! The error catalogue: the spec's 32 messages, each with a stable code, its exact
//! text (placeholders filled), the error type `E` and the HTTP status it maps to.
//!
//! The numbering is the spec's own table (1 to 32) and is documented in
//! `docs/errors.md`; a code is never renumbered or reused. Besides these, the only
//! envelope message the service ever sends is the spec's `Authentication failed.`
//! ([`AUTHENTICATION_FAILED`]).

use std::fmt;

use crate::money::Money;

/// The one authentication failure message the spec shows, verbatim.
pub const AUTHENTICATION_FAILED: &str = "Authentication failed.";

/// The error type every documented error carries (spec: "Every documented error
/// carries the error type `E`").
pub const ERROR_TYPE: &str = "E";

/// What kind of failure an error is; decides the HTTP status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCategory {
    /// The request itself is invalid (a field, a format, a rule of the spec).
    Validation,
    /// The credentials are missing or wrong.
    Authentication,
    /// The named resource does not exist for this caller.
    NotFound,
    /// The resource is in a state that does not allow the operation.
    StateConflict,
    /// The request repeats one already accepted.
    Duplicate,
    /// A merchant or overall limit refuses the request.
    Limit,
    /// The service cannot serve the request right now; retrying later may work.
    Unavailable,
}

impl ErrorCategory {
    /// HTTP status code for this category (see `docs/errors.md`).
    pub const fn http_status(self) -> u16 {
        match self {
            ErrorCategory::Validation => 422,
            ErrorCategory::Authentication => 401,
            ErrorCategory::NotFound => 404,
            ErrorCategory::StateConflict => 409,
            ErrorCategory::Duplicate => 409,
            ErrorCategory::Limit => 403,
            ErrorCategory::Unavailable => 503,
        }
    }
}

/// One of the spec's 32 error messages, with its placeholders.
///
/// `code()` is the spec's number; `to_string()` is the exact message.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub enum AchError {
    /// 1: The system is unable to process your transaction at this time
    SystemUnable,
    /// 2: This transaction has already been submitted for processing
    AlreadySubmitted,
    /// 3: Valid Referring ID or approved Credit PIN Required
    ReferringIdRequired,
    /// 4: This credit has been submitted
    CreditSubmitted,
    /// 5: The original transaction has already been reversed with transaction ID
    /// (followed by the reversal's id).
    AlreadyReversed {
        /// Id of the reversal transaction.
        reversal_id: String,
    },
    /// 6: The reversal for transaction has been submitted
    ReversalSubmitted,
    /// 7: The database is currently unavailable
    DatabaseUnavailable,
    /// 8: Check Number Required For {TRANSACTION_TYPE} Transactions
    CheckNumberRequired {
        /// The standard entry class (BOC, POP).
        transaction_type: String,
    },
    /// 9: State Required For POP Transactions
    StateRequired,
    /// 10: Failed to accept this transaction
    FailedToAccept,
    /// 11: '{MERCHANT_ID}' is an invalid Merchant ID
    InvalidMerchantId {
        /// The value as the client sent it (shortened, see [`crate::echo::echo`]).
        value: String,
    },
    /// 12: '{ROUTING_NUMBER}' is an invalid Routing Number
    InvalidRoutingNumber {
        /// The value as the client sent it (shortened, see [`crate::echo::echo`]).
        value: String,
    },
    /// 13: '{ACCOUNT_NUMBER}' is an invalid Account Number
    InvalidAccountNumber {
        /// The value, masked to its last four characters (see [`crate::echo::mask_account`]).
        value: String,
    },
    /// 14: '{AMOUNT}' is an invalid Amount
    InvalidAmount {
        /// The value as the client sent it (shortened, see [`crate::echo::echo`]).
        value: String,
    },
    /// 15: Credits are limited to 50,000,000 USD
    CreditsLimited,
    /// 16: Routing Number '{ROUTING_NUMBER}' was not found
    RoutingNotFound {
        /// The nine-digit routing number.
        value: String,
    },
    /// 17: This is a duplicate transaction
    DuplicateTransaction,
    /// 18: Duplicate transaction for this check. Check number: {CHECK_NUMBER}
    DuplicateCheck {
        /// The check number already used.
        check_number: String,
    },
    /// 19: Credit amount is over the maximum
    CreditOverMaximum,
    /// 20: Unable to accept {TRANSACTION_TYPE} transactions for this merchant
    NotAccepted {
        /// What is refused: a class (`TEL`), a direction (`credit`) or both.
        transaction_type: String,
    },
    /// 21: Exceeded maximum dollar amount (${AMOUNT_LIMIT}) for this merchant.
    MaxAmountExceeded {
        /// The limit that was exceeded.
        limit: Money,
    },
    /// 22: You have exceeded the allowed max daily num checks for this merchant
    DailyCountMerchant,
    /// 23: You have exceeded your allowed max dollar amount for this merchant of {LIMIT}
    DailyAmountMerchant {
        /// The daily dollar limit.
        limit: Money,
    },
    /// 24: You have exceeded the allowed max daily num checks overall
    DailyCountOverall,
    /// 25: You have exceeded your allowed max dollar amount overall of {LIMIT}
    DailyAmountOverall {
        /// The daily dollar limit across the partner's merchants.
        limit: Money,
    },
    /// 26: You have exceeded the maximum number of checks for this merchant this period
    PeriodCountMerchant,
    /// 27: You have exceeded the maximum dollar amount for this merchant this period
    PeriodAmountMerchant,
    /// 28: You have exceeded the maximum number of checks overall this period
    PeriodCountOverall,
    /// 29: You have exceeded the maximum dollar amount overall this period
    PeriodAmountOverall,
    /// 30: You have exceeded your monthly transaction volume
    MonthlyVolume,
    /// 31: You have exceeded your monthly dollar amount cap
    MonthlyAmount,
    /// 32: This transaction brings your monthly dollar amount over the maximum average
    /// amount allowed
    MonthlyAverage,
}

impl AchError {
    /// The failure category, which decides the HTTP status.
    pub const fn category(&self) -> ErrorCategory {
        use AchError::*;
        match self {
            SystemUnable | DatabaseUnavailable => ErrorCategory::Unavailable,
            AlreadySubmitted | CreditSubmitted => ErrorCategory::Duplicate,
            AlreadyReversed { .. } | ReversalSubmitted => ErrorCategory::StateConflict,
            DuplicateTransaction | DuplicateCheck { .. } => ErrorCategory::Duplicate,
            ReferringIdRequired => ErrorCategory::Limit,
            CheckNumberRequired { .. }
            | StateRequired
            | FailedToAccept
            | InvalidMerchantId { .. }
            | InvalidRoutingNumber { .. }
            | InvalidAccountNumber { .. }
            | InvalidAmount { .. }
            | CreditsLimited
            | RoutingNotFound { .. } => ErrorCategory::Validation,
            CreditOverMaximum
            | NotAccepted { .. }
            | MaxAmountExceeded { .. }
            | DailyCountMerchant
            | DailyAmountMerchant { .. }
            | DailyCountOverall
            | DailyAmountOverall { .. }
            | PeriodCountMerchant
            | PeriodAmountMerchant
            | PeriodCountOverall
            | PeriodAmountOverall
            | MonthlyVolume
            | MonthlyAmount
            | MonthlyAverage => ErrorCategory::Limit,
        }
    }

    /// HTTP status this error maps to.
    pub const fn http_status(&self) -> u16 {
        self.category().http_status()
    }

    /// Whether this message answers with one HTTP status wherever it arises (its
    /// [`AchError::http_status`]): every message but the general ones, 1 (*unable
    /// to process*), 3 and 4 (reserved) and 10 (*Failed to accept this
    /// transaction*), which also carry a 400, 404, 405 or 413 when the request
    /// itself is at fault.
    pub const fn has_one_status(&self) -> bool {
        !matches!(self.code(), 1 | 3 | 4 | 10)
    }

    /// The error type of every catalogued error: `E`.
    pub const fn error_type(&self) -> &'static str {
        ERROR_TYPE
    }
}

impl fmt::Display for AchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use AchError::*;
        match self {
            SystemUnable => f.write_str("The system is unable to process your transaction at this time"),
            AlreadySubmitted => f.write_str("This transaction has already been submitted for processing"),
            ReferringIdRequired => f.write_str("Valid Referring ID or approved Credit PIN Required"),
            CreditSubmitted => f.write_str("This credit has been submitted"),
            AlreadyReversed { reversal_id } => write!(
                f,
                "The original transaction has already been reversed with transaction ID {reversal_id}"
            ),
            ReversalSubmitted => f.write_str("The reversal for transaction has been submitted"),
            DatabaseUnavailable => f.write_str("The database is currently unavailable"),
            CheckNumberRequired { transaction_type } => {
                write!(f, "Check Number Required For {transaction_type} Transactions")
            }
            StateRequired => f.write_str("State Required For POP Transactions"),
            FailedToAccept => f.write_str("Failed to accept this transaction"),
            InvalidMerchantId { value } => write!(f, "'{value}' is an invalid Merchant ID"),
            InvalidRoutingNumber { value } => write!(f, "'{value}' is an invalid Routing Number"),
            InvalidAccountNumber { value } => write!(f, "'{value}' is an invalid Account Number"),
            InvalidAmount { value } => write!(f, "'{value}' is an invalid Amount"),
            CreditsLimited => f.write_str("Credits are limited to 50,000,000 USD"),
            RoutingNotFound { value } => write!(f, "Routing Number '{value}' was not found"),
            DuplicateTransaction => f.write_str("This is a duplicate transaction"),
            DuplicateCheck { check_number } => {
                write!(f, "Duplicate transaction for this check. Check number: {check_number}")
            }
            CreditOverMaximum => f.write_str("Credit amount is over the maximum"),
            NotAccepted { transaction_type } => {
                write!(f, "Unable to accept {transaction_type} transactions for this merchant")
            }
            MaxAmountExceeded { limit } => {
                write!(f, "Exceeded maximum dollar amount ({}) for this merchant.", limit.dollars())
            }
            DailyCountMerchant => {
                f.write_str("You have exceeded the allowed max daily num checks for this merchant")
            }
            DailyAmountMerchant { limit } => write!(
                f,
                "You have exceeded your allowed max dollar amount for this merchant of {}",
                limit.dollars()
            ),
            DailyCountOverall => f.write_str("You have exceeded the allowed max daily num checks overall"),
            DailyAmountOverall { limit } => {
                write!(f, "You have exceeded your allowed max dollar amount overall of {}", limit.dollars())
            }
            PeriodCountMerchant => {
                f.write_str("You have exceeded the maximum number of checks for this merchant this period")
            }
            PeriodAmountMerchant => {
                f.write_str("You have exceeded the maximum dollar amount for this merchant this period")
            }
            PeriodCountOverall => {
                f.write_str("You have exceeded the maximum number of checks overall this period")
            }
            PeriodAmountOverall => {
                f.write_str("You have exceeded the maximum dollar amount overall this period")
            }
            MonthlyVolume => f.write_str("You have exceeded your monthly transaction volume"),
            MonthlyAmount => f.write_str("You have exceeded your monthly dollar amount cap"),
            MonthlyAverage => f.write_str(
                "This transaction brings your monthly dollar amount over the maximum average amount allowed",
            ),
        }
    }
}

impl std::error::Error for AchError {}

/// [`AchError::code`] and [`catalogue_samples`] from one table, in code
/// order: each code with its message (and the sample placeholders the
/// samples fill it with). A message missing from the table does not compile.
macro_rules! catalogue {
    ($($code:literal => $variant:ident $({ $($field:ident: $sample:expr),+ })?,)+) => {
        impl AchError {
            /// The stable code: the spec's number, 1 to 32.
            pub const fn code(&self) -> u16 {
                match self {
                    $(AchError::$variant { .. } => $code,)+
                }
            }
        }

        /// Every catalogued error with sample placeholders, in code order (for docs and tests).
        pub fn catalogue_samples() -> Vec<AchError> {
            vec![$(AchError::$variant $({ $($field: $sample),+ })?,)+]
        }
    };
}

catalogue! {
    1 => SystemUnable,
    2 => AlreadySubmitted,
    3 => ReferringIdRequired,
    4 => CreditSubmitted,
    5 => AlreadyReversed { reversal_id: "txn_0000000000000000000000".into() },
    6 => ReversalSubmitted,
    7 => DatabaseUnavailable,
    8 => CheckNumberRequired { transaction_type: "BOC".into() },
    9 => StateRequired,
    10 => FailedToAccept,
    11 => InvalidMerchantId { value: "mer_x".into() },
    12 => InvalidRoutingNumber { value: "123456789".into() },
    13 => InvalidAccountNumber { value: "****1234".into() },
    14 => InvalidAmount { value: "abc".into() },
    15 => CreditsLimited,
    16 => RoutingNotFound { value: "011000015".into() },
    17 => DuplicateTransaction,
    18 => DuplicateCheck { check_number: "1001".into() },
    19 => CreditOverMaximum,
    20 => NotAccepted { transaction_type: "TEL".into() },
    21 => MaxAmountExceeded { limit: Money::from_cents(500_000) },
    22 => DailyCountMerchant,
    23 => DailyAmountMerchant { limit: Money::from_cents(1_000_000) },
    24 => DailyCountOverall,
    25 => DailyAmountOverall { limit: Money::from_cents(1_000_000) },
    26 => PeriodCountMerchant,
    27 => PeriodAmountMerchant,
    28 => PeriodCountOverall,
    29 => PeriodAmountOverall,
    30 => MonthlyVolume,
    31 => MonthlyAmount,
    32 => MonthlyAverage,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_one_to_thirty_two_in_order() {
        let codes: Vec<u16> = catalogue_samples().iter().map(AchError::code).collect();
        assert_eq!(codes, (1..=32).collect::<Vec<u16>>());
    }

    #[test]
    fn messages_are_verbatim_with_placeholders_filled() {
        let texts: Vec<String> = catalogue_samples().iter().map(ToString::to_string).collect();
        let expected = [
            "The system is unable to process your transaction at this time",
            "This transaction has already been submitted for processing",
            "Valid Referring ID or approved Credit PIN Required",
            "This credit has been submitted",
            "The original transaction has already been reversed with transaction ID txn_0000000000000000000000",
            "The reversal for transaction has been submitted",
            "The database is currently unavailable",
            "Check Number Required For BOC Transactions",
            "State Required For POP Transactions",
            "Failed to accept this transaction",
            "'mer_x' is an invalid Merchant ID",
            "'123456789' is an invalid Routing Number",
            "'****1234' is an invalid Account Number",
            "'abc' is an invalid Amount",
            "Credits are limited to 50,000,000 USD",
            "Routing Number '011000015' was not found",
            "This is a duplicate transaction",
            "Duplicate transaction for this check. Check number: 1001",
            "Credit amount is over the maximum",
            "Unable to accept TEL transactions for this merchant",
            "Exceeded maximum dollar amount ($5,000.00) for this merchant.",
            "You have exceeded the allowed max daily num checks for this merchant",
            "You have exceeded your allowed max dollar amount for this merchant of $10,000.00",
            "You have exceeded the allowed max daily num checks overall",
            "You have exceeded your allowed max dollar amount overall of $10,000.00",
            "You have exceeded the maximum number of checks for this merchant this period",
            "You have exceeded the maximum dollar amount for this merchant this period",
            "You have exceeded the maximum number of checks overall this period",
            "You have exceeded the maximum dollar amount overall this period",
            "You have exceeded your monthly transaction volume",
            "You have exceeded your monthly dollar amount cap",
            "This transaction brings your monthly dollar amount over the maximum average amount allowed",
        ];
        assert_eq!(texts, expected);
    }

    #[test]
    fn every_error_has_type_e_and_a_status_by_category() {
        for e in catalogue_samples() {
            assert_eq!(e.error_type(), "E");
            let status = e.http_status();
            assert!([401, 403, 404, 409, 422, 503].contains(&status), "{e:?} -> {status}");
        }
        assert_eq!(AchError::FailedToAccept.http_status(), 422);
        assert_eq!(AchError::DuplicateTransaction.http_status(), 409);
        assert_eq!(AchError::MonthlyAverage.http_status(), 403);
        assert_eq!(AchError::DatabaseUnavailable.http_status(), 503);
        assert_eq!(AchError::ReversalSubmitted.http_status(), 409);
    }
}
