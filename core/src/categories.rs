//! Merchant category codes (ISO 18245 MCCs): the industry classification a merchant
//! application carries in `business_data.merchant_category_code`.
//!
//! ISO 18245 divides the four-digit space `0001..=9999` into contiguous range groups
//! (agricultural services, contracted services, airlines, ...); every code in a group
//! is a valid code, and the group names the general business type. On top of the
//! groups, a curated table gives the standard description of common codes. A code
//! outside every group (`0000`, or anything above `9999`) is refused.
//!
//! [`all`] and [`groups`] back a future `GET /categories` endpoint.

use serde::Serialize;

/// One ISO 18245 range group: `first..=last`, named.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Group {
    /// First code of the range (inclusive).
    pub first: u16,
    /// Last code of the range (inclusive).
    pub last: u16,
    /// The group's name, the general business type (`Retail outlet services`).
    pub name: &'static str,
}

impl Group {
    /// Whether `code` lies in this group's range.
    pub const fn contains(&self, code: u16) -> bool {
        self.first <= code && code <= self.last
    }
}

/// A merchant category code with its description and group name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Category {
    /// The code, `1..=9999` (shown with four digits: `0742`).
    pub code: u16,
    /// The standard description of the code, or the group name for codes outside
    /// the curated table.
    pub description: &'static str,
    /// The name of the ISO 18245 range group the code belongs to.
    pub group: &'static str,
}

impl Category {
    /// The code as four digits, with leading zeros (`0742`).
    pub fn code_text(&self) -> String {
        format!("{:04}", self.code)
    }
}

const AGRICULTURAL: &str = "Agricultural services";
const CONTRACTED: &str = "Contracted services";
const AIRLINES: &str = "Airlines";
const CAR_RENTAL: &str = "Car rental";
const LODGING: &str = "Lodging";
const TRANSPORTATION: &str = "Transportation services";
const UTILITY: &str = "Utility services";
const RETAIL: &str = "Retail outlet services";
const CLOTHING: &str = "Clothing stores";
const MISCELLANEOUS: &str = "Miscellaneous stores";
const BUSINESS: &str = "Business services";
const PROFESSIONAL: &str = "Professional services and membership organizations";
const GOVERNMENT: &str = "Government services";

/// The ISO 18245 range groups, in code order; together they cover `0001..=9999`
/// without gaps.
static GROUPS: [Group; 13] = [
    g(1, 1499, AGRICULTURAL),
    g(1500, 2999, CONTRACTED),
    g(3000, 3299, AIRLINES),
    g(3300, 3499, CAR_RENTAL),
    g(3500, 3999, LODGING),
    g(4000, 4799, TRANSPORTATION),
    g(4800, 4999, UTILITY),
    g(5000, 5599, RETAIL),
    g(5600, 5699, CLOTHING),
    g(5700, 7299, MISCELLANEOUS),
    g(7300, 7999, BUSINESS),
    g(8000, 8999, PROFESSIONAL),
    g(9000, 9999, GOVERNMENT),
];

const fn g(first: u16, last: u16, name: &'static str) -> Group {
    Group { first, last, name }
}

const fn c(code: u16, description: &'static str, group: &'static str) -> Category {
    Category { code, description, group }
}

/// Common codes with their standard descriptions, in code order.
static CURATED: [Category; 83] = [
    c(742, "Veterinary Services", AGRICULTURAL),
    c(763, "Agricultural Co-operatives", AGRICULTURAL),
    c(780, "Landscaping and Horticultural Services", AGRICULTURAL),
    c(
        1520,
        "General Contractors—Residential and Commercial",
        CONTRACTED,
    ),
    c(
        1711,
        "Heating, Plumbing, and Air-Conditioning Contractors",
        CONTRACTED,
    ),
    c(1731, "Electrical Contractors", CONTRACTED),
    c(
        1740,
        "Masonry, Stonework, Tile Setting, Plastering, and Insulation Contractors",
        CONTRACTED,
    ),
    c(1750, "Carpentry Contractors", CONTRACTED),
    c(
        1761,
        "Roofing, Siding, and Sheet Metal Work Contractors",
        CONTRACTED,
    ),
    c(1771, "Concrete Work Contractors", CONTRACTED),
    c(
        1799,
        "Special Trade Contractors (Not Elsewhere Classified)",
        CONTRACTED,
    ),
    c(2741, "Miscellaneous Publishing and Printing", CONTRACTED),
    c(
        4111,
        "Local and Suburban Commuter Passenger Transportation, including Ferries",
        TRANSPORTATION,
    ),
    c(4121, "Taxicabs and Limousines", TRANSPORTATION),
    c(4131, "Bus Lines", TRANSPORTATION),
    c(
        4214,
        "Motor Freight Carriers and Trucking—Local and Long Distance, Moving and Storage Companies, and Local Delivery",
        TRANSPORTATION,
    ),
    c(
        4215,
        "Courier Services—Air and Ground, and Freight Forwarders",
        TRANSPORTATION,
    ),
    c(4722, "Travel Agencies and Tour Operators", TRANSPORTATION),
    c(
        4812,
        "Telecommunication Equipment and Telephone Sales",
        UTILITY,
    ),
    c(4814, "Telecommunication Services", UTILITY),
    c(
        4899,
        "Cable, Satellite, and Other Pay Television and Radio Services",
        UTILITY,
    ),
    c(
        4900,
        "Utilities—Electric, Gas, Water, and Sanitary",
        UTILITY,
    ),
    c(
        5045,
        "Computers and Computer Peripheral Equipment and Software",
        RETAIL,
    ),
    c(
        5094,
        "Precious Stones and Metals, Watches and Jewelry",
        RETAIL,
    ),
    c(
        5111,
        "Stationery, Office Supplies, Printing and Writing Paper",
        RETAIL,
    ),
    c(5200, "Home Supply Warehouse Stores", RETAIL),
    c(5300, "Wholesale Clubs", RETAIL),
    c(5311, "Department Stores", RETAIL),
    c(5331, "Variety Stores", RETAIL),
    c(5399, "Miscellaneous General Merchandise", RETAIL),
    c(5411, "Grocery Stores and Supermarkets", RETAIL),
    c(
        5499,
        "Miscellaneous Food Stores—Convenience Stores and Specialty Markets",
        RETAIL,
    ),
    c(5541, "Service Stations", RETAIL),
    c(5621, "Women's Ready-to-Wear Stores", CLOTHING),
    c(5651, "Family Clothing Stores", CLOTHING),
    c(5661, "Shoe Stores", CLOTHING),
    c(5691, "Men's and Women's Clothing Stores", CLOTHING),
    c(
        5712,
        "Furniture, Home Furnishings, and Equipment Stores, except Appliances",
        MISCELLANEOUS,
    ),
    c(5732, "Electronics Stores", MISCELLANEOUS),
    c(5734, "Computer Software Stores", MISCELLANEOUS),
    c(5812, "Eating Places and Restaurants", MISCELLANEOUS),
    c(5814, "Fast Food Restaurants", MISCELLANEOUS),
    c(5912, "Drug Stores and Pharmacies", MISCELLANEOUS),
    c(5941, "Sporting Goods Stores", MISCELLANEOUS),
    c(5942, "Book Stores", MISCELLANEOUS),
    c(
        5968,
        "Direct Marketing—Continuity/Subscription Merchants",
        MISCELLANEOUS,
    ),
    c(
        5999,
        "Miscellaneous and Specialty Retail Stores",
        MISCELLANEOUS,
    ),
    c(
        6012,
        "Financial Institutions—Merchandise and Services",
        MISCELLANEOUS,
    ),
    c(
        6300,
        "Insurance Sales, Underwriting, and Premiums",
        MISCELLANEOUS,
    ),
    c(
        6513,
        "Real Estate Agents and Managers—Rentals",
        MISCELLANEOUS,
    ),
    c(7011, "Hotels, Motels, and Resorts", MISCELLANEOUS),
    c(7210, "Laundry, Cleaning, and Garment Services", MISCELLANEOUS),
    c(7230, "Beauty and Barber Shops", MISCELLANEOUS),
    c(
        7299,
        "Miscellaneous Personal Services (Not Elsewhere Classified)",
        MISCELLANEOUS,
    ),
    c(
        7349,
        "Cleaning, Maintenance, and Janitorial Services",
        BUSINESS,
    ),
    c(
        7372,
        "Computer Programming, Data Processing, and Integrated Systems Design Services",
        BUSINESS,
    ),
    c(7399, "Business Services (Not Elsewhere Classified)", BUSINESS),
    c(7523, "Parking Lots and Garages", BUSINESS),
    c(7538, "Automotive Service Shops (Non-Dealer)", BUSINESS),
    c(7542, "Car Washes", BUSINESS),
    c(
        7997,
        "Membership Clubs (Sports, Recreation, Athletic), Country Clubs, and Private Golf Courses",
        BUSINESS,
    ),
    c(
        8011,
        "Doctors and Physicians (Not Elsewhere Classified)",
        PROFESSIONAL,
    ),
    c(8021, "Dentists and Orthodontists", PROFESSIONAL),
    c(8042, "Optometrists and Ophthalmologists", PROFESSIONAL),
    c(8050, "Nursing and Personal Care Facilities", PROFESSIONAL),
    c(8062, "Hospitals", PROFESSIONAL),
    c(
        8099,
        "Medical Services and Health Practitioners (Not Elsewhere Classified)",
        PROFESSIONAL,
    ),
    c(8111, "Legal Services and Attorneys", PROFESSIONAL),
    c(8211, "Elementary and Secondary Schools", PROFESSIONAL),
    c(
        8220,
        "Colleges, Universities, Professional Schools, and Junior Colleges",
        PROFESSIONAL,
    ),
    c(
        8299,
        "Schools and Educational Services (Not Elsewhere Classified)",
        PROFESSIONAL,
    ),
    c(8351, "Child Care Services", PROFESSIONAL),
    c(
        8398,
        "Charitable and Social Service Organizations",
        PROFESSIONAL,
    ),
    c(
        8641,
        "Civic, Social, and Fraternal Associations",
        PROFESSIONAL,
    ),
    c(8661, "Religious Organizations", PROFESSIONAL),
    c(
        8699,
        "Membership Organizations (Not Elsewhere Classified)",
        PROFESSIONAL,
    ),
    c(
        8931,
        "Accounting, Auditing, and Bookkeeping Services",
        PROFESSIONAL,
    ),
    c(
        8999,
        "Professional Services (Not Elsewhere Classified)",
        PROFESSIONAL,
    ),
    c(
        9211,
        "Court Costs, including Alimony and Child Support",
        GOVERNMENT,
    ),
    c(9222, "Fines", GOVERNMENT),
    c(9311, "Tax Payments", GOVERNMENT),
    c(
        9399,
        "Government Services (Not Elsewhere Classified)",
        GOVERNMENT,
    ),
    c(9402, "Postal Services—Government Only", GOVERNMENT),
];

/// The ISO 18245 range groups, in code order.
pub fn groups() -> &'static [Group] {
    &GROUPS
}

/// The curated codes with their standard descriptions, in code order.
pub fn all() -> &'static [Category] {
    &CURATED
}

/// The range group `code` belongs to, if any (`None` for `0` and codes above `9999`).
pub fn group(code: u16) -> Option<&'static Group> {
    GROUPS.iter().find(|g| g.contains(code))
}

/// Look a code up: the curated entry when there is one, else (for any code inside a
/// range group) a category described by its group name. `None` when the code lies
/// outside every group.
pub fn lookup(code: u16) -> Option<Category> {
    if let Ok(i) = CURATED.binary_search_by_key(&code, |c| c.code) {
        return Some(CURATED[i]);
    }
    group(code).map(|g| Category { code, description: g.name, group: g.name })
}

/// Parse a code as clients send it: a JSON number's text (`742`, `5411`) or a
/// four-digit string (`"0742"`). Returns the code when it has that shape and lies in
/// a range group.
pub fn parse(text: &str, is_json_number: bool) -> Option<u16> {
    let digits = text.bytes().all(|b| b.is_ascii_digit());
    let shape =
        if is_json_number { digits && (1..=4).contains(&text.len()) } else { digits && text.len() == 4 };
    if !shape {
        return None;
    }
    let code: u16 = text.parse().ok()?;
    group(code).map(|_| code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_cover_one_to_9999_without_gaps_or_overlaps() {
        let gs = groups();
        assert_eq!(gs.first().map(|g| g.first), Some(1));
        assert_eq!(gs.last().map(|g| g.last), Some(9999));
        for pair in gs.windows(2) {
            assert_eq!(pair[0].last + 1, pair[1].first, "{pair:?}");
            assert!(pair[0].first <= pair[0].last);
        }
        assert!(group(0).is_none() && group(10_000).is_none());
    }

    #[test]
    fn curated_table_is_sorted_unique_and_in_its_group() {
        let all = all();
        assert!(all.len() >= 60);
        for pair in all.windows(2) {
            assert!(pair[0].code < pair[1].code, "{pair:?}");
        }
        for cat in all {
            let g = group(cat.code).map(|g| g.name);
            assert_eq!(g, Some(cat.group), "{cat:?}");
            assert!(!cat.description.is_empty());
        }
    }

    #[test]
    fn lookup_uses_the_table_then_the_group() {
        let grocery = lookup(5411);
        assert_eq!(
            grocery.map(|c| (c.description, c.group)),
            Some(("Grocery Stores and Supermarkets", "Retail outlet services"))
        );
        assert_eq!(lookup(8398).map(|c| c.description), Some("Charitable and Social Service Organizations"));
        let vet = lookup(742);
        assert_eq!(vet.map(|c| c.code_text()).as_deref(), Some("0742"));
        let unlisted = lookup(5422);
        assert_eq!(
            unlisted.map(|c| (c.description, c.group)),
            Some(("Retail outlet services", "Retail outlet services"))
        );
        assert_eq!(lookup(1).map(|c| c.group), Some("Agricultural services"));
        assert_eq!(lookup(9999).map(|c| c.group), Some("Government services"));
        assert!(lookup(0).is_none());
        assert!(lookup(10_000).is_none());
    }

    #[test]
    fn parse_accepts_numbers_and_four_digit_strings() {
        assert_eq!(parse("5411", true), Some(5411));
        assert_eq!(parse("742", true), Some(742));
        assert_eq!(parse("0742", false), Some(742));
        assert_eq!(parse("742", false), None);
        for bad in ["0", "0000", "10000", "54110", "-742", "5411.0", "5e3", "", " 5411"] {
            assert_eq!(parse(bad, true), None, "{bad}");
            assert_eq!(parse(bad, false), None, "{bad}");
        }
    }
}
