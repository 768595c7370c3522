//! Successes change the model; refusals that involved another partner's id are
//! compared with the same request naming an id that was never issued.

use std::collections::HashMap;

use ach_core::engine::{Caller, Outcome, Progress, Refusal};
use ach_core::limits::Limits;
use chrono::{DateTime, Utc};

use super::{storage_failure, FeedReader, Sim};
use crate::oracle::{
    Account, AmountSpec, AppSpec, Customer, CustomerSpec, Ix, Merchant, MerchantRef, Oracle, Partner, Target,
    TxnSpec,
};
use crate::workload::{self, Step};

impl Sim {
    /// Apply a success to the model (checking the outcome is the right kind):
    /// one step per kind of success.
    pub(super) fn apply(&mut self, step: &Step, outcome: &Outcome) -> Result<(), String> {
        let wrong = || format!("unexpected outcome {outcome:?}");
        match (step, outcome) {
            (Step::Keyed { step, .. }, _) | (Step::Drift { then: step, .. }, _) => self.apply(step, outcome),
            (Step::CreatePartner { .. }, Outcome::PartnerCreated { partner_id, api_key }) => {
                self.apply_partner(partner_id, api_key)
            }
            (
                Step::PartnerLimits { partner: Target::Known(p), limits },
                Outcome::LimitsSet { limits: got, .. },
            ) => update_limits("partner", &mut self.oracle.partners[*p].limits, limits, got),
            (Step::Submit { partner, app, .. }, Outcome::MerchantSubmitted { merchant_id }) => {
                self.apply_submission(*partner, app, merchant_id);
                Ok(())
            }
            (
                Step::Approve { merchant: Target::Known(m), limits },
                Outcome::MerchantApproved { api_key, limits: got, .. },
            ) => self.apply_approval(*m, limits, got, api_key),
            (
                Step::MerchantLimits { merchant: Target::Known(m), limits },
                Outcome::LimitsSet { limits: got, .. },
            ) => update_limits("merchant", &mut self.oracle.merchants[*m].limits, limits, got),
            (
                Step::CreateCustomer { partner, scope, account, .. },
                Outcome::CustomerCreated { customer_id },
            ) => {
                self.apply_customer(*partner, scope.as_ref(), account, customer_id);
                Ok(())
            }
            (Step::DeleteCustomer { customer: Target::Known(c), .. }, Outcome::CustomerDeleted { .. }) => {
                self.oracle.customers[*c].deleted_at = Some(self.oracle.now);
                Ok(())
            }
            (Step::CreateTxn { partner, spec, .. }, Outcome::TransactionCreated { transaction_id }) => {
                self.apply_transaction(*partner, spec, transaction_id).ok_or_else(wrong)
            }
            (Step::Void { txn: Target::Known(t), .. }, Outcome::TransactionVoided { .. }) => {
                self.oracle.void(*t);
                Ok(())
            }
            (
                Step::Reverse { txn: Target::Known(t), .. },
                Outcome::TransactionReversed { reversal_id, .. },
            ) => {
                let n = self.oracle.reverse(*t, reversal_id.clone());
                self.label(reversal_id, 'T', n);
                Ok(())
            }
            (Step::Return { txn: Target::Known(t), code, date }, Outcome::ReturnRecorded { .. }) => {
                self.oracle.return_(*t, code, *date);
                Ok(())
            }
            (Step::SetClock { to }, Outcome::ClockSet { now, progress }) => {
                self.apply_clock(*to, *now, progress)
            }
            _ => Err(wrong()),
        }
    }

    /// The clock set: the engine must have moved to `to` doing what the oracle
    /// does moving there.
    fn apply_clock(
        &mut self,
        to: DateTime<Utc>,
        now: DateTime<Utc>,
        progress: &Progress,
    ) -> Result<(), String> {
        let want = self.oracle.advance(to);
        if now != to || *progress != want {
            return Err(format!(
                "the clock moved to {now} doing {progress:?}; the model {to} doing {want:?}"
            ));
        }
        Ok(())
    }

    /// A partner created: its key must authenticate it; the oracle and the
    /// readers gain it.
    fn apply_partner(&mut self, partner_id: &str, api_key: &str) -> Result<(), String> {
        let caller = self.engine().authenticate(api_key).map_err(|f| format!("new key: {f:?}"))?;
        if caller != (Caller::Partner { partner_id: partner_id.to_owned() }) {
            return Err(format!("the new key authenticates {caller:?}"));
        }
        let n = self.oracle.partners.len();
        self.label(partner_id, 'P', n);
        self.oracle.partners.push(Partner {
            id: partner_id.to_owned(),
            key: api_key.to_owned(),
            limits: Limits::default(),
            feed: Vec::new(),
            shown: Vec::new(),
            idem: HashMap::new(),
        });
        self.readers.push(FeedReader { pointer: "0".into(), seen: Vec::new() });
        Ok(())
    }

    /// A merchant submitted: the oracle gains it, in underwriting, with the
    /// limits its application asks for.
    fn apply_submission(&mut self, partner: Ix, app: &AppSpec, merchant_id: &str) {
        let n = self.oracle.merchants.len();
        self.label(merchant_id, 'M', n);
        self.oracle.merchants.push(Merchant {
            id: merchant_id.to_owned(),
            partner,
            approved: false,
            classes: app.classes.clone(),
            decline_duplicates: app.decline_duplicates,
            limits: Oracle::velocity_limits(app),
            key: None,
            events: Vec::new(),
        });
    }

    /// A merchant approved: its limits as the oracle merges them, and its new key
    /// must authenticate it; its events reader starts.
    fn apply_approval(&mut self, m: Ix, limits: &Limits, got: &Limits, api_key: &str) -> Result<(), String> {
        let merchant = &mut self.oracle.merchants[m];
        update_limits("merchant", &mut merchant.limits, limits, got)?;
        merchant.approved = true;
        merchant.key = Some(api_key.to_owned());
        let caller = self.engine().authenticate(api_key).map_err(|f| format!("merchant key: {f:?}"))?;
        let merchant = &self.oracle.merchants[m];
        let want = Caller::Merchant {
            partner_id: self.oracle.partners[merchant.partner].id.clone(),
            merchant_id: merchant.id.clone(),
        };
        if caller != want {
            return Err(format!("the merchant key authenticates {caller:?}"));
        }
        self.event_readers.insert(m, FeedReader { pointer: String::new(), seen: Vec::new() });
        Ok(())
    }

    /// A customer stored: the oracle gains it (scoped to a merchant if one of
    /// the oracle's was named).
    fn apply_customer(&mut self, partner: Ix, scope: Option<&Target>, account: &Account, customer_id: &str) {
        let n = self.oracle.customers.len();
        self.label(customer_id, 'C', n);
        let scope = match scope {
            Some(Target::Known(m)) => Some(*m),
            _ => None,
        };
        self.oracle.customers.push(Customer {
            id: customer_id.to_owned(),
            partner,
            scope,
            account: account.clone(),
            deleted_at: None,
        });
    }

    /// A transaction created: the oracle gains it. `None` if the request could
    /// not have succeeded (an unknown merchant, an invalid amount).
    fn apply_transaction(&mut self, partner: Ix, spec: &TxnSpec, transaction_id: &str) -> Option<()> {
        let MerchantRef::Known(m) = spec.merchant else { return None };
        let AmountSpec::Cents { cents, .. } = spec.amount else { return None };
        let (routing, number) = self.oracle.account_of(spec);
        let n = self.oracle.add_txn(
            transaction_id.to_owned(),
            partner,
            m,
            cents,
            spec.credit,
            spec.class.clone(),
            routing,
            number,
            spec.check.clone().filter(|_| crate::oracle::uses_check(&spec.class)),
            None,
        );
        self.label(transaction_id, 'T', n);
        Some(())
    }

    /// After a refusal that involved another partner's id, the same request with
    /// an id that was never issued must get the same answer (ids aside).
    pub(super) fn twin(&mut self, step: &Step, got: &Result<Outcome, Refusal>) -> Result<(), String> {
        let m = &self.oracle;
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
                (_, CustomerSpec::Token(Target::Known(i))) if m.customers[*i].partner != partner => {
                    let id = m.customers[*i].id.clone();
                    let unknown = self.work.unknown("cus");
                    spec.customer = CustomerSpec::Token(Target::Unknown(unknown.clone()));
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
        let (c, op) = workload::operation(&self.oracle, &twin);
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

/// A `whose` (partner or merchant)'s limits after `update`: `limits` merged with
/// it, which must be what the engine answered (`got`); on a mismatch `limits`
/// stays as it was.
fn update_limits(whose: &str, limits: &mut Limits, update: &Limits, got: &Limits) -> Result<(), String> {
    let l = merged(limits, update);
    if *got != l {
        return Err(format!("{whose} limits now {got:?}, the model {l:?}"));
    }
    *limits = l;
    Ok(())
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
