//! The context of one write transaction: the engine, the instant, and what the
//! transaction keeps in memory until its commit (feed sequence numbers, usage
//! counters, the newest transaction id per partner, the duplicate window).

use std::collections::HashMap;

use chrono::{DateTime, Utc};

use crate::engine::request::fast_map::FastMap;
use crate::engine::risk::usage;
use crate::engine::risk::window;
use crate::engine::Engine;
use crate::storage::{row_keys, StorageError, Table, Write};

/// The context of one write transaction.
pub(crate) struct WriteContext<'a, 'tx> {
    /// The write transaction.
    pub write: &'a mut Write<'tx>,
    pub now: DateTime<Utc>,
    pub engine: &'a Engine,
    /// The last sequence number used per scope of each feed (status changes,
    /// events), cached for the transaction.
    pub seqs: [FastMap<String, u64>; 2],
    /// Usage counters read or changed by the transaction, written back by
    /// [`WriteContext::finish`].
    pub usage: usage::Counters,
    /// Screening's rows read or changed by the transaction, written back by
    /// [`WriteContext::finish`].
    pub counter_rows: crate::engine::risk::counter_rows::CounterRows,
    /// The sandbox clock's new instant, set on the clock once the commit succeeds.
    pub clock_to: Option<DateTime<Utc>>,
    /// Each origination batch summary row's flags as this transaction left
    /// them (so a cut-off reads each batch's row once, not once per entry).
    pub batch_flags: FastMap<Vec<u8>, u8>,
    /// While a catch-up runs: its feed entries, gathered into packed rows.
    pub feed_rows: Option<crate::engine::feeds::feed_rows::FeedRows>,
    /// The new transactions' list entries, written as packed rows by
    /// [`WriteContext::finish`].
    pub listings: crate::engine::rows::listings::NewListings,
    /// In a request batch: its creates' pending index entries, gathered
    /// into packed rows (`packed_index.rs`).
    pub pending_rows: Option<crate::engine::rows::packed_index::PackedIndex>,
    /// The stamp and id of the newest transaction this write transaction made
    /// for each partner, written back by [`WriteContext::finish`].
    last_txn: HashMap<String, (crate::ids::TxnStamp, String)>,
    /// The duplicate window (locked by the engine for this transaction).
    pub window: &'a mut window::Window,
    /// The window's changes, undone if the transaction does not commit.
    pub window_log: &'a mut Vec<window::WindowChange>,
    /// The directory epoch this transaction took or made
    /// (`directory_epoch.rs`), for the engine once it commits.
    pub directory_epoch: Option<u64>,
    /// This transaction's own window log entries on a shared store, written
    /// as one row by [`WriteContext::finish`] (`window_log.rs`).
    pub window_row: Vec<u8>,
    /// The stored credentials epoch, once an operation's authentication was
    /// confirmed here (`credentials/authenticate.rs`).
    pub credentials_epoch: Option<Vec<u8>>,
}

impl<'a, 'tx> WriteContext<'a, 'tx> {
    pub(in crate::engine) fn new(
        write: &'a mut Write<'tx>,
        now: DateTime<Utc>,
        engine: &'a Engine,
        window: &'a mut window::Window,
        window_log: &'a mut Vec<window::WindowChange>,
    ) -> Self {
        WriteContext {
            window,
            window_log,
            write,
            now,
            engine,
            seqs: Default::default(),
            usage: usage::Counters::default(),
            counter_rows: Default::default(),
            clock_to: None,
            batch_flags: FastMap::default(),
            feed_rows: None,
            pending_rows: None,
            listings: Default::default(),
            last_txn: HashMap::new(),
            directory_epoch: None,
            window_row: Vec::new(),
            credentials_epoch: None,
        }
    }

    /// A new transaction id of `partner_id` that sorts after each of the
    /// partner's ids ([`crate::ids::generate_transaction_after`] the partner's
    /// newest): its sequence number counts the partner's own creates in the
    /// millisecond, never another's. A partner with none stored yet starts
    /// past the millisecond of the newest id stored, so its ids sort after
    /// every stored one (and land at the end of the transactions table).
    pub fn new_transaction_id(&mut self, partner_id: &str) -> Result<String, StorageError> {
        let prev = match self.last_txn.get(partner_id) {
            Some((stamp, _)) => *stamp,
            None => {
                let stored = self.write.get_known(Table::Meta, &row_keys::last_transaction(partner_id))?;
                match stored.and_then(|id| stamp_of(&id)) {
                    Some(stamp) => stamp,
                    None => {
                        let last = self.write.last_key(Table::Transactions, &[], &[u8::MAX])?;
                        let newest = last.and_then(|k| stamp_of(&k));
                        newest.map_or(crate::ids::TxnStamp::ZERO, crate::ids::TxnStamp::end_of_millisecond)
                    }
                }
            }
        };
        let (id, stamp) = crate::ids::generate_transaction_after(Some(prev), self.now);
        self.last_txn.insert(partner_id.to_owned(), (stamp, id.clone()));
        Ok(id)
    }

    /// Write back what the transaction kept in memory (the usage counters). Call
    /// once, after the last operation, before the commit.
    pub(in crate::engine) fn finish(mut self) -> Result<Option<DateTime<Utc>>, StorageError> {
        crate::engine::multiprocess::window_log::write_row(&mut self)?;
        self.usage.write_back(self.write)?;
        self.counter_rows.write_back(self.write)?;
        self.listings.write(self.write)?;
        for (partner_id, (_, id)) in &self.last_txn {
            self.write.put_raw(Table::Meta, &row_keys::last_transaction(partner_id), id.as_bytes())?;
        }
        Ok(self.clock_to)
    }
}

/// The stamp of a stored transaction id.
fn stamp_of(id: &[u8]) -> Option<crate::ids::TxnStamp> {
    std::str::from_utf8(id).ok().and_then(crate::ids::TxnStamp::of)
}
