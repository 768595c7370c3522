//! The answer each request should get, in the engine's documented order of
//! checks (`docs/decisions.md`): validation by rank, then tenancy, state, limits,
//! duplicates and the history-wide windows.

use ach_core::lifecycle::State;
use ach_core::limits::Limits;
use ach_core::Money;
use chrono::{Datelike, Duration, NaiveDate};

use super::{
    decimal, dollars, uses_check, Account, AmountSpec, AppSpec, CustomerSpec, Expect, Ix, MerchantRef,
    Oracle, Target, Txn, TxnSpec, CLASSES, DUPLICATE_WINDOW_HOURS, FAILED, KNOWN_ROUTING, RETURN_CODES,
};
use crate::calendar;

fn no(message: impl Into<String>, status: u16) -> Expect {
    Expect::No(message.into(), status)
}

/// Whether a routing number is well formed (prefix and ABA check digit).
pub fn routing_ok(rn: &str) -> bool {
    let b = rn.as_bytes();
    if b.len() != 9 || !b.iter().all(u8::is_ascii_digit) {
        return false;
    }
    let d: Vec<u32> = b.iter().map(|c| u32::from(c - b'0')).collect();
    let prefix = d[0] * 10 + d[1];
    let sum = 3 * (d[0] + d[3] + d[6]) + 7 * (d[1] + d[4] + d[7]) + d[2] + d[5] + d[8];
    matches!(prefix, 0..=12 | 21..=32 | 61..=72 | 80) && sum.is_multiple_of(10) && d.iter().any(|&x| x != 0)
}

/// Whether an account number is acceptable.
pub fn account_ok(n: &str) -> bool {
    (4..=17).contains(&n.len())
        && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        && n.bytes().any(|b| b.is_ascii_digit())
        && n.bytes().any(|b| b.is_ascii_alphanumeric() && b != b'0')
}

/// An account number as message 13 shows it: all but the last four masked.
pub fn mask(n: &str) -> String {
    let keep = n.len().saturating_sub(4);
    n.chars().enumerate().map(|(i, c)| if i < keep { '*' } else { c }).collect()
}

fn debit_only(class: &str) -> bool {
    matches!(class, "TEL" | "BOC" | "POP" | "ICL")
}

/// The problems of an account as validation finds them: (rank, message, status).
fn account_problems(a: &Account, out: &mut Vec<(u8, String, u16)>) {
    if !routing_ok(&a.routing) {
        out.push((1, format!("'{}' is an invalid Routing Number", a.routing), 422));
    }
    if !account_ok(&a.number) {
        out.push((1, format!("'{}' is an invalid Account Number", mask(&a.number)), 422));
    }
    if routing_ok(&a.routing) && !KNOWN_ROUTING.contains(&a.routing.as_str()) {
        out.push((4, format!("Routing Number '{}' was not found", a.routing), 422));
    }
}

fn first(mut problems: Vec<(u8, String, u16)>) -> Option<Expect> {
    problems.sort_by_key(|p| p.0);
    problems.into_iter().next().map(|(_, m, s)| no(m, s))
}

/// A tally: a count and cents.
#[derive(Debug, Clone, Copy, Default)]
struct UsageTally {
    count: u64,
    amount: i64,
}

/// The request's own problems (validation, by rank: structure, identifiers,
/// amounts, class rules, directory), the first one's answer; else its cents.
fn transaction_problems(spec: &TxnSpec) -> Result<i64, Expect> {
    let mut p: Vec<(u8, String, u16)> = Vec::new();
    if let MerchantRef::Malformed(m) = &spec.merchant {
        p.push((1, format!("'{m}' is an invalid Merchant ID"), 422));
    }
    let cents = match &spec.amount {
        AmountSpec::Cents { cents, .. } => Some(*cents),
        AmountSpec::Bad(text) => {
            p.push((2, format!("'{text}' is an invalid Amount"), 422));
            None
        }
    };
    let class = spec.class.as_str();
    class_problems(spec, &mut p);
    if let CustomerSpec::Inline(a) = &spec.customer {
        account_problems(a, &mut p);
    }
    // After the walk: the credit cap, a credit in a debit-only class, the class cap.
    if cents.is_some_and(|c| spec.credit && c > 5_000_000_000) {
        p.push((2, "Credits are limited to 50,000,000 USD".into(), 422));
    }
    if debit_only(class) && spec.credit {
        p.push((3, format!("Unable to accept {class} credit transactions for this merchant"), 403));
    }
    // The Nacha cap is an amount problem (message 14, the amount as sent), not
    // the merchant's limit.
    if let Some(c) = cents.filter(|c| matches!(class, "BOC" | "POP") && *c > 2_500_000) {
        p.push((2, format!("'{}' is an invalid Amount", decimal(c)), 422));
    }
    match first(p) {
        Some(e) => Err(e),
        None => Ok(cents.unwrap_or_default()),
    }
}

/// The class rules: a known class, and what checks need (number, POP state,
/// both images).
fn class_problems(spec: &TxnSpec, p: &mut Vec<(u8, String, u16)>) {
    let class = spec.class.as_str();
    if !CLASSES.contains(&class) {
        p.push((3, format!("Unable to accept {class} transactions for this merchant"), 403));
    }
    if matches!(class, "BOC" | "POP") && spec.check.is_none() {
        p.push((3, format!("Check Number Required For {class} Transactions"), 422));
    }
    if class == "POP" && spec.state.is_none() {
        p.push((3, "State Required For POP Transactions".into(), 422));
    }
    if matches!(class, "BOC" | "POP" | "ICL") && !spec.images {
        p.push((3, FAILED.into(), 422));
        p.push((3, FAILED.into(), 422));
    }
}

/// The merchant's per-transaction limits `l` on `cents`.
fn per_transaction_limits(l: &Limits, spec: &TxnSpec, cents: i64) -> Result<(), Expect> {
    let cents_of = |x: Option<Money>| x.map(Money::cents);
    if spec.credit && cents_of(l.max_credit_amount) == Some(0) {
        return Err(no("Unable to accept credit transactions for this merchant", 403));
    }
    if cents_of(l.min_transaction_amount).is_some_and(|min| cents < min) {
        return Err(no(format!("'{}' is an invalid Amount", decimal(cents)), 422));
    }
    if let Some(max) = cents_of(l.max_transaction_amount).filter(|max| cents > *max) {
        return Err(no(format!("Exceeded maximum dollar amount ({}) for this merchant.", dollars(max)), 403));
    }
    if spec.credit && cents_of(l.max_credit_amount).is_some_and(|max| cents > max) {
        return Err(no("Credit amount is over the maximum", 403));
    }
    Ok(())
}

impl Oracle {
    /// The answer to submitting `app`.
    pub fn expect_submit(&self, app: &AppSpec) -> Expect {
        // The velocities' amounts rank before the website rule.
        if let Some(low) = app.lowest.filter(|l| *l > app.highest) {
            return no(format!("'{}' is an invalid Amount", decimal(low)), 422);
        }
        if app.no_website && app.classes.iter().any(|c| c == "WEB") {
            return no(FAILED, 422);
        }
        Expect::Ok
    }

    /// The answer to a customer request of `partner`.
    pub fn expect_customer(&self, partner: Ix, scope: &Option<Target>, account: &Account) -> Expect {
        let mut problems = Vec::new();
        account_problems(account, &mut problems);
        if let Some(e) = first(problems) {
            return e;
        }
        match scope {
            None => Expect::Ok,
            Some(Target::Known(m)) if self.merchants[*m].partner == partner => Expect::Ok,
            Some(Target::Known(m)) => {
                no(format!("'{}' is an invalid Merchant ID", self.merchants[*m].id), 422)
            }
            Some(Target::Unknown(id)) => no(format!("'{id}' is an invalid Merchant ID"), 422),
        }
    }

    /// The answer to deleting a customer as `partner`.
    pub fn expect_delete(&self, partner: Ix, customer: &Target) -> Expect {
        match customer {
            Target::Known(c) if self.customers[*c].partner == partner => {
                if self.customers[*c].deleted_at.is_some() {
                    no(FAILED, 422)
                } else {
                    Expect::Ok
                }
            }
            _ => no(FAILED, 404),
        }
    }

    fn txn_of(&self, partner: Option<Ix>, target: &Target) -> Option<Ix> {
        match target {
            Target::Known(t) if partner.is_none_or(|p| self.txns[*t].partner == p) => Some(*t),
            _ => None,
        }
    }

    /// The answer to voiding as `partner`.
    pub fn expect_void(&self, partner: Ix, target: &Target) -> Expect {
        match self.txn_of(Some(partner), target) {
            None => no(FAILED, 404),
            Some(t) if self.txns[t].state == State::Pending => Expect::Ok,
            Some(_) => no(FAILED, 409),
        }
    }

    /// The answer to reversing as `partner`.
    pub fn expect_reverse(&self, partner: Ix, target: &Target) -> Expect {
        let Some(t) = self.txn_of(Some(partner), target) else { return no(FAILED, 404) };
        let t = &self.txns[t];
        if t.reversal_of.is_some() {
            return no(FAILED, 409);
        }
        if let Some(r) = t.reversed_by {
            match self.txns[r].state {
                State::Pending | State::Originated => {
                    return no("The reversal for transaction has been submitted", 409)
                }
                State::Settled => {
                    return no(
                        format!(
                            "The original transaction has already been reversed with transaction ID {}",
                            self.txns[r].id
                        ),
                        409,
                    )
                }
                State::Returned | State::Voided => {}
            }
        }
        if t.state != State::Settled {
            return no(FAILED, 409);
        }
        // A credit's reversal debits the receiver: only until the cut-off five
        // banking days after the credit settled.
        let (next_cutoff, _) = calendar::cutoff_after(self.now);
        match t.dates.settlement {
            Some(settled) if t.credit && next_cutoff > calendar::add_banking_days(settled, 5) => {
                return no(FAILED, 409)
            }
            _ => {}
        }
        // A reversal debit meets the limits like any debit.
        if !t.credit {
            return Expect::Ok;
        }
        let l = &self.merchants[t.merchant].limits;
        let cents = t.amount;
        if l.min_transaction_amount.is_some_and(|min| cents < min.cents()) {
            return no(format!("'{}' is an invalid Amount", decimal(cents)), 422);
        }
        if let Some(max) = l.max_transaction_amount.map(Money::cents).filter(|max| cents > *max) {
            return no(format!("Exceeded maximum dollar amount ({}) for this merchant.", dollars(max)), 403);
        }
        self.expect_windows(partner, t.merchant, cents)
    }

    /// The answer to recording a return.
    pub fn expect_return(&self, target: &Target, code: &str, date: Option<NaiveDate>) -> Expect {
        let Some(t) = self.txn_of(None, target) else { return no(FAILED, 404) };
        let t = &self.txns[t];
        if !matches!(t.state, State::Originated | State::Settled) {
            return no(FAILED, 409);
        }
        if !RETURN_CODES.iter().any(|(c, _)| *c == code) {
            return no(FAILED, 422);
        }
        let today = calendar::eastern_date(self.now);
        let date = date.unwrap_or(today);
        if date > today || t.dates.origination.is_some_and(|o| date < o) {
            return no(FAILED, 422);
        }
        Expect::Ok
    }

    /// The answer to a transaction request of `partner`: the first of these
    /// steps that refuses it, else the usage windows' answer.
    pub fn expect_create(&self, partner: Ix, spec: &TxnSpec) -> Expect {
        let steps = || -> Result<(Ix, i64), Expect> {
            let cents = transaction_problems(spec)?;
            let m = self.transaction_merchant(partner, spec)?;
            let (routing, number) = self.receiver_account(partner, m, spec)?;
            per_transaction_limits(&self.merchants[m].limits, spec, cents)?;
            self.no_duplicate(m, spec, cents, (&routing, &number))?;
            Ok((m, cents))
        };
        match steps() {
            Ok((m, cents)) => self.expect_windows(partner, m, cents),
            Err(refusal) => refusal,
        }
    }

    /// The transaction's merchant: one of `partner`'s, approved for the class.
    fn transaction_merchant(&self, partner: Ix, spec: &TxnSpec) -> Result<Ix, Expect> {
        let m = match &spec.merchant {
            MerchantRef::Known(m) if self.merchants[*m].partner == partner => *m,
            MerchantRef::Known(m) => {
                return Err(no(format!("'{}' is an invalid Merchant ID", self.merchants[*m].id), 422))
            }
            MerchantRef::Unknown(id) | MerchantRef::Malformed(id) => {
                return Err(no(format!("'{id}' is an invalid Merchant ID"), 422))
            }
        };
        let merchant = &self.merchants[m];
        let class = spec.class.as_str();
        if !merchant.approved || !merchant.classes.iter().any(|c| c == class) {
            return Err(no(format!("Unable to accept {class} transactions for this merchant"), 403));
        }
        Ok(m)
    }

    /// The receiver's routing and account number: inline, or a stored customer of
    /// `partner` (global or merchant `m`'s) not deleted.
    fn receiver_account(&self, partner: Ix, m: Ix, spec: &TxnSpec) -> Result<(String, String), Expect> {
        match &spec.customer {
            CustomerSpec::Inline(a) => Ok((a.routing.clone(), a.number.clone())),
            CustomerSpec::Token(Target::Unknown(_)) => Err(no(FAILED, 404)),
            CustomerSpec::Token(Target::Known(c)) => {
                let c = &self.customers[*c];
                if c.partner != partner || c.scope.is_some_and(|s| s != m) {
                    return Err(no(FAILED, 404));
                }
                if c.deleted_at.is_some() {
                    return Err(no(FAILED, 422));
                }
                Ok((c.account.routing.clone(), c.account.number.clone()))
            }
        }
    }

    /// Spent check numbers, then similar transactions (if merchant `m` declines
    /// them): the merchant's earlier transactions to the same account.
    fn no_duplicate(
        &self,
        m: Ix,
        spec: &TxnSpec,
        cents: i64,
        (routing, number): (&str, &str),
    ) -> Result<(), Expect> {
        let class = spec.class.as_str();
        let counted = |t: &&Txn| {
            t.reversal_of.is_none() && t.merchant == m && t.routing == routing && t.number == number
        };
        if let Some(check) = spec.check.as_ref().filter(|_| uses_check(class)) {
            let trimmed = check.trim_start_matches('0');
            if self
                .txns
                .iter()
                .filter(counted)
                .any(|t| t.check.as_deref().map(|c| c.trim_start_matches('0')) == Some(trimmed))
            {
                return Err(no(format!("Duplicate transaction for this check. Check number: {check}"), 409));
            }
        }
        if self.merchants[m].decline_duplicates
            && self.txns.iter().filter(counted).any(|t| {
                t.amount == cents
                    && t.credit == spec.credit
                    && t.class == class
                    && t.state != State::Voided
                    && self.now - t.created_at < Duration::hours(DUPLICATE_WINDOW_HOURS)
            })
        {
            return Err(no("This is a duplicate transaction", 409));
        }
        Ok(())
    }

    /// The tally of the transactions that count, created on Eastern days in `days`.
    fn usage(&self, keep: impl Fn(&Txn) -> bool, from: NaiveDate, to: NaiveDate) -> UsageTally {
        let mut u = UsageTally::default();
        // A reversal credit does not count; a reversal debit does.
        let counts = |t: &Txn| (t.reversal_of.is_none() || !t.credit) && t.state != State::Voided;
        for t in self.txns.iter().filter(|t| counts(t) && keep(t)) {
            let d = calendar::eastern_date(t.created_at);
            if d >= from && d <= to {
                u.count += 1;
                u.amount += t.amount;
            }
        }
        u
    }

    fn expect_windows(&self, partner: Ix, m: Ix, cents: i64) -> Expect {
        let today = calendar::eastern_date(self.now);
        let ml = &self.merchants[m].limits;
        let pl = &self.partners[partner].limits;
        let of_m = |t: &Txn| t.merchant == m;
        let of_p = |t: &Txn| t.partner == partner;
        let period =
            |days: Option<u32>| today - Duration::days(i64::from(days.unwrap_or(7).clamp(1, 366)) - 1);
        let month_start = today.with_day(1).unwrap_or(today);
        let m_day = self.usage(of_m, today, today);
        let p_day = self.usage(of_p, today, today);
        let m_period = self.usage(of_m, period(ml.period_days), today);
        let p_period = self.usage(of_p, period(pl.period_days), today);
        let m_month = self.usage(of_m, month_start, today);
        let over_count = |u: UsageTally, l: Option<u64>| l.is_some_and(|l| u.count + 1 > l);
        let over_amount = |u: UsageTally, l: Option<Money>| l.is_some_and(|l| u.amount + cents > l.cents());
        if over_count(m_day, ml.daily_count) {
            return no("You have exceeded the allowed max daily num checks for this merchant", 403);
        }
        if over_amount(m_day, ml.daily_amount) {
            let l = ml.daily_amount.map(Money::cents).unwrap_or_default();
            return no(
                format!(
                    "You have exceeded your allowed max dollar amount for this merchant of {}",
                    dollars(l)
                ),
                403,
            );
        }
        if over_count(p_day, pl.daily_count) {
            return no("You have exceeded the allowed max daily num checks overall", 403);
        }
        if over_amount(p_day, pl.daily_amount) {
            let l = pl.daily_amount.map(Money::cents).unwrap_or_default();
            return no(
                format!("You have exceeded your allowed max dollar amount overall of {}", dollars(l)),
                403,
            );
        }
        // The period and month limits, in the catalogue's order (messages 26 to 31).
        let limits = [
            (
                over_count(m_period, ml.period_count),
                "You have exceeded the maximum number of checks for this merchant this period",
            ),
            (
                over_amount(m_period, ml.period_amount),
                "You have exceeded the maximum dollar amount for this merchant this period",
            ),
            (
                over_count(p_period, pl.period_count),
                "You have exceeded the maximum number of checks overall this period",
            ),
            (
                over_amount(p_period, pl.period_amount),
                "You have exceeded the maximum dollar amount overall this period",
            ),
            (over_count(m_month, ml.monthly_count), "You have exceeded your monthly transaction volume"),
            (over_amount(m_month, ml.monthly_amount), "You have exceeded your monthly dollar amount cap"),
        ];
        if let Some((_, message)) = limits.into_iter().find(|(over, _)| *over) {
            return no(message, 403);
        }
        if let Some(avg) = ml.monthly_average_amount {
            let judged = ml.monthly_average_min_count.is_none_or(|min| m_month.count + 1 >= min);
            if judged
                && i128::from(m_month.amount + cents)
                    > i128::from(avg.cents()) * i128::from(m_month.count + 1)
            {
                return no(
                    "This transaction brings your monthly dollar amount over the maximum average amount allowed",
                    403,
                );
            }
        }
        Expect::Ok
    }
}
