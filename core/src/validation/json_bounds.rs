//! How much JSON a request may hold, checked by one cheap pass over the text
//! before anything is parsed: a parsed value costs many times its text (a 3 MiB
//! `[0,0,…]` is 1.5 million values, over 100 MB as a `serde_json::Value`), so a
//! body is refused on its counts, never on what parsing it cost.

/// Most values a JSON text may hold (every scalar, string, array and object,
/// the outermost included). The largest legitimate request, a merchant
/// application, holds under a hundred; its check images are two strings.
pub const MAX_JSON_VALUES: usize = 10_000;

/// Deepest nesting of arrays and objects (serde_json's own limit when it builds
/// values: its recursion limit of 128 lets 127 levels through). Legitimate
/// requests nest four levels (`principal[0].address.zip`).
pub const MAX_JSON_DEPTH: usize = 127;

/// Why a JSON text is refused before it is parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Excess {
    /// More than [`MAX_JSON_VALUES`] values.
    TooManyValues,
    /// Nested deeper than [`MAX_JSON_DEPTH`].
    TooDeep,
}

impl Excess {
    /// What a client is told.
    pub fn message(self) -> String {
        match self {
            Excess::TooManyValues => format!("the JSON text holds more than {MAX_JSON_VALUES} values"),
            Excess::TooDeep => format!("the JSON text nests deeper than {MAX_JSON_DEPTH} levels"),
        }
    }
}

/// Check a JSON text's counts without parsing it: at most [`MAX_JSON_VALUES`]
/// values, nested at most [`MAX_JSON_DEPTH`] levels. A text that is not JSON
/// passes or fails on the same counts (its parse refuses it after). The pass
/// stops at the first excess and allocates nothing.
pub fn check(text: &[u8]) -> Result<(), Excess> {
    scan(text, MAX_JSON_VALUES, MAX_JSON_DEPTH)
}

/// [`check`] against these caps.
fn scan(text: &[u8], max_values: usize, max_depth: usize) -> Result<(), Excess> {
    // Values: the outermost, then one per `,` and one for the first child of
    // each container that has one (a child is any byte but whitespace and the
    // container's end).
    let (mut values, mut depth, mut first_child) = (1usize, 0usize, false);
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        i += 1;
        if first_child && !b.is_ascii_whitespace() && b != b']' && b != b'}' {
            values += 1;
            first_child = false;
        }
        match b {
            b'"' => i = string_end(text, i),
            b'[' | b'{' => {
                depth += 1;
                if depth > max_depth {
                    return Err(Excess::TooDeep);
                }
                first_child = true;
            }
            b']' | b'}' => {
                depth = depth.saturating_sub(1);
                first_child = false;
            }
            b',' => values += 1,
            _ => {}
        }
        if values > max_values {
            return Err(Excess::TooManyValues);
        }
    }
    Ok(())
}

/// The index just past the closing quote of a string whose content starts at
/// `i` (or the text's end).
fn string_end(text: &[u8], mut i: usize) -> usize {
    while let Some(at) = text.get(i..).and_then(|rest| memchr::memchr2(b'"', b'\\', rest)) {
        i += at + 1;
        if text[i - 1] == b'"' {
            return i;
        }
        i += 1; // the escaped byte
    }
    text.len()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// The number of values of a valid JSON text, counted on the parsed value.
    fn parsed_values(text: &str) -> usize {
        fn count(v: &serde_json::Value) -> usize {
            1 + match v {
                serde_json::Value::Array(a) => a.iter().map(count).sum(),
                serde_json::Value::Object(o) => o.values().map(count).sum(),
                _ => 0,
            }
        }
        count(&serde_json::from_str(text).unwrap())
    }

    #[test]
    fn counts_every_value_once_and_nothing_inside_strings() {
        let texts = [
            "0",
            "[]",
            "{}",
            " [ ] ",
            "[0]",
            "[0,1,2]",
            r#"{"a":1,"b":[true,null,{"c":"d"}],"e":{}}"#,
            r#"["a,b", "[{", "\"]", "\\", "\\\",\""]"#,
            "[[],[[]],{},[{}]]",
        ];
        for text in texts {
            // The smallest cap the text passes is its count of values.
            let values = (1..64).find(|&cap| scan(text.as_bytes(), cap, MAX_JSON_DEPTH).is_ok());
            assert_eq!(values, Some(parsed_values(text)), "{text}");
        }
    }

    #[test]
    fn any_bytes_are_counted_without_a_panic() {
        for text in ["\"\\", "\"", "\\", "[\"a\\", "{\"\\\"", "]]]", "}", "\"\\\""] {
            assert_eq!(check(text.as_bytes()), Ok(()), "{text:?}");
        }
    }

    #[test]
    fn the_caps_are_exact() {
        let array = |n: usize| format!("[{}]", vec!["0"; n].join(","));
        assert_eq!(check(array(MAX_JSON_VALUES - 1).as_bytes()), Ok(()));
        assert_eq!(check(array(MAX_JSON_VALUES).as_bytes()), Err(Excess::TooManyValues));
        let nested = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert_eq!(check(nested(MAX_JSON_DEPTH).as_bytes()), Ok(()));
        assert_eq!(check(nested(MAX_JSON_DEPTH + 1).as_bytes()), Err(Excess::TooDeep));
        assert_eq!(check(format!(r#"["{}"]"#, "[".repeat(1000)).as_bytes()), Ok(()));
    }

    #[test]
    fn a_large_body_of_zeros_is_refused_early() {
        let mut zeros = b"[0".to_vec();
        zeros.extend(std::iter::repeat_n(b",0".as_slice(), 1_500_000).flatten());
        zeros.push(b']');
        assert_eq!(check(&zeros), Err(Excess::TooManyValues));
    }

    #[test]
    fn the_example_merchant_application_fits_with_room() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/requests/merchant.json");
        let text = std::fs::read_to_string(path).unwrap();
        assert_eq!(check(text.as_bytes()), Ok(()));
        assert!(parsed_values(&text) * 100 < MAX_JSON_VALUES);
    }
}
