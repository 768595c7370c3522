//! Index rows written before packing (one settlement index row, one outgoing
//! row and one trace row per transaction) are still read: a database with a
//! cut-off in flight keeps working after the upgrade.
#![allow(clippy::unwrap_used)]

use crate::engine::rows::id_list;
use crate::engine::rows::records::TransactionRecord;
use crate::engine::settlement::traces;
use crate::engine::{Caller, Engine, EngineOptions, Operation};
use crate::lifecycle::State;
use crate::storage::{row_keys, Table};

fn at(text: &str) -> chrono::DateTime<chrono::Utc> {
    let naive = chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M").unwrap();
    naive.and_local_timezone(chrono_tz::America::New_York).earliest().unwrap().with_timezone(&chrono::Utc)
}

/// A production engine (no originator yet) with `n` pending PPD debits; their ids.
fn engine_with_debits(n: u64) -> (Engine, Vec<String>) {
    let engine = Engine::in_memory(EngineOptions::manual(at("2026-11-23 10:00"))).unwrap();
    let (partner_id, partner, merchant_id) = crate::engine::tenancy::test_tenant::tenant(&engine, &["PPD"]);
    let ids = (0..n)
        .map(|i| {
            let body = serde_json::json!({
                "merchant_id": merchant_id, "amount": format!("{}.00", 10 + i), "description": "rent",
                "type": "debit", "standard_entry_class": "PPD",
                "customer": {"name": "Ada", "routing_number": "021000021",
                             "account_number": format!("77889900{i}"), "account_type": "checking"}});
            crate::engine::tenancy::test_tenant::create(&engine, &partner, &partner_id, &body)
        })
        .collect();
    (engine, ids)
}

/// Every row of `table`.
fn rows(engine: &Engine, table: Table) -> Vec<(Vec<u8>, Vec<u8>)> {
    engine.store.read_durable(|r| r.range(table, &[], &[0xff; 16], usize::MAX)).unwrap()
}

#[test]
fn rows_from_before_packing_are_still_read() {
    let (engine, ids) = engine_with_debits(3);
    engine.advance_to(at("2026-11-23 18:00")).unwrap();
    // Rewrite the packed rows the way an earlier build stored them.
    engine
        .store
        .write(|w| {
            for (key, value) in rows(&engine, Table::Outgoing) {
                let Some(cut) = key.iter().rposition(|&b| b == b'+') else { continue };
                let mut rest = value.as_slice();
                while let Some((len, tail)) = rest.split_first_chunk::<4>() {
                    let (record, tail) = tail.split_at(u32::from_le_bytes(*len) as usize);
                    let source: crate::engine::settlement::batch_kind::EntrySource<'_> =
                        postcard::from_bytes(record).unwrap();
                    let mut old = key[..cut].to_vec();
                    old.extend_from_slice(source.id.as_bytes());
                    old.push(0);
                    w.put_raw(Table::Outgoing, &old, &[])?;
                    rest = tail;
                }
                w.remove(Table::Outgoing, &key)?;
            }
            for (key, value) in rows(&engine, Table::Settlements) {
                let when = row_keys::decode_instant(&key).unwrap();
                for id in id_list::ids(&value)? {
                    w.put_raw(Table::Settlements, &row_keys::at(when, id), &[])?;
                }
                w.remove(Table::Settlements, &key)?;
            }
            Ok(())
        })
        .unwrap();
    assert_eq!(rows(&engine, Table::Outgoing).len(), 4, "a batch summary and three old rows");
    assert_eq!(rows(&engine, Table::Settlements).len(), 3);
    // The originator comes: the file is written from the old rows.
    let originator = crate::engine::settlement::originator::sandbox_default();
    engine.execute(&Caller::Operator, Operation::SetOriginator { originator }).unwrap();
    engine.advance_to(at("2026-11-23 18:01")).unwrap();
    let files = engine.origination_files().unwrap();
    assert_eq!((files.len(), files[0].entries), (1, 3));
    assert!(rows(&engine, Table::Outgoing).is_empty());
    // Trace rows as an earlier build wrote them: one per trace.
    let first: u64 = files[0].first_trace.parse().unwrap();
    engine
        .store
        .write(|w| {
            for (key, value) in rows(&engine, Table::Traces) {
                let start: u64 = std::str::from_utf8(&key).unwrap().parse().unwrap();
                w.remove(Table::Traces, &key)?;
                for (i, id) in id_list::ids(&value)?.into_iter().enumerate() {
                    w.put_raw(Table::Traces, format!("{:015}", start + i as u64).as_bytes(), id.as_bytes())?;
                }
            }
            Ok(())
        })
        .unwrap();
    let found: Vec<Option<String>> = engine
        .store
        .write(|w| (first..first + 4).map(|n| traces::transaction_of(w, &format!("{n:015}"))).collect())
        .unwrap();
    let mut want: Vec<Option<String>> = ids.iter().cloned().map(Some).collect();
    want.push(None);
    assert_eq!(found, want, "each trace names its transaction, in file order; the next none");
    // A return leaves the old index row; the rest settle.
    let op = Operation::RecordReturn {
        transaction_id: ids[1].clone(),
        return_code: "R01".into(),
        return_date: None,
    };
    engine.execute(&Caller::Operator, op).unwrap();
    assert_eq!(rows(&engine, Table::Settlements).len(), 2);
    assert_eq!(engine.advance_to(at("2026-11-27 09:00")).unwrap().settled, 2);
    assert!(rows(&engine, Table::Settlements).is_empty());
    let states: Vec<State> = engine
        .store
        .read_durable(|r| {
            ids.iter()
                .map(|id| Ok(r.get::<TransactionRecord>(Table::Transactions, id.as_bytes())?.unwrap().state))
                .collect()
        })
        .unwrap();
    assert_eq!(states, [State::Settled, State::Returned, State::Settled]);
}
