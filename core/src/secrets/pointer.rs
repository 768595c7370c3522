//! Feed pointers: opaque, unforgeable positions bound to a tenant.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use subtle::ConstantTimeEq;

/// Domain separation: a tag for pointers is never valid for anything else.
const DOMAIN: &[u8] = b"ach-pointer-v1";
const CURSOR_DOMAIN: &[u8] = b"ach-cursor-v1";

/// The longest position a list's cursor carries, in bytes.
pub const MAX_CURSOR_POSITION: usize = 64;
/// Bytes of the truncated HMAC in a pointer (128 bits).
const TAG_LEN: usize = 16;
/// Bytes of a decoded pointer: the sequence number and the tag.
const RAW_LEN: usize = 8 + TAG_LEN;

/// Characters of every pointer [`PointerCodec::encode`] makes: 24 bytes in base64.
pub const POINTER_LEN: usize = RAW_LEN / 3 * 4;

/// Turns a feed position (`seq`) into an opaque pointer for one tenant (`scope`,
/// e.g. the partner's id) and back.
///
/// A pointer is the unpadded URL-safe base64 of `seq` (8 bytes, big-endian) followed by
/// the first 16 bytes of HMAC-SHA256(secret, `"ach-pointer-v1" || scope || 0x00 ||
/// seq`), [`POINTER_LEN`] characters in all. Without the secret nobody can make a
/// pointer that [`PointerCodec::decode`] accepts (2^-128 per try), and the scope in the
/// MAC means a pointer issued to one tenant is refused for every other. The pointer
/// does not hide `seq` from its holder (it is not encrypted), only fixes it.
///
/// The literal pointer `"0"` (start of the feed) is the engine's business, not this
/// codec's: `decode` refuses it like any other malformed text.
pub struct PointerCodec([u8; 32]);

impl PointerCodec {
    /// A codec under the 32-byte secret (keep it with the other server secrets; a new
    /// secret invalidates every pointer issued).
    pub fn new(secret: &[u8; 32]) -> PointerCodec {
        PointerCodec(*secret)
    }

    /// The tag for `seq` in `scope`. The scope is followed by 0x00 and the fixed-length
    /// seq, so (scope, seq) pairs never share a MAC input.
    fn tag(&self, scope: &str, seq: [u8; 8]) -> [u8; 32] {
        #[allow(clippy::expect_used)]
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.0).expect("HMAC takes a key of any length");
        mac.update(DOMAIN);
        mac.update(scope.as_bytes());
        mac.update(&[0]);
        mac.update(&seq);
        mac.finalize().into_bytes().into()
    }

    /// The pointer to position `seq` of the feed of `scope`.
    pub fn encode(&self, scope: &str, seq: u64) -> String {
        let seq = seq.to_be_bytes();
        let mut raw = [0u8; RAW_LEN];
        raw[..8].copy_from_slice(&seq);
        raw[8..].copy_from_slice(&self.tag(scope, seq)[..TAG_LEN]);
        URL_SAFE_NO_PAD.encode(raw)
    }

    /// The position a pointer stands for, if it was made by [`PointerCodec::encode`]
    /// with this secret for this `scope`; `None` for anything else (wrong length or
    /// alphabet, non-canonical base64, a bad tag, another scope). The tag is compared
    /// in constant time; no input panics, and the work done is bounded whatever the
    /// input's length.
    pub fn decode(&self, scope: &str, text: &str) -> Option<u64> {
        if text.len() != POINTER_LEN {
            return None;
        }
        let mut raw = [0u8; RAW_LEN];
        // Exactly 32 characters fill 24 bytes with no leftover bits, so every pointer
        // has a single text form.
        let n = URL_SAFE_NO_PAD.decode_slice(text, &mut raw).ok()?;
        if n != RAW_LEN {
            return None;
        }
        let (seq, tag) = raw.split_at(8);
        let seq: [u8; 8] = seq.try_into().ok()?;
        let expected = self.tag(scope, seq);
        bool::from(expected[..TAG_LEN].ct_eq(tag)).then(|| u64::from_be_bytes(seq))
    }
}

impl PointerCodec {
    fn cursor_tag(&self, scope: &str, position: &[u8]) -> [u8; 32] {
        #[allow(clippy::expect_used)]
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.0).expect("HMAC takes a key of any length");
        mac.update(CURSOR_DOMAIN);
        mac.update(scope.as_bytes());
        mac.update(&[0]);
        mac.update(position);
        mac.finalize().into_bytes().into()
    }

    /// A list's cursor: `position` (at most [`MAX_CURSOR_POSITION`] bytes)
    /// and its MAC for `scope`, URL-safe base64. Unforgeable, and refused by
    /// any other scope.
    pub fn encode_cursor(&self, scope: &str, position: &[u8]) -> String {
        let mut raw = Vec::with_capacity(position.len() + TAG_LEN);
        raw.extend_from_slice(position);
        raw.extend_from_slice(&self.cursor_tag(scope, position)[..TAG_LEN]);
        URL_SAFE_NO_PAD.encode(raw)
    }

    /// The position of a cursor [`encode_cursor`](Self::encode_cursor) made
    /// for `scope`; `None` for anything else.
    pub fn decode_cursor(&self, scope: &str, text: &str) -> Option<Vec<u8>> {
        if text.len() > (MAX_CURSOR_POSITION + TAG_LEN).div_ceil(3) * 4 {
            return None;
        }
        let raw = URL_SAFE_NO_PAD.decode(text).ok()?;
        if raw.len() <= TAG_LEN || raw.len() > MAX_CURSOR_POSITION + TAG_LEN {
            return None;
        }
        let (position, tag) = raw.split_at(raw.len() - TAG_LEN);
        let expected = self.cursor_tag(scope, position);
        bool::from(expected[..TAG_LEN].ct_eq(tag)).then(|| position.to_vec())
    }
}

redacted_key!(PointerCodec);

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use proptest::prelude::*;

    const ALPHABET: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

    fn codec() -> PointerCodec {
        PointerCodec::new(&[0x5a; 32])
    }

    #[test]
    fn round_trip() {
        let c = codec();
        for seq in [0, 1, 2, 255, 256, 1 << 32, u64::MAX - 1, u64::MAX] {
            for scope in ["par_0123456789abcdefghijKL", "", "ü\u{0}x"] {
                let p = c.encode(scope, seq);
                assert_eq!(p.len(), POINTER_LEN);
                assert!(p.chars().all(|ch| ALPHABET.contains(ch)), "{p}");
                assert_eq!(c.decode(scope, &p), Some(seq), "{scope:?} {seq}");
            }
        }
        // Deterministic: the same position gives the same pointer.
        assert_eq!(c.encode("par_a", 7), c.encode("par_a", 7));
        assert_ne!(c.encode("par_a", 7), c.encode("par_a", 8));
    }

    #[test]
    fn known_layout() {
        let c = codec();
        let p = c.encode("par_a", 0x0102_0304_0506_0708);
        let raw = URL_SAFE_NO_PAD.decode(&p).unwrap();
        assert_eq!(raw.len(), 24);
        assert_eq!(raw[..8], [1, 2, 3, 4, 5, 6, 7, 8]);
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&[0x5a; 32]).unwrap();
        mac.update(b"ach-pointer-v1par_a\x00\x01\x02\x03\x04\x05\x06\x07\x08");
        assert_eq!(raw[8..], mac.finalize().into_bytes()[..16]);
    }

    #[test]
    fn a_cursor_opens_only_for_its_scope_and_unchanged() {
        let c = codec();
        let position = b"txn_0AbCdEfGh000xyzxyzxyzxy";
        let cursor = c.encode_cursor("par_A/t", position);
        assert_eq!(c.decode_cursor("par_A/t", &cursor).as_deref(), Some(&position[..]));
        assert_eq!(c.decode_cursor("par_B/t", &cursor), None);
        assert_eq!(c.decode_cursor("par_A/m", &cursor), None);
        assert_eq!(PointerCodec::new(&[0x5b; 32]).decode_cursor("par_A/t", &cursor), None);
        // Not a pointer of a feed, nor a feed's pointer a cursor.
        assert_eq!(c.decode("par_A/t", &cursor), None);
        assert_eq!(c.decode_cursor("par_A/t", &c.encode("par_A/t", 7)), None);
        for i in 0..cursor.len() {
            let mut forged = cursor.clone().into_bytes();
            forged[i] = if forged[i] == b'A' { b'B' } else { b'A' };
            let forged = String::from_utf8(forged).unwrap();
            assert_eq!(c.decode_cursor("par_A/t", &forged), None, "{forged}");
        }
        for junk in ["", "=", "é", &"A".repeat(10_000), &cursor[..cursor.len() - 1]] {
            assert_eq!(c.decode_cursor("par_A/t", junk), None, "{junk}");
        }
    }

    #[test]
    fn bound_to_scope_and_secret() {
        let c = codec();
        let a = c.encode("par_A", 42);
        let b = c.encode("par_B", 42);
        assert_ne!(a, b);
        assert_eq!(c.decode("par_B", &a), None);
        assert_eq!(c.decode("par_A", &b), None);
        assert_eq!(c.decode("par_A\u{0}", &a), None);
        assert_eq!(c.decode("par_", &a), None);
        assert_eq!(c.decode("", &a), None);
        assert_eq!(PointerCodec::new(&[0x5b; 32]).decode("par_A", &a), None);
        assert_eq!(c.decode("par_A", &a), Some(42));
    }

    #[test]
    fn every_single_character_change_is_refused() {
        let c = codec();
        for seq in [0, 12_345, u64::MAX] {
            let p = c.encode("par_A", seq);
            for i in 0..p.len() {
                for ch in ALPHABET.chars().chain(['=', '+', '/', '.', 'é', ' ']) {
                    if p[i..].starts_with(ch) {
                        continue;
                    }
                    let changed = format!("{}{ch}{}", &p[..i], &p[i + 1..]);
                    assert_eq!(c.decode("par_A", &changed), None, "{changed}");
                }
                // Deleting or doubling a character.
                assert_eq!(c.decode("par_A", &format!("{}{}", &p[..i], &p[i + 1..])), None);
                assert_eq!(c.decode("par_A", &format!("{}{}", &p[..=i], &p[i..])), None);
            }
            assert_eq!(c.decode("par_A", &format!("{p}=")), None);
            assert_eq!(c.decode("par_A", &format!("{p}==")), None);
            assert_eq!(c.decode("par_A", &format!(" {p}")), None);
        }
    }

    #[test]
    fn forged_sequence_is_refused() {
        let c = codec();
        let p = c.encode("par_A", 5);
        let mut raw = URL_SAFE_NO_PAD.decode(&p).unwrap();
        raw[7] = 6;
        assert_eq!(c.decode("par_A", &URL_SAFE_NO_PAD.encode(&raw)), None);
    }

    #[test]
    fn odd_inputs_are_refused_without_panicking() {
        let c = codec();
        let huge = "A".repeat(1 << 20);
        let inputs = [
            "",
            "0",
            "A",
            huge.as_str(),
            &huge[..POINTER_LEN],
            "éééééééééééééééé",
            "😀😀😀😀😀😀😀😀",
            "\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\
             \u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}",
            "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==",
            "////////////////////////////////",
            "++++++++++++++++++++++++++++++++",
        ];
        for text in inputs {
            assert_eq!(c.decode("par_A", text), None, "{:?}", &text[..text.len().min(40)]);
        }
        assert_eq!("éééééééééééééééé".len(), POINTER_LEN);
        assert_eq!("😀😀😀😀😀😀😀😀".len(), POINTER_LEN);
    }

    proptest! {
        #[test]
        fn decode_never_panics_nor_accepts_any_string(text in any::<String>()) {
            prop_assert_eq!(codec().decode("par_A", &text), None);
        }

        #[test]
        fn decode_never_accepts_well_formed_random_text(text in "[A-Za-z0-9_-]{32}") {
            prop_assert_eq!(codec().decode("par_A", &text), None);
        }

        #[test]
        fn round_trips_for_any_scope_and_seq(scope in any::<String>(), seq in any::<u64>()) {
            let c = codec();
            let p = c.encode(&scope, seq);
            prop_assert_eq!(c.decode(&scope, &p), Some(seq));
            let other = format!("{scope}x");
            prop_assert_eq!(c.decode(&other, &p), None);
        }
    }
}
