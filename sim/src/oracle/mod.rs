//! The oracle, the reference model: a plain in-memory picture of what the engine should hold
//! (partners, merchants, customers, transactions and their states, both feeds,
//! limits, idempotency keys) and the answer each step should get.
//!
//! It is written from `docs/decisions.md`, not from the engine's code: usage is a
//! scan of the transactions (the engine keeps counters), duplicates are a scan
//! (the engine keeps fingerprints), dates come from `crate::calendar` (the
//! engine's own calendar is not used), and catch-up is a loop over every
//! transaction. Ids are the engine's (learnt from its answers); nothing the model
//! decides depends on their text except the order of changes that happen at the
//! same instant, which the engine breaks by id.

use std::collections::HashMap;

use ach_core::engine::{Outcome, Progress, Refusal};
use ach_core::lifecycle::State;
use ach_core::limits::Limits;
use ach_core::model::{Status, StatusChange};
use ach_core::Money;
use chrono::{DateTime, NaiveDate, Utc};

use crate::calendar;

mod expect;
mod request;

pub use expect::{account_ok, mask, routing_ok};
pub use request::{Account, AmountSpec, AppSpec, CustomerSpec, MerchantRef, Target, TxnSpec};

/// An index into one of the model's lists.
pub type Ix = usize;

/// The classes the service knows.
pub const CLASSES: [&str; 7] = ["PPD", "WEB", "CCD", "TEL", "BOC", "POP", "ICL"];

/// Whether a class reads `check_number` (the check classes); the others ignore it,
/// so their check numbers are neither validated nor spent.
pub fn uses_check(class: &str) -> bool {
    matches!(class, "BOC" | "POP" | "ICL")
}

/// Routing numbers of the embedded directory.
pub const KNOWN_ROUTING: [&str; 4] = ["021000021", "026009593", "071000013", "121000248"];
/// Routing numbers with a valid check digit that are not in the directory (message 16).
pub const UNKNOWN_ROUTING: [&str; 2] = ["021000034", "053000028"];
/// Routing numbers with a wrong check digit (message 12).
pub const BAD_ROUTING: [&str; 2] = ["021000022", "12345678"];

/// NACHA return codes the workload uses, with their titles (the feeds' `reason`).
pub const RETURN_CODES: [(&str, &str); 4] = [
    ("R01", "Insufficient Funds"),
    ("R02", "Account Closed"),
    ("R03", "No Account/Unable to Locate Account"),
    ("R08", "Payment Stopped"),
];

/// How long a similar transaction is a duplicate (message 17).
pub const DUPLICATE_WINDOW_HOURS: i64 = 24;

/// What an idempotency key remembers.
#[derive(Debug, Clone)]
pub struct Remembered {
    /// The request, as the model describes it.
    pub request: String,
    /// The first answer.
    pub answer: Result<Outcome, Refusal>,
}

/// A partner.
#[derive(Debug, Clone)]
pub struct Partner {
    /// Engine id.
    pub id: String,
    /// API key.
    pub key: String,
    /// Overall limits.
    pub limits: Limits,
    /// Its status-changes feed.
    pub feed: Vec<TxnChange>,
    /// The same, as the engine shows it.
    pub shown: Vec<StatusChange>,
    /// Its idempotency keys.
    pub idem: HashMap<String, Remembered>,
}

/// A merchant.
#[derive(Debug, Clone)]
pub struct Merchant {
    /// Engine id.
    pub id: String,
    /// Owner.
    pub partner: Ix,
    /// Approved (else in underwriting).
    pub approved: bool,
    /// Enabled classes.
    pub classes: Vec<String>,
    /// Declines similar transactions within the window.
    pub decline_duplicates: bool,
    /// Limits in force.
    pub limits: Limits,
    /// Its API key, if the approval's answer was seen.
    pub key: Option<String>,
    /// Its events feed (the status changes of its transactions).
    pub events: Vec<StatusChange>,
}

/// A stored customer.
#[derive(Debug, Clone)]
pub struct Customer {
    /// Engine id.
    pub id: String,
    /// Owner.
    pub partner: Ix,
    /// `None`: global; else the merchant.
    pub scope: Option<Ix>,
    /// The account.
    pub account: Account,
    /// When it was deleted.
    pub deleted_at: Option<DateTime<Utc>>,
}

/// A transaction.
#[derive(Debug, Clone)]
pub struct Txn {
    /// Engine id.
    pub id: String,
    /// Owner.
    pub partner: Ix,
    /// Merchant.
    pub merchant: Ix,
    /// Cents.
    pub amount: i64,
    /// Credit (else debit).
    pub credit: bool,
    /// Class.
    pub class: String,
    /// The receiver's account.
    pub routing: String,
    /// The receiver's account number.
    pub number: String,
    /// Check number.
    pub check: Option<String>,
    /// State.
    pub state: State,
    /// Created.
    pub created_at: DateTime<Utc>,
    /// The cut-off it waits for.
    pub cutoff: DateTime<Utc>,
    /// Its dates and return.
    pub dates: Dates,
    /// When it settles.
    pub settles_at: Option<DateTime<Utc>>,
    /// The original, for a reversal.
    pub reversal_of: Option<Ix>,
    /// The latest reversal, for an original.
    pub reversed_by: Option<Ix>,
}

/// A transaction's dates and return, as the feeds show them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dates {
    /// Origination date, once originated.
    pub origination: Option<NaiveDate>,
    /// Effective date.
    pub effective: Option<NaiveDate>,
    /// Settlement date.
    pub settlement: Option<NaiveDate>,
    /// Return date.
    pub return_date: Option<NaiveDate>,
    /// Return code.
    pub return_code: Option<String>,
}

/// One status change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxnChange {
    /// The transaction.
    pub txn: Ix,
    /// When.
    pub at: DateTime<Utc>,
    /// New status.
    pub status: Status,
    /// Dates and return, as the transaction had them.
    pub dates: Dates,
    /// Reason.
    pub reason: Option<String>,
}

/// The answer the model expects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect {
    /// Success.
    Ok,
    /// `Authentication failed.`
    Auth,
    /// A refusal: envelope message and HTTP status.
    No(String, u16),
    /// A replayed idempotent answer, exactly.
    Replay(Box<Result<Outcome, Refusal>>),
}

/// Message 10, the general refusal.
pub const FAILED: &str = "Failed to accept this transaction";

/// `$1,234.56`.
pub fn dollars(cents: i64) -> String {
    let whole = (cents / 100).to_string();
    let mut out = String::from("$");
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    format!("{out}.{:02}", cents % 100)
}

/// `1234.56`.
pub fn decimal(cents: i64) -> String {
    format!("{}.{:02}", cents / 100, cents % 100)
}

/// The oracle: the reference model of the whole world.
#[derive(Debug, Clone)]
pub struct Oracle {
    /// The clock.
    pub now: DateTime<Utc>,
    /// Partners.
    pub partners: Vec<Partner>,
    /// Merchants.
    pub merchants: Vec<Merchant>,
    /// Customers.
    pub customers: Vec<Customer>,
    /// Transactions.
    pub txns: Vec<Txn>,
}

impl Oracle {
    /// An empty world at `now`.
    pub fn new(now: DateTime<Utc>) -> Oracle {
        Oracle { now, partners: Vec::new(), merchants: Vec::new(), customers: Vec::new(), txns: Vec::new() }
    }

    /// The limits a merchant gets from its application (before the approval's
    /// overrides): per transaction as declared, the month at three times the
    /// declared count, dollars and average, the average judged from max(10, half
    /// the declared monthly count) transactions on.
    pub fn velocity_limits(app: &AppSpec) -> Limits {
        let monthly = app.checks_per_year.div_ceil(12).max(1);
        Limits {
            max_transaction_amount: Some(Money::from_cents(app.highest)),
            min_transaction_amount: app.lowest.filter(|l| *l > 0).map(Money::from_cents),
            period_days: Some(7),
            monthly_count: Some(monthly * 3),
            monthly_amount: Some(Money::from_cents(monthly as i64 * app.average * 3)),
            monthly_average_amount: Some(Money::from_cents(app.average * 3)),
            monthly_average_min_count: Some(monthly.div_ceil(2).max(10)),
            ..Limits::default()
        }
    }

    /// A change reporting `t` as it is now, at `at`.
    fn change(&self, t: Ix, at: DateTime<Utc>) -> TxnChange {
        let x = &self.txns[t];
        let status = match x.state {
            State::Pending => Status::A,
            State::Originated => Status::B,
            State::Settled => Status::S,
            State::Returned | State::Voided => Status::R,
        };
        let reason = match x.state {
            State::Voided => Some("Voided".to_owned()),
            State::Returned => RETURN_CODES
                .iter()
                .find(|(c, _)| Some(*c) == x.dates.return_code.as_deref())
                .map(|(_, r)| (*r).to_owned()),
            _ => None,
        };
        TxnChange { txn: t, at, status, dates: x.dates.clone(), reason }
    }

    /// Report `t`'s current state in its partner's feed.
    pub fn report(&mut self, t: Ix, at: DateTime<Utc>) {
        let c = self.change(t, at);
        let shown = self.feed_entry(&c);
        let (p, m) = (self.txns[t].partner, self.txns[t].merchant);
        self.partners[p].feed.push(c);
        self.partners[p].shown.push(shown.clone());
        self.merchants[m].events.push(shown);
    }

    /// A new Pending transaction, now.
    #[allow(clippy::too_many_arguments)]
    pub fn add_txn(
        &mut self,
        id: String,
        partner: Ix,
        merchant: Ix,
        spec_amount: i64,
        credit: bool,
        class: String,
        routing: String,
        number: String,
        check: Option<String>,
        reversal_of: Option<Ix>,
    ) -> Ix {
        let (_, cutoff) = calendar::cutoff_after(self.now);
        self.txns.push(Txn {
            id,
            partner,
            merchant,
            amount: spec_amount,
            credit,
            class,
            routing,
            number,
            check,
            state: State::Pending,
            created_at: self.now,
            cutoff,
            dates: Dates::default(),
            settles_at: None,
            reversal_of,
            reversed_by: None,
        });
        let t = self.txns.len() - 1;
        self.report(t, self.now);
        t
    }

    /// The account a valid request of `partner` pays: inline, or the token's.
    pub fn account_of(&self, spec: &TxnSpec) -> (String, String) {
        match &spec.customer {
            CustomerSpec::Inline(a) => (a.routing.clone(), a.number.clone()),
            CustomerSpec::Token(Target::Known(c)) => {
                (self.customers[*c].account.routing.clone(), self.customers[*c].account.number.clone())
            }
            CustomerSpec::Token(Target::Unknown(_)) => (String::new(), String::new()),
        }
    }

    /// Void `t` now.
    pub fn void(&mut self, t: Ix) {
        self.txns[t].state = State::Voided;
        self.report(t, self.now);
    }

    /// Reverse `t` now with the engine's reversal id.
    pub fn reverse(&mut self, t: Ix, reversal_id: String) -> Ix {
        let o = self.txns[t].clone();
        let r = self.add_txn(
            reversal_id,
            o.partner,
            o.merchant,
            o.amount,
            !o.credit,
            o.class,
            o.routing,
            o.number,
            None,
            Some(t),
        );
        self.txns[t].reversed_by = Some(r);
        r
    }

    /// Return `t` now.
    pub fn return_(&mut self, t: Ix, code: &str, date: Option<NaiveDate>) {
        let today = calendar::eastern_date(self.now);
        let x = &mut self.txns[t];
        x.state = State::Returned;
        x.dates.return_code = Some(code.to_owned());
        x.dates.return_date = Some(date.unwrap_or(today));
        x.settles_at = None;
        self.report(t, self.now);
    }

    /// Run every cut-off and settlement due by `to`, in time order (ties: cut-offs
    /// first, then by transaction id), and move the clock there.
    pub fn advance(&mut self, to: DateTime<Utc>) -> Progress {
        let mut progress = Progress::default();
        loop {
            let next = self
                .txns
                .iter()
                .enumerate()
                .filter_map(|(i, t)| match t.state {
                    State::Pending if t.cutoff <= to => Some((t.cutoff, 0, t.id.clone(), i)),
                    State::Originated => t.settles_at.filter(|s| *s <= to).map(|s| (s, 1, t.id.clone(), i)),
                    _ => None,
                })
                .min();
            let Some((at, kind, _, t)) = next else { break };
            if kind == 0 {
                let day = calendar::eastern_date(at);
                let effective = calendar::next_banking_day(day);
                let x = &mut self.txns[t];
                let settlement = if x.credit { effective } else { calendar::add_banking_days(effective, 2) };
                x.state = State::Originated;
                x.dates.origination = Some(day);
                x.dates.effective = Some(effective);
                x.dates.settlement = Some(settlement);
                x.settles_at = Some(calendar::settlement_instant(settlement));
                progress.originated += 1;
            } else {
                self.txns[t].state = State::Settled;
                progress.settled += 1;
            }
            self.report(t, at);
        }
        self.now = self.now.max(to);
        progress
    }

    /// A change as the feeds show it.
    pub fn feed_entry(&self, c: &TxnChange) -> StatusChange {
        StatusChange {
            transaction_id: self.txns[c.txn].id.clone(),
            change_timestamp: calendar::timestamp(c.at),
            origination_date: c.dates.origination.map(calendar::day),
            effective_date: c.dates.effective.map(calendar::day),
            settlement_date: c.dates.settlement.map(calendar::day),
            return_date: c.dates.return_date.map(calendar::day),
            return_code: c.dates.return_code.clone(),
            status: c.status,
            reason: c.reason.clone(),
        }
    }
}
