//! Tenants: partners, merchants and their settings, customers.
pub(crate) mod customers;
pub(crate) mod merchant_settings;
pub(crate) mod sealed_text;
pub(crate) mod tenant_lookup;
pub(crate) mod tenants;
#[cfg(test)]
pub(crate) mod test_tenant;
