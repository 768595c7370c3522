//! Successes change the model; refusals that involved another partner's id are
//! compared with the same request naming an id that was never issued.

use std::collections::HashMap;

use ach_core::engine::{Caller, Outcome, Refusal};
use ach_core::limits::Limits;

use super::{storage_failure, Reader, Sim};
use crate::model::{Customer, CustomerRef, Merchant, MerchantRef, Model, Partner, Target};
use crate::workload::{self, Step};

impl Sim {
    /// Apply a success to the model (checking the outcome is the right kind).
    pub(super) fn apply(&mut self, step: &Step, outcome: &Outcome) -> Result<(), String> {
        let wrong = || format!("unexpected outcome {outcome:?}");
        let now = self.model.now;
        match (step, outcome) {
            (Step::Keyed { step, .. }, _) | (Step::Drift { then: step, .. }, _) => {
                return self.apply(step, outcome)
            }
            (Step::CreatePartner { .. }, Outcome::PartnerCreated { partner_id, api_key }) => {
                let caller = self.engine().authenticate(api_key).map_err(|f| format!("new key: {f:?}"))?;
                if caller != (Caller::Partner { partner_id: partner_id.clone() }) {
                    return Err(format!("the new key authenticates {caller:?}"));
                }
                let n = self.model.partners.len();
                self.label(partner_id, 'P', n);
                self.model.partners.push(Partner {
                    id: partner_id.clone(),
                    key: api_key.clone(),
                    limits: Limits::default(),
                    feed: Vec::new(),
                    shown: Vec::new(),
                    idem: HashMap::new(),
                });
                self.readers.push(Reader { pointer: "0".into(), seen: Vec::new() });
            }
            (
                Step::PartnerLimits { partner: Target::Known(p), limits },
                Outcome::LimitsSet { limits: got, .. },
            ) => {
                let l = merged(&self.model.partners[*p].limits, limits);
                if *got != l {
                    return Err(format!("partner limits now {got:?}, the model {l:?}"));
                }
                self.model.partners[*p].limits = l;
            }
            (Step::Submit { partner, app, .. }, Outcome::MerchantSubmitted { merchant_id }) => {
                let n = self.model.merchants.len();
                self.label(merchant_id, 'M', n);
                self.model.merchants.push(Merchant {
                    id: merchant_id.clone(),
                    partner: *partner,
                    approved: false,
                    classes: app.classes.clone(),
                    decline_duplicates: app.decline_duplicates,
                    limits: Model::velocity_limits(app),
                    key: None,
                    events: Vec::new(),
                });
            }
            (
                Step::Approve { merchant: Target::Known(m), limits },
                Outcome::MerchantApproved { api_key, limits: got, .. },
            ) => {
                let l = merged(&self.model.merchants[*m].limits, limits);
                if *got != l {
                    return Err(format!("merchant limits now {got:?}, the model {l:?}"));
                }
                let merchant = &mut self.model.merchants[*m];
                merchant.limits = l;
                merchant.approved = true;
                merchant.key = Some(api_key.clone());
                let caller =
                    self.engine().authenticate(api_key).map_err(|f| format!("merchant key: {f:?}"))?;
                let merchant = &self.model.merchants[*m];
                let want = Caller::Merchant {
                    partner_id: self.model.partners[merchant.partner].id.clone(),
                    merchant_id: merchant.id.clone(),
                };
                if caller != want {
                    return Err(format!("the merchant key authenticates {caller:?}"));
                }
                self.event_readers.insert(*m, Reader { pointer: String::new(), seen: Vec::new() });
            }
            (
                Step::MerchantLimits { merchant: Target::Known(m), limits },
                Outcome::LimitsSet { limits: got, .. },
            ) => {
                let l = merged(&self.model.merchants[*m].limits, limits);
                if *got != l {
                    return Err(format!("merchant limits now {got:?}, the model {l:?}"));
                }
                self.model.merchants[*m].limits = l;
            }
            (
                Step::CreateCustomer { partner, scope, account, .. },
                Outcome::CustomerCreated { customer_id },
            ) => {
                let n = self.model.customers.len();
                self.label(customer_id, 'C', n);
                let scope = match scope {
                    Some(Target::Known(m)) => Some(*m),
                    _ => None,
                };
                self.model.customers.push(Customer {
                    id: customer_id.clone(),
                    partner: *partner,
                    scope,
                    account: account.clone(),
                    deleted_at: None,
                });
            }
            (Step::DeleteCustomer { customer: Target::Known(c), .. }, Outcome::CustomerDeleted { .. }) => {
                self.model.customers[*c].deleted_at = Some(now);
            }
            (Step::CreateTxn { partner, spec, .. }, Outcome::TransactionCreated { transaction_id }) => {
                let MerchantRef::Known(m) = spec.merchant else { return Err(wrong()) };
                let crate::model::AmountSpec::Cents { cents, .. } = spec.amount else { return Err(wrong()) };
                let (routing, number) = self.model.account_of(spec);
                let n = self.model.add_txn(
                    transaction_id.clone(),
                    *partner,
                    m,
                    cents,
                    spec.credit,
                    spec.class.clone(),
                    routing,
                    number,
                    spec.check.clone().filter(|_| crate::model::uses_check(&spec.class)),
                    None,
                );
                self.label(transaction_id, 'T', n);
            }
            (Step::Void { txn: Target::Known(t), .. }, Outcome::TransactionVoided { .. }) => {
                self.model.void(*t)
            }
            (
                Step::Reverse { txn: Target::Known(t), .. },
                Outcome::TransactionReversed { reversal_id, .. },
            ) => {
                let n = self.model.reverse(*t, reversal_id.clone());
                self.label(reversal_id, 'T', n);
            }
            (Step::Return { txn: Target::Known(t), code, date }, Outcome::ReturnRecorded { .. }) => {
                self.model.return_(*t, code, *date);
            }
            (Step::SetClock { to }, Outcome::ClockSet { now, progress }) => {
                let want = self.model.advance(*to);
                if now != to || *progress != want {
                    return Err(format!(
                        "the clock moved to {now} doing {progress:?}; the model {to} doing {want:?}"
                    ));
                }
            }
            _ => return Err(wrong()),
        }
        Ok(())
    }

    /// After a refusal that involved another partner's id, the same request with
    /// an id that was never issued must get the same answer (ids aside).
    pub(super) fn twin(&mut self, step: &Step, got: &Result<Outcome, Refusal>) -> Result<(), String> {
        let m = &self.model;
        let Some((caller, partner)) = step.parties() else { return Ok(()) };
        if caller != partner {
            return Ok(());
        }
        let foreign_txn = |t: &Target| matches!(t, Target::Known(i) if m.txns[*i].partner != partner);
        let mut twin = step.clone();
        let (foreign, unknown) = match &mut twin {
            Step::Void { txn, .. } | Step::Reverse { txn, .. } if foreign_txn(txn) => {
                let Target::Known(i) = txn else { return Ok(()) };
                let id = m.txns[*i].id.clone();
                let unknown = self.work.unknown("txn");
                *txn = Target::Unknown(unknown.clone());
                (id, unknown)
            }
            Step::DeleteCustomer { customer: c @ Target::Known(_), .. } => {
                let Target::Known(i) = c else { return Ok(()) };
                if m.customers[*i].partner == partner {
                    return Ok(());
                }
                let id = m.customers[*i].id.clone();
                let unknown = self.work.unknown("cus");
                *c = Target::Unknown(unknown.clone());
                (id, unknown)
            }
            Step::CreateTxn { spec, .. } => match (&spec.merchant, &spec.customer) {
                (MerchantRef::Known(i), _) if m.merchants[*i].partner != partner => {
                    let id = m.merchants[*i].id.clone();
                    let unknown = self.work.unknown("mer");
                    spec.merchant = MerchantRef::Unknown(unknown.clone());
                    (id, unknown)
                }
                (_, CustomerRef::Token(Target::Known(i))) if m.customers[*i].partner != partner => {
                    let id = m.customers[*i].id.clone();
                    let unknown = self.work.unknown("cus");
                    spec.customer = CustomerRef::Token(Target::Unknown(unknown.clone()));
                    (id, unknown)
                }
                _ => return Ok(()),
            },
            Step::CreateCustomer { scope, .. } => match scope {
                Some(Target::Known(i)) if m.merchants[*i].partner != partner => {
                    let id = m.merchants[*i].id.clone();
                    let unknown = self.work.unknown("mer");
                    *scope = Some(Target::Unknown(unknown.clone()));
                    (id, unknown)
                }
                _ => return Ok(()),
            },
            _ => return Ok(()),
        };
        let (c, op) = workload::operation(&self.model, &twin);
        let answer = self.engine().execute(&c, op);
        if storage_failure(&answer) && self.crashed() {
            // The twin is a refusal: a crash during it is settled like one.
            let expect = self.expect(&twin);
            return self.recover(&twin, &expect);
        }
        let plain = |r: &Result<Outcome, Refusal>, id: &str| format!("{r:?}").replace(id, "<id>");
        if plain(got, &foreign) != plain(&answer, &unknown) {
            return Err(format!(
                "another partner's id {foreign} answered {got:?}, an unknown id {unknown} answered {answer:?}"
            ));
        }
        self.count("tenancy_probe", false);
        Ok(())
    }
}

/// `base` with every field `update` sets replacing its own.
pub(super) fn merged(base: &Limits, update: &Limits) -> Limits {
    let mut l = base.clone();
    macro_rules! set {
        ($($f:ident),*) => { $( if update.$f.is_some() { l.$f = update.$f; } )* };
    }
    set!(
        max_transaction_amount,
        min_transaction_amount,
        max_credit_amount,
        daily_count,
        daily_amount,
        period_days,
        period_count,
        period_amount,
        monthly_count,
        monthly_amount,
        monthly_average_amount,
        monthly_average_min_count
    );
    l
}
