//! The screening rules in force: stored by the operator (`PUT
//! /admin/risk-rules`); until then the engine's options' (every rule on by
//! default).

use crate::engine::{Outcome, Refusal, Stop, WriteContext};
use crate::model::{RiskRules, RiskRulesUpdate};
use crate::storage::{Snapshot, StorageError, Table};
use crate::validation::ProblemCode;
use crate::AchError;

/// Meta key of the stored rules.
const META_RISK_RULES: &[u8] = b"risk_rules";

/// The rules in force, read in a write transaction.
pub(crate) fn in_force(cx: &WriteContext<'_, '_>) -> Result<RiskRules, StorageError> {
    let stored = cx.write.get_decoded::<RiskRules>(Table::Meta, META_RISK_RULES)?;
    Ok(stored.map_or_else(|| cx.engine.default_risk_rules.clone(), |r| (*r).clone()))
}

/// The rules in force, read on a snapshot (`default`: the engine's until
/// the operator stores some).
pub(crate) fn read(r: &Snapshot, default: &RiskRules) -> Result<RiskRules, StorageError> {
    Ok(r.get(Table::Meta, META_RISK_RULES)?.unwrap_or_else(|| default.clone()))
}

/// Operator: replace the rules `update` names; answers the rules now in force.
pub(crate) fn set(cx: &mut WriteContext<'_, '_>, update: RiskRulesUpdate) -> Result<Outcome, Stop> {
    let rules = in_force(cx)?.updated(update);
    if let Some((field, why)) = rules.out_of_range() {
        return Err(Refusal::problem(AchError::FailedToAccept, field, ProblemCode::InvalidValue, why).into());
    }
    cx.write.put(Table::Meta, META_RISK_RULES, &rules)?;
    Ok(Outcome::RiskRulesSet { rules })
}
