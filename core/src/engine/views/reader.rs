//! Who reads: a partner sees its own transactions, merchants and customers;
//! a merchant's key sees its merchant's. Anything else answers as if it did
//! not exist.

use crate::engine::{Caller, Refusal};

/// Who is reading, and so what it may see.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reader<'a> {
    /// A partner's key: everything of the partner.
    Partner(&'a str),
    /// A merchant's key: its merchant's transactions and customers, and the
    /// merchant itself.
    Merchant {
        /// The merchant's partner.
        partner: &'a str,
        /// The merchant.
        merchant: &'a str,
    },
}

impl<'a> Reader<'a> {
    /// The reader `caller` is, asking about `partner_id` (which a partner's
    /// key must name, and a merchant's key may name: its own partner only).
    pub(crate) fn of(caller: &'a Caller, partner_id: Option<&str>) -> Result<Reader<'a>, Refusal> {
        match (caller, partner_id) {
            (Caller::Partner { partner_id: p }, Some(named)) if p == named => Ok(Reader::Partner(p)),
            (Caller::Partner { .. }, None) => Err(Refusal::PartnerIdRequired),
            (Caller::Merchant { partner_id: p, merchant_id }, named) if named.is_none_or(|n| n == p) => {
                Ok(Reader::Merchant { partner: p, merchant: merchant_id })
            }
            _ => Err(Refusal::Authentication),
        }
    }

    /// The partner whose data this is.
    pub(crate) fn partner(&self) -> &'a str {
        match *self {
            Reader::Partner(p) | Reader::Merchant { partner: p, .. } => p,
        }
    }

    /// Whether it may see a record of `partner_id` and `merchant_id`.
    pub(crate) fn sees(&self, partner_id: &str, merchant_id: &str) -> bool {
        match *self {
            Reader::Partner(p) => p == partner_id,
            Reader::Merchant { partner, merchant } => partner == partner_id && merchant == merchant_id,
        }
    }

    /// Whose list of transactions it walks: the merchant named (which it must
    /// see), or all it sees.
    pub(crate) fn list_owner(&self, merchant_id: Option<&'a str>) -> Option<&'a str> {
        match (*self, merchant_id) {
            (Reader::Partner(p), None) => Some(p),
            (Reader::Partner(_), Some(m)) => Some(m),
            (Reader::Merchant { merchant, .. }, None) => Some(merchant),
            (Reader::Merchant { merchant, .. }, Some(m)) => (m == merchant).then_some(m),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reader_sees_only_its_own() {
        let partner = Caller::Partner { partner_id: "par_1".into() };
        let merchant = Caller::Merchant { partner_id: "par_1".into(), merchant_id: "mer_1".into() };
        assert_eq!(Reader::of(&partner, Some("par_1")).ok(), Some(Reader::Partner("par_1")));
        assert_eq!(Reader::of(&partner, Some("par_2")).err(), Some(Refusal::Authentication));
        assert_eq!(Reader::of(&partner, None).err(), Some(Refusal::PartnerIdRequired));
        assert_eq!(Reader::of(&Caller::Operator, Some("par_1")).err(), Some(Refusal::Authentication));
        let m = Reader::of(&merchant, None).unwrap_or(Reader::Partner(""));
        assert_eq!(m, Reader::Merchant { partner: "par_1", merchant: "mer_1" });
        assert_eq!(Reader::of(&merchant, Some("par_2")).err(), Some(Refusal::Authentication));
        assert!(m.sees("par_1", "mer_1"));
        assert!(!m.sees("par_1", "mer_2"));
        assert!(!m.sees("par_2", "mer_1"));
        assert!(Reader::Partner("par_1").sees("par_1", "mer_9"));
        assert!(!Reader::Partner("par_1").sees("par_2", "mer_9"));
        assert_eq!(m.list_owner(Some("mer_2")), None);
        assert_eq!(m.list_owner(None), Some("mer_1"));
        assert_eq!(Reader::Partner("par_1").list_owner(Some("mer_2")), Some("mer_2"));
    }
}
