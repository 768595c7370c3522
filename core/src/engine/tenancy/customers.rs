//! Customers: bank accounts stored under a `cus_` token, sealed at rest.

use base64::Engine as _;

use crate::echo::echo;
use crate::engine::rows::records::{CustomerRecord, SealedAccount};
use crate::engine::tenancy::tenant_lookup;
use crate::engine::{Engine, Outcome, Refusal, Stop, WriteContext};
use crate::ids::{self, IdKind};
use crate::model::{BankAccount, CustomerScope, NewCustomer};
use crate::secrets::{Fingerprinter, SecretError};
use crate::storage::Table;
use crate::validation::ProblemCode;
use crate::AchError;

/// Seal an account for storage, bound (associated data) to the record `bound_to`,
/// with its [`account_fingerprint`] (computed when the operation was prepared).
pub(crate) fn seal(
    cx: &WriteContext<'_, '_>,
    account: &BankAccount,
    bound_to: &str,
    fingerprint: String,
) -> SealedAccount {
    let plain = [account.account_number.as_bytes(), b"\n", account.name.as_bytes()].concat();
    let sealed = cx.engine.cipher.encrypt(&plain, bound_to.as_bytes());
    let n = account.account_number.chars().count();
    SealedAccount {
        name_print: name_print(&cx.engine.fingerprints, &account.name),
        routing_number: account.routing_number.clone(),
        account_sealed: base64::engine::general_purpose::STANDARD.encode(sealed),
        sealed_for: bound_to.to_owned(),
        account_last4: account.account_number.chars().skip(n.saturating_sub(4)).collect(),
        account_type: account.account_type,
        fingerprint,
    }
}

/// The keyed fingerprint of a holder's name, case and spaces ignored, as hex
/// (`changed_account_credit` compares payees by it).
pub(crate) fn name_print(fingerprints: &Fingerprinter, name: &str) -> String {
    let name: String = name.chars().filter(|c| !c.is_whitespace()).flat_map(char::to_lowercase).collect();
    crate::secrets::hex::encode(&fingerprints.digest(&[b"payee-name", name.as_bytes()]))
}

/// The keyed fingerprint of an account (routing + number), as hex.
pub(crate) fn account_fingerprint(fingerprints: &Fingerprinter, account: &BankAccount) -> String {
    let digest = fingerprints.digest(&[
        b"account",
        account.routing_number.as_bytes(),
        account.account_number.as_bytes(),
    ]);
    crate::secrets::hex::encode(&digest)
}

/// Partner: store a customer.
pub(crate) fn create(
    cx: &mut WriteContext<'_, '_>,
    partner_id: &str,
    c: &NewCustomer,
    fingerprint: String,
) -> Result<Outcome, Stop> {
    if let CustomerScope::Merchant(m) = &c.merchant_id {
        tenant_lookup::merchant_of(cx, partner_id, m.as_str())?;
    }
    let id = ids::generate(IdKind::Customer);
    let record = CustomerRecord {
        id: id.clone(),
        partner_id: partner_id.to_owned(),
        scope: c.merchant_id.as_str().to_owned(),
        account: Some(seal(cx, &c.account, &id, fingerprint)),
        created_at: cx.now,
        deleted_at: None,
    };
    cx.write.put(Table::Customers, id.as_bytes(), &record)?;
    Ok(Outcome::CustomerCreated { customer_id: id })
}

fn unknown(field: &str, customer_id: &str) -> Stop {
    Refusal::not_found(field, format!("no customer '{}'", echo(customer_id))).into()
}

/// The partner's customer `customer_id` (another partner's answers as unknown).
fn load(
    cx: &WriteContext<'_, '_>,
    partner_id: &str,
    customer_id: &str,
    field: &str,
) -> Result<CustomerRecord, Stop> {
    let record: Option<CustomerRecord> = cx.write.get(Table::Customers, customer_id.as_bytes())?;
    match record {
        Some(c) if c.partner_id == partner_id => Ok(c),
        _ => Err(unknown(field, customer_id)),
    }
}

/// The partner a customer belongs to (`None`: no such customer).
pub(crate) fn partner_of(
    cx: &WriteContext<'_, '_>,
    customer_id: &str,
) -> Result<Option<String>, crate::storage::StorageError> {
    let record: Option<CustomerRecord> = cx.write.get(Table::Customers, customer_id.as_bytes())?;
    Ok(record.map(|c| c.partner_id))
}

/// The keyed fingerprint of the partner's customer's account as stored now
/// (`None`: no such customer, or deleted).
pub(crate) fn fingerprint_of(
    cx: &WriteContext<'_, '_>,
    partner_id: &str,
    customer_id: &str,
) -> Result<Option<String>, crate::storage::StorageError> {
    let record: Option<CustomerRecord> = cx.write.get(Table::Customers, customer_id.as_bytes())?;
    Ok(record.filter(|c| c.partner_id == partner_id).and_then(|c| c.account).map(|a| a.fingerprint))
}

fn deleted(field: &str, c: &CustomerRecord) -> Stop {
    let when = c.deleted_at.map(|t| crate::calendar::eastern_date(t).to_string()).unwrap_or_default();
    let msg = format!("customer '{}' was deleted on {when}; store the account again", c.id);
    Refusal::problem(AchError::FailedToAccept, field, ProblemCode::InvalidValue, msg).into()
}

/// Partner: delete a customer. Its token is refused from then on; transactions
/// made with it keep their own copy of the account.
pub(crate) fn delete(
    cx: &mut WriteContext<'_, '_>,
    partner_id: &str,
    customer_id: &str,
) -> Result<Outcome, Stop> {
    let mut c = load(cx, partner_id, customer_id, "customer_id")?;
    if c.deleted_at.is_some() {
        return Err(deleted("customer_id", &c));
    }
    c.deleted_at = Some(cx.now);
    c.account = None;
    cx.write.put(Table::Customers, c.id.as_bytes(), &c)?;
    Ok(Outcome::CustomerDeleted { customer_id: c.id })
}

/// The account behind a token, for a transaction of `merchant_id`: the customer
/// must be the partner's, not deleted, and `global` or that merchant's.
pub(crate) fn resolve(
    cx: &WriteContext<'_, '_>,
    partner_id: &str,
    merchant_id: &str,
    customer_id: &str,
) -> Result<SealedAccount, Stop> {
    let field = "customer.id";
    let c = load(cx, partner_id, customer_id, field)?;
    if c.scope != "global" && c.scope != merchant_id {
        return Err(unknown(field, customer_id));
    }
    match (&c.account, c.deleted_at) {
        (Some(account), None) => Ok(account.clone()),
        _ => Err(deleted(field, &c)),
    }
}

impl Engine {
    /// The account number and the holder's name of a stored account, unsealed.
    pub(in crate::engine) fn unseal_account(
        &self,
        account: &SealedAccount,
    ) -> Result<(String, String), SecretError> {
        self.unseal_account_text(&account.account_sealed, &account.sealed_for)
    }

    /// An account number and its holder's name from their sealed form
    /// (base64) and the id it is bound to.
    pub(in crate::engine) fn unseal_account_text(
        &self,
        sealed: &str,
        sealed_for: &str,
    ) -> Result<(String, String), SecretError> {
        use base64::Engine as _;
        let sealed =
            base64::engine::general_purpose::STANDARD.decode(sealed).map_err(|_| SecretError::Decrypt)?;
        let plain = String::from_utf8(self.cipher.decrypt(&sealed, sealed_for.as_bytes())?)
            .map_err(|_| SecretError::Decrypt)?;
        let (number, name) = plain.split_once('\n').ok_or(SecretError::Decrypt)?;
        Ok((number.to_owned(), name.to_owned()))
    }
}
