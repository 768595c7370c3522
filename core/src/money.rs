//! Money: integer cents, parsed exactly from the JSON text, formatted as dollars.
//!
//! An amount arrives as a JSON number or a numeric string. Either way the literal
//! text is parsed: `digits [ "." 1*2digits ]`, no sign, no exponent, no leading zeros
//! (except a single `0` before the point), no spaces or separators. A float never
//! appears. See `docs/decisions.md` ("Amounts").

use std::fmt;

use serde::{Deserialize, Serialize};

/// The largest amount an ACH entry can carry: the NACHA amount field has ten digits
/// ($99,999,999.99).
pub const NACHA_MAX: Money = Money(9_999_999_999);

/// The spec's credit cap: 50,000,000 USD (error 15).
pub const CREDIT_MAX: Money = Money(5_000_000_000);

/// An amount of US dollars in integer cents. Always `>= 0`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Money(i64);

/// Why an amount text was refused (the message always echoes the text as sent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AmountError {
    /// Not the `digits[.dd]` grammar (sign, exponent, letters, separators, three
    /// or more decimals, empty).
    Malformed,
    /// Parsed, but zero.
    Zero,
    /// More than the NACHA amount field can hold.
    TooLarge,
}

impl Money {
    /// Money from a number of cents.
    pub const fn from_cents(cents: i64) -> Money {
        Money(cents)
    }

    /// The number of cents.
    pub const fn cents(self) -> i64 {
        self.0
    }

    /// Parse an amount from its literal text (the JSON number's characters, or the
    /// string's content). Accepts `0.01 ..= 99999999.99`.
    pub fn parse(text: &str) -> Result<Money, AmountError> {
        let money = Self::parse_non_negative(text)?;
        if money.0 == 0 {
            return Err(AmountError::Zero);
        }
        Ok(money)
    }

    /// Like [`Money::parse`] but zero is allowed (limits and velocities may be zero).
    pub fn parse_non_negative(text: &str) -> Result<Money, AmountError> {
        Self::parse_digits(text, 8)
    }

    /// Like [`Money::parse_non_negative`] for yearly figures that are not an entry
    /// amount (expected sales per year): up to 14 integer digits.
    pub fn parse_yearly(text: &str) -> Result<Money, AmountError> {
        Self::parse_digits(text, 14)
    }

    fn parse_digits(text: &str, max_int_digits: usize) -> Result<Money, AmountError> {
        let bytes = text.as_bytes();
        let (int, frac) = match bytes.iter().position(|&b| b == b'.') {
            Some(dot) => (&bytes[..dot], Some(&bytes[dot + 1..])),
            None => (bytes, None),
        };
        if int.is_empty() || !int.iter().all(u8::is_ascii_digit) {
            return Err(AmountError::Malformed);
        }
        if int.len() > 1 && int[0] == b'0' {
            return Err(AmountError::Malformed);
        }
        let frac = match frac {
            None => &[][..],
            Some(f) if (1..=2).contains(&f.len()) && f.iter().all(u8::is_ascii_digit) => f,
            Some(_) => return Err(AmountError::Malformed),
        };
        if int.len() > max_int_digits {
            return Err(AmountError::TooLarge);
        }
        let mut cents: i64 = 0;
        for &d in int {
            cents = cents * 10 + i64::from(d - b'0');
        }
        cents *= 100;
        match frac {
            [a] => cents += i64::from(a - b'0') * 10,
            [a, b] => cents += i64::from(a - b'0') * 10 + i64::from(b - b'0'),
            _ => {}
        }
        Ok(Money(cents))
    }

    /// Dollars with a `$`, thousands separators and two decimals: `$5,000.00`.
    pub fn dollars(self) -> String {
        format!("${}", self.plain_with_commas())
    }

    fn plain_with_commas(self) -> String {
        let whole = (self.0 / 100).to_string();
        let mut out = String::with_capacity(whole.len() + whole.len() / 3 + 3);
        for (i, c) in whole.chars().enumerate() {
            if i > 0 && (whole.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        out.push_str(&format!(".{:02}", self.0 % 100));
        out
    }

    /// Plain decimal text with two decimals and no separators: `5000.00`.
    pub fn decimal(self) -> String {
        format!("{}.{:02}", self.0 / 100, self.0 % 100)
    }

    /// Sum, saturating (counters never overflow into nonsense).
    pub const fn saturating_add(self, other: Money) -> Money {
        Money(self.0.saturating_add(other.0))
    }
}

impl fmt::Display for Money {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.decimal())
    }
}

impl Serialize for Money {
    /// Serialized as an exact JSON number with two decimals (`12.50`).
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let number: serde_json::Number =
            self.decimal().parse().map_err(|_| serde::ser::Error::custom("unrepresentable amount"))?;
        number.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Money {
    /// Deserialized from a JSON number or numeric string, exactly.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(d)?;
        let text = match &value {
            serde_json::Value::Number(n) => n.to_string(),
            serde_json::Value::String(s) => s.clone(),
            _ => return Err(serde::de::Error::custom("amount must be a number or a string")),
        };
        // Up to 16 integer digits: every amount this type serializes (limits set by
        // the operator included) reads back; entry amounts are checked separately.
        Money::parse_digits(&text, 16).map_err(|_| {
            serde::de::Error::custom(format!("'{}' is an invalid Amount", crate::echo::echo(&text)))
        })
    }
}

/// Money as its integer number of cents, for binary records (`#[serde(with =
/// "crate::money::cents")]`): the JSON form above needs a self-describing format.
pub(crate) mod cents {
    use super::Money;
    use serde::{Deserialize, Deserializer, Serializer};

    /// Write the cents.
    pub(crate) fn serialize<S: Serializer>(m: &Money, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_i64(m.0)
    }

    /// Read the cents back.
    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Money, D::Error> {
        i64::deserialize(d).map(Money)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_exact_amounts() {
        assert_eq!(Money::parse("1"), Ok(Money(100)));
        assert_eq!(Money::parse("12.5"), Ok(Money(1250)));
        assert_eq!(Money::parse("12.50"), Ok(Money(1250)));
        assert_eq!(Money::parse("0.01"), Ok(Money(1)));
        assert_eq!(Money::parse("99999999.99"), Ok(Money(9_999_999_999)));
        assert_eq!(Money::parse("0.1"), Ok(Money(10)));
    }

    #[test]
    fn refuses_everything_else() {
        for bad in [
            "", "abc", "-5", "+5", "1.234", "1e2", "1E2", "1.0e1", ".5", "5.", "01", "00.5", " 1", "1 ",
            "1,000", "$1", "0x10", "1..2", "NaN", "Infinity", "١٢",
        ] {
            assert_eq!(Money::parse(bad), Err(AmountError::Malformed), "{bad:?}");
        }
        assert_eq!(Money::parse("0"), Err(AmountError::Zero));
        assert_eq!(Money::parse("0.00"), Err(AmountError::Zero));
        assert_eq!(Money::parse("100000000"), Err(AmountError::TooLarge));
        assert_eq!(Money::parse(&"9".repeat(400)), Err(AmountError::TooLarge));
        assert_eq!(Money::parse_non_negative("0"), Ok(Money(0)));
        assert_eq!(Money::parse_yearly("250000000.00"), Ok(Money(25_000_000_000)));
        assert_eq!(Money::parse_yearly("99999999999999.99"), Ok(Money(9_999_999_999_999_999)));
        assert_eq!(Money::parse_yearly("100000000000000"), Err(AmountError::TooLarge));
    }

    #[test]
    fn formats_dollars() {
        assert_eq!(Money(500_000).dollars(), "$5,000.00");
        assert_eq!(Money(1).dollars(), "$0.01");
        assert_eq!(Money(100_000_000).dollars(), "$1,000,000.00");
        assert_eq!(Money(99_999).dollars(), "$999.99");
        assert_eq!(Money(123_456_789).decimal(), "1234567.89");
    }

    #[test]
    fn serde_round_trip_is_exact() {
        let m: Money = serde_json::from_str("1234567.89").unwrap_or_default();
        assert_eq!(m, Money(123_456_789));
        assert_eq!(serde_json::to_string(&m).ok().as_deref(), Some("1234567.89"));
        let s: Money = serde_json::from_str("\"0.10\"").unwrap_or_default();
        assert_eq!(s, Money(10));
        assert_eq!(
            serde_json::from_str::<Money>("1.001").map_err(|e| e.to_string()),
            Err("'1.001' is an invalid Amount".to_owned())
        );
        // Whatever is serialized reads back (an operator's large limit included).
        let big = Money(10_000_000_000_000_000);
        let text = serde_json::to_string(&big).unwrap_or_default();
        assert_eq!(serde_json::from_str::<Money>(&text).ok(), Some(big));
        assert_eq!(
            serde_json::from_str::<Money>("true").map_err(|e| e.to_string()),
            Err("amount must be a number or a string".to_owned())
        );
    }

    proptest! {
        #[test]
        fn every_cent_value_round_trips(cents in 1i64..=9_999_999_999) {
            let m = Money(cents);
            prop_assert_eq!(Money::parse(&m.decimal()), Ok(m));
        }

        #[test]
        fn parse_never_panics(s in ".*") {
            let _ = Money::parse(&s);
        }
    }
}
