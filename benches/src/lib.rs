//! Shared fixtures for the criterion benches in `benches/`.

/// A typical transaction request body: a PPD debit with an inline customer.
pub const TYPICAL_TRANSACTION: &str = r#"{"partner_id":"par_0123456789abcdefghijKL","merchant_id":"mer_0123456789abcdefghijKL","amount":"125.50","description":"Invoice 42","type":"debit","standard_entry_class":"PPD","customer":{"name":"Ada Lovelace","routing_number":"021000021","account_number":"123456789","account_type":"checking"}}"#;
