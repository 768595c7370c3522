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

/// The ISO 18245 range groups, in code order; together they cover `0001..=9999`
/// without gaps.
static GROUPS: [Group; 13] = [
    g(1, 1499, "Agricultural services"),
    g(1500, 2999, "Contracted services"),
    g(3000, 3299, "Airlines"),
    g(3300, 3499, "Car rental"),
    g(3500, 3999, "Lodging"),
    g(4000, 4799, "Transportation services"),
    g(4800, 4999, "Utility services"),
    g(5000, 5599, "Retail outlet services"),
    g(5600, 5699, "Clothing stores"),
    g(5700, 7299, "Miscellaneous stores"),
    g(7300, 7999, "Business services"),
    g(8000, 8999, "Professional services and membership organizations"),
    g(9000, 9999, "Government services"),
];

const fn g(first: u16, last: u16, name: &'static str) -> Group {
    Group { first, last, name }
}

/// A curated entry: the code's group is the range group that holds it, so a code
/// outside every group fails to compile.
const fn c(code: u16, description: &'static str) -> Category {
    let mut i = 0;
    while i < GROUPS.len() {
        if GROUPS[i].contains(code) {
            return Category { code, description, group: GROUPS[i].name };
        }
        i += 1;
    }
    panic!("a curated code lies outside every range group")
}

/// Common codes with their standard descriptions, in code order.
static CURATED: [Category; 83] = [
    c(742, "Veterinary Services"),
    c(763, "Agricultural Co-operatives"),
    c(780, "Landscaping and Horticultural Services"),
    c(1520, "General Contractors—Residential and Commercial"),
    c(1711, "Heating, Plumbing, and Air-Conditioning Contractors"),
    c(1731, "Electrical Contractors"),
    c(1740, "Masonry, Stonework, Tile Setting, Plastering, and Insulation Contractors"),
    c(1750, "Carpentry Contractors"),
    c(1761, "Roofing, Siding, and Sheet Metal Work Contractors"),
    c(1771, "Concrete Work Contractors"),
    c(1799, "Special Trade Contractors (Not Elsewhere Classified)"),
    c(2741, "Miscellaneous Publishing and Printing"),
    c(4111, "Local and Suburban Commuter Passenger Transportation, including Ferries"),
    c(4121, "Taxicabs and Limousines"),
    c(4131, "Bus Lines"),
    c(4214, "Motor Freight Carriers and Trucking—Local and Long Distance, Moving and Storage Companies, and Local Delivery"),
    c(4215, "Courier Services—Air and Ground, and Freight Forwarders"),
    c(4722, "Travel Agencies and Tour Operators"),
    c(4812, "Telecommunication Equipment and Telephone Sales"),
    c(4814, "Telecommunication Services"),
    c(4899, "Cable, Satellite, and Other Pay Television and Radio Services"),
    c(4900, "Utilities—Electric, Gas, Water, and Sanitary"),
    c(5045, "Computers and Computer Peripheral Equipment and Software"),
    c(5094, "Precious Stones and Metals, Watches and Jewelry"),
    c(5111, "Stationery, Office Supplies, Printing and Writing Paper"),
    c(5200, "Home Supply Warehouse Stores"),
    c(5300, "Wholesale Clubs"),
    c(5311, "Department Stores"),
    c(5331, "Variety Stores"),
    c(5399, "Miscellaneous General Merchandise"),
    c(5411, "Grocery Stores and Supermarkets"),
    c(5499, "Miscellaneous Food Stores—Convenience Stores and Specialty Markets"),
    c(5541, "Service Stations"),
    c(5621, "Women's Ready-to-Wear Stores"),
    c(5651, "Family Clothing Stores"),
    c(5661, "Shoe Stores"),
    c(5691, "Men's and Women's Clothing Stores"),
    c(5712, "Furniture, Home Furnishings, and Equipment Stores, except Appliances"),
    c(5732, "Electronics Stores"),
    c(5734, "Computer Software Stores"),
    c(5812, "Eating Places and Restaurants"),
    c(5814, "Fast Food Restaurants"),
    c(5912, "Drug Stores and Pharmacies"),
    c(5941, "Sporting Goods Stores"),
    c(5942, "Book Stores"),
    c(5968, "Direct Marketing—Continuity/Subscription Merchants"),
    c(5999, "Miscellaneous and Specialty Retail Stores"),
    c(6012, "Financial Institutions—Merchandise and Services"),
    c(6300, "Insurance Sales, Underwriting, and Premiums"),
    c(6513, "Real Estate Agents and Managers—Rentals"),
    c(7011, "Hotels, Motels, and Resorts"),
    c(7210, "Laundry, Cleaning, and Garment Services"),
    c(7230, "Beauty and Barber Shops"),
    c(7299, "Miscellaneous Personal Services (Not Elsewhere Classified)"),
    c(7349, "Cleaning, Maintenance, and Janitorial Services"),
    c(7372, "Computer Programming, Data Processing, and Integrated Systems Design Services"),
    c(7399, "Business Services (Not Elsewhere Classified)"),
    c(7523, "Parking Lots and Garages"),
    c(7538, "Automotive Service Shops (Non-Dealer)"),
    c(7542, "Car Washes"),
    c(7997, "Membership Clubs (Sports, Recreation, Athletic), Country Clubs, and Private Golf Courses"),
    c(8011, "Doctors and Physicians (Not Elsewhere Classified)"),
    c(8021, "Dentists and Orthodontists"),
    c(8042, "Optometrists and Ophthalmologists"),
    c(8050, "Nursing and Personal Care Facilities"),
    c(8062, "Hospitals"),
    c(8099, "Medical Services and Health Practitioners (Not Elsewhere Classified)"),
    c(8111, "Legal Services and Attorneys"),
    c(8211, "Elementary and Secondary Schools"),
    c(8220, "Colleges, Universities, Professional Schools, and Junior Colleges"),
    c(8299, "Schools and Educational Services (Not Elsewhere Classified)"),
    c(8351, "Child Care Services"),
    c(8398, "Charitable and Social Service Organizations"),
    c(8641, "Civic, Social, and Fraternal Associations"),
    c(8661, "Religious Organizations"),
    c(8699, "Membership Organizations (Not Elsewhere Classified)"),
    c(8931, "Accounting, Auditing, and Bookkeeping Services"),
    c(8999, "Professional Services (Not Elsewhere Classified)"),
    c(9211, "Court Costs, including Alimony and Child Support"),
    c(9222, "Fines"),
    c(9311, "Tax Payments"),
    c(9399, "Government Services (Not Elsewhere Classified)"),
    c(9402, "Postal Services—Government Only"),
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
