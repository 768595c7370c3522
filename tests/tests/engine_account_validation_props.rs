//! Over random histories of validations, WEB debits, returns and days: a WEB
//! debit without an outside validation of its own is accepted exactly when
//! its account is validated for the partner (Nacha Rules 2.5.17.4), and a
//! return that shows the account closed or unusable ends that.
#![allow(clippy::unwrap_used)]

use ach_core::engine::{Caller, Operation, Outcome};
use ach_tests::world::{outside_validation, World};
use proptest::prelude::*;
use serde_json::{json, Value};

#[derive(Debug, Clone)]
enum Step {
    /// An outside validation of account `i`, recorded for its customer.
    Validate(usize),
    /// A WEB debit to account `i`, carrying an outside validation or not.
    Debit(usize, bool),
    /// The last accepted debit to account `i` returned with this code.
    Return(usize, &'static str),
    /// The clock a day on, past the cut-off (what is pending originates).
    NextDay,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (0..3usize).prop_map(Step::Validate),
        ((0..3usize), any::<bool>()).prop_map(|(i, carried)| Step::Debit(i, carried)),
        ((0..3usize), prop::sample::select(vec!["R01", "R02", "R03", "R09", "R20"]))
            .prop_map(|(i, code)| Step::Return(i, code)),
        Just(Step::NextDay),
    ]
}

const ACCOUNTS: [&str; 3] = ["11110001", "11110002", "11110003"];

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn a_web_debit_is_accepted_exactly_when_its_account_is_validated(steps in prop::collection::vec(step(), 1..24)) {
        let w = World::new("2026-11-02 10:00");
        let (partner_id, partner) = w.partner();
        let (merchant, _) = w.merchant(&partner_id, &partner, &["WEB"]);
        let customers: Vec<String> =
            ACCOUNTS.iter().map(|a| w.customer(&partner_id, &partner, &merchant, a)).collect();
        let mut validated = [false; 3];
        let mut last: [Option<String>; 3] = [None, None, None];
        let mut day = chrono::NaiveDate::from_ymd_opt(2026, 11, 2).unwrap();
        for s in steps {
            match s {
                Step::Validate(i) => {
                    let mut body = outside_validation();
                    body["merchant_id"] = json!(merchant);
                    let op = Operation::CreateValidation {
                        partner_id: partner_id.clone(),
                        customer_id: customers[i].clone(),
                        body: body.to_string().into_bytes(),
                    };
                    w.run(&partner, op).unwrap();
                    validated[i] = true;
                }
                Step::Debit(i, carried) => {
                    let mut body: Value = json!({"merchant_id": merchant, "amount": "3.00", "description": "p",
                        "type": "debit", "standard_entry_class": "WEB", "customer": {"id": customers[i]}});
                    if carried {
                        body["account_validation"] = outside_validation();
                    }
                    let answer = w.create(&partner_id, &partner, &body);
                    prop_assert_eq!(answer.is_ok(), carried || validated[i], "{:?}", answer);
                    if let Ok(id) = answer {
                        validated[i] = true;
                        last[i] = Some(id);
                    } else {
                        let refusal = answer.unwrap_err();
                        prop_assert_eq!(refusal.errors()[0].code.as_str(), "account_not_validated");
                    }
                }
                Step::Return(i, code) => {
                    let Some(id) = last[i].clone() else { continue };
                    let op = Operation::RecordReturn { transaction_id: id, return_code: code.into(), return_date: None };
                    if let Ok(Outcome::ReturnRecorded { .. }) = w.run(&Caller::Operator, op) {
                        if ["R02", "R03", "R20"].contains(&code) {
                            validated[i] = false;
                        }
                        last[i] = None;
                    }
                }
                Step::NextDay => {
                    day = day.succ_opt().unwrap();
                    w.at(&format!("{day} 18:30"));
                }
            }
        }
    }
}
