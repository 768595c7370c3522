//! Transaction ids reveal nothing across tenants: what a partner can read in its
//! own ids (time, then a sequence number) does not count another's creates.
#![allow(clippy::unwrap_used)]

use ach_core::engine::{Caller, Operation, Outcome};
use ach_core::ids::TxnStamp;
use ach_tests::world::{body, transaction, World};

/// The readable head of an id (time and sequence digits) as one number.
fn head(id: &str) -> u64 {
    id[4..15].bytes().fold(0u64, |acc, d| {
        let v = match d {
            b'0'..=b'9' => d - b'0',
            b'A'..=b'Z' => d - b'A' + 10,
            _ => d - b'a' + 36,
        };
        acc * 62 + u64::from(v)
    })
}

fn create(partner_id: &str, merchant_id: &str) -> Operation {
    let body = body(&transaction(merchant_id, "debit", "1.00"));
    Operation::CreateTransaction { partner_id: partner_id.into(), body }
}

fn ids(answers: Vec<Result<Outcome, ach_core::engine::Refusal>>) -> Vec<String> {
    answers
        .into_iter()
        .map(|a| match a {
            Ok(Outcome::TransactionCreated { transaction_id }) => transaction_id,
            other => panic!("{other:?}"),
        })
        .collect()
}

/// Partner A's ids before and after partner B creates 1,000 transactions (the
/// sandbox clock stands still, so every id is of one millisecond): A's next id
/// is the next sequence number after its own, as if B had created nothing,
/// both across requests and within one batch.
#[test]
fn another_partners_creates_leave_no_gap_in_a_partners_ids() {
    let w = World::new("2026-11-23 10:00");
    let (a, ac) = w.partner();
    let (b, bc) = w.partner();
    let (am, _, _) = w.roomy_merchant(&a, &ac, &["PPD"]);
    let (bm, _, _) = w.roomy_merchant(&b, &bc, &["PPD"]);
    let batch = |ops: Vec<(Caller, Operation)>| ids(w.engine.execute_batch(ops));

    let before = w.debit(&a, &ac, &am, "1.00");
    let theirs = batch((0..1000).map(|_| (bc.clone(), create(&b, &bm))).collect());
    let after = w.debit(&a, &ac, &am, "1.00");
    assert_eq!(&before[4..12], &after[4..12], "the same millisecond");
    assert_eq!(head(&after) - head(&before), 1, "{before} then {after}: B's 1,000 show");
    assert_eq!(TxnStamp::of(&after), Some(TxnStamp::next(TxnStamp::of(&before), w.engine.now())));

    // In one batch: A, 1,000 of B, A.
    let mut ops = vec![(ac.clone(), create(&a, &am))];
    ops.extend((0..1000).map(|_| (bc.clone(), create(&b, &bm))));
    ops.push((ac.clone(), create(&a, &am)));
    let mixed = batch(ops);
    let (first, last) = (&mixed[0], &mixed[1001]);
    assert_eq!(head(first) - head(&after), 1);
    assert_eq!(head(last) - head(first), 1, "{first} then {last}: B's 1,000 show");

    // Each partner's ids still sort in its own creation order.
    let own = [&before, &after, first, last];
    assert!(own.windows(2).all(|p| p[0] < p[1]), "{own:?}");
    let bs: Vec<&String> = theirs.iter().chain(&mixed[1..1001]).collect();
    assert!(bs.windows(2).all(|p| p[0] < p[1]));
    // B's count is its own: 2,000 ids, sequence numbers 0 to 1,999 past its first.
    assert_eq!(head(bs[1999]) - head(bs[0]), 1999);

    // A new partner starts past the newest id's millisecond at sequence 0: it
    // learns no count either, and its ids sort after every stored one.
    let (c, cc) = w.partner();
    let (cm, _, _) = w.roomy_merchant(&c, &cc, &["PPD"]);
    let first_of_c = w.debit(&c, &cc, &cm, "1.00");
    assert_eq!(&first_of_c[12..15], "000", "{first_of_c}");
    assert!(first_of_c.as_str() > bs[1999].as_str() && first_of_c.as_str() > last.as_str());
}
