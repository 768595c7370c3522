//! Standard Webhooks signatures (standardwebhooks.com): a secret is `whsec_`
//! and the base64 of its key bytes; a signature is `v1,` and the base64 of
//! HMAC-SHA256, keyed by those bytes, of `{id}.{timestamp}.{body}`. Several
//! signatures (during a secret's rotation) are separated by spaces.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// What a secret's text starts with.
pub const SECRET_PREFIX: &str = "whsec_";

/// Bytes of a new secret's key (192 bits).
pub const SECRET_BYTES: usize = 24;

/// A new secret's key bytes.
pub(crate) fn new_key() -> [u8; SECRET_BYTES] {
    let mut key = [0u8; SECRET_BYTES];
    crate::ids::random_bytes(&mut key);
    key
}

/// A key's text as the partner gets it: `whsec_` and its base64.
pub fn secret_text(key: &[u8]) -> String {
    format!("{SECRET_PREFIX}{}", STANDARD.encode(key))
}

/// The key bytes of a secret's text (`None` if it is not one).
pub fn secret_key(text: &str) -> Option<Vec<u8>> {
    STANDARD.decode(text.strip_prefix(SECRET_PREFIX)?).ok()
}

/// The `webhook-signature` value of one message signed by each key:
/// `v1,<base64>` per key, separated by spaces.
pub fn signature(keys: &[Vec<u8>], id: &str, timestamp: i64, body: &str) -> String {
    keys.iter()
        .map(|key| {
            #[allow(clippy::expect_used)]
            let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(key).expect("HMAC takes a key of any length");
            mac.update(id.as_bytes());
            mac.update(b".");
            mac.update(timestamp.to_string().as_bytes());
            mac.update(b".");
            mac.update(body.as_bytes());
            format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signs_as_the_standard_webhooks_libraries_do() {
        // The libraries' own test vector (the Python `standardwebhooks` package signs it so).
        let key = secret_key("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap_or_default();
        assert_eq!(
            signature(
                std::slice::from_ref(&key),
                "msg_p5jXN8AQM9LWM0D4loKWxJek",
                1_614_265_330,
                r#"{"test": 2432232314}"#
            ),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
        let two = signature(&[key.clone(), vec![7; 24]], "m", 1, "{}");
        let parts: Vec<&str> = two.split(' ').collect();
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0], signature(&[key], "m", 1, "{}"));
        assert_eq!(secret_key(&secret_text(&[1, 2, 3])), Some(vec![1, 2, 3]));
        assert_eq!(secret_key("whsec_!!"), None);
        assert_eq!(secret_key("MfKQ9r8G"), None);
    }
}
