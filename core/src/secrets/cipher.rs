//! Encryption at rest: XChaCha20-Poly1305 with random nonces.

use std::fmt;
use std::path::Path;

use chacha20poly1305::aead::{Aead, AeadInPlace, KeyInit, Payload};
use chacha20poly1305::{Key, XChaCha20Poly1305, XNonce};
use zeroize::Zeroize;

use super::{files, hex, SecretError};
use crate::ids::random_bytes;

/// Bytes of the random nonce that starts every sealed value.
const NONCE_LEN: usize = 24;
/// Bytes of the Poly1305 tag that ends every sealed value.
const TAG_LEN: usize = 16;

/// A 256-bit key for [`Cipher`].
///
/// Its text form is 64 lower-case hex digits. `Debug` never shows it, and the bytes are
/// wiped from memory on drop.
#[derive(Clone)]
pub struct EncryptionKey([u8; 32]);

impl EncryptionKey {
    /// A new random key from the OS random source.
    pub fn generate() -> EncryptionKey {
        let mut bytes = [0u8; 32];
        random_bytes(&mut bytes);
        EncryptionKey(bytes)
    }

    /// A key from its 32 bytes.
    pub fn from_bytes(bytes: [u8; 32]) -> EncryptionKey {
        EncryptionKey(bytes)
    }

    /// The key's bytes, e.g. for [`Cipher::new`].
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// A key from exactly 64 hex digits (either case), else `None`.
    pub fn from_hex(text: &str) -> Option<EncryptionKey> {
        hex::decode_32(text).ok().map(EncryptionKey)
    }

    /// The key as 64 lower-case hex digits (a secret: write it only to a key file).
    pub fn to_hex(&self) -> String {
        hex::encode(&self.0)
    }

    /// The key in the file at `path`, creating the file with a fresh key if there is
    /// none. Hosts call this at start-up; it is one of the two functions of this module
    /// that touch the file system.
    ///
    /// The file holds 64 hex digits and an optional final newline (`\n` or `\r\n`);
    /// anything else is [`SecretError::BadKeyFile`], naming the path. A new file gets
    /// mode `0600` on unix and appears atomically, complete, and only once even when
    /// several processes start together (they all get the same key). The parent
    /// directory must exist.
    pub fn load_or_create(path: &Path) -> Result<EncryptionKey, SecretError> {
        let mut text = files::load_or_create_secret_file(path, || EncryptionKey::generate().to_hex())?;
        let key = hex::decode_32(&text)
            .map(EncryptionKey)
            .map_err(|reason| SecretError::BadKeyFile { path: path.to_owned(), reason });
        text.zeroize();
        key
    }
}

redacted_key!(EncryptionKey);

/// Seals and opens values at rest (bank account numbers) with XChaCha20-Poly1305.
///
/// A sealed value is `nonce (24 random bytes) || ciphertext || tag (16 bytes)`, so it
/// is 40 bytes longer than the plaintext. The 192-bit nonce is drawn at random for
/// every message, which is safe for any realistic number of messages under one key
/// (unlike the 96-bit nonce of plain ChaCha20-Poly1305 or AES-GCM). Two seals of the
/// same value differ.
///
/// The associated data `aad` is authenticated but not stored: pass the identity of the
/// record the value belongs to (e.g. `b"cus_…/account_number"`) when sealing, and the
/// same when opening, so a sealed value moved to another record does not open.
pub struct Cipher(XChaCha20Poly1305);

impl Cipher {
    /// A cipher under the 32-byte key (see [`EncryptionKey`]).
    pub fn new(key: &[u8; 32]) -> Cipher {
        Cipher(XChaCha20Poly1305::new(Key::from_slice(key)))
    }

    /// Seal `plaintext`, bound to `aad`: returns nonce || ciphertext || tag.
    ///
    /// # Panics
    /// Only if `plaintext` is longer than XChaCha20's limit of 256 GiB.
    pub fn encrypt(&self, plaintext: &[u8], aad: &[u8]) -> Vec<u8> {
        let mut nonce = [0u8; NONCE_LEN];
        random_bytes(&mut nonce);
        let mut sealed = Vec::with_capacity(NONCE_LEN + plaintext.len() + TAG_LEN);
        sealed.extend_from_slice(&nonce);
        sealed.extend_from_slice(plaintext);
        #[allow(clippy::expect_used)]
        let tag = self
            .0
            .encrypt_in_place_detached(XNonce::from_slice(&nonce), aad, &mut sealed[NONCE_LEN..])
            .expect("plaintext within XChaCha20's 256 GiB limit");
        sealed.extend_from_slice(&tag);
        sealed
    }

    /// Open a value sealed by [`Cipher::encrypt`] with the same key and `aad`.
    ///
    /// A wrong key, wrong `aad`, any altered byte, or input too short to hold a nonce
    /// and a tag gives [`SecretError::Decrypt`]; no input panics.
    pub fn decrypt(&self, sealed: &[u8], aad: &[u8]) -> Result<Vec<u8>, SecretError> {
        if sealed.len() < NONCE_LEN + TAG_LEN {
            return Err(SecretError::Decrypt);
        }
        let (nonce, body) = sealed.split_at(NONCE_LEN);
        self.0
            .decrypt(XNonce::from_slice(nonce), Payload { msg: body, aad })
            .map_err(|_| SecretError::Decrypt)
    }
}

impl From<&EncryptionKey> for Cipher {
    fn from(key: &EncryptionKey) -> Cipher {
        Cipher::new(key.as_bytes())
    }
}

impl fmt::Debug for Cipher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Cipher(<redacted>)")
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const AAD: &[u8] = b"cus_0123456789abcdefghijKL/account_number";

    #[test]
    fn round_trip() {
        let key = EncryptionKey::generate();
        let cipher = Cipher::from(&key);
        for plaintext in [&b""[..], b"1", b"000123456789", &[0xffu8; 1000]] {
            let sealed = cipher.encrypt(plaintext, AAD);
            assert_eq!(sealed.len(), plaintext.len() + NONCE_LEN + TAG_LEN);
            assert_eq!(cipher.decrypt(&sealed, AAD).unwrap(), plaintext);
            // A fresh cipher from the same key bytes opens it too.
            assert_eq!(Cipher::new(key.as_bytes()).decrypt(&sealed, AAD).unwrap(), plaintext);
        }
        // The empty aad is an aad like any other.
        let sealed = cipher.encrypt(b"42", b"");
        assert_eq!(cipher.decrypt(&sealed, b"").unwrap(), b"42");
        assert!(matches!(cipher.decrypt(&sealed, b"x"), Err(SecretError::Decrypt)));
    }

    #[test]
    fn same_plaintext_seals_differently() {
        let cipher = Cipher::new(&[7u8; 32]);
        let a = cipher.encrypt(b"000123456789", AAD);
        let b = cipher.encrypt(b"000123456789", AAD);
        assert_ne!(a, b);
        assert_ne!(a[..NONCE_LEN], b[..NONCE_LEN]);
        // The plaintext does not appear in the output.
        assert!(!a.windows(12).any(|w| w == b"000123456789"));
    }

    #[test]
    fn wrong_key_aad_or_damage_fails() {
        let cipher = Cipher::new(&[1u8; 32]);
        let sealed = cipher.encrypt(b"000123456789", AAD);
        assert!(matches!(Cipher::new(&[2u8; 32]).decrypt(&sealed, AAD), Err(SecretError::Decrypt)));
        assert!(matches!(cipher.decrypt(&sealed, b"cus_other/account_number"), Err(SecretError::Decrypt)));
        // Every single flipped bit, in nonce, ciphertext and tag.
        for i in 0..sealed.len() {
            for bit in 0..8 {
                let mut bad = sealed.clone();
                bad[i] ^= 1 << bit;
                assert!(matches!(cipher.decrypt(&bad, AAD), Err(SecretError::Decrypt)), "byte {i} bit {bit}");
            }
        }
        // Every truncation, and an extension.
        for len in 0..sealed.len() {
            assert!(matches!(cipher.decrypt(&sealed[..len], AAD), Err(SecretError::Decrypt)), "length {len}");
        }
        let mut longer = sealed.clone();
        longer.push(0);
        assert!(matches!(cipher.decrypt(&longer, AAD), Err(SecretError::Decrypt)));
        assert!(matches!(cipher.decrypt(&[], AAD), Err(SecretError::Decrypt)));
        assert_eq!(cipher.decrypt(&sealed, AAD).unwrap(), b"000123456789");
    }

    #[test]
    fn key_hex_round_trip_and_debug() {
        let key = EncryptionKey::generate();
        let text = key.to_hex();
        assert_eq!(text.len(), 64);
        assert!(text.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
        assert_eq!(EncryptionKey::from_hex(&text).unwrap().as_bytes(), key.as_bytes());
        assert_eq!(EncryptionKey::from_hex(&text.to_uppercase()).unwrap().as_bytes(), key.as_bytes());
        assert!(EncryptionKey::from_hex(&text[..62]).is_none());
        assert!(EncryptionKey::from_hex(&format!("{text}\n")).is_none());
        assert!(EncryptionKey::from_hex(&format!("zz{}", &text[2..])).is_none());
        assert_ne!(EncryptionKey::generate().as_bytes(), key.as_bytes());
        let shown = format!("{key:?} {:?}", Cipher::from(&key));
        assert!(!shown.contains(&text[..16]), "{shown}");
        assert_eq!(EncryptionKey::from_bytes([9u8; 32]).to_hex(), "09".repeat(32));
    }

    #[test]
    fn key_file_is_created_once_then_reread() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data.key");
        let key = EncryptionKey::load_or_create(&path).unwrap();
        let content = std::fs::read_to_string(&path).unwrap();
        assert_eq!(content, format!("{}\n", key.to_hex()));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "mode {mode:o}");
        }
        let again = EncryptionKey::load_or_create(&path).unwrap();
        assert_eq!(again.as_bytes(), key.as_bytes());
        // What one process seals, the next opens.
        let sealed = Cipher::from(&key).encrypt(b"000123456789", AAD);
        assert_eq!(Cipher::from(&again).decrypt(&sealed, AAD).unwrap(), b"000123456789");
        // Only the key file is left behind (no temporary files).
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn key_file_accepts_the_documented_forms() {
        let dir = tempfile::tempdir().unwrap();
        let key = EncryptionKey::generate();
        for (i, content) in
            [key.to_hex(), format!("{}\n", key.to_hex()), format!("{}\r\n", key.to_hex().to_uppercase())]
                .into_iter()
                .enumerate()
        {
            let path = dir.path().join(format!("k{i}"));
            std::fs::write(&path, content).unwrap();
            assert_eq!(EncryptionKey::load_or_create(&path).unwrap().as_bytes(), key.as_bytes());
        }
    }

    #[test]
    fn corrupt_key_file_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let hex = EncryptionKey::generate().to_hex();
        let bad = [
            String::new(),
            "\n".to_owned(),
            hex[..63].to_owned(),
            format!("{hex}0\n"),
            format!(" {hex}"),
            format!("{hex}\n\n"),
            format!("{hex}\nmore"),
            format!("x{}", &hex[1..]),
            format!("é{}", &hex[2..]),
        ];
        for (i, content) in bad.iter().enumerate() {
            let path = dir.path().join(format!("bad{i}.key"));
            std::fs::write(&path, content).unwrap();
            let err = EncryptionKey::load_or_create(&path).unwrap_err();
            assert!(matches!(err, SecretError::BadKeyFile { .. }), "{content:?}: {err:?}");
            let message = err.to_string();
            assert!(message.contains(&path.display().to_string()), "{message}");
            assert!(!message.contains(&hex[..20]), "the message leaks the content: {message}");
            // The bad file is left alone, not replaced by a fresh key.
            assert_eq!(&std::fs::read_to_string(&path).unwrap(), content);
        }
        // Not UTF-8 at all.
        let path = dir.path().join("binary.key");
        std::fs::write(&path, [0xffu8; 64]).unwrap();
        assert!(matches!(EncryptionKey::load_or_create(&path), Err(SecretError::BadKeyFile { .. })));
    }

    #[test]
    fn missing_directory_is_an_io_error_naming_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("no-such-dir").join("data.key");
        let err = EncryptionKey::load_or_create(&path).unwrap_err();
        assert!(matches!(err, SecretError::Io { .. }), "{err:?}");
        assert!(err.to_string().contains(&path.display().to_string()), "{err}");
    }
}
