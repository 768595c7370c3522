//! Lower-case hex for keys (a few lines, not worth a dependency).

const DIGITS: &[u8; 16] = b"0123456789abcdef";

/// Lower-case hex of `bytes`.
pub(crate) fn encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    out
}

/// Exactly 64 hex digits (either case) as 32 bytes; otherwise why not, without
/// echoing the text (it is a secret).
pub(crate) fn decode_32(text: &str) -> Result<[u8; 32], String> {
    let digits = text.as_bytes();
    if digits.len() != 64 {
        return Err(format!("expected 64 hex digits, found {} bytes", digits.len()));
    }
    let mut out = [0u8; 32];
    for (byte, pair) in out.iter_mut().zip(digits.chunks_exact(2)) {
        match (nibble(pair[0]), nibble(pair[1])) {
            (Some(hi), Some(lo)) => *byte = (hi << 4) | lo,
            _ => return Err("expected 64 hex digits, found a character that is not one".to_owned()),
        }
    }
    Ok(out)
}

fn nibble(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn round_trip_and_rejects() {
        let bytes: [u8; 32] = std::array::from_fn(|i| (i * 37) as u8);
        let text = encode(&bytes);
        assert_eq!(text.len(), 64);
        assert_eq!(&text[..6], "00254a");
        assert_eq!(decode_32(&text).unwrap(), bytes);
        assert_eq!(decode_32(&text.to_uppercase()).unwrap(), bytes);
        let not_a_digit = Err("expected 64 hex digits, found a character that is not one".to_owned());
        assert_eq!(decode_32(&text[..63]), Err("expected 64 hex digits, found 63 bytes".to_owned()));
        assert_eq!(decode_32(&format!("{text}0")), Err("expected 64 hex digits, found 65 bytes".to_owned()));
        assert_eq!(decode_32(&format!("g{}", &text[1..])), not_a_digit);
        // 64 bytes but a multi-byte character: refused, no panic on char boundaries.
        assert_eq!(decode_32(&format!("é{}", &text[2..])), not_a_digit);
        assert_eq!(decode_32(""), Err("expected 64 hex digits, found 0 bytes".to_owned()));
    }
}
