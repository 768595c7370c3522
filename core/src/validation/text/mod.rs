//! Text as the service keeps it and as a NACHA file carries it.
//!
//! - Every text field is kept in Unicode normalization form KC: `ﬁ`, `Ａ` and
//!   `é` spelled as `e` + U+0301 are kept as `fi`, `A`, `é`, so what looks
//!   alike compares alike.
//! - Format characters are refused wherever text is taken: they are invisible
//!   (U+200B zero-width space, U+FEFF), reorder what is shown (U+202E), hide
//!   text (tag characters) or break lines (U+2028, U+2029); private-use
//!   characters have no meaning to anyone else.
//! - A NACHA file carries printable ASCII only. Text bound for a file folds
//!   to it: compatibility decomposition, the combining marks dropped
//!   (`José Núñez` → `Jose Nunez`), and the Latin letters that do not
//!   decompose spelled out (`ß` → `ss`, `Ø` → `O`). Text that still holds
//!   another character (Cyrillic, CJK, Arabic, a look-alike `А`) cannot reach
//!   the file and is refused where it is taken.
//!
//! The Unicode data comes from unicode-rs's tables natively and from the
//! JavaScript engine's own in WebAssembly (`tables.rs`, `js.rs`): one answer
//! on every host, up to the Unicode version each carries.

use std::borrow::Cow;

#[cfg(target_arch = "wasm32")]
#[path = "js.rs"]
mod unicode;
#[cfg(not(target_arch = "wasm32"))]
#[path = "tables.rs"]
mod unicode;

/// The first character of `text` that is a format, line or paragraph
/// separator, private-use or surrogate character, if any.
pub fn format_character(text: &str) -> Option<char> {
    if text.is_ascii() {
        return None;
    }
    text.chars().find(|&c| !c.is_ascii() && unicode::is_format(c))
}

/// `text` in normalization form KC (borrowed when it already is: ASCII
/// always is).
pub fn nfkc(text: Cow<'_, str>) -> Cow<'_, str> {
    if text.is_ascii() {
        return text;
    }
    match unicode::nfkc(&text) {
        Some(normal) => Cow::Owned(normal),
        None => text,
    }
}

/// `text` folded to printable ASCII for a NACHA file (see the module's
/// description); `Err` names the first character that does not fold.
pub fn fold(text: &str) -> Result<Cow<'_, str>, char> {
    fold_with(text, Err)
}

/// [`fold`], each character that does not fold written as a space: for text
/// not taken through validation (made by the engine). Always printable
/// ASCII.
pub fn fold_lossy(text: &str) -> Cow<'_, str> {
    fold_with(text, |_| Ok(" ")).unwrap_or_default()
}

/// [`fold`] with `unfolded` deciding what a character that does not fold
/// becomes (or that the whole text is refused).
fn fold_with(
    text: &str,
    unfolded: impl Fn(char) -> Result<&'static str, char>,
) -> Result<Cow<'_, str>, char> {
    if text.bytes().all(|b| (b' '..=b'~').contains(&b)) {
        return Ok(Cow::Borrowed(text));
    }
    let mut out = String::with_capacity(text.len());
    let mut piece = String::new();
    for c in text.chars() {
        if let Some(spelled) = spelled_out(c) {
            out.push_str(spelled);
            continue;
        }
        piece.clear();
        let mut folds = true;
        unicode::decompose(c, |d| {
            if (' '..='~').contains(&d) {
                piece.push(d);
            } else if let Some(spelled) = spelled_out(d) {
                piece.push_str(spelled);
            } else if !unicode::is_mark(d) {
                folds = false;
            }
        });
        if folds {
            out.push_str(&piece);
        } else {
            out.push_str(unfolded(c)?);
        }
    }
    Ok(Cow::Owned(out))
}

/// The Latin letters (and the one space) that carry no decomposition but
/// have a plain ASCII spelling.
fn spelled_out(c: char) -> Option<&'static str> {
    Some(match c {
        '\u{a0}' => " ",
        'ß' => "ss",
        'ẞ' => "SS",
        'Æ' => "AE",
        'æ' => "ae",
        'Œ' => "OE",
        'œ' => "oe",
        'Ø' => "O",
        'ø' => "o",
        'Ł' => "L",
        'ł' => "l",
        'Đ' | 'Ð' => "D",
        'đ' | 'ð' => "d",
        'Þ' => "TH",
        'þ' => "th",
        'ı' => "i",
        _ => return None,
    })
}

/// How a refused character is named in a message: itself and its code point
/// (`'Ж' (U+0416)`).
pub fn describe(c: char) -> String {
    if c.is_control() || format_character(c.encode_utf8(&mut [0; 4])).is_some() {
        format!("U+{:04X}", u32::from(c))
    } else {
        format!("'{c}' (U+{:04X})", u32::from(c))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn latin_letters_fold_to_ascii() {
        assert_eq!(fold("José Núñez").unwrap(), "Jose Nunez");
        assert_eq!(fold("Jose\u{301} Nun\u{303}ez").unwrap(), "Jose Nunez", "decomposed accents");
        assert_eq!(fold("Straße Øster Łódź Ærø").unwrap(), "Strasse Oster Lodz AEro");
        assert_eq!(fold("ＡＣＭＥ ﬁne").unwrap(), "ACME fine", "compatibility forms");
        assert_eq!(fold("Ada Lovelace").unwrap(), "Ada Lovelace");
        assert!(matches!(fold("plain"), Ok(Cow::Borrowed(_))));
        assert_eq!(fold_lossy("José 株式 Ltd"), "Jose    Ltd");
    }

    #[test]
    fn other_scripts_and_look_alikes_do_not_fold() {
        assert_eq!(fold("Аdа Lоvеlасе"), Err('А'), "a Cyrillic A");
        assert_eq!(fold("株式会社"), Err('株'));
        assert_eq!(fold("محمد"), Err('م'));
        assert_eq!(fold("a\u{200b}b"), Err('\u{200b}'));
    }

    #[test]
    fn format_characters_are_found() {
        for c in ['\u{202e}', '\u{200b}', '\u{feff}', '\u{e0041}', '\u{2028}', '\u{2029}', '\u{e000}'] {
            assert_eq!(format_character(&format!("Acme{c}Pay")), Some(c), "U+{:04X}", u32::from(c));
        }
        assert_eq!(format_character("José Núñez"), None);
        assert_eq!(format_character("株式会社"), None, "a script is not a format");
        assert_eq!(describe('\u{202e}'), "U+202E");
        assert_eq!(describe('Ж'), "'Ж' (U+0416)");
    }

    #[test]
    fn text_is_kept_in_nfkc() {
        assert_eq!(nfkc(Cow::Borrowed("Jose\u{301}")), "José");
        assert_eq!(nfkc(Cow::Borrowed("ＡＣＭＥ ﬁne")), "ACME fine");
        assert!(matches!(nfkc(Cow::Borrowed("José")), Cow::Borrowed(_)));
    }
}
