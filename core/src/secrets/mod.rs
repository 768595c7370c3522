//! Secrets: API keys, encryption at rest, key files and feed pointers.
//!
//! # Threat model
//!
//! The service holds three kinds of secret material, and each is protected against a
//! specific failure:
//!
//! * **API keys are stored only as hashes.** [`ApiKey::generate`] makes a key of
//!   190 random bits; the key text is shown to its owner once and the service keeps
//!   only its [`KeyHash`] (SHA-256). A leaked database, backup or log of stored
//!   hashes therefore lets nobody call the API: inverting SHA-256 on a 190-bit random
//!   input is infeasible. Presented keys are checked by hashing them and comparing
//!   the hashes in constant time ([`verify`]). No `Debug` output ever contains a key.
//! * **Bank account numbers are sealed with an AEAD** ([`Cipher`],
//!   XChaCha20-Poly1305 with a random 192-bit nonce per message). Someone who reads
//!   the database but not the [`EncryptionKey`] learns nothing about the numbers, and
//!   cannot alter a sealed value undetected. The caller passes the record's identity
//!   (for example the customer id and field name) as *associated data*, which binds
//!   each sealed value to its record: a sealed account number copied into another
//!   record fails to decrypt instead of silently moving money elsewhere.
//! * **Feed pointers are MAC'd** ([`PointerCodec`]). A pointer is a position in a
//!   tenant's event feed, handed to the partner as opaque text. It carries an
//!   HMAC-SHA256 tag over the tenant's scope and the position, so a partner can
//!   neither forge a pointer (to probe positions) nor replay a pointer issued to
//!   another partner: one issued for scope A is refused for scope B.
//!
//! Out of scope: an attacker who can read the process memory or the key files has
//! every secret; hosts keep key files readable by the service user only (they are
//! created with mode `0600` on unix).
//!
//! All randomness comes from [`crate::ids::random_bytes`] (the OS source, or the
//! browser's crypto under WebAssembly). Only [`EncryptionKey::load_or_create`] and
//! [`load_or_create_secret_file`] touch the file system; hosts call them at start-up.

/// Give a key-holding type (its secret bytes in field `0`) the two things every
/// such type here has: a `Debug` that shows only `Name(<redacted>)`, and a `Drop`
/// that wipes the bytes.
macro_rules! redacted_key {
    ($name:ident) => {
        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(concat!(stringify!($name), "(<redacted>)"))
            }
        }

        impl Drop for $name {
            fn drop(&mut self) {
                zeroize::Zeroize::zeroize(&mut self.0);
            }
        }
    };
}

mod api_keys;
mod cipher;
mod files;
mod fingerprint;
pub(crate) mod hex;
mod pointer;

use std::path::PathBuf;

pub use api_keys::{verify, ApiKey, KeyHash, KeyKind, KEY_BODY_LEN};
pub use cipher::{Cipher, EncryptionKey};
pub use files::{load_or_create_secret_file, replace_secret_file};
pub use fingerprint::Fingerprinter;
pub use pointer::{PointerCodec, MAX_CURSOR_POSITION, POINTER_LEN};

/// What can go wrong with secrets: reading or writing a key file, a key file with the
/// wrong content, or a sealed value that does not decrypt.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SecretError {
    /// The file system refused to read or create a secret file.
    #[error("cannot read or create the secret file {}: {source}", path.display())]
    Io {
        /// The file concerned.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A secret file exists but does not hold what it should.
    #[error("the secret file {} is not valid: {reason}", path.display())]
    BadKeyFile {
        /// The file concerned.
        path: PathBuf,
        /// What is wrong with it (never its content).
        reason: String,
    },
    /// A sealed value did not decrypt: wrong key, wrong associated data (another
    /// record), altered or truncated bytes. Deliberately says no more than that.
    #[error("decryption failed (wrong key, wrong record, or damaged data)")]
    Decrypt,
}
