//! API keys and their stored hashes.

use std::fmt;
use std::hash::{Hash, Hasher};

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use zeroize::Zeroize;

use crate::ids::random_alphanumeric;

/// Random characters after the prefix of every API key: 32 symbols of `[0-9A-Za-z]`
/// carry 32 × log2(62) ≈ 190.5 bits.
pub const KEY_BODY_LEN: usize = 32;

/// Who an API key belongs to, which decides its prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyKind {
    /// `pk_`: a partner (platform) key.
    Partner,
    /// `mk_`: a merchant key.
    Merchant,
    /// `ok_`: the operator key.
    Operator,
}

impl KeyKind {
    /// The prefix, with its underscore.
    pub const fn prefix(self) -> &'static str {
        match self {
            KeyKind::Partner => "pk_",
            KeyKind::Merchant => "mk_",
            KeyKind::Operator => "ok_",
        }
    }

    /// The kind of key `text` is, if it has exactly the format of a generated key
    /// (prefix + [`KEY_BODY_LEN`] ASCII alphanumerics). A cheap pre-check only: a
    /// well-formed text is not thereby a valid key (see [`verify`]).
    pub fn of(text: &str) -> Option<KeyKind> {
        [KeyKind::Partner, KeyKind::Merchant, KeyKind::Operator].into_iter().find(|kind| {
            text.strip_prefix(kind.prefix()).is_some_and(|body| {
                body.len() == KEY_BODY_LEN && body.bytes().all(|b| b.is_ascii_alphanumeric())
            })
        })
    }
}

/// A secret API key, e.g. `pk_` followed by 32 random alphanumerics.
///
/// Its text is shown to the owner once, at creation; the service stores only its
/// [`KeyHash`]. `Debug` prints the prefix only, there is no `Display` (so a key is not
/// formatted into a log by accident), and the text is wiped from memory on drop.
#[derive(Clone)]
pub struct ApiKey(String);

impl ApiKey {
    /// A new random key of the given kind (≥ 190 bits from the OS random source).
    pub fn generate(kind: KeyKind) -> ApiKey {
        let mut text = String::with_capacity(kind.prefix().len() + KEY_BODY_LEN);
        text.push_str(kind.prefix());
        let mut body = random_alphanumeric(KEY_BODY_LEN);
        text.push_str(&body);
        body.zeroize();
        ApiKey(text)
    }

    /// The key's full text, to hand to its owner once.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The key's kind.
    pub fn kind(&self) -> Option<KeyKind> {
        KeyKind::of(&self.0)
    }

    /// The hash to store in place of the key.
    pub fn hash(&self) -> KeyHash {
        KeyHash::of(&self.0)
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let prefix = self.kind().map_or("", KeyKind::prefix);
        write!(f, "ApiKey({prefix}…)")
    }
}

impl Drop for ApiKey {
    fn drop(&mut self) {
        self.0.zeroize();
    }
}

/// The stored form of an API key: SHA-256 of the key's text.
///
/// An unsalted, fast hash is the right tool here, unlike for passwords: every key has
/// about 190 bits of randomness, so guessing a key from its hash is infeasible however
/// fast the hash is, and there is no dictionary a salt or a slow KDF (bcrypt, Argon2)
/// would defend against. Being deterministic, the hash can also serve as the lookup key
/// that finds the presented key's record in one step, and being fast it costs
/// microseconds per request (a deliberately slow hash would hand every anonymous
/// caller a cheap way to burn CPU).
///
/// Equality (`==` and [`KeyHash::ct_eq`]) is constant-time.
#[derive(Clone, Copy)]
pub struct KeyHash([u8; 32]);

impl KeyHash {
    /// The hash of a key's text.
    pub fn of(key: &str) -> KeyHash {
        KeyHash(Sha256::digest(key.as_bytes()).into())
    }

    /// The 32 bytes, for storage.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// A hash read back from storage: exactly 32 bytes, else `None`.
    pub fn from_bytes(bytes: &[u8]) -> Option<KeyHash> {
        <[u8; 32]>::try_from(bytes).ok().map(KeyHash)
    }

    /// Whether two hashes are equal, in time independent of where they differ.
    pub fn ct_eq(&self, other: &KeyHash) -> bool {
        self.0.ct_eq(&other.0).into()
    }
}

impl PartialEq for KeyHash {
    fn eq(&self, other: &KeyHash) -> bool {
        self.ct_eq(other)
    }
}

impl Eq for KeyHash {}

impl Hash for KeyHash {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

impl fmt::Debug for KeyHash {
    /// The first 4 bytes in hex, enough to tell hashes apart in a log.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "KeyHash({}…)", super::hex::encode(&self.0[..4]))
    }
}

/// Whether the presented key text is the key whose hash is `stored`: hashes it and
/// compares the hashes in constant time. Any text is accepted as input (no panic).
pub fn verify(presented: &str, stored: &KeyHash) -> bool {
    KeyHash::of(presented).ct_eq(stored)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::collections::HashSet;

    const KINDS: [KeyKind; 3] = [KeyKind::Partner, KeyKind::Merchant, KeyKind::Operator];

    #[test]
    fn keys_have_the_format() {
        for (kind, prefix) in KINDS.into_iter().zip(["pk_", "mk_", "ok_"]) {
            let key = ApiKey::generate(kind);
            let text = key.as_str();
            assert_eq!(text.len(), 3 + KEY_BODY_LEN);
            assert!(text.starts_with(prefix));
            assert!(text[3..].bytes().all(|b| b.is_ascii_alphanumeric()));
            assert_eq!(key.kind(), Some(kind));
            assert_eq!(KeyKind::of(text), Some(kind));
        }
        assert!((KEY_BODY_LEN as f64) * 62f64.log2() >= 190.0);
    }

    #[test]
    fn key_kind_of_is_exact() {
        let body = "a".repeat(KEY_BODY_LEN);
        assert_eq!(KeyKind::of(&format!("mk_{body}")), Some(KeyKind::Merchant));
        assert_eq!(KeyKind::of(&format!("xk_{body}")), None);
        assert_eq!(KeyKind::of(&format!("PK_{body}")), None);
        assert_eq!(KeyKind::of(&format!("pk_{body}a")), None);
        assert_eq!(KeyKind::of(&format!("pk_{}", &body[1..])), None);
        assert_eq!(KeyKind::of(&format!("pk_{}-", &body[1..])), None);
        assert_eq!(KeyKind::of(&format!("pk_{}é", &body[2..])), None);
        assert_eq!(KeyKind::of(""), None);
    }

    #[test]
    fn keys_are_unique() {
        let keys: HashSet<String> =
            (0..5_000).map(|_| ApiKey::generate(KeyKind::Partner).as_str().to_owned()).collect();
        assert_eq!(keys.len(), 5_000);
    }

    #[test]
    fn hash_is_sha256() {
        let h = KeyHash::of("abc");
        assert_eq!(
            super::super::hex::encode(h.as_bytes()),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            super::super::hex::encode(KeyHash::of("").as_bytes()),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn hash_bytes_round_trip() {
        let key = ApiKey::generate(KeyKind::Merchant);
        let h = key.hash();
        let back = KeyHash::from_bytes(h.as_bytes()).unwrap();
        assert!(back.ct_eq(&h));
        assert_eq!(back, h);
        assert!(KeyHash::from_bytes(&h.as_bytes()[..31]).is_none());
        assert!(KeyHash::from_bytes(&[0u8; 33]).is_none());
        assert!(KeyHash::from_bytes(&[]).is_none());
        let other = ApiKey::generate(KeyKind::Merchant).hash();
        assert!(!h.ct_eq(&other));
        assert_ne!(h, other);
        let set: HashSet<KeyHash> = [h, back, other].into_iter().collect();
        assert_eq!(set.len(), 2);
    }

    #[test]
    fn verify_accepts_only_the_key() {
        let key = ApiKey::generate(KeyKind::Operator);
        let stored = key.hash();
        assert!(verify(key.as_str(), &stored));
        let text = key.as_str();
        assert!(!verify(&text[..text.len() - 1], &stored));
        assert!(!verify(&format!("{text} "), &stored));
        assert!(!verify(&text.to_uppercase(), &stored));
        assert!(!verify("", &stored));
        assert!(!verify(ApiKey::generate(KeyKind::Operator).as_str(), &stored));
        // A single changed character.
        let mut changed = text.to_owned().into_bytes();
        changed[10] = if changed[10] == b'a' { b'b' } else { b'a' };
        assert!(!verify(&String::from_utf8(changed).unwrap(), &stored));
    }

    #[test]
    fn debug_never_shows_the_key() {
        for kind in KINDS {
            let key = ApiKey::generate(kind);
            let body = &key.as_str()[3..];
            let shown = format!("{key:?} {:?} {key:#?}", key.hash());
            assert!(!shown.contains(body), "{shown}");
            assert!(!shown.contains(&body[..8]), "{shown}");
            assert!(format!("{key:?}").starts_with(&format!("ApiKey({}", kind.prefix())));
            assert!(format!("{key:?}").ends_with("…)"));
        }
    }
}
