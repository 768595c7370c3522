//! The stored format's versions. A database of an older version is brought
//! to [`FORMAT_VERSION`] at open, one step at a time, inside the open's write
//! transaction (every step or none), and then marked with it; a newer one,
//! or one no step leads from, is refused and left as it was.

use super::codec::FORMAT_VERSION;
use super::error::StorageError;
use super::write::Write;

/// One step of the format: what turns a database of version `from` into
/// version `from + 1`.
pub(crate) struct Migration {
    /// The version the step starts from.
    pub(crate) from: u32,
    /// The step, in the open's write transaction.
    pub(crate) run: fn(&mut Write<'_>) -> Result<(), StorageError>,
}

/// Every step, oldest first. The first release's format is version 1.
pub(crate) const MIGRATIONS: &[Migration] = &[];

/// The oldest version a database may have and still be opened.
const OLDEST: u32 = 1;

/// Whether this build opens a database stored at version `v` (migrating it
/// if it is older than [`FORMAT_VERSION`]).
pub(crate) fn opens(v: u32) -> bool {
    (OLDEST..=FORMAT_VERSION).contains(&v)
}

/// The refusal of a database of format version `v`.
pub(super) fn other_format(v: u32) -> StorageError {
    let reads = if OLDEST == FORMAT_VERSION {
        FORMAT_VERSION.to_string()
    } else {
        format!("{OLDEST} to {FORMAT_VERSION}")
    };
    StorageError(format!("the database has format version {v}; this build reads version {reads}"))
}

/// Bring `w`'s database from version `stored` to `target` with `steps`, in
/// order. A step missing between them is an error (the transaction is then
/// dropped: nothing changed).
pub(super) fn upgrade(
    w: &mut Write<'_>,
    stored: u32,
    target: u32,
    steps: &[Migration],
) -> Result<(), StorageError> {
    for v in stored..target {
        let step = steps.iter().find(|s| s.from == v).ok_or_else(|| {
            StorageError(format!("no step of the stored format leads from version {v} to {}", v + 1))
        })?;
        (step.run)(w)?;
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::storage::{Store, Table};

    fn mark(w: &mut Write<'_>, from: u32) -> Result<(), StorageError> {
        let mut seen = w.get_raw(Table::Customers, b"steps")?.unwrap_or_default();
        seen.push(u8::try_from(from).unwrap_or(u8::MAX));
        w.put_raw(Table::Customers, b"steps", &seen)
    }

    const STEPS: &[Migration] = &[
        Migration { from: 2, run: |w| mark(w, 2) },
        Migration { from: 1, run: |w| mark(w, 1) },
        Migration { from: 3, run: |w| mark(w, 3) },
    ];

    #[test]
    fn an_older_database_takes_every_step_in_order_and_a_gap_changes_nothing() {
        let store = Store::in_memory().unwrap();
        store.write(|w| upgrade(w, 1, 4, STEPS)).unwrap();
        let steps = store.read_durable(|r| r.get_raw(Table::Customers, b"steps")).unwrap();
        assert_eq!(steps.as_deref(), Some(&[1u8, 2, 3][..]), "each step once, oldest first");
        store.write(|w| upgrade(w, 4, 4, STEPS)).unwrap();
        let again = store.read_durable(|r| r.get_raw(Table::Customers, b"steps")).unwrap();
        assert_eq!(again.as_deref(), Some(&[1u8, 2, 3][..]), "nothing to do at the target");

        let fresh = Store::in_memory().unwrap();
        let e = fresh.write(|w| upgrade(w, 1, 5, STEPS)).unwrap_err();
        assert_eq!(e.0, "no step of the stored format leads from version 4 to 5");
        let left = fresh.read_durable(|r| r.get_raw(Table::Customers, b"steps")).unwrap();
        assert_eq!(left, None, "the steps before the gap were rolled back with it");
    }

    #[test]
    fn this_build_opens_every_version_up_to_its_own() {
        assert!(opens(FORMAT_VERSION) && opens(OLDEST));
        assert!(!opens(OLDEST - 1) && !opens(FORMAT_VERSION + 1));
        assert!(MIGRATIONS.iter().all(|s| opens(s.from) && s.from < FORMAT_VERSION));
    }
}
