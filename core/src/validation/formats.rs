//! Pure format rules shared by every validator: account numbers, states, zip codes,
//! phones, emails, websites, PO boxes, dates, SSNs, tax ids and check images.
//! Each rule is documented in `docs/decisions.md` ("Formats").

use base64::Engine as _;
use chrono::NaiveDate;

/// Largest decoded check image accepted, in bytes (1 MiB each side).
pub const MAX_IMAGE_BYTES: usize = 1024 * 1024;

/// Account number: 4 to 17 characters (the NACHA DFI account number field is 17),
/// ASCII letters, digits and hyphens, at least one digit, not all zeros.
pub fn account_number_ok(text: &str) -> bool {
    (4..=17).contains(&text.len())
        && text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        && text.bytes().any(|b| b.is_ascii_digit())
        && text.bytes().any(|b| b.is_ascii_digit() && b != b'0' || b.is_ascii_alphabetic())
}

/// The 50 states and DC.
const STATES: [&str; 51] = [
    "AL", "AK", "AZ", "AR", "CA", "CO", "CT", "DE", "DC", "FL", "GA", "HI", "ID", "IL", "IN", "IA", "KS",
    "KY", "LA", "ME", "MD", "MA", "MI", "MN", "MS", "MO", "MT", "NE", "NV", "NH", "NJ", "NM", "NY", "NC",
    "ND", "OH", "OK", "OR", "PA", "RI", "SC", "SD", "TN", "TX", "UT", "VT", "VA", "WA", "WV", "WI", "WY",
];

/// Inhabited territories with US ZIP codes.
const TERRITORIES: [&str; 5] = ["AS", "GU", "MP", "PR", "VI"];

/// Military mail "states" (valid in postal addresses only).
const MILITARY: [&str; 3] = ["AA", "AE", "AP"];

/// A US state, DC or territory code (uppercase): a POP terminal's location.
pub fn terminal_state_ok(text: &str) -> bool {
    STATES.contains(&text) || TERRITORIES.contains(&text)
}

/// A postal state code: states, DC, territories and military mail codes.
pub fn postal_state_ok(text: &str) -> bool {
    terminal_state_ok(text) || MILITARY.contains(&text)
}

/// ZIP: `12345` or `12345-6789`.
pub fn zip_ok(text: &str) -> bool {
    let b = text.as_bytes();
    let digits = |s: &[u8]| s.iter().all(u8::is_ascii_digit);
    match b.len() {
        5 => digits(b),
        10 => digits(&b[..5]) && b[5] == b'-' && digits(&b[6..]),
        _ => false,
    }
}

/// US phone: ten digits once `+1`/`1`, spaces, dots, hyphens and parentheses are
/// removed; area code and exchange do not start with 0 or 1.
pub fn phone_ok(text: &str) -> bool {
    if text.len() > 25
        || !text.bytes().all(|b| b.is_ascii_digit() || b" ()-.+".contains(&b))
        || text.bytes().skip(1).any(|b| b == b'+')
    {
        return false;
    }
    let mut digits: Vec<u8> = text.bytes().filter(u8::is_ascii_digit).collect();
    if digits.len() == 11 && digits[0] == b'1' {
        digits.remove(0);
    } else if text.starts_with('+') {
        return false;
    }
    digits.len() == 10 && digits[0] >= b'2' && digits[3] >= b'2'
}

/// Email: `local@domain` with a dotted domain, no spaces, at most 254 characters.
pub fn email_ok(text: &str) -> bool {
    if text.len() > 254 || text.bytes().any(|b| b.is_ascii_whitespace() || b.is_ascii_control()) {
        return false;
    }
    let Some((local, domain)) = text.rsplit_once('@') else {
        return false;
    };
    !local.is_empty() && local.len() <= 64 && !local.contains('@') && hostname_ok(domain)
}

/// A DNS host name with at least two labels, each 1 to 63 of `[A-Za-z0-9-]`, not
/// starting or ending with `-`; the last label alphabetic.
pub fn hostname_ok(text: &str) -> bool {
    let labels: Vec<&str> = text.split('.').collect();
    labels.len() >= 2
        && text.len() <= 253
        && labels.iter().all(|l| {
            (1..=63).contains(&l.len())
                && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        })
        && labels.last().is_some_and(|l| l.len() >= 2 && l.bytes().all(|b| b.is_ascii_alphabetic()))
}

/// Website: a host name, optionally with `http://` or `https://` and a path.
pub fn website_ok(text: &str) -> bool {
    if text.len() > 2048 || text.bytes().any(|b| b.is_ascii_whitespace() || b.is_ascii_control()) {
        return false;
    }
    let rest = text.strip_prefix("https://").or_else(|| text.strip_prefix("http://")).unwrap_or(text);
    let host_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let host = &rest[..host_end];
    let host = host.rsplit_once(':').map_or(host, |(h, port)| {
        if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) {
            h
        } else {
            host
        }
    });
    hostname_ok(host)
}

/// Whether a street address line is a post office box: `PO Box 12`, `P.O. Box`,
/// `P O Box`, `Post Office Box`, `POB 12`, `Box 12`, `Postal Box`.
pub fn is_po_box(address: &str) -> bool {
    let words: Vec<String> = address
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect();
    let w: Vec<&str> = words.iter().map(String::as_str).collect();
    let is_number =
        |s: Option<&&str>| s.is_some_and(|s| s.bytes().next().is_some_and(|b| b.is_ascii_digit()));
    for i in 0..w.len() {
        let next = w.get(i + 1);
        let matched = match w[i] {
            "pobox" | "postbox" => true,
            "po" | "postal" => next == Some(&"box"),
            "p" => next == Some(&"o") && w.get(i + 2) == Some(&"box"),
            "post" => next == Some(&"office") && w.get(i + 2) == Some(&"box"),
            "pob" => is_number(next),
            "box" => i == 0 && is_number(next),
            _ => false,
        };
        if matched {
            return true;
        }
    }
    false
}

/// A `yyyy-mm-dd` calendar date (exactly ten characters).
pub fn parse_date(text: &str) -> Option<NaiveDate> {
    let b = text.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    NaiveDate::parse_from_str(text, "%Y-%m-%d").ok()
}

/// Nine digits from `123456789`, `123-45-6789` (SSN) or `12-3456789` (EIN).
pub(crate) fn nine_digit_text(text: &str) -> Option<String> {
    let dashes: &[usize] = match text.len() {
        10 => &[2],
        11 => &[3, 6],
        _ => &[],
    };
    nine_digits(text, dashes).map(|d| d.iter().map(|x| char::from(b'0' + x)).collect())
}

/// Nine digits from a JSON number or a string (`123456789`, `123-45-6789`,
/// `12-3456789`): the digits, or `None`.
pub fn nine_digits(text: &str, allow_dashes_at: &[usize]) -> Option<[u8; 9]> {
    let mut out = [0u8; 9];
    let mut n = 0;
    for (i, b) in text.bytes().enumerate() {
        if b == b'-' && allow_dashes_at.contains(&i) {
            continue;
        }
        if !b.is_ascii_digit() || n == 9 {
            return None;
        }
        out[n] = b - b'0';
        n += 1;
    }
    (n == 9).then_some(out)
}

/// Why a JSON number is not a nine-digit identifier (SSN, tax id).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NumberIdError {
    /// It has a sign (`-123456789`, `-0`).
    Sign,
    /// It has a fraction (`123456789.0`).
    Fraction,
    /// It has an exponent (`1.23456789e8`).
    Exponent,
    /// It has more than nine digits.
    TooManyDigits,
    /// It is not a JSON number's text at all.
    NotANumber,
}

impl NumberIdError {
    /// What is wrong, for a field problem (never echoing the value).
    pub const fn reason(self) -> &'static str {
        match self {
            NumberIdError::Sign => "a JSON number for it must not have a sign",
            NumberIdError::Fraction => "a JSON number for it must not have a fraction",
            NumberIdError::Exponent => "a JSON number for it must not have an exponent",
            NumberIdError::TooManyDigits => "a JSON number for it has at most nine digits",
            NumberIdError::NotANumber => "a JSON number for it must be digits only",
        }
    }
}

/// A nine-digit identifier sent as a JSON number, from the number's literal text.
/// A JSON number cannot keep leading zeros (`012345678` is not JSON; clients send
/// `12345678`), so 1 to 9 digits are left-padded with zeros to nine. A sign, a
/// fraction, an exponent or more than nine digits is refused, never rounded.
pub fn pad_number_id(literal: &str) -> Result<String, NumberIdError> {
    let has = |set: &[u8]| literal.bytes().any(|b| set.contains(&b));
    if literal.starts_with('-') {
        Err(NumberIdError::Sign)
    } else if has(b"eE") {
        Err(NumberIdError::Exponent)
    } else if has(b".") {
        Err(NumberIdError::Fraction)
    } else if literal.is_empty() || !literal.bytes().all(|b| b.is_ascii_digit()) {
        Err(NumberIdError::NotANumber)
    } else if literal.len() > 9 {
        Err(NumberIdError::TooManyDigits)
    } else {
        Ok(format!("{literal:0>9}"))
    }
}

/// SSN: nine digits (`123456789` or `123-45-6789`), area not 000, 666 or 9xx, group
/// not 00, serial not 0000.
pub fn ssn_ok(text: &str) -> bool {
    let Some(d) = nine_digits(text, if text.len() == 11 { &[3, 6] } else { &[] }) else {
        return false;
    };
    let area = u32::from(d[0]) * 100 + u32::from(d[1]) * 10 + u32::from(d[2]);
    let group = d[3] * 10 + d[4];
    let serial = d[5..].iter().fold(0u32, |acc, &x| acc * 10 + u32::from(x));
    area != 0 && area != 666 && area < 900 && group != 0 && serial != 0
}

/// Federal tax id (EIN): nine digits (`123456789` or `12-3456789`), not all zeros.
pub fn ein_ok(text: &str) -> bool {
    nine_digits(text, if text.len() == 10 { &[2] } else { &[] }).is_some_and(|d| d.iter().any(|&x| x != 0))
}

/// Why a check image was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageError {
    /// Not standard base64 (line breaks are allowed and ignored).
    Base64,
    /// Decodes to more than [`MAX_IMAGE_BYTES`].
    TooLarge,
    /// Decodes, but is not a TIFF, JPEG or PNG file.
    NotAnImage,
}

/// A check image: standard base64 (padding required, CR/LF ignored) of a TIFF, JPEG
/// or PNG file of at most [`MAX_IMAGE_BYTES`].
pub fn check_image(text: &str) -> Result<(), ImageError> {
    // Encoded size bound first: never decode something we would refuse anyway.
    if text.len() > (MAX_IMAGE_BYTES / 3 + 1) * 4 * 78 / 76 + 4 {
        return Err(ImageError::TooLarge);
    }
    let engine = &base64::engine::general_purpose::STANDARD;
    let decoded = if text.bytes().any(|b| b == b'\r' || b == b'\n') {
        let compact: Vec<u8> = text.bytes().filter(|&b| b != b'\r' && b != b'\n').collect();
        engine.decode(compact)
    } else {
        engine.decode(text)
    }
    .map_err(|_| ImageError::Base64)?;
    if decoded.len() > MAX_IMAGE_BYTES {
        return Err(ImageError::TooLarge);
    }
    const SIGNATURES: [&[u8]; 4] = [
        b"II*\0",                                          // TIFF, little-endian
        b"MM\0*",                                          // TIFF, big-endian
        &[0xFF, 0xD8, 0xFF],                               // JPEG
        &[0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A], // PNG
    ];
    if SIGNATURES.iter().any(|s| decoded.starts_with(s)) && decoded.len() >= 16 {
        Ok(())
    } else {
        Err(ImageError::NotAnImage)
    }
}

/// Whether a text contains control characters (C0, DEL, C1), which no field allows.
pub fn has_control(text: &str) -> bool {
    text.chars().any(char::is_control)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn account_numbers() {
        for ok in ["1234", "12345678901234567", "ABC-123", "000123"] {
            assert!(account_number_ok(ok), "{ok}");
        }
        for bad in ["123", "123456789012345678", "12 34", "0000", "00-00", "ABCD", "１２３４", "12_34", ""]
        {
            assert!(!account_number_ok(bad), "{bad}");
        }
    }

    #[test]
    fn states_and_zips() {
        assert!(terminal_state_ok("NY") && terminal_state_ok("PR") && terminal_state_ok("DC"));
        assert!(!terminal_state_ok("AE") && postal_state_ok("AE"));
        assert!(!terminal_state_ok("ny") && !terminal_state_ok("XX") && !terminal_state_ok(""));
        assert!(zip_ok("10001") && zip_ok("10001-1234"));
        for bad in ["1000", "100011", "10001-123", "10001 1234", "1000a", "10001-12345"] {
            assert!(!zip_ok(bad), "{bad}");
        }
    }

    #[test]
    fn phones() {
        for ok in ["2125551234", "(212) 555-1234", "212.555.1234", "+1 212 555 1234", "1-212-555-1234"] {
            assert!(phone_ok(ok), "{ok}");
        }
        for bad in [
            "555-1234",
            "0125551234",
            "2121551234",
            "+44 20 7946 0958",
            "212555123x",
            "21255512345",
            "2+125551234",
        ] {
            assert!(!phone_ok(bad), "{bad}");
        }
    }

    #[test]
    fn emails_and_websites() {
        assert!(email_ok("ops@example.com") && email_ok("a.b+c@sub.example.co"));
        for bad in
            ["ops@example", "@example.com", "ops example.com", "ops@@example.com", "ops@-x.com", "ops@x.c0m"]
        {
            assert!(!email_ok(bad), "{bad}");
        }
        for ok in ["example.com", "https://www.example.com/shop?x=1", "http://example.com:8080/"] {
            assert!(website_ok(ok), "{ok}");
        }
        for bad in ["example", "https://", "ftp://example.com", "exa mple.com", "https://exa_mple.com"] {
            assert!(!website_ok(bad), "{bad}");
        }
    }

    #[test]
    fn po_boxes() {
        for po in [
            "PO Box 123",
            "P.O. Box 9",
            "p o box 1",
            "Post Office Box 77",
            "POB 12",
            "Box 55",
            "PO BOX 1",
            "123 Main St, P.O. Box 4",
            "POBox 5",
        ] {
            assert!(is_po_box(po), "{po}");
        }
        for street in [
            "123 Main St",
            "1 Boxwood Lane",
            "77 Tempo Boxer Rd",
            "500 Post Office Square",
            "9 Box Elder Ct",
            "PO Road 3",
        ] {
            assert!(!is_po_box(street), "{street}");
        }
    }

    #[test]
    fn dates_ssns_eins() {
        assert_eq!(parse_date("2020-02-29"), NaiveDate::from_ymd_opt(2020, 2, 29));
        for bad in ["2021-02-29", "2020-2-29", "20200229", "2020/02/29", "2020-02-29T00:00"] {
            assert_eq!(parse_date(bad), None, "{bad}");
        }
        assert!(ssn_ok("123456789") && ssn_ok("123-45-6789"));
        for bad in [
            "000456789",
            "666456789",
            "912456789",
            "123006789",
            "123450000",
            "12345678",
            "123-456789",
            "1234567890",
        ] {
            assert!(!ssn_ok(bad), "{bad}");
        }
        assert!(ein_ok("123456789") && ein_ok("12-3456789"));
        assert!(!ein_ok("000000000") && !ein_ok("123-456789") && !ein_ok("1234"));
    }

    #[test]
    fn number_ids_are_padded_to_nine_digits() {
        for (literal, padded) in [
            ("12345678", "012345678"),
            ("123456789", "123456789"),
            ("1", "000000001"),
            ("0", "000000000"),
            ("000000001", "000000001"),
        ] {
            assert_eq!(pad_number_id(literal).as_deref(), Ok(padded), "{literal}");
        }
        for (literal, why) in [
            ("-12345678", NumberIdError::Sign),
            ("-0", NumberIdError::Sign),
            ("12345678.0", NumberIdError::Fraction),
            ("1.2345678e7", NumberIdError::Exponent),
            ("-1.5e3", NumberIdError::Sign),
            ("12345678e0", NumberIdError::Exponent),
            ("1E8", NumberIdError::Exponent),
            ("1234567890", NumberIdError::TooManyDigits),
            ("", NumberIdError::NotANumber),
            ("12 345", NumberIdError::NotANumber),
        ] {
            assert_eq!(pad_number_id(literal), Err(why), "{literal}");
        }
        assert_eq!(pad_number_id(&"9".repeat(400)), Err(NumberIdError::TooManyDigits));
    }

    fn b64(bytes: &[u8]) -> String {
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    #[test]
    fn check_images() {
        let mut png = vec![0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];
        png.extend([0u8; 32]);
        assert_eq!(check_image(&b64(&png)), Ok(()));
        let mut tiff = b"II*\0".to_vec();
        tiff.extend([7u8; 40]);
        let wrapped: String =
            b64(&tiff).as_bytes().chunks(8).map(|c| format!("{}\r\n", String::from_utf8_lossy(c))).collect();
        assert_eq!(check_image(&wrapped), Ok(()));
        assert_eq!(check_image("not base64!"), Err(ImageError::Base64));
        assert_eq!(check_image(&b64(b"GIF89a and more bytes here")), Err(ImageError::NotAnImage));
        let mut huge = vec![0xFF, 0xD8, 0xFF];
        huge.resize(MAX_IMAGE_BYTES + 1, 0);
        assert_eq!(check_image(&b64(&huge)), Err(ImageError::TooLarge));
        let mut max = vec![0xFF, 0xD8, 0xFF];
        max.resize(MAX_IMAGE_BYTES, 0);
        assert_eq!(check_image(&b64(&max)), Ok(()));
    }
}
