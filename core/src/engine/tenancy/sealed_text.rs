//! Free text sealed at rest: customers' names, descriptions, partners' names
//! (non-public personal information to a bank, like account numbers). Each
//! is sealed with the database's AEAD, bound (associated data) to what it is
//! and the record it belongs to, so a sealed value moved to another field or
//! record does not open.

use base64::Engine as _;

use crate::engine::host::sealing_keys::SealingKeys;

/// What a transaction's description is sealed as.
pub(crate) const DESCRIPTION: &str = "description";

/// What a partner's name is sealed as.
pub(crate) const PARTNER_NAME: &str = "name";
use crate::secrets::SecretError;

/// `text`, the `what` of record `bound_to`, sealed (base64).
pub(crate) fn seal(cipher: &SealingKeys, what: &str, bound_to: &str, text: &str) -> String {
    let sealed = cipher.encrypt(text.as_bytes(), &aad(what, bound_to));
    base64::engine::general_purpose::STANDARD.encode(sealed)
}

/// What binds the `what` of record `bound_to` ([`seal`]'s associated data).
pub(crate) fn bound(what: &str, bound_to: &str) -> Vec<u8> {
    aad(what, bound_to)
}

/// The text [`seal`] sealed as the `what` of record `bound_to`.
pub(crate) fn open(
    cipher: &SealingKeys,
    what: &str,
    bound_to: &str,
    sealed: &str,
) -> Result<String, SecretError> {
    let sealed =
        base64::engine::general_purpose::STANDARD.decode(sealed).map_err(|_| SecretError::Decrypt)?;
    let plain = cipher.decrypt(&sealed, &aad(what, bound_to))?;
    String::from_utf8(plain).map_err(|_| SecretError::Decrypt)
}

fn aad(what: &str, bound_to: &str) -> Vec<u8> {
    [what.as_bytes(), b"/", bound_to.as_bytes()].concat()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::secrets::EncryptionKey;

    #[test]
    fn a_sealed_text_opens_only_as_what_it_is_of_its_record() {
        let cipher = SealingKeys::new(&EncryptionKey::generate(), &[]);
        let sealed = seal(&cipher, "description", "txn_1", "Rent for May");
        assert!(!sealed.contains("Rent"));
        assert_eq!(open(&cipher, "description", "txn_1", &sealed).unwrap(), "Rent for May");
        assert!(matches!(open(&cipher, "description", "txn_2", &sealed), Err(SecretError::Decrypt)));
        assert!(matches!(open(&cipher, "name", "txn_1", &sealed), Err(SecretError::Decrypt)));
        assert_ne!(seal(&cipher, "description", "txn_1", "Rent for May"), sealed, "a fresh nonce each time");
    }
}
