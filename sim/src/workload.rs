//! The random workload: which step comes next, chosen from the world the model
//! describes.

use ach_core::lifecycle::State;
use ach_core::limits::Limits;
use ach_core::Money;
use chrono::{DateTime, Duration, NaiveDate, Utc};

use crate::calendar;
use crate::oracle::{
    Account, AmountSpec, AppSpec, CustomerSpec, Ix, MerchantRef, Oracle, Target, TxnSpec, BAD_ROUTING,
    CLASSES, KNOWN_ROUTING, RETURN_CODES, UNKNOWN_ROUTING,
};
use crate::rng::Rng;
pub use crate::step::{app_body, operation, txn_body, Step, IMAGE};

/// Chooses steps.
#[derive(Debug)]
pub struct Workload {
    rng: Rng,
    keys: u64,
    names: u64,
}

fn money(c: i64) -> Option<Money> {
    Some(Money::from_cents(c))
}

impl Workload {
    /// A workload for `seed`.
    pub fn new(seed: u64) -> Workload {
        Workload { rng: Rng::new(seed ^ 0x0057_0E4B_10AD), keys: 0, names: 0 }
    }

    /// The generator (for ids the engine never issued).
    pub fn rng(&mut self) -> &mut Rng {
        &mut self.rng
    }

    /// A well-formed id the engine never issued.
    pub fn unknown(&mut self, prefix: &str) -> String {
        format!("{prefix}_{}", self.rng.alphanumeric(22))
    }

    /// The first instant of a run: near a holiday, a DST change, a month end or
    /// a year end, or any day of 2026–2028.
    pub fn start(&mut self) -> DateTime<Utc> {
        let r = &mut self.rng;
        let year = 2026 + r.range(0, 2) as i32;
        let ymd = |m, d| NaiveDate::from_ymd_opt(year, m, d).unwrap_or(NaiveDate::MIN);
        let [spring, fall] = calendar::dst_changes(year);
        let day = match r.below(10) {
            0 => calendar::thanksgiving(year) - Duration::days(3),
            1 => ymd(12, 21),
            2 => ymd(7, 1),
            3 => spring - Duration::days(3),
            4 => fall - Duration::days(3),
            5 => ymd(1, 28),
            6 => ymd(2, 25),
            7 => ymd(12, 29),
            8 => ymd(5, 21),
            _ => ymd(1, 1) + Duration::days(r.range(0, 360)),
        };
        calendar::at_eastern(day, r.range(7, 19) as u32, r.range(0, 59) as u32, 0)
    }

    /// The next step for the world the model describes.
    pub fn next(&mut self, m: &Oracle) -> Step {
        let step = self.plain(m);
        let drift = matches!(step, Step::CreateTxn { .. } | Step::Void { .. } | Step::Return { .. });
        if drift && self.rng.percent(4) {
            let to = self.clock_target(m, false);
            return Step::Drift { to, then: Box::new(step) };
        }
        let keyable = step.parties().is_some();
        if keyable && self.rng.percent(15) {
            self.keys += 1;
            let in_body = matches!(step, Step::CreateTxn { .. }) && self.rng.percent(40);
            return Step::Keyed { key: format!("key-{}", self.keys), in_body, step: Box::new(step) };
        }
        step
    }

    fn plain(&mut self, m: &Oracle) -> Step {
        let partners = m.partners.len();
        if partners == 0 {
            return self.create_partner();
        }
        let unapproved: Vec<Ix> = (0..m.merchants.len()).filter(|i| !m.merchants[*i].approved).collect();
        let approved = m.merchants.len() - unapproved.len();
        if m.merchants.is_empty() {
            return self.submit(m);
        }
        if approved == 0 {
            return self.approve(m, &unapproved);
        }
        let weights = [
            [6, 6, 6, 1, 0][partners.min(4)],                     // 0 partner
            2,                                                    // 1 partner limits
            if m.merchants.len() < 3 * partners { 4 } else { 1 }, // 2 submit
            if unapproved.is_empty() { 1 } else { 6 },            // 3 approve
            3,                                                    // 4 merchant limits
            if m.customers.len() < 3 * partners { 6 } else { 2 }, // 5 customer
            2,                                                    // 6 delete customer
            40,                                                   // 7 create
            7,                                                    // 8 void
            6,                                                    // 9 reverse
            7,                                                    // 10 return
            22,                                                   // 11 clock
        ];
        match self.rng.weighted(&weights) {
            0 => self.create_partner(),
            1 => self.partner_limits(m),
            2 => self.submit(m),
            3 => self.approve(m, &unapproved),
            4 => self.merchant_limits(m),
            5 => self.create_customer(m),
            6 => self.delete_customer(m),
            7 => self.create_txn(m),
            8 => {
                let (partner, caller, txn) = self.txn_target(m, |t| t.state == State::Pending);
                Step::Void { partner, caller, txn }
            }
            9 => {
                let (partner, caller, txn) = self.txn_target(m, |t| t.state == State::Settled);
                Step::Reverse { partner, caller, txn }
            }
            10 => self.return_(m),
            _ => self.clock(m),
        }
    }

    fn create_partner(&mut self) -> Step {
        self.names += 1;
        let name = if self.rng.percent(5) { "   ".to_owned() } else { format!("Partner {}", self.names) };
        Step::CreatePartner { name }
    }

    /// A partner, and mostly that partner as the caller (sometimes another's key:
    /// authentication fails).
    fn parties(&mut self, m: &Oracle) -> (Ix, Ix) {
        let p = self.rng.below(m.partners.len());
        let caller = if self.rng.percent(3) { self.rng.below(m.partners.len()) } else { p };
        (p, caller)
    }

    fn limits(&mut self, partner: bool) -> Limits {
        let r = &mut self.rng;
        let mut l = Limits::default();
        if !partner {
            if r.percent(20) {
                l.max_transaction_amount = money(*r.pick(&[100_000, 5_000_000, 9_999_999_999]));
            }
            if r.percent(15) {
                l.min_transaction_amount = money(*r.pick(&[100, 1_000]));
            }
            if r.percent(20) {
                l.max_credit_amount = money(*r.pick(&[0, 50_000, 1_000_000]));
            }
            if r.percent(30) {
                l.monthly_count = Some(r.range(5, 60) as u64);
            }
            if r.percent(30) {
                l.monthly_amount = money(*r.pick(&[500_000, 5_000_000, 9_999_999_999]));
            }
            if r.percent(30) {
                l.monthly_average_amount = money(*r.pick(&[20_000, 100_000, 9_999_999_999]));
            }
            if r.percent(20) {
                l.monthly_average_min_count = Some(*r.pick(&[0, 1, 3, 10]));
            }
        }
        if r.percent(25) {
            l.daily_count = Some(r.range(2, 12) as u64);
        }
        if r.percent(20) {
            l.daily_amount = money(*r.pick(&[200_000, 1_000_000, 5_000_000]));
        }
        if r.percent(20) {
            l.period_days = Some(r.range(1, 10) as u32);
        }
        if r.percent(20) {
            l.period_count = Some(r.range(4, 30) as u64);
        }
        if r.percent(20) {
            l.period_amount = money(*r.pick(&[200_000, 1_000_000, 9_000_000]));
        }
        l
    }

    fn partner_limits(&mut self, m: &Oracle) -> Step {
        let partner = self.mostly_known("par", m.partners.len());
        Step::PartnerLimits { partner, limits: self.limits(true) }
    }

    /// One of `count` known ids, or 5% of the time an unknown one with `prefix`.
    fn mostly_known(&mut self, prefix: &str, count: usize) -> Target {
        if self.rng.percent(5) {
            Target::Unknown(self.unknown(prefix))
        } else {
            Target::Known(self.rng.below(count))
        }
    }

    fn submit(&mut self, m: &Oracle) -> Step {
        let (partner, caller) = self.parties(m);
        let r = &mut self.rng;
        let mut classes: Vec<String> =
            CLASSES.iter().filter(|_| r.percent(40)).map(|c| (*c).to_owned()).collect();
        if classes.is_empty() || r.percent(50) {
            classes.retain(|c| c != "PPD");
            classes.insert(0, "PPD".into());
        }
        let highest = *r.pick(&[50_000, 250_000, 1_000_000, 5_000_000]);
        let app = AppSpec {
            classes,
            checks_per_year: *r.pick(&[0, 60, 600, 6_000, 60_000]),
            average: *r.pick(&[2_500, 8_550, 25_000, 100_000]),
            highest,
            lowest: if r.percent(8) { Some(highest + 100) } else { *r.pick(&[None, Some(100), Some(500)]) },
            decline_duplicates: r.percent(50),
            no_website: r.percent(10),
        };
        Step::Submit { partner, caller, app }
    }

    fn approve(&mut self, m: &Oracle, unapproved: &[Ix]) -> Step {
        let merchant = if !unapproved.is_empty() && self.rng.percent(85) {
            Target::Known(*self.rng.pick(unapproved))
        } else if self.rng.percent(70) {
            Target::Known(self.rng.below(m.merchants.len()))
        } else {
            Target::Unknown(self.unknown("mer"))
        };
        let mut limits = self.limits(false);
        if self.rng.percent(65) {
            // Room enough that mostly the day and period limits speak.
            limits.monthly_count = Some(1_000);
            limits.monthly_amount = money(9_999_999_999);
            limits.monthly_average_amount = money(9_999_999_999);
        }
        Step::Approve { merchant, limits }
    }

    fn merchant_limits(&mut self, m: &Oracle) -> Step {
        let merchant = self.mostly_known("mer", m.merchants.len());
        Step::MerchantLimits { merchant, limits: self.limits(false) }
    }

    /// An account from a small pool (so duplicates and reused checks happen),
    /// sometimes invalid.
    fn account(&mut self, valid: bool) -> Account {
        let r = &mut self.rng;
        let (routing, number) = if valid {
            (
                (*r.pick(&KNOWN_ROUTING[..3])).to_owned(),
                (*r.pick(&["10000001", "10000002", "20000003", "5551-2345"])).to_owned(),
            )
        } else {
            match r.below(3) {
                0 => ((*r.pick(&UNKNOWN_ROUTING)).to_owned(), "10000001".to_owned()),
                1 => ((*r.pick(&BAD_ROUTING)).to_owned(), "10000001".to_owned()),
                _ => (
                    KNOWN_ROUTING[0].to_owned(),
                    (*r.pick(&["12", "ABCD", "0000", "123456789012345678"])).to_owned(),
                ),
            }
        };
        let kinds: [&'static str; 2] = ["checking", "savings"];
        Account { name: "Ada Lovelace".into(), routing, number, kind: kinds[r.below(2)] }
    }

    fn create_customer(&mut self, m: &Oracle) -> Step {
        let (partner, caller) = self.parties(m);
        let mine: Vec<Ix> = (0..m.merchants.len()).filter(|i| m.merchants[*i].partner == partner).collect();
        let scope = match self.rng.below(20) {
            0 => Some(Target::Unknown(self.unknown("mer"))),
            1 => Some(Target::Known(self.rng.below(m.merchants.len()))),
            2..=9 if !mine.is_empty() => Some(Target::Known(*self.rng.pick(&mine))),
            _ => None,
        };
        let valid = !self.rng.percent(10);
        let account = self.account(valid);
        Step::CreateCustomer { partner, caller, scope, account }
    }

    fn delete_customer(&mut self, m: &Oracle) -> Step {
        let (partner, caller) = self.parties(m);
        let mine: Vec<Ix> = (0..m.customers.len()).filter(|i| m.customers[*i].partner == partner).collect();
        let customer = if !mine.is_empty() && self.rng.percent(80) {
            Target::Known(*self.rng.pick(&mine))
        } else if !m.customers.is_empty() && self.rng.percent(60) {
            Target::Known(self.rng.below(m.customers.len()))
        } else {
            Target::Unknown(self.unknown("cus"))
        };
        Step::DeleteCustomer { partner, caller, customer }
    }

    /// A transaction of a partner, preferring ones that `wanted` holds for; now
    /// and then another partner's or an unknown id.
    fn txn_target(&mut self, m: &Oracle, wanted: impl Fn(&crate::oracle::Txn) -> bool) -> (Ix, Ix, Target) {
        let (partner, caller) = self.parties(m);
        let mine: Vec<Ix> = (0..m.txns.len()).filter(|i| m.txns[*i].partner == partner).collect();
        let good: Vec<Ix> = mine.iter().copied().filter(|i| wanted(&m.txns[*i])).collect();
        let target = match self.rng.below(100) {
            _ if m.txns.is_empty() => Target::Unknown(self.unknown("txn")),
            0..=5 => Target::Known(self.rng.below(m.txns.len())),
            6..=9 => Target::Unknown(self.unknown("txn")),
            10..=74 if !good.is_empty() => Target::Known(*self.rng.pick(&good)),
            _ if !mine.is_empty() => Target::Known(*self.rng.pick(&mine)),
            _ => Target::Known(self.rng.below(m.txns.len())),
        };
        (partner, caller, target)
    }

    fn return_(&mut self, m: &Oracle) -> Step {
        let (_, _, txn) = self.txn_target(m, |t| matches!(t.state, State::Originated | State::Settled));
        let r = &mut self.rng;
        let code = if r.percent(88) {
            r.pick(&RETURN_CODES).0.to_owned()
        } else {
            (*r.pick(&["R00", "r01", "", "R1"])).to_owned()
        };
        let today = calendar::eastern_date(m.now);
        let origination = match &txn {
            Target::Known(t) => m.txns[*t].dates.origination,
            Target::Unknown(_) => None,
        };
        let date = match r.below(12) {
            0 => Some(today),
            1 => Some(today + Duration::days(1)),
            2 => origination,
            3 => origination.map(|o| o - Duration::days(1)),
            4 => origination.map(|o| o + Duration::days(1)).filter(|d| *d <= today),
            _ => None,
        };
        Step::Return { txn, code, date }
    }

    fn create_txn(&mut self, m: &Oracle) -> Step {
        let (mut partner, mut caller) = self.parties(m);
        let ready: Vec<Ix> = (0..m.partners.len())
            .filter(|p| m.merchants.iter().any(|x| x.partner == *p && x.approved))
            .collect();
        if !ready.contains(&partner) && !ready.is_empty() && self.rng.percent(95) {
            partner = *self.rng.pick(&ready);
            caller = partner;
        }
        let mine: Vec<Ix> = (0..m.merchants.len()).filter(|i| m.merchants[*i].partner == partner).collect();
        let approved: Vec<Ix> = mine.iter().copied().filter(|i| m.merchants[*i].approved).collect();
        let r = &mut self.rng;
        let merchant_ix = if !approved.is_empty() && r.percent(95) {
            *r.pick(&approved)
        } else if !mine.is_empty() {
            *r.pick(&mine)
        } else {
            r.below(m.merchants.len())
        };
        let merchant = &m.merchants[merchant_ix];
        let class =
            if r.percent(96) { r.pick(&merchant.classes).clone() } else { (*r.pick(&CLASSES)).to_owned() };
        let credit = !matches!(class.as_str(), "TEL" | "BOC" | "POP" | "ICL") && r.percent(35);
        let cents = match r.below(20) {
            0..=9 => *r.pick(&[1_000, 2_500, 5_000, 12_345]),
            10..=17 => r.range(100, 50_000),
            _ => r.range(50_000, 3_000_000),
        };
        let check = if matches!(class.as_str(), "BOC" | "POP") || r.percent(15) {
            Some((*r.pick(&["1001", "001001", "1002", "2001", "77"])).to_owned())
        } else {
            None
        };
        let tokens: Vec<Ix> = (0..m.customers.len())
            .filter(|c| {
                let c = &m.customers[*c];
                c.partner == partner && c.scope.is_none_or(|s| s == merchant_ix)
            })
            .collect();
        let customer = if !tokens.is_empty() && r.percent(35) {
            CustomerSpec::Token(Target::Known(*r.pick(&tokens)))
        } else {
            CustomerSpec::Inline(self.account(true))
        };
        let r = &mut self.rng;
        let mut spec = TxnSpec {
            merchant: MerchantRef::Known(merchant_ix),
            amount: AmountSpec::Cents { cents, number: r.percent(20) },
            credit,
            state: (class == "POP").then(|| "NY".to_owned()),
            images: matches!(class.as_str(), "BOC" | "POP" | "ICL"),
            class,
            check,
            customer,
            description: format!("sim {}", r.below(1_000)),
        };
        if r.percent(14) {
            self.flaw(m, partner, &mut spec);
        }
        Step::CreateTxn { partner, caller, spec }
    }

    /// Make one thing wrong with a transaction request.
    fn flaw(&mut self, m: &Oracle, partner: Ix, spec: &mut TxnSpec) {
        let r = &mut self.rng;
        match r.below(15) {
            0 => {
                spec.amount = AmountSpec::Bad(
                    (*r.pick(&["1.234", "0", "0.00", "-5.00", "abc", "1e3", "100000000.00"])).to_owned(),
                )
            }
            1 => spec.customer = CustomerSpec::Inline(self.account(false)),
            2 => spec.class = (*r.pick(&["XYZ", "ppd", "ARC"])).to_owned(),
            3 => {
                spec.class = (*r.pick(&["BOC", "POP"])).to_owned();
                spec.credit = false;
                spec.images = true;
                spec.state = Some("NY".into());
                spec.check = None;
            }
            4 => {
                spec.class = "POP".into();
                spec.credit = false;
                spec.images = true;
                spec.check = Some("1001".into());
                spec.state = None;
            }
            5 => {
                spec.class = (*r.pick(&["ICL", "BOC"])).to_owned();
                spec.credit = false;
                spec.check = Some("3001".into());
                spec.images = false;
            }
            6 => {
                spec.class = (*r.pick(&["TEL", "BOC", "POP", "ICL"])).to_owned();
                spec.credit = true;
                spec.images = true;
                spec.state = Some("NY".into());
                spec.check = Some("4001".into());
            }
            7 => {
                spec.class = "BOC".into();
                spec.credit = false;
                spec.images = true;
                spec.check = Some("5001".into());
                spec.amount = AmountSpec::Cents { cents: 2_500_001, number: false };
            }
            8 => {
                spec.merchant = MerchantRef::Malformed(
                    (*r.pick(&["mer_short", "merchant-1", "MER_0123456789012345678901"])).to_owned(),
                )
            }
            9 => spec.merchant = MerchantRef::Unknown(format!("mer_{}", r.alphanumeric(22))),
            10 => spec.merchant = MerchantRef::Known(r.below(m.merchants.len())),
            11 => spec.customer = CustomerSpec::Token(Target::Unknown(format!("cus_{}", r.alphanumeric(22)))),
            12 => {
                // Any token: another partner's, another merchant's, a deleted one.
                if !m.customers.is_empty() {
                    spec.customer = CustomerSpec::Token(Target::Known(r.below(m.customers.len())));
                }
            }
            13 => {
                spec.credit = true;
                spec.class = "PPD".into();
                spec.amount = AmountSpec::Cents { cents: 6_000_000_000, number: false };
            }
            _ => {
                // A transaction just like an earlier one of this partner (a duplicate, a spent check).
                let mine: Vec<&crate::oracle::Txn> =
                    m.txns.iter().filter(|t| t.partner == partner && t.reversal_of.is_none()).collect();
                if !mine.is_empty() {
                    let t = *r.pick(&mine);
                    spec.merchant = MerchantRef::Known(t.merchant);
                    spec.amount = AmountSpec::Cents { cents: t.amount, number: false };
                    spec.credit = t.credit;
                    spec.class = t.class.clone();
                    spec.check = t.check.clone();
                    spec.images = matches!(t.class.as_str(), "BOC" | "POP" | "ICL");
                    spec.state = (t.class == "POP").then(|| "NY".to_owned());
                    spec.customer = CustomerSpec::Inline(Account {
                        name: "Ada Lovelace".into(),
                        routing: t.routing.clone(),
                        number: t.number.clone(),
                        kind: "checking",
                    });
                }
            }
        }
    }

    /// A target instant: minutes ahead, the next cut-off or settlement time (a
    /// second before, exactly, a second after), the next midnight, days ahead, a
    /// month end; with `backwards`, sometimes before now.
    fn clock_target(&mut self, m: &Oracle, backwards: bool) -> DateTime<Utc> {
        let now = m.now;
        let today = calendar::eastern_date(now);
        let r = &mut self.rng;
        let jitter = Duration::seconds(r.range(-1, 1));
        let next = |t: DateTime<Utc>, day: DateTime<Utc>| if t > now { t } else { day };
        match r.below(12) {
            0 if backwards => now - Duration::minutes(r.range(1, 90)),
            1 => now,
            2 | 3 => {
                let c = calendar::cutoff_of(today);
                next(c + jitter, calendar::cutoff_of(today + Duration::days(1)) + jitter)
            }
            4 => {
                let s = calendar::settlement_instant(today);
                next(s + jitter, calendar::settlement_instant(today + Duration::days(1)) + jitter)
            }
            5 => calendar::at_eastern(today + Duration::days(1), 0, 0, 0) + jitter,
            6 => now + Duration::days(r.range(1, 4)) + Duration::minutes(r.range(0, 600)),
            7 => {
                // The last second of the month (or its first), when the month ends within a week.
                let first_next = chrono::Datelike::with_day(&today, 1)
                    .and_then(|d| d.checked_add_months(chrono::Months::new(1)))
                    .unwrap_or(today);
                let end = calendar::at_eastern(first_next, 0, 0, 0) - Duration::seconds(r.range(0, 1));
                if end - now < Duration::days(7) {
                    end
                } else {
                    now + Duration::hours(r.range(1, 30))
                }
            }
            _ => now + Duration::minutes(r.range(1, 240)),
        }
        .max(if backwards { now - Duration::hours(2) } else { now })
    }

    fn clock(&mut self, m: &Oracle) -> Step {
        if self.rng.percent(70) {
            Step::SetClock { to: self.clock_target(m, true) }
        } else {
            Step::Advance { to: self.clock_target(m, false) }
        }
    }
}
