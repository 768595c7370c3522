//! The Unicode data of [`super`] from unicode-rs's tables.

use unicode_normalization::char::{decompose_compatible, is_combining_mark};
use unicode_normalization::{is_nfkc_quick, IsNormalized, UnicodeNormalization};
use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// Whether `c` is a format (Cf), line or paragraph separator (Zl, Zp),
/// private-use (Co) or surrogate (Cs) character.
pub(super) fn is_format(c: char) -> bool {
    matches!(
        c.general_category(),
        GeneralCategory::Format
            | GeneralCategory::LineSeparator
            | GeneralCategory::ParagraphSeparator
            | GeneralCategory::PrivateUse
            | GeneralCategory::Surrogate
    )
}

/// Each character of `c`'s compatibility decomposition (NFKD), in order.
pub(super) fn decompose(c: char, each: impl FnMut(char)) {
    decompose_compatible(c, each);
}

/// Whether `c` is a combining mark (general category M).
pub(super) fn is_mark(c: char) -> bool {
    is_combining_mark(c)
}

/// `text` in NFKC; `None` when it already is.
pub(super) fn nfkc(text: &str) -> Option<String> {
    if is_nfkc_quick(text.chars()) == IsNormalized::Yes {
        return None;
    }
    let normal: String = text.nfkc().collect();
    (normal != text).then_some(normal)
}
