//! Merchant application (placeholder until the merchant validator lands).
