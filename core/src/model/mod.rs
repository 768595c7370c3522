//! Domain types with serde names exactly as in the spec.
//!
//! Requests are *validated* from raw JSON by [`crate::validation`], which produces
//! these types; they also (de)serialize directly for hosts that build them in code.

mod account_validation;
mod customer;
mod feed;
mod merchant;
mod operator;
mod purpose;
mod risk;
mod transaction;
mod views;

pub use account_validation::{
    Confirmation, NewValidation, OutsideValidation, ValidationMethod, ValidationStatus, ValidationView,
};
pub use customer::{AccountType, BankAccount, CustomerScope, NewCustomer};
pub use feed::{Event, NoticeOfChange, ReviewNotice, Status, StatusChange};
pub use merchant::*;
pub use operator::{DailyVolume, PartnerPage, PartnerView, Volume, MAX_VOLUME_DAYS};
pub use purpose::Purpose;
pub use risk::{
    AmountOutlier, ChangedAccountCredit, Exposure, ExposureRule, NewAccountCredit, Review, ReviewStatus,
    RiskReport, RiskRules, RiskRulesUpdate, Rule, RuleReport, Velocity, MAX_VELOCITY,
};
pub use transaction::{CustomerRef, Direction, EntryClass, NewTransaction};
pub use views::{
    CustomerPart, CustomerView, Links, MerchantPage, MerchantState, MerchantView, PageRequest, ReturnPart,
    TransactionFilter, TransactionPage, TransactionView, DEFAULT_PAGE, MAX_PAGE,
};
