//! Keyed fingerprints of account-bearing facts (duplicate detection, spent check
//! numbers), so the duplicate indexes never hold an account number, not even as a
//! plain hash that could be brute-forced over the small space of account numbers.

use std::fmt;

use hmac::{Hmac, Mac};
use sha2::Sha256;
use zeroize::Zeroize;

/// HMAC-SHA256 under a key derived from the host's encryption key (which never
/// enters the database). Holds the keyed MAC state (the key's two padded blocks
/// already hashed), so a fingerprint costs no key setup; the derived key itself
/// is wiped once that state is made.
#[derive(Clone)]
pub struct Fingerprinter(Hmac<Sha256>);

impl fmt::Debug for Fingerprinter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Fingerprinter(…)")
    }
}

fn mac(key: &[u8]) -> Hmac<Sha256> {
    #[allow(clippy::expect_used)]
    <Hmac<Sha256> as Mac>::new_from_slice(key).expect("HMAC takes a key of any length")
}

impl Fingerprinter {
    /// A fingerprinter whose key is derived from `encryption_key` (domain-separated,
    /// so the same key never serves two purposes).
    pub fn new(encryption_key: &[u8; 32]) -> Fingerprinter {
        let mut m = mac(encryption_key);
        m.update(b"ach-fingerprint-key-v1");
        let mut key: [u8; 32] = m.finalize().into_bytes().into();
        let keyed = mac(&key);
        key.zeroize();
        Fingerprinter(keyed)
    }

    /// The fingerprint of `parts` (each length-prefixed, so `["ab","c"]` and
    /// `["a","bc"]` differ).
    pub fn digest(&self, parts: &[&[u8]]) -> [u8; 32] {
        let mut m = self.0.clone();
        for part in parts {
            m.update(&(part.len() as u64).to_be_bytes());
            m.update(part);
        }
        m.finalize().into_bytes().into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_are_keyed_deterministic_and_unambiguous() {
        let a = Fingerprinter::new(&[1u8; 32]);
        let b = Fingerprinter::new(&[2u8; 32]);
        let parts: [&[u8]; 2] = [b"021000021", b"123456789"];
        assert_eq!(a.digest(&parts), a.digest(&parts));
        assert_ne!(a.digest(&parts), b.digest(&parts));
        assert_ne!(a.digest(&[b"ab", b"c"]), a.digest(&[b"a", b"bc"]));
        assert!(!format!("{a:?}").contains('1'));
    }
}
