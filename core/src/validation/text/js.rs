//! The Unicode data of [`super`] from the JavaScript engine the module runs
//! in (`String.prototype.normalize`, the `\p{…}` classes of a `u` regular
//! expression): the tables are the engine's, not the module's.

use js_sys::{JsString, RegExp};

thread_local! {
    static FORMAT: RegExp = RegExp::new(r"^[\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cs}]$", "u");
    static MARK: RegExp = RegExp::new(r"^\p{M}$", "u");
}

/// Whether `c` is a format (Cf), line or paragraph separator (Zl, Zp),
/// private-use (Co) or surrogate (Cs) character.
pub(super) fn is_format(c: char) -> bool {
    FORMAT.with(|re| re.test(c.encode_utf8(&mut [0; 4])))
}

/// Each character of `c`'s compatibility decomposition (NFKD), in order.
pub(super) fn decompose(c: char, each: impl FnMut(char)) {
    let text = JsString::from(&*c.encode_utf8(&mut [0; 4])).normalize("NFKD");
    text.as_string().unwrap_or_default().chars().for_each(each);
}

/// Whether `c` is a combining mark (general category M).
pub(super) fn is_mark(c: char) -> bool {
    MARK.with(|re| re.test(c.encode_utf8(&mut [0; 4])))
}

/// `text` in NFKC; `None` when it already is.
pub(super) fn nfkc(text: &str) -> Option<String> {
    let normal = JsString::from(text).normalize("NFKC").as_string()?;
    (normal != text).then_some(normal)
}
