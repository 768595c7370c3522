//! The originator: the bank (ODFI) the engine's origination files go to, and how
//! the files name the sender. Set by the operator (`PUT /admin/originator`), kept
//! in the metadata table; a sandbox without one uses [`sandbox_default`].

use crate::engine::{Outcome, Refusal, Stop, WriteContext};
use crate::nacha::Originator;
use crate::routing::is_valid_routing_number;
use crate::storage::{row_keys, Snapshot, StorageError, Table};
use crate::validation::{FieldError, ProblemCode};
use crate::AchError;

/// The originator a sandbox writes its files for until the operator sets one:
/// the Federal Reserve Bank of Boston's routing number as ODFI and destination.
pub(crate) fn sandbox_default() -> Originator {
    Originator {
        odfi_routing_number: "011000015".into(),
        immediate_destination: "011000015".into(),
        immediate_destination_name: "FEDERAL RESERVE BANK".into(),
        immediate_origin: "1000000001".into(),
        immediate_origin_name: "ACH SANDBOX".into(),
        same_day_cutoffs: crate::nacha::default_same_day_cutoffs(),
    }
}

/// What is wrong with an originator, field by field (empty: usable).
pub(crate) fn problems(o: &Originator) -> Vec<FieldError> {
    let mut out = Vec::new();
    let mut problem = |field: &str, code, message: String| {
        out.push(FieldError { field: field.into(), code, message });
    };
    for (field, value) in
        [("odfi_routing_number", &o.odfi_routing_number), ("immediate_destination", &o.immediate_destination)]
    {
        if value.len() != 9 || !value.bytes().all(|b| b.is_ascii_digit()) {
            problem(
                field,
                ProblemCode::InvalidFormat,
                format!("{field} must be a nine-digit routing number"),
            );
        } else if !is_valid_routing_number(value) {
            problem(field, ProblemCode::InvalidCheckDigit, format!("{field} has a wrong check digit"));
        }
    }
    let origin = &o.immediate_origin;
    if !(9..=10).contains(&origin.len()) || !origin.bytes().all(|b| b.is_ascii_alphanumeric()) {
        let msg = "immediate_origin must be 9 or 10 letters or digits (a routing number, or 1 and a tax id)";
        problem("immediate_origin", ProblemCode::InvalidFormat, msg.into());
    }
    for (field, value) in [
        ("immediate_destination_name", &o.immediate_destination_name),
        ("immediate_origin_name", &o.immediate_origin_name),
    ] {
        if value.len() > 23 || !value.bytes().all(|b| (b' '..=b'~').contains(&b)) {
            let msg = format!("{field} must be at most 23 printable ASCII characters");
            problem(field, ProblemCode::InvalidFormat, msg);
        }
    }
    if let Err((at, why)) = crate::calendar::parse_same_day_cutoffs(&o.same_day_cutoffs) {
        let field = at.map_or_else(|| "same_day_cutoffs".to_owned(), |i| format!("same_day_cutoffs[{i}]"));
        problem(&field, ProblemCode::InvalidValue, why);
    }
    out
}

/// The same-day cut-offs in force (the originator's, else the defaults), in
/// time order.
pub(crate) fn same_day_cutoffs(cx: &WriteContext<'_, '_>) -> Result<Vec<chrono::NaiveTime>, StorageError> {
    let stored: Option<Originator> = cx.write.get(Table::Meta, row_keys::META_ORIGINATOR)?;
    Ok(stored
        .and_then(|o| crate::calendar::parse_same_day_cutoffs(&o.same_day_cutoffs).ok())
        .unwrap_or_else(|| crate::calendar::DEFAULT_SAME_DAY_CUTOFFS.to_vec()))
}

/// The stored originator, or the sandbox default (`None`: none set, not a sandbox).
pub(crate) fn load(r: &Snapshot, sandbox: bool) -> Result<Option<Originator>, StorageError> {
    let stored: Option<Originator> = r.get(Table::Meta, row_keys::META_ORIGINATOR)?;
    Ok(stored.or_else(|| sandbox.then(sandbox_default)))
}

/// The same inside a write transaction.
pub(crate) fn current(cx: &WriteContext<'_, '_>) -> Result<Option<Originator>, StorageError> {
    let stored: Option<Originator> = cx.write.get(Table::Meta, row_keys::META_ORIGINATOR)?;
    Ok(stored.or_else(|| cx.engine.sandbox.then(sandbox_default)))
}

/// Operator: set the originator (validated when the operation was prepared).
pub(crate) fn set(
    cx: &mut WriteContext<'_, '_>,
    originator: Result<Originator, Vec<FieldError>>,
) -> Result<Outcome, Stop> {
    let mut o = originator.map_err(|errors| Refusal::Refused {
        error: AchError::FailedToAccept,
        status: 422,
        errors,
    })?;
    o.immediate_destination_name.make_ascii_uppercase();
    o.immediate_origin_name.make_ascii_uppercase();
    cx.write.put(Table::Meta, row_keys::META_ORIGINATOR, &o)?;
    Ok(Outcome::OriginatorSet { originator: o })
}
