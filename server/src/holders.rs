//! Who a request counts against, and the places each one may hold at once.
//! Fair shares are kept per partner (a merchant's events-only key counting
//! as its partner), per key holder (a partner, or one merchant's key) or per
//! client address; the operator is never counted.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex, PoisonError};

use ach_core::engine::Caller;

/// The partner a caller acts for: its own, or its merchant's; `None` for the
/// operator.
pub fn partner(caller: &Caller) -> Option<&str> {
    match caller {
        Caller::Partner { partner_id } | Caller::Merchant { partner_id, .. } => Some(partner_id),
        Caller::Operator => None,
    }
}

/// The holder of a caller's key: the partner, or the merchant whose
/// events-only key it is; `None` for the operator.
pub fn key_holder(caller: &Caller) -> Option<&str> {
    match caller {
        Caller::Partner { partner_id } => Some(partner_id),
        Caller::Merchant { merchant_id, .. } => Some(merchant_id),
        Caller::Operator => None,
    }
}

/// Places counted per holder (a partner's id, a key holder's, a client
/// address), at most `most` each.
#[derive(Debug)]
pub struct Places<K: Hash + Eq + Clone = String> {
    most: usize,
    taken: Mutex<HashMap<K, usize>>,
}

/// One holder's place, given back when dropped.
#[derive(Debug)]
pub struct Place<K: Hash + Eq + Clone = String> {
    of: Arc<Places<K>>,
    holder: K,
}

impl<K: Hash + Eq + Clone> Places<K> {
    /// At most `most` places per holder.
    pub fn new(most: usize) -> Arc<Places<K>> {
        Arc::new(Places { most, taken: Mutex::new(HashMap::new()) })
    }

    /// A place for `holder`, or `None` when it holds `most` already.
    pub fn take<Q: ToOwned<Owned = K> + ?Sized>(self: &Arc<Self>, holder: &Q) -> Option<Place<K>> {
        let holder = holder.to_owned();
        let mut taken = self.taken.lock().unwrap_or_else(PoisonError::into_inner);
        let count = taken.entry(holder.clone()).or_insert(0);
        if *count >= self.most {
            return None;
        }
        *count += 1;
        Some(Place { of: Arc::clone(self), holder })
    }

    /// The places `holder` holds now.
    #[cfg(test)]
    pub fn held_by(&self, holder: &K) -> usize {
        self.taken.lock().unwrap_or_else(PoisonError::into_inner).get(holder).copied().unwrap_or(0)
    }

    /// How many holders hold a place now.
    #[cfg(test)]
    pub fn holders(&self) -> usize {
        self.taken.lock().unwrap_or_else(PoisonError::into_inner).len()
    }
}

impl<K: Hash + Eq + Clone> Drop for Place<K> {
    fn drop(&mut self) {
        let mut taken = self.of.taken.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = taken.get_mut(&self.holder) {
            *count -= 1;
            if *count == 0 {
                taken.remove(&self.holder);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn each_holder_has_its_places_and_gets_them_back() {
        let places: Arc<Places> = Places::new(2);
        let a1 = places.take("a").unwrap();
        let _a2 = places.take("a").unwrap();
        assert!(places.take("a").is_none(), "past its share");
        let _b = places.take("b").unwrap();
        drop(a1);
        assert!(places.take("a").is_some(), "a place given back is the holder's again");
        let held = |h: &str| places.held_by(&h.to_owned());
        assert_eq!((held("a"), held("b"), held("c")), (1, 1, 0));
        assert_eq!(places.holders(), 2, "a holder without a place keeps no entry");
    }

    #[test]
    fn callers_count_against_their_partner_or_their_key() {
        let merchant = Caller::Merchant { partner_id: "par_a".into(), merchant_id: "mer_a".into() };
        assert_eq!((partner(&merchant), key_holder(&merchant)), (Some("par_a"), Some("mer_a")));
        let p = Caller::Partner { partner_id: "par_a".into() };
        assert_eq!((partner(&p), key_holder(&p)), (Some("par_a"), Some("par_a")));
        assert_eq!((partner(&Caller::Operator), key_holder(&Caller::Operator)), (None, None));
    }
}
