//! The invariants checked after every step.

use ach_core::engine::{Caller, Refusal};
use ach_core::model::{Status, StatusChange};

use super::{FeedReader, Sim};
use crate::oracle::{Ix, FAILED};

impl Sim {
    pub(super) fn caller(&self, p: Ix) -> Caller {
        Caller::Partner { partner_id: self.oracle.partners[p].id.clone() }
    }

    /// A partner's whole feed, read from the start.
    pub(super) fn full_feed(&self, p: Ix) -> Result<Vec<StatusChange>, String> {
        let id = &self.oracle.partners[p].id;
        let mut pointer = "0".to_owned();
        let mut all = Vec::new();
        loop {
            let page = self
                .engine()
                .status_changes(&self.caller(p), id, &pointer)
                .map_err(|f| format!("feed: {f:?}"))?;
            if page.changes.is_empty() {
                return Ok(all);
            }
            all.extend(page.changes);
            pointer = page.new_pointer;
        }
    }

    /// The invariants, after every step: each partner's feed read on from its
    /// last pointer equals the model's feed (every change once, in order), and —
    /// every `full_every` steps — a full read from the start; every change names
    /// a transaction of that partner and moves it along an allowed edge (A → B →
    /// S, A → R void, B → R, S → R); each merchant's events are its changes;
    /// usage counters equal a recomputation; the stored records agree with the
    /// feeds and the schedule.
    #[allow(clippy::needless_range_loop)] // `p` indexes the model and the readers too
    pub fn check(&mut self, full: bool) -> Result<(), String> {
        let mut moved = vec![false; self.oracle.partners.len()];
        for p in 0..self.oracle.partners.len() {
            let id = self.oracle.partners[p].id.clone();
            let caller = self.caller(p);
            let mut fresh = Vec::new();
            loop {
                let pointer = self.readers[p].pointer.clone();
                let page = self
                    .engine()
                    .status_changes(&caller, &id, &pointer)
                    .map_err(|f| format!("feed: {f:?}"))?;
                if page.changes.is_empty() {
                    if pointer != "0" && page.new_pointer != pointer {
                        return Err(format!(
                            "an empty page moved the pointer {pointer} to {}",
                            page.new_pointer
                        ));
                    }
                    break;
                }
                fresh.extend(page.changes);
                self.readers[p].pointer = page.new_pointer;
            }
            moved[p] = !fresh.is_empty();
            for c in &fresh {
                self.edge(p, c)?;
            }
            let from = self.readers[p].seen.len();
            self.readers[p].seen.extend(fresh);
            // Both lists only grow: what matched before still does, unless `full`.
            let from = if full { 0 } else { from };
            let (seen, model) = (&self.readers[p].seen, &self.oracle.partners[p].shown);
            if seen.len() != model.len() || seen[from..] != model[from..] {
                return Err(format!("partner {p}'s feed differs from the model: {}", diff(seen, model)));
            }
            if full {
                let all = self.full_feed(p)?;
                if all != self.readers[p].seen {
                    return Err(format!(
                        "partner {p}: a full read differs from the incremental one: {}",
                        diff(&all, &self.readers[p].seen)
                    ));
                }
            }
        }
        // A merchant's events move with its partner's feed: read on those (all of
        // them on a full check).
        let merchants: Vec<Ix> = self
            .event_readers
            .keys()
            .copied()
            .filter(|m| full || moved[self.oracle.merchants[*m].partner])
            .collect();
        for m in merchants {
            self.check_events(m)?;
        }
        if full {
            self.engine()
                .audit_usage()
                .map_err(|f| format!("audit: {f:?}"))?
                .map_err(|e| format!("usage counters: {e}"))?;
            self.engine()
                .audit_records()
                .map_err(|f| format!("audit: {f:?}"))?
                .map_err(|e| format!("records: {e}"))?;
            self.probe_pointers()?;
        }
        Ok(())
    }

    /// A change must name a transaction of the partner and follow an allowed edge.
    pub(super) fn edge(&mut self, p: Ix, c: &StatusChange) -> Result<(), String> {
        let owner = self.owners.get(&c.transaction_id).copied();
        if owner != Some(p) {
            return Err(format!(
                "partner {p}'s feed shows {}, which is not its transaction",
                c.transaction_id
            ));
        }
        let before = self.last_status.get(&c.transaction_id).copied();
        let void = c.reason.as_deref() == Some("Voided") && c.return_code.is_none();
        let allowed = match (before, c.status) {
            (None, Status::A) | (Some(Status::A), Status::B) | (Some(Status::B), Status::S) => true,
            (Some(Status::A), Status::R) => void,
            (Some(Status::B | Status::S), Status::R) => !void && c.return_code.is_some(),
            _ => false,
        };
        if !allowed {
            return Err(format!("{} moved {before:?} → {:?} ({c:?})", c.transaction_id, c.status));
        }
        self.last_status.insert(c.transaction_id.clone(), c.status);
        Ok(())
    }

    pub(super) fn check_events(&mut self, m: Ix) -> Result<(), String> {
        let merchant = &self.oracle.merchants[m];
        let caller = Caller::Merchant {
            partner_id: self.oracle.partners[merchant.partner].id.clone(),
            merchant_id: merchant.id.clone(),
        };
        loop {
            let reader = &self.event_readers[&m];
            let pointer = (!reader.pointer.is_empty()).then_some(reader.pointer.as_str());
            let page = self.engine().events(&caller, pointer).map_err(|f| format!("events: {f:?}"))?;
            let reader = self
                .event_readers
                .entry(m)
                .or_insert_with(|| FeedReader { pointer: String::new(), seen: Vec::new() });
            let empty = page.events.is_empty();
            reader.seen.extend(page.events);
            reader.pointer = page.new_pointer;
            if empty || !page.exists_more_events {
                break;
            }
        }
        let seen = &self.event_readers[&m].seen;
        let want = &self.oracle.merchants[m].events;
        if seen.len() != want.len() || seen.iter().zip(want).any(|(e, w)| e.change != *w) {
            let got: Vec<StatusChange> = seen.iter().map(|e| e.change.clone()).collect();
            return Err(format!("merchant {m}'s events differ from the model: {}", diff(&got, want)));
        }
        for (i, e) in seen.iter().enumerate() {
            if e.id != format!("evt_{}", i + 1)
                || e.kind != "transaction.status_changed"
                || e.occurred_at != e.change.change_timestamp
            {
                return Err(format!("merchant {m}'s event {i} is {e:?}"));
            }
        }
        Ok(())
    }

    /// Pointers are the feed's own: one partner's pointer on another's feed is
    /// refused, and a partner cannot read another's feed.
    pub(super) fn probe_pointers(&mut self) -> Result<(), String> {
        let n = self.oracle.partners.len();
        if n < 2 {
            return Ok(());
        }
        let (a, b) = (self.step_no % n, (self.step_no + 1) % n);
        let pointer = self.readers[a].pointer.clone();
        if pointer != "0" {
            let got = self.engine().status_changes(&self.caller(b), &self.oracle.partners[b].id, &pointer);
            match got {
                Err(f)
                    if f.message() == FAILED && f.errors().first().is_some_and(|e| e.field == "pointer") => {}
                other => {
                    return Err(format!("partner {a}'s pointer on partner {b}'s feed answered {other:?}"))
                }
            }
        }
        match self.engine().status_changes(&self.caller(b), &self.oracle.partners[a].id, "0") {
            Err(Refusal::Authentication) => Ok(()),
            other => Err(format!("partner {b} reading partner {a}'s feed answered {other:?}")),
        }
    }
}

/// Where two feeds first differ.
fn diff(got: &[StatusChange], want: &[StatusChange]) -> String {
    let at = got.iter().zip(want).position(|(a, b)| a != b).unwrap_or(got.len().min(want.len()));
    format!(
        "{} entries vs {} expected; first difference at {at}: {:?} vs {:?}",
        got.len(),
        want.len(),
        got.get(at),
        want.get(at)
    )
}
