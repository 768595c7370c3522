//! `POST /customers` rules.

use super::account::{self, bank_account};
use super::fields;
use super::json::JsonBody;
use super::report::{Path, Report};
use super::Context;
use crate::model::{CustomerScope, NewCustomer};

entry_points!(NewCustomer, "a customer request");

fn walk(r: &mut Report, value: &JsonBody<'_>, ctx: &Context<'_>) -> Option<NewCustomer> {
    let map = fields::root_object(r, value)?;
    let root = Path::ROOT;
    let merchant = account::merchant_id(r, map, &root, true);
    let account = bank_account(r, map, &root, ctx);
    let scope = match &*merchant? {
        "global" => CustomerScope::Global,
        id => CustomerScope::Merchant(account::to_merchant_id(id)?),
    };
    Some(NewCustomer { merchant_id: scope, account: account? })
}
