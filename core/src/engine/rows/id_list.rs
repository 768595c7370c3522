//! Lists of transaction ids packed into one row's value: the settlement index
//! and the trace index keep one row per chunk of a cut-off instead of one per
//! transaction (one B-tree insert per 500 transactions instead of one each).
//!
//! A packed value starts with [`PACKED`] (a single pending row holds one
//! bare id, which starts with `t`), then each id as one length byte and its
//! bytes.

use crate::storage::StorageError;

/// Items one packed row holds at most: ids of an index row, records of an
/// origination file's outgoing row. A catch-up reads whole rows, so a row
/// stays within one catch-up budget (`schedule::CATCH_UP_BUDGET`, asserted
/// there).
pub(crate) const PER_ROW: u64 = 500;

/// The first byte of a packed list.
pub(crate) const PACKED: u8 = 1;

/// An empty packed list, with room for `n` ids.
pub(crate) fn with_capacity(n: usize) -> Vec<u8> {
    let mut list = Vec::with_capacity(1 + n * 32);
    list.push(PACKED);
    list
}

/// Append `id` to a packed list.
pub(crate) fn push(list: &mut Vec<u8>, id: &str) -> Result<(), StorageError> {
    let len = u8::try_from(id.len()).map_err(|_| StorageError(format!("an id of {} bytes", id.len())))?;
    list.push(len);
    list.extend_from_slice(id.as_bytes());
    Ok(())
}

/// Whether `value` is a packed list (not a single row's bare id).
pub(crate) fn is_packed(value: &[u8]) -> bool {
    value.first() == Some(&PACKED)
}

/// The ids of a packed list, in order; an unreadable list is an error.
pub(crate) fn ids(value: &[u8]) -> Result<Vec<&str>, StorageError> {
    let unreadable = || StorageError("a packed id list is unreadable".into());
    let mut rest = value.strip_prefix(&[PACKED]).ok_or_else(unreadable)?;
    let mut out = Vec::new();
    while let Some((&len, tail)) = rest.split_first() {
        let (id, tail) = tail.split_at_checked(usize::from(len)).ok_or_else(unreadable)?;
        out.push(std::str::from_utf8(id).map_err(|_| unreadable())?);
        rest = tail;
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_list_gives_back_its_ids_in_order() {
        let mut list = with_capacity(3);
        for id in ["txn_a", "txn_bb", ""] {
            push(&mut list, id).unwrap();
        }
        assert!(is_packed(&list));
        assert_eq!(ids(&list).unwrap(), ["txn_a", "txn_bb", ""]);
        assert!(!is_packed(b"txn_a"));
    }

    #[test]
    fn a_damaged_list_is_an_error_not_a_panic() {
        let unreadable = Err(StorageError("a packed id list is unreadable".into()));
        assert_eq!(ids(b"txn_a"), unreadable);
        assert_eq!(ids(&[PACKED, 9, b't']), unreadable);
        assert_eq!(ids(&[PACKED, 1, 0xff]), unreadable);
        let mut list = with_capacity(1);
        assert_eq!(push(&mut list, &"x".repeat(256)), Err(StorageError("an id of 256 bytes".into())));
        assert_eq!(list, [PACKED], "a refused id adds nothing");
    }
}
