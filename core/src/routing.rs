//! Routing numbers: the ABA check digit, and the FedACH directory (parser, index,
//! lookup with type-2 forwarding, and a small embedded default).
//!
//! FedACH layout (1-based columns): 1-9 routing number; 10 office code; 11-19
//! servicing FRB; 20 record type (0 Federal Reserve Bank, 1 send to this number,
//! 2 send to the new number); 21-26 change date MMDDYY; 27-35 new routing number;
//! 36-71 name; 72-107 address; 108-127 city; 128-129 state; 130-134 zip; 135-138
//! zip extension; 139-148 phone; 149 status; 150 view code; 151-155 filler.

use std::collections::HashMap;
use std::fmt;

use serde::Serialize;

/// Length of one FedACH record, without its line ending.
pub const RECORD_LEN: usize = 155;

/// Whether `text` is a routing number: nine ASCII digits, a Federal Reserve routing
/// symbol prefix (00-12, 21-32, 61-72, 80) and a correct ABA check digit
/// (3·(d1+d4+d7) + 7·(d2+d5+d8) + (d3+d6+d9) ≡ 0 mod 10). `000000000` is refused.
pub fn is_valid_routing_number(text: &str) -> bool {
    let b = text.as_bytes();
    if b.len() != 9 || !b.iter().all(u8::is_ascii_digit) {
        return false;
    }
    let d: [u32; 9] = std::array::from_fn(|i| u32::from(b[i] - b'0'));
    let prefix = d[0] * 10 + d[1];
    let prefix_ok = matches!(prefix, 0..=12 | 21..=32 | 61..=72 | 80);
    let sum = 3 * (d[0] + d[3] + d[6]) + 7 * (d[1] + d[4] + d[7]) + (d[2] + d[5] + d[8]);
    prefix_ok && sum.is_multiple_of(10) && d.iter().any(|&x| x != 0)
}

/// One institution of the directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Institution {
    /// The routing number of this record.
    pub routing_number: String,
    /// `O` main office, `B` branch.
    pub office_code: char,
    /// Servicing Federal Reserve Bank routing number.
    pub servicing_frb: String,
    /// 0 Federal Reserve Bank, 1 send to this number, 2 send to `new_routing_number`.
    pub record_type: u8,
    /// For record type 2: where entries must be sent now.
    pub new_routing_number: Option<String>,
    /// Customer (bank) name.
    pub name: String,
    /// Street address.
    pub address: String,
    /// City.
    pub city: String,
    /// State code.
    pub state: String,
    /// ZIP code (5 or 5+4).
    pub zip: String,
    /// Telephone number (10 digits), may be empty.
    pub phone: String,
}

/// The answer to a lookup: the record asked for and the one entries go to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lookup<'a> {
    /// The record of the number asked for.
    pub requested: &'a Institution,
    /// The record entries are sent to: the same, or the end of the type-2 chain.
    pub destination: &'a Institution,
}

/// Why a directory file was refused: a line that is not a FedACH record, or a
/// file without any record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based line number; 0 for the file as a whole (no records).
    pub line: usize,
    /// What is wrong with it.
    pub reason: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            0 => f.write_str(&self.reason),
            line => write!(f, "line {line}: {}", self.reason),
        }
    }
}

impl std::error::Error for ParseError {}

/// An index of routing numbers.
#[derive(Debug, Clone, Default)]
pub struct RoutingDirectory {
    records: HashMap<u32, Institution>,
}

/// Longest type-2 forwarding chain followed before giving up.
const MAX_HOPS: usize = 8;

impl RoutingDirectory {
    /// Parse a FedACH directory file (155-character records, CRLF or LF line ends,
    /// blank lines ignored). Any malformed record refuses the whole file: an
    /// operator loading a directory gets all of it or none of it. A file without
    /// records is refused too: every routing number would then be "not found".
    pub fn parse_fedach(text: &str) -> Result<Self, ParseError> {
        let mut records = HashMap::with_capacity(text.len() / (RECORD_LEN + 2) + 1);
        for (i, raw) in text.split('\n').enumerate() {
            let line = raw.strip_suffix('\r').unwrap_or(raw);
            if line.trim().is_empty() {
                continue;
            }
            let err = |reason: String| ParseError { line: i + 1, reason };
            let record = parse_record(line).map_err(err)?;
            let key = routing_key(&record.routing_number);
            if records.insert(key, record).is_some() {
                return Err(err("routing number appears twice".into()));
            }
        }
        if records.is_empty() {
            // Loaded, an empty directory would make every routing number "not found".
            return Err(ParseError { line: 0, reason: "the file has no records".into() });
        }
        Ok(RoutingDirectory { records })
    }

    /// The small embedded default: Federal Reserve Banks and large US banks, so a
    /// fresh install works; the operator loads the real directory.
    pub fn embedded() -> Self {
        let records = EMBEDDED
            .iter()
            .map(|&(rn, name, city, state, new)| {
                let record = Institution {
                    routing_number: rn.to_owned(),
                    office_code: 'O',
                    servicing_frb: String::new(),
                    record_type: if new.is_some() {
                        2
                    } else if name.starts_with("FEDERAL RESERVE BANK") {
                        0
                    } else {
                        1
                    },
                    new_routing_number: new.map(str::to_owned),
                    name: name.to_owned(),
                    address: String::new(),
                    city: city.to_owned(),
                    state: state.to_owned(),
                    zip: String::new(),
                    phone: String::new(),
                };
                (routing_key(rn), record)
            })
            .collect();
        RoutingDirectory { records }
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether the directory has no record.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// The record of exactly this number, without forwarding.
    pub fn get(&self, routing_number: &str) -> Option<&Institution> {
        if !is_valid_routing_number(routing_number) {
            return None;
        }
        self.records.get(&routing_key(routing_number))
    }

    /// Look a number up, following type-2 "send to the new routing number" records
    /// to the destination. `None` when the number (or the end of its chain) is not
    /// in the directory, or the chain loops.
    pub fn lookup(&self, routing_number: &str) -> Option<Lookup<'_>> {
        let requested = self.get(routing_number)?;
        let mut destination = requested;
        for _ in 0..MAX_HOPS {
            match (&destination.record_type, &destination.new_routing_number) {
                (2, Some(next)) => destination = self.get(next)?,
                _ => return Some(Lookup { requested, destination }),
            }
        }
        None
    }

    /// Every record, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = &Institution> {
        self.records.values()
    }
}

fn routing_key(rn: &str) -> u32 {
    rn.bytes().fold(0u32, |acc, b| acc.wrapping_mul(10).wrapping_add(u32::from(b.wrapping_sub(b'0'))))
}

fn parse_record(line: &str) -> Result<Institution, String> {
    if !line.is_ascii() {
        return Err("record is not ASCII".into());
    }
    if line.len() != RECORD_LEN {
        return Err(format!("record has {} characters, expected {RECORD_LEN}", line.len()));
    }
    let col = |from: usize, to: usize| line[from - 1..to].trim_end();
    let routing_number = col(1, 9);
    if !is_valid_routing_number(routing_number) {
        return Err(format!("'{routing_number}' is not a valid routing number"));
    }
    let office_code = match col(10, 10) {
        "O" => 'O',
        "B" => 'B',
        other => return Err(format!("office code '{other}' is not O or B")),
    };
    let record_type = match col(20, 20) {
        "0" => 0,
        "1" => 1,
        "2" => 2,
        other => return Err(format!("record type '{other}' is not 0, 1 or 2")),
    };
    let new = col(27, 35);
    let new_routing_number = match (record_type, new) {
        (2, n) if is_valid_routing_number(n) => Some(n.to_owned()),
        (2, n) => return Err(format!("new routing number '{n}' is not valid")),
        _ => None,
    };
    let zip5 = col(130, 134);
    let ext = col(135, 138);
    let zip = if ext.is_empty() || ext == "0000" { zip5.to_owned() } else { format!("{zip5}-{ext}") };
    Ok(Institution {
        routing_number: routing_number.to_owned(),
        office_code,
        servicing_frb: col(11, 19).to_owned(),
        record_type,
        new_routing_number,
        name: col(36, 71).to_owned(),
        address: col(72, 107).to_owned(),
        city: col(108, 127).to_owned(),
        state: col(128, 129).to_owned(),
        zip,
        phone: col(139, 148).to_owned(),
    })
}

/// The embedded default: (routing number, name, city, state, new routing number).
/// Real entries of the FedACH directory (change dates up to 2018-12-04).
const EMBEDDED: &[(&str, &str, &str, &str, Option<&str>)] = &[
    ("011000015", "FEDERAL RESERVE BANK", "ATLANTA", "GA", None),
    ("021001208", "FEDERAL RESERVE BANK", "EAST RUTHERFORD", "NJ", None),
    ("031000040", "FEDERAL RESERVE BANK", "ATLANTA", "GA", None),
    ("041000014", "FEDERAL RESERVE BANK", "ATLANTA", "GA", None),
    ("051000033", "FEDERAL RESERVE BANK", "ATLANTA", "GA", None),
    ("052000278", "FEDERAL RESERVE BANK", "ATLANTA", "GA", None),
    ("011000028", "STATE STREET BANK AND TRUST COMPANY", "N. QUINCY", "MA", None),
    ("021000021", "JPMORGAN CHASE", "TAMPA", "FL", None),
    ("071000013", "JPMORGAN CHASE", "BELLEVILLE", "MI", None),
    ("044000037", "JPMORGAN CHASE", "TAMPA", "FL", None),
    ("083000137", "JPMORGAN CHASE", "TAMPA", "FL", None),
    ("322271627", "JPMORGAN CHASE", "TAMPA", "FL", None),
    ("026009593", "BANK OF AMERICA N.A.", "RICHMOND", "VA", None),
    ("011000138", "BANK OF AMERICA, N.A.", "HENRICO", "VA", None),
    ("051000017", "BANK OF AMERICA, N.A.", "HENRICO", "VA", None),
    ("111000025", "BANK OF AMERICA, N.A.", "HENRICO", "VA", None),
    ("121000358", "BANK OF AMERICA, N.A.", "HENRICO", "VA", None),
    ("122000661", "BANK OF AMERICA, N.A.", "RICHMOND", "VA", None),
    ("121000248", "WELLS FARGO BANK, NA", "MINNEAPOLIS", "MN", None),
    ("122000247", "WELLS FARGO BANK NA", "MINNEAPOLIS", "MN", None),
    ("091000019", "WELLS FARGO BANK NA  (MINNESOTA)", "MINNEAPOLIS", "MN", None),
    ("031000503", "WELLS FARGO BANK", "MINNEAPOLIS", "MN", None),
    ("021000089", "CITIBANK NA", "NEW CASTLE", "DE", None),
    ("091000022", "US BANK NA", "ST. PAUL", "MN", None),
    ("042000013", "U.S. BANK NATIONAL ASSOCIATION", "ST. PAUL", "MN", None),
    ("043000096", "PNC BANK, NATIONAL ASSOCIATION", "PITTSBURGH", "PA", None),
    ("061000104", "SUNTRUST", "ORLANDO", "FL", None),
    ("026013673", "TD BANK NA", "LEWISTON", "ME", None),
    ("021001088", "HSBC BANK USA, N.A.", "BUFFALO", "NY", None),
    ("065000090", "CAPITAL ONE, NATIONAL ASSOCIATION", "RICHMOND", "VA", None),
    ("124003116", "ALLY BANK", "FORT WASHINGTON", "PA", None),
    ("031100649", "DISCOVER BANK", "NEW CASTLE", "DE", None),
    ("256074974", "NAVY FEDERAL CREDIT UNION", "VIENNA", "VA", None),
    ("101000019", "COMMERCE BANK", "KANSAS CITY", "MO", None),
    ("104000016", "FIRST NATIONAL BANK OF OMAHA", "OMAHA", "NE", None),
    ("122203950", "CATHAY BANK", "ROSEMEAD", "CA", None),
    ("011001962", "CATHAY BANK", "ROSEMEAD", "CA", Some("122203950")),
];

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn check_digits() {
        for ok in ["011000015", "021000021", "026009593", "121000248", "322271627", "256074974"] {
            assert!(is_valid_routing_number(ok), "{ok}");
        }
        for bad in [
            "021000022",
            "12345678",
            "1234567890",
            "02100002a",
            "000000000",
            "990000001",
            "１２３",
            " 21000021",
        ] {
            assert!(!is_valid_routing_number(bad), "{bad}");
        }
    }

    #[test]
    fn a_file_without_records_is_refused() {
        for text in ["", "\n", " \r\n\n", "\t\n  \n"] {
            let e = RoutingDirectory::parse_fedach(text).unwrap_err();
            assert_eq!((e.line, e.to_string().as_str()), (0, "the file has no records"), "{text:?}");
        }
        let e = RoutingDirectory::parse_fedach("short\n").unwrap_err();
        assert!(e.to_string().starts_with("line 1: "), "{e}");
    }

    #[test]
    fn one_rule_for_a_routing_number_wherever_it_arrives() {
        use crate::validation::{routing_number_problem, routing_number_verdict, ProblemCode};
        let dir = RoutingDirectory::embedded();
        let code = |v: &str| routing_number_problem(v, &dir).map(|(c, e)| (c, e.code()));
        assert_eq!(code("021000021"), None);
        assert_eq!(code("021000022"), Some((ProblemCode::InvalidCheckDigit, 12)));
        assert_eq!(code("990000001"), Some((ProblemCode::InvalidCheckDigit, 12)));
        assert_eq!(code("02100002"), Some((ProblemCode::InvalidFormat, 12)));
        assert_eq!(code("０２１００００２１"), Some((ProblemCode::InvalidFormat, 12)));
        assert_eq!(code("231380104"), Some((ProblemCode::NotFound, 16)));
        let v = routing_number_verdict("231380104", &dir);
        assert_eq!(v.message.as_deref(), Some("Routing Number '231380104' was not found"));
        assert_eq!((v.errors[0].field.as_str(), v.errors[0].code), ("routing_number", ProblemCode::NotFound));
        assert!(routing_number_verdict("021000021", &dir).valid);
    }

    #[test]
    fn embedded_default_is_valid_and_forwards() {
        let dir = RoutingDirectory::embedded();
        assert!(dir.len() >= 30);
        for i in dir.iter() {
            assert!(is_valid_routing_number(&i.routing_number), "{}", i.routing_number);
        }
        let l = dir
            .lookup("011001962")
            .map(|l| (l.requested.routing_number.clone(), l.destination.routing_number.clone()));
        assert_eq!(l, Some(("011001962".into(), "122203950".into())));
        assert_eq!(dir.lookup("021000021").map(|l| l.destination.name.as_str()), Some("JPMORGAN CHASE"));
        assert!(dir.lookup("021000089").is_some());
        assert!(dir.lookup("011000138").is_some());
        assert!(dir.lookup("231380104").is_none());
    }

    fn record(rn: &str, kind: char, new: &str, name: &str) -> String {
        let mut s = format!(
            "{rn}O011000015{kind}122415{new:<9}{name:<36}{:<36}{:<20}GA303094470877372245711",
            "1 MAIN ST", "ATLANTA"
        );
        while s.len() < RECORD_LEN {
            s.push(' ');
        }
        s
    }

    #[test]
    fn parses_records_and_refuses_bad_lines() {
        let good = format!(
            "{}\r\n{}\r\n\r\n",
            record("011000015", '0', "000000000", "FEDERAL RESERVE BANK"),
            record("011001962", '2', "011000015", "CATHAY")
        );
        let dir = RoutingDirectory::parse_fedach(&good).map_err(|e| e.to_string());
        let dir = dir.as_ref().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(dir.len(), 2);
        let fed = dir
            .get("011000015")
            .map(|i| (i.record_type, i.city.as_str(), i.state.as_str(), i.zip.as_str(), i.phone.as_str()));
        assert_eq!(fed, Some((0, "ATLANTA", "GA", "30309-4470", "8773722457")));
        assert_eq!(dir.lookup("011001962").map(|l| l.destination.routing_number.as_str()), Some("011000015"));

        let short = "011000015O0110000150";
        assert_eq!(RoutingDirectory::parse_fedach(short).map(|d| d.len()).map_err(|e| e.line), Err(1));
        let bad_digit = record("011000016", '1', "000000000", "X");
        let text = format!("{}\n{bad_digit}\n", record("011000015", '1', "000000000", "X"));
        let err = RoutingDirectory::parse_fedach(&text).err();
        assert_eq!(err.map(|e| e.line), Some(2));
        let dup = format!("{0}\n{0}\n", record("011000015", '1', "000000000", "X"));
        assert_eq!(
            RoutingDirectory::parse_fedach(&dup).map(|d| d.len()).map_err(|e| e.to_string()),
            Err("line 2: routing number appears twice".into())
        );
        let bad_type = record("011000015", '7', "000000000", "X");
        assert_eq!(
            RoutingDirectory::parse_fedach(&bad_type).map(|d| d.len()).map_err(|e| e.to_string()),
            Err("line 1: record type '7' is not 0, 1 or 2".into())
        );
    }

    #[test]
    fn forwarding_loops_and_dangling_targets_are_not_found() {
        let text = format!(
            "{}\n{}\n{}\n",
            record("011000015", '2', "021000021", "A"),
            record("021000021", '2', "011000015", "B"),
            record("026009593", '2', "121000248", "C")
        );
        let dir = RoutingDirectory::parse_fedach(&text).unwrap_or_default();
        assert_eq!(dir.len(), 3);
        assert!(dir.lookup("011000015").is_none());
        assert!(dir.lookup("026009593").is_none());
    }
}
