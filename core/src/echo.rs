//! Client values as they may appear inside a message: echoed as sent but cut
//! short, and account numbers masked to their last four characters. The error
//! catalogue, money and the validators all echo through here.

/// The longest client value echoed back inside a message, in characters.
pub const ECHO_LIMIT: usize = 40;

/// A client value as echoed inside a message: as sent, but cut to [`ECHO_LIMIT`]
/// characters (followed by `...`) so a hostile 1 MB value is never reflected whole.
pub fn echo(value: &str) -> String {
    match value.char_indices().nth(ECHO_LIMIT) {
        None => value.to_owned(),
        Some((cut, _)) => format!("{}...", &value[..cut]),
    }
}

/// An account number as it may appear in any output: every character but the last
/// four replaced by `*` (at most [`ECHO_LIMIT`] characters shown).
pub fn mask_account(value: &str) -> String {
    let count = value.chars().count();
    let keep = count.saturating_sub(4);
    let masked: String = value.chars().enumerate().map(|(i, c)| if i < keep { '*' } else { c }).collect();
    echo_tail(&masked)
}

fn echo_tail(value: &str) -> String {
    let count = value.chars().count();
    if count <= ECHO_LIMIT {
        return value.to_owned();
    }
    let skip = count - ECHO_LIMIT;
    format!("...{}", value.chars().skip(skip).collect::<String>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echo_cuts_long_values_on_char_boundaries() {
        assert_eq!(echo("abc"), "abc");
        let long = "é".repeat(100);
        let e = echo(&long);
        assert!(e.ends_with("..."));
        assert_eq!(e.chars().count(), ECHO_LIMIT + 3);
    }

    #[test]
    fn masking_shows_only_the_last_four() {
        assert_eq!(mask_account("123456789"), "*****6789");
        assert_eq!(mask_account("1234"), "1234");
        assert_eq!(mask_account("12"), "12");
        let long = "9".repeat(1000);
        let m = mask_account(&long);
        assert!(m.ends_with("9999") && !m.contains("99999"));
        assert!(m.len() <= ECHO_LIMIT + 3);
    }
}
