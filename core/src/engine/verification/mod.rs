//! Account validation (Nacha Rules 2.5.17.4): an account is validated per
//! partner, by a prenote that passed, by micro-entries its holder confirmed,
//! or by an outside service the partner names; a WEB debit to an account not
//! validated for its partner is refused (unless it carries an outside
//! validation, or its merchant validates accounts itself under its bank
//! agreement). A return that shows the account closed or unusable (R02, R03,
//! R04, R20), or a notification of change to it, ends its validation.

pub(crate) mod confirm;
pub(crate) mod create;
pub(crate) mod record;
pub(crate) mod web_debit;
