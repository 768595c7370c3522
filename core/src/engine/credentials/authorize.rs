//! Who may do what: the one place a caller is authorized. The router asks
//! [`may_call`] of an endpoint's [`Role`] on the request's head, before its
//! body is read; the write transaction asks [`may_run`] of the operation the
//! body became (a partner's operation needs that partner's own key; every
//! other operation the operator's), and [`acts_for`] of an idempotent one
//! once its key's scope is known.

use crate::engine::request::validated::Validated;
use crate::engine::{Caller, Refusal};

/// Who may call an endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// No key needed (`GET /openapi.json`, `/healthz`, `/readyz`).
    Anyone,
    /// Any valid key (the routing directory's look-up, the categories).
    AnyKey,
    /// The operator key.
    Operator,
    /// A partner's key.
    Partner,
    /// A merchant's key (the events feed).
    Merchant,
    /// A partner's key or a merchant's (the reads of their own data).
    Reader,
}

/// Whether `caller` may call an endpoint open to `role`.
pub(crate) fn may_call(role: Role, caller: &Caller) -> bool {
    matches!(
        (caller, role),
        (_, Role::Anyone | Role::AnyKey)
            | (Caller::Operator, Role::Operator)
            | (Caller::Partner { .. }, Role::Partner)
            | (Caller::Merchant { .. }, Role::Merchant)
            | (Caller::Partner { .. } | Caller::Merchant { .. }, Role::Reader)
    )
}

/// Whether `caller` may run the operation `work`: a partner's own operations
/// need that partner's key, every other one the operator's. An idempotent
/// operation is checked by [`acts_for`] after its key.
pub(crate) fn may_run(caller: &Caller, work: &Validated) -> Result<(), Refusal> {
    match (work, work.partner_id()) {
        (Validated::Idempotent { .. }, _) => Ok(()),
        (_, Some(partner_id)) => acts_for(caller, partner_id),
        (_, None) if *caller == Caller::Operator => Ok(()),
        (_, None) => Err(Refusal::Authentication),
    }
}

/// The caller must be this partner (the request's `partner_id` is the key's).
pub(crate) fn acts_for(caller: &Caller, partner_id: &str) -> Result<(), Refusal> {
    match caller {
        Caller::Partner { partner_id: p } if p == partner_id => Ok(()),
        _ => Err(Refusal::Authentication),
    }
}

/// A `partner_id` named where none is needed (the institution and category
/// look-ups) must still be the caller's own partner: the key's partner, or a
/// merchant key's.
pub(crate) fn names_own_partner(caller: &Caller, partner_id: &str) -> Result<(), Refusal> {
    match caller {
        Caller::Partner { partner_id: p } | Caller::Merchant { partner_id: p, .. } if p == partner_id => {
            Ok(())
        }
        _ => Err(Refusal::Authentication),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_role_admits_only_its_callers() {
        let operator = Caller::Operator;
        let partner = Caller::Partner { partner_id: "par_1".into() };
        let merchant = Caller::Merchant { partner_id: "par_1".into(), merchant_id: "mer_1".into() };
        let admitted = |role| [&operator, &partner, &merchant].map(|c| may_call(role, c));
        assert_eq!(admitted(Role::AnyKey), [true, true, true]);
        assert_eq!(admitted(Role::Operator), [true, false, false]);
        assert_eq!(admitted(Role::Partner), [false, true, false]);
        assert_eq!(admitted(Role::Merchant), [false, false, true]);
        assert_eq!(acts_for(&partner, "par_1"), Ok(()));
        assert_eq!(acts_for(&partner, "par_2"), Err(Refusal::Authentication));
        assert_eq!(acts_for(&operator, "par_1"), Err(Refusal::Authentication));
        assert_eq!(acts_for(&merchant, "par_1"), Err(Refusal::Authentication));
        assert_eq!(names_own_partner(&partner, "par_1"), Ok(()));
        assert_eq!(names_own_partner(&merchant, "par_1"), Ok(()));
        assert_eq!(names_own_partner(&merchant, "par_2"), Err(Refusal::Authentication));
        assert_eq!(names_own_partner(&operator, "par_1"), Err(Refusal::Authentication));
    }
}
