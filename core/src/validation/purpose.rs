//! A transaction's `purpose` (`payroll`, `purchase`): one of Nacha's names,
//! and only on the class and direction it names.

use super::fields::{self, problem, FieldRule, Member};
use super::json::Object;
use super::report::{Path, ProblemCode, Rank, Report};
use crate::echo::echo;
use crate::error::AchError;
use crate::model::{Direction, EntryClass, Purpose};

const RULE: FieldRule<'static> = FieldRule { rank: Rank::ClassRule, error: &|_| AchError::FailedToAccept };

/// The optional `purpose` of a transaction of `entry` (class and direction,
/// when both are valid): `Some(None)` when absent, `None` when a problem was
/// recorded (message 10).
pub(crate) fn purpose(
    r: &mut Report,
    map: &Object<'_>,
    parent: &Path<'_>,
    entry: Option<(EntryClass, Direction)>,
) -> Option<Option<Purpose>> {
    if fields::member(map, "purpose").is_none() {
        return Some(None);
    }
    let path = parent.key("purpose");
    let text = fields::text(r, Member::new(map, parent, "purpose", fields::Need::Optional).rule(RULE), 16)?;
    let Some(purpose) = Purpose::parse(&text) else {
        let msg = format!("purpose must be 'payroll' or 'purchase', not '{}'", echo(&text));
        problem(r, &path, ProblemCode::InvalidValue, msg, RULE, &text);
        return None;
    };
    let (class, direction) = purpose.entry();
    match entry {
        Some(e) if e != (class, direction) => {
            let (what, for_whom) = match purpose {
                Purpose::Payroll => ("wages", "PPD credits"),
                Purpose::Purchase => ("online purchases of goods", "WEB debits"),
            };
            let msg = format!(
                "purpose '{}' ({what}) is for {for_whom} only, not a {} {}",
                purpose.as_str(),
                e.0.as_str(),
                e.1.as_str()
            );
            problem(r, &path, ProblemCode::InvalidValue, msg, RULE, &text);
            None
        }
        _ => Some(Some(purpose)),
    }
}
