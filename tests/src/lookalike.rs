//! Look-alike forgeries of ids and keys for the hostile-input tables: Cyrillic
//! twins of Latin letters, fullwidth forms of digits. Each always changes the id
//! it imitates (a "forgery" equal to the real id is a genuine request, which the
//! engine rightly accepts).

/// `id` with every Latin letter that has a Cyrillic twin replaced by it. Every
/// prefix has one (`txn`, `cus`, `mer`, `par`, `pk_`, `mk_`, `ok_`), so never
/// `id` itself: a look-alike that equals the real id is a genuine request, and the
/// engine rightly accepts it (a random id without any such letter did once).
pub fn cyrillic(id: &str) -> String {
    let twins = [
        ('a', 'а'),
        ('c', 'с'),
        ('e', 'е'),
        ('o', 'о'),
        ('p', 'р'),
        ('x', 'х'),
        ('y', 'у'),
        ('k', 'к'),
        ('m', 'м'),
        ('A', 'А'),
        ('B', 'В'),
        ('E', 'Е'),
        ('K', 'К'),
        ('M', 'М'),
        ('O', 'О'),
        ('T', 'Т'),
    ];
    let out: String =
        id.chars().map(|c| twins.iter().find(|(l, _)| *l == c).map_or(c, |(_, t)| *t)).collect();
    assert_ne!(out, id, "no letter of {id:?} has a Cyrillic twin");
    out
}

/// `id` with its digits, and its last character, in fullwidth forms: never `id`
/// itself, even when a random id has no digit (about one merchant id in 48 has
/// none: fullwidth digits alone then forged nothing, the "forged" create was a real
/// one, and every later row saw the feed move).
pub fn fullwidth(id: &str) -> String {
    // Printable ASCII has fullwidth forms; anything else becomes a fullwidth zero.
    let wide =
        |c: char| char::from_u32(c as u32 + 0xFEE0).filter(|_| c.is_ascii_graphic()).unwrap_or('\u{FF10}');
    let last = id.len().saturating_sub(1);
    let out: String =
        id.char_indices().map(|(i, c)| if c.is_ascii_digit() || i == last { wide(c) } else { c }).collect();
    assert_ne!(out, id);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn look_alikes_never_equal_the_id_they_imitate() {
        // Ids as the engine issues them, and the unlucky draws: no digit at all, no
        // letter with a Cyrillic twin after the prefix.
        for id in [
            "mer_ABCDFGHIJLNQRSUVWZbd",
            "cus_bdfghijklmnqrstuvwzB",
            "txn_12345678001ZZZZZZZZZZZ",
            "par_0000000000000000000000",
            "pk_ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ",
            "mk_ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ",
            "ok_ffi_hostile_operator_key_0123456789",
        ] {
            assert_ne!(fullwidth(id), id);
            assert!(!fullwidth(id).is_ascii(), "{id}");
            assert_ne!(cyrillic(id), id);
        }
        // The row that once went through: a merchant id without digits, in fullwidth.
        let digitless = "mer_ABCDFGHIJLNQRSUVWZbd";
        assert!(fullwidth(digitless).ends_with('ｄ'));
    }
}
