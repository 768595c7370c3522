//! The frame of the sample NACHA files that the tests and the benches write: one
//! company's batches, effective Monday 2026-11-30, in a file created on Friday
//! 2026-11-27 at 6 PM.

use ach_core::nacha::{service_class_for, Batch, Entry, NachaFile, Originator, Text};
use chrono::{NaiveDate, NaiveTime};

/// One batch of `entries` from company 1234567890 (`company_name`) of `o`, its
/// class and description given as `(sec, description)`, numbered
/// `batch_number`.
pub fn batch(
    o: &Originator,
    company_name: &str,
    (sec, description): (&str, &str),
    batch_number: u32,
    entries: Vec<Entry>,
) -> Batch {
    Batch {
        service_class_code: service_class_for(&entries),
        company_name: company_name.into(),
        company_discretionary_data: Text::new(),
        company_identification: "1234567890".into(),
        sec_code: sec.into(),
        company_entry_description: description.into(),
        company_descriptive_date: Text::new(),
        effective_entry_date: date(2026, 11, 30),
        settlement_date: Text::new(),
        originator_status_code: '1',
        odfi_identification: o.odfi_identification().into(),
        batch_number,
        entries,
    }
}

/// A file of `batches` that `o` created on 2026-11-27 at 18:00.
pub fn file(o: &Originator, batches: Vec<Batch>) -> NachaFile {
    NachaFile { header: o.file_header(date(2026, 11, 27), NaiveTime::from_hms_opt(18, 0, 0), 'A'), batches }
}

fn date(year: i32, month: u32, day: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(year, month, day).unwrap_or_else(|| panic!("{year}-{month}-{day} is no date"))
}
