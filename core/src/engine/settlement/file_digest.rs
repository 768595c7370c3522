//! The SHA-256 of the origination file being assembled, worked out as its
//! parts are stored, so finishing a file does not read back and unseal every
//! part to hash them (10 MB for 100,000 entries).
//!
//! Only a shortcut: the digest is kept in memory, and used only if it has seen
//! exactly the parts the finishing transaction stored, in order. A part stored
//! again (its transaction rolled back and retried), a crash or a restart
//! leaves it behind, and the digest is worked out from the stored parts.

use std::sync::{Mutex, PoisonError};

use sha2::{Digest as _, Sha256};

/// The running digest of one file: its id, the parts it has seen, the hasher.
#[derive(Debug, Default)]
pub(crate) struct FileDigest(Mutex<Option<(String, u32, Sha256)>>);

impl FileDigest {
    /// Part `part` of file `id` is being stored with these bytes.
    pub(crate) fn part(&self, id: &str, part: u32, bytes: &[u8]) {
        let mut running = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        match running.as_mut() {
            _ if part == 0 => *running = Some((id.to_owned(), 1, Sha256::new_with_prefix(bytes))),
            Some((of, seen, hasher)) if of == id && *seen == part => {
                hasher.update(bytes);
                *seen += 1;
            }
            _ => *running = None,
        }
    }

    /// The digest of file `id` if it has seen exactly its `parts` parts.
    pub(crate) fn finish(&self, id: &str, parts: u32) -> Option<[u8; 32]> {
        let running = self.0.lock().unwrap_or_else(PoisonError::into_inner).take();
        match running {
            Some((of, seen, hasher)) if of == id && seen == parts => Some(hasher.finalize().into()),
            _ => None,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_is_given_only_for_exactly_the_parts_seen() {
        let whole = |parts: &[&[u8]]| -> [u8; 32] { Sha256::digest(parts.concat()).into() };
        let d = FileDigest::default();
        d.part("fil_a", 0, b"one");
        d.part("fil_a", 1, b"two");
        assert_eq!(d.finish("fil_a", 2), Some(whole(&[b"one", b"two"])));
        assert_eq!(d.finish("fil_a", 2), None, "taken once");
        // A part stored again (a rolled-back transaction retried): no shortcut.
        d.part("fil_a", 0, b"one");
        d.part("fil_a", 1, b"two");
        d.part("fil_a", 1, b"TWO");
        d.part("fil_a", 2, b"three");
        assert_eq!(d.finish("fil_a", 3), None);
        // Another file, fewer or more parts than seen: none.
        d.part("fil_a", 0, b"one");
        assert_eq!(d.finish("fil_b", 1), None);
        d.part("fil_a", 0, b"one");
        assert_eq!(d.finish("fil_a", 2), None);
        // A restart part-way (nothing seen before part 1): none.
        d.part("fil_a", 1, b"two");
        assert_eq!(d.finish("fil_a", 2), None);
    }
}
