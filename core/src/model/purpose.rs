//! A transaction's purpose: what Nacha's Standard Company Entry Descriptions
//! say of it. `PAYROLL` is reserved for PPD wage credits and `PURCHASE` for
//! WEB debits paying for goods bought online; a batch carries either only
//! when its entries say so.

use serde::{Deserialize, Serialize};

use super::{Direction, EntryClass};

/// What a transaction pays for, when it is one Nacha names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Purpose {
    /// Wages: PPD credits only.
    Payroll,
    /// An online purchase of goods: WEB debits only.
    Purchase,
}

impl Purpose {
    /// Every purpose.
    pub const ALL: [Purpose; 2] = [Purpose::Payroll, Purpose::Purchase];

    /// Its name in requests (`payroll`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Purpose::Payroll => "payroll",
            Purpose::Purchase => "purchase",
        }
    }

    /// The purpose named `text` (exactly, lower case).
    pub fn parse(text: &str) -> Option<Purpose> {
        Purpose::ALL.into_iter().find(|p| p.as_str() == text)
    }

    /// The Company Entry Description its batch carries.
    pub const fn description(self) -> &'static str {
        match self {
            Purpose::Payroll => "PAYROLL",
            Purpose::Purchase => "PURCHASE",
        }
    }

    /// The only class and direction it may describe.
    pub const fn entry(self) -> (EntryClass, Direction) {
        match self {
            Purpose::Payroll => (EntryClass::PPD, Direction::Credit),
            Purpose::Purchase => (EntryClass::WEB, Direction::Debit),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_purpose_names_one_class_and_direction_and_parses_back() {
        for p in Purpose::ALL {
            assert_eq!(Purpose::parse(p.as_str()), Some(p));
        }
        assert_eq!(Purpose::Payroll.entry(), (EntryClass::PPD, Direction::Credit));
        assert_eq!(Purpose::Purchase.entry(), (EntryClass::WEB, Direction::Debit));
        assert_eq!(Purpose::parse("Payroll"), None);
        assert_eq!(Purpose::Purchase.description(), "PURCHASE");
    }
}
