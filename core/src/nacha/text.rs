//! [`Text`]: the content of a NACHA text field, held without a heap allocation
//! when short (every entry detail field is), so reading a file of 100,000
//! entries does not make half a million small allocations.

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;

/// The longest text held inline: an individual name (22), the longest entry
/// detail field.
const INLINE: usize = 22;

/// An immutable string for field content: up to 22 bytes inline, longer on the
/// heap. It reads like a `&str` (it dereferences to one) and compares equal to
/// `str`, `&str` and `String` of the same content.
#[derive(Clone)]
pub struct Text(Repr);

#[derive(Clone)]
enum Repr {
    /// Invariant: `bytes[..len]` is valid UTF-8 and the rest is zero.
    Inline { len: u8, bytes: [u8; INLINE] },
    /// Only for content longer than `INLINE`.
    Heap(Box<str>),
}

impl Text {
    /// The empty text.
    pub const fn new() -> Text {
        Text(Repr::Inline { len: 0, bytes: [0; INLINE] })
    }

    /// Text from bytes the caller has checked are printable ASCII (a record
    /// read): no UTF-8 check when short. Other bytes are not unsafe, only read
    /// back as an empty `str`.
    pub(crate) fn from_ascii(ascii: &[u8]) -> Text {
        if ascii.len() <= INLINE {
            let mut bytes = [0; INLINE];
            bytes[..ascii.len()].copy_from_slice(ascii);
            Text(Repr::Inline { len: ascii.len() as u8, bytes })
        } else {
            Text::from(std::str::from_utf8(ascii).unwrap_or_default())
        }
    }

    /// The content as `str`.
    pub fn as_str(&self) -> &str {
        match &self.0 {
            // Valid by the invariant; the fallback is never taken.
            Repr::Inline { len, bytes } => {
                std::str::from_utf8(&bytes[..usize::from(*len)]).unwrap_or_default()
            }
            Repr::Heap(s) => s,
        }
    }

    /// The content's bytes (without the UTF-8 check of [`Text::as_str`]).
    pub fn as_bytes(&self) -> &[u8] {
        match &self.0 {
            Repr::Inline { len, bytes } => &bytes[..usize::from(*len)],
            Repr::Heap(s) => s.as_bytes(),
        }
    }

    /// Upper-case its ASCII letters in place.
    pub fn make_ascii_uppercase(&mut self) {
        match &mut self.0 {
            Repr::Inline { bytes, .. } => bytes.make_ascii_uppercase(),
            Repr::Heap(s) => s.make_ascii_uppercase(),
        }
    }
}

impl Default for Text {
    fn default() -> Text {
        Text::new()
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Text {
        if s.len() <= INLINE {
            let mut bytes = [0; INLINE];
            bytes[..s.len()].copy_from_slice(s.as_bytes());
            Text(Repr::Inline { len: s.len() as u8, bytes })
        } else {
            Text(Repr::Heap(s.into()))
        }
    }
}

impl From<String> for Text {
    fn from(s: String) -> Text {
        if s.len() <= INLINE {
            Text::from(s.as_str())
        } else {
            Text(Repr::Heap(s.into_boxed_str()))
        }
    }
}

impl From<&String> for Text {
    fn from(s: &String) -> Text {
        Text::from(s.as_str())
    }
}

impl From<Text> for String {
    fn from(t: Text) -> String {
        t.as_str().to_owned()
    }
}

impl Deref for Text {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<[u8]> for Text {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl Borrow<str> for Text {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for Text {
    fn eq(&self, other: &Text) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for Text {}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<String> for Text {
    fn eq(&self, other: &String) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<Text> for &str {
    fn eq(&self, other: &Text) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialOrd for Text {
    fn partial_cmp(&self, other: &Text) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Text {
    fn cmp(&self, other: &Text) -> Ordering {
        self.as_bytes().cmp(other.as_bytes())
    }
}

impl Hash for Text {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::Text;

    #[test]
    fn short_and_long_text_read_and_compare_alike() {
        for s in [
            "",
            "C01",
            "RECEIVER ACCOUNT NAME",
            "A NAME OF 22 BYTES ...",
            "A LONGER TEXT THAN TWENTY-TWO BYTES",
        ] {
            let t = Text::from(s);
            assert_eq!(t.as_str(), s);
            assert_eq!(t, s);
            assert_eq!(t, Text::from(s.to_string()));
            assert_eq!(t.len(), s.len());
        }
        let mut t = Text::from("Wade Arnold");
        t.make_ascii_uppercase();
        assert_eq!(t, "WADE ARNOLD");
        let (a, b) = (Text::from("121042880000001"), Text::from("121042880000002"));
        assert!(a < b);
        assert_eq!(format!("{:?}", Text::from("é")), "\"é\"");
    }
}
