//! Record layouts of X9.100-187-2016: where each field sits, by the standard's
//! 1-based positions. The writer places values with them and the checker reads
//! values with them, so the two can never disagree about a column.
//!
//! Every fixed record is 80 characters except the credit (`62`, 100); the image
//! view data (`52`) and user (`68`) records have a fixed part followed by
//! variable data whose lengths the fixed part gives. A test proves that each
//! listed layout covers its record exactly, field after field.

/// One field: its name (snake case, as problems report it), 0-based offset and
/// width in characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Field {
    pub name: &'static str,
    pub start: usize,
    pub len: usize,
}

impl Field {
    /// The field at the standard's 1-based `position`, `len` characters wide.
    const fn at(name: &'static str, position: usize, len: usize) -> Field {
        Field { name, start: position - 1, len }
    }

    /// One past the field's last offset.
    pub const fn end(self) -> usize {
        self.start + self.len
    }
}

/// Length of every fixed record but the credit (`62`).
pub(crate) const FIXED_LEN: usize = 80;

/// Declares one record's layout: a module with each field as a constant, the
/// record's length and `ALL`, every field in order.
macro_rules! layout {
    ($(#[$doc:meta])* $module:ident, $len:expr, { $($name:ident = $text:literal, $pos:literal, $width:literal;)* }) => {
        $(#[$doc])*
        pub(crate) mod $module {
            use super::Field;
            /// Length of the record (of its fixed part when it has variable data).
            #[allow(dead_code)]
            pub(crate) const LEN: usize = $len;
            $(
                #[allow(dead_code)]
                pub(crate) const $name: Field = Field::at($text, $pos, $width);
            )*
            /// Every field, in order.
            #[allow(dead_code)]
            pub(crate) const ALL: &[Field] = &[$($name),*];
        }
    };
}

layout!(
    /// `01`, file header.
    file_header, super::FIXED_LEN, {
    RECORD_TYPE = "record_type", 1, 2;
    STANDARD_LEVEL = "standard_level", 3, 2;
    TEST_FILE = "test_file_indicator", 5, 1;
    DESTINATION = "immediate_destination", 6, 9;
    ORIGIN = "immediate_origin", 15, 9;
    CREATION_DATE = "file_creation_date", 24, 8;
    CREATION_TIME = "file_creation_time", 32, 4;
    RESEND = "resend_indicator", 36, 1;
    DESTINATION_NAME = "immediate_destination_name", 37, 18;
    ORIGIN_NAME = "immediate_origin_name", 55, 18;
    FILE_ID_MODIFIER = "file_id_modifier", 73, 1;
    COUNTRY = "country_code", 74, 2;
    USER = "user_field", 76, 4;
    COMPANION = "companion_document_indicator", 80, 1;
});

layout!(
    /// `10`, cash letter header.
    cash_letter_header, super::FIXED_LEN, {
    RECORD_TYPE = "record_type", 1, 2;
    COLLECTION_TYPE = "collection_type_indicator", 3, 2;
    DESTINATION = "destination_routing_number", 5, 9;
    ECE_INSTITUTION = "ece_institution_routing_number", 14, 9;
    BUSINESS_DATE = "cash_letter_business_date", 23, 8;
    CREATION_DATE = "cash_letter_creation_date", 31, 8;
    CREATION_TIME = "cash_letter_creation_time", 39, 4;
    RECORD_TYPE_INDICATOR = "cash_letter_record_type_indicator", 43, 1;
    DOCUMENTATION_TYPE = "documentation_type_indicator", 44, 1;
    CASH_LETTER_ID = "cash_letter_id", 45, 8;
    CONTACT_NAME = "originator_contact_name", 53, 14;
    CONTACT_PHONE = "originator_contact_phone", 67, 10;
    FED_WORK_TYPE = "fed_work_type", 77, 1;
    RETURNS = "returns_indicator", 78, 1;
    USER = "user_field", 79, 1;
    RESERVED = "reserved", 80, 1;
});

layout!(
    /// `20`, bundle header.
    bundle_header, super::FIXED_LEN, {
    RECORD_TYPE = "record_type", 1, 2;
    COLLECTION_TYPE = "collection_type_indicator", 3, 2;
    DESTINATION = "destination_routing_number", 5, 9;
    ECE_INSTITUTION = "ece_institution_routing_number", 14, 9;
    BUSINESS_DATE = "bundle_business_date", 23, 8;
    CREATION_DATE = "bundle_creation_date", 31, 8;
    BUNDLE_ID = "bundle_id", 39, 10;
    SEQUENCE = "bundle_sequence_number", 49, 4;
    CYCLE = "cycle_number", 53, 2;
    RETURN_LOCATION = "return_location_routing_number", 55, 9;
    USER = "user_field", 64, 5;
    RESERVED = "reserved", 69, 12;
});

layout!(
    /// `25`, check detail: one check, its MICR line in fields.
    check_detail, super::FIXED_LEN, {
    RECORD_TYPE = "record_type", 1, 2;
    AUX_ON_US = "auxiliary_on_us", 3, 15;
    EXTERNAL_PROCESSING = "external_processing_code", 18, 1;
    PAYOR_ROUTING = "payor_bank_routing_number", 19, 8;
    PAYOR_CHECK_DIGIT = "payor_bank_check_digit", 27, 1;
    ON_US = "on_us", 28, 20;
    AMOUNT = "item_amount", 48, 10;
    SEQUENCE = "item_sequence_number", 58, 15;
    DOCUMENTATION_TYPE = "documentation_type_indicator", 73, 1;
    RETURN_ACCEPTANCE = "return_acceptance_indicator", 74, 1;
    MICR_VALID = "micr_valid_indicator", 75, 1;
    BOFD = "bofd_indicator", 76, 1;
    ADDENDUM_COUNT = "check_detail_addendum_count", 77, 2;
    CORRECTION = "correction_indicator", 79, 1;
    ARCHIVE = "archive_type_indicator", 80, 1;
});

layout!(
    /// `26`, check detail addendum A: the bank of first deposit (BOFD).
    check_addendum_a, super::FIXED_LEN, {
    RECORD_TYPE = "record_type", 1, 2;
    RECORD_NUMBER = "addendum_a_record_number", 3, 1;
    RETURN_LOCATION = "return_location_routing_number", 4, 9;
    BOFD_DATE = "bofd_endorsement_date", 13, 8;
    BOFD_SEQUENCE = "bofd_item_sequence_number", 21, 15;
    BOFD_ACCOUNT = "bofd_account_number", 36, 18;
    BOFD_BRANCH = "bofd_branch_code", 54, 5;
    PAYEE = "payee_name", 59, 15;
    TRUNCATION = "truncation_indicator", 74, 1;
    CONVERSION = "bofd_conversion_indicator", 75, 1;
    CORRECTION = "bofd_correction_indicator", 76, 1;
    USER = "user_field", 77, 1;
    RESERVED = "reserved", 78, 3;
});

layout!(
    /// `31`, return: a returned check.
    return_detail, super::FIXED_LEN, {
    RECORD_TYPE = "record_type", 1, 2;
    PAYOR_ROUTING = "payor_bank_routing_number", 3, 8;
    PAYOR_CHECK_DIGIT = "payor_bank_check_digit", 11, 1;
    ON_US = "on_us", 12, 20;
    AMOUNT = "item_amount", 32, 10;
    REASON = "return_reason", 42, 1;
    ADDENDUM_COUNT = "return_addendum_count", 43, 2;
    DOCUMENTATION_TYPE = "documentation_type_indicator", 45, 1;
    FORWARD_BUNDLE_DATE = "forward_bundle_date", 46, 8;
    SEQUENCE = "item_sequence_number", 54, 15;
    EXTERNAL_PROCESSING = "external_processing_code", 69, 1;
    RETURN_NOTIFICATION = "return_notification_indicator", 70, 1;
    ARCHIVE = "archive_type_indicator", 71, 1;
    TIMES_RETURNED = "number_of_times_returned", 72, 1;
    RESERVED = "reserved", 73, 8;
});

layout!(
    /// `50`, image view detail: what the next `52` carries.
    image_view_detail, super::FIXED_LEN, {
    RECORD_TYPE = "record_type", 1, 2;
    IMAGE_INDICATOR = "image_indicator", 3, 1;
    CREATOR_ROUTING = "image_creator_routing_number", 4, 9;
    CREATOR_DATE = "image_creator_date", 13, 8;
    FORMAT = "image_view_format_indicator", 21, 2;
    COMPRESSION = "image_view_compression_algorithm", 23, 2;
    DATA_SIZE = "image_view_data_size", 25, 7;
    VIEW_SIDE = "view_side_indicator", 32, 1;
    VIEW_DESCRIPTOR = "view_descriptor", 33, 2;
    SIGNATURE_INDICATOR = "digital_signature_indicator", 35, 1;
    SIGNATURE_METHOD = "digital_signature_method", 36, 2;
    SECURITY_KEY_SIZE = "security_key_size", 38, 5;
    PROTECTED_START = "start_of_protected_data", 43, 7;
    PROTECTED_LENGTH = "length_of_protected_data", 50, 7;
    RECREATE = "image_recreate_indicator", 57, 1;
    USER = "user_field", 58, 8;
    RESERVED = "reserved", 66, 1;
    OVERRIDE = "override_indicator", 67, 1;
    RESERVED_2 = "reserved", 68, 13;
});

layout!(
    /// `52`, image view data: the fixed part, up to the length of the image
    /// reference key; then the key, the length of the digital signature (5),
    /// the signature, the length of the image data (7) and the image itself.
    image_view_data, 105, {
    RECORD_TYPE = "record_type", 1, 2;
    ECE_INSTITUTION = "ece_institution_routing_number", 3, 9;
    BUSINESS_DATE = "bundle_business_date", 12, 8;
    CYCLE = "cycle_number", 20, 2;
    SEQUENCE = "item_sequence_number", 22, 15;
    SECURITY_ORIGINATOR = "security_originator_name", 37, 16;
    SECURITY_AUTHENTICATOR = "security_authenticator_name", 53, 16;
    SECURITY_KEY = "security_key_name", 69, 16;
    CLIPPING_ORIGIN = "clipping_origin", 85, 1;
    CLIPPING_H1 = "clipping_coordinate_h1", 86, 4;
    CLIPPING_H2 = "clipping_coordinate_h2", 90, 4;
    CLIPPING_V1 = "clipping_coordinate_v1", 94, 4;
    CLIPPING_V2 = "clipping_coordinate_v2", 98, 4;
    REFERENCE_KEY_LENGTH = "length_of_image_reference_key", 102, 4;
});

/// Width of the `52` record's length of digital signature.
pub(crate) const SIGNATURE_LENGTH_LEN: usize = 5;
/// Width of the `52` record's length of image data.
pub(crate) const IMAGE_LENGTH_LEN: usize = 7;

layout!(
    /// `61`, credit reconciliation (only the fields the controls need).
    credit_reconciliation, super::FIXED_LEN, {
    RECORD_TYPE = "record_type", 1, 2;
    AMOUNT = "item_amount", 48, 10;
});

layout!(
    /// `62`, credit (only the fields the controls need).
    credit, 100, {
    RECORD_TYPE = "record_type", 1, 2;
    AMOUNT = "item_amount", 48, 14;
});

layout!(
    /// `68`, user record: the fixed part; the user data follows.
    user_record, 45, {
    RECORD_TYPE = "record_type", 1, 2;
    USER_DATA_LENGTH = "length_of_user_data", 39, 7;
});

layout!(
    /// `70`, bundle control.
    bundle_control, super::FIXED_LEN, {
    RECORD_TYPE = "record_type", 1, 2;
    ITEMS_COUNT = "items_within_bundle_count", 3, 4;
    TOTAL_AMOUNT = "bundle_total_amount", 7, 12;
    MICR_VALID_TOTAL = "micr_valid_total_amount", 19, 12;
    IMAGES_COUNT = "images_within_bundle_count", 31, 5;
    USER = "user_field", 36, 20;
    CREDIT_TOTAL = "credit_total_indicator", 56, 1;
    RESERVED = "reserved", 57, 24;
});

layout!(
    /// `90`, cash letter control.
    cash_letter_control, super::FIXED_LEN, {
    RECORD_TYPE = "record_type", 1, 2;
    BUNDLE_COUNT = "bundle_count", 3, 6;
    ITEMS_COUNT = "items_within_cash_letter_count", 9, 8;
    TOTAL_AMOUNT = "cash_letter_total_amount", 17, 14;
    IMAGES_COUNT = "images_within_cash_letter_count", 31, 9;
    ECE_INSTITUTION_NAME = "ece_institution_name", 40, 18;
    SETTLEMENT_DATE = "settlement_date", 58, 8;
    CREDIT_TOTAL = "credit_total_indicator", 66, 1;
    RESERVED = "reserved", 67, 14;
});

layout!(
    /// `99`, file control.
    file_control, super::FIXED_LEN, {
    RECORD_TYPE = "record_type", 1, 2;
    CASH_LETTER_COUNT = "cash_letter_count", 3, 6;
    RECORD_COUNT = "total_record_count", 9, 8;
    ITEMS_COUNT = "total_item_count", 17, 8;
    TOTAL_AMOUNT = "file_total_amount", 25, 16;
    CONTACT_NAME = "immediate_origin_contact_name", 41, 14;
    CONTACT_PHONE = "immediate_origin_contact_phone", 55, 10;
    CREDIT_TOTAL = "credit_total_indicator", 65, 1;
    RESERVED = "reserved", 66, 15;
});

/// The length of a record of `kind` when it is fixed; `None` for the variable
/// records (`52`, `68`) and for kinds the standard does not define.
pub(crate) fn fixed_len(kind: u8) -> Option<usize> {
    match kind {
        1 | 10 | 20 | 25 | 26 | 27 | 28 | 31 | 32 | 33 | 34 | 35 | 50 | 54 | 61 | 70 | 85 | 90 | 99 => {
            Some(FIXED_LEN)
        }
        62 => Some(credit::LEN),
        _ => None,
    }
}

/// Whether `kind` is a record type of X9.100-187-2016.
pub(crate) fn is_known(kind: u8) -> bool {
    fixed_len(kind).is_some() || matches!(kind, 52 | 68)
}

/// The ABA check digit of a routing number's first eight digits
/// (3·(d1+d4+d7) + 7·(d2+d5+d8) + d3+d6 + check ≡ 0 mod 10); `None` unless
/// `first8` is eight ASCII digits.
pub(crate) fn aba_check_digit(first8: &str) -> Option<char> {
    let b = first8.as_bytes();
    if b.len() != 8 || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    const WEIGHTS: [u32; 8] = [3, 7, 1, 3, 7, 1, 3, 7];
    let sum: u32 = b.iter().zip(WEIGHTS).map(|(d, w)| u32::from(d - b'0') * w).sum();
    char::from_digit((10 - sum % 10) % 10, 10)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each layout's fields follow one another without gap or overlap from
    /// position 1 to the record's (fixed part's) last position.
    fn tiles(all: &[Field], len: usize) {
        let mut at = 0;
        for f in all {
            assert_eq!(f.start, at, "{} starts at {} instead of {at}", f.name, f.start + 1);
            at = f.end();
        }
        assert_eq!(at, len, "the fields end at {at}, the record at {len}");
    }

    #[test]
    fn full_layouts_cover_their_records_exactly() {
        tiles(file_header::ALL, file_header::LEN);
        tiles(cash_letter_header::ALL, cash_letter_header::LEN);
        tiles(bundle_header::ALL, bundle_header::LEN);
        tiles(check_detail::ALL, check_detail::LEN);
        tiles(check_addendum_a::ALL, check_addendum_a::LEN);
        tiles(return_detail::ALL, return_detail::LEN);
        tiles(image_view_detail::ALL, image_view_detail::LEN);
        tiles(image_view_data::ALL, image_view_data::LEN);
        tiles(bundle_control::ALL, bundle_control::LEN);
        tiles(cash_letter_control::ALL, cash_letter_control::LEN);
        tiles(file_control::ALL, file_control::LEN);
    }

    #[test]
    fn partial_layouts_stay_inside_their_records() {
        for (all, len) in [
            (credit_reconciliation::ALL, credit_reconciliation::LEN),
            (credit::ALL, credit::LEN),
            (user_record::ALL, user_record::LEN),
        ] {
            for f in all {
                assert!(f.end() <= len, "{} ends past {len}", f.name);
            }
        }
    }

    #[test]
    fn check_digits() {
        assert_eq!(aba_check_digit("12200066"), Some('1'));
        assert_eq!(aba_check_digit("03130001"), Some('2'));
        assert_eq!(aba_check_digit("02607315"), Some('0'));
        assert_eq!(aba_check_digit("0313000"), None);
        assert_eq!(aba_check_digit("0313000x"), None);
    }
}
