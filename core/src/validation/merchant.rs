//! `POST /merchants` rules: the merchant application, every group of the spec.
//!
//! Every problem is recorded with its JSON path (`principal[0].address.zip`).
//! Envelope mapping: routing numbers give messages 12/16 and account numbers 13
//! (through the shared bank account rules), malformed velocity amounts 14 (rank
//! [`Rank::Amount`]), everything else 10. Unknown members are ignored. The spec's
//! garbled "the service" member of `business_data` is read as
//! `merchant_category_code` (an ISO 18245 MCC, see [`crate::categories`]).

use std::borrow::Cow;

use chrono::NaiveDate;

use super::account;
use super::fields::{self, problem, FieldRule, Member, Need, STRUCTURE};
use super::formats::{
    check_image, ein_ok, email_ok, is_po_box, nine_digit_text, pad_number_id, parse_date, phone_ok,
    postal_state_ok, ssn_ok, website_ok, zip_ok, ImageError,
};
use super::json::{JsonBody, JsonType, Node, Object};
use super::report::{Path, ProblemCode as C, Rank, Report};
use super::velocities::velocities;
use super::Context;
use crate::categories;
use crate::echo::echo;
use crate::error::AchError;
use crate::model::{
    Address, BusinessData, CompanyInfo, EntryClass, MerchantApplication, MerchantBankAccount, Principal,
    Reference, SupportContact,
};

/// Longest name or title (company, bank, contact, principal, reference).
pub const MAX_NAME: usize = 100;
/// Longest street address line.
pub const MAX_ADDRESS_LINE: usize = 100;
/// Longest city name.
pub const MAX_CITY: usize = 50;
/// Longest free text (authorization method, corporate structure, business type,
/// goods or service).
pub const MAX_TEXT: usize = 255;
/// Longest driver license number.
pub const MAX_DRIVER_LICENSE: usize = 32;
/// Longest website.
pub const MAX_WEBSITE: usize = 2048;
/// Longest email address.
pub const MAX_EMAIL: usize = 254;
/// Longest phone or fax number as written.
pub const MAX_PHONE: usize = 25;

type Obj<'v> = Object<'v>;
/// `Some(None)`: absent and allowed; `None`: a problem was recorded.
type Maybe<T> = Option<Option<T>>;

const CLASSES: &str = "PPD, WEB, CCD, TEL, BOC, POP, ICL";

const CLASS: FieldRule<'static> = FieldRule { rank: Rank::ClassRule, error: &|_| AchError::FailedToAccept };

entry_points!(MerchantApplication, "a merchant application");

fn walk(r: &mut Report, value: &JsonBody<'_>, ctx: &Context<'_>) -> Option<MerchantApplication> {
    let m = fields::root_object(r, value)?;
    let root = Path::ROOT;
    let (classes, web) = entry_classes(r, m, &root);
    let p = root.key("company_info");
    let company = group(r, m, &root, "company_info").and_then(|o| company_info(r, &o, &p, web));
    let p = root.key("velocities");
    let velocities = group(r, m, &root, "velocities").and_then(|o| velocities(r, &o, &p));
    let p = root.key("business_data");
    let business = group(r, m, &root, "business_data").and_then(|o| business(r, &o, &p, ctx));
    let p = root.key("custodial_bank_account");
    let custodial = group(r, m, &root, "custodial_bank_account").and_then(|o| bank(r, &o, &p, ctx));
    let p = root.key("billing_bank_account");
    let billing = match fields::member(m, "billing_bank_account") {
        None => Some(None),
        Some(_) => group(r, m, &root, "billing_bank_account").and_then(|o| bank(r, &o, &p, ctx)).map(Some),
    };
    let p = root.key("support_contact");
    let support = group(r, m, &root, "support_contact").and_then(|o| support(r, &o, &p));
    let principals = principals(r, m, &root);
    let references = references(r, m, &root);
    Some(MerchantApplication {
        company_info: company?,
        velocities: velocities?,
        business_data: business?,
        custodial_bank_account: custodial?,
        billing_bank_account: billing?,
        support_contact: support?,
        principal: principals?,
        standard_entry_classes: classes?,
        references: references?,
    })
}

/// Record a message-10 problem at `at`: "{path} {rest}".
fn fail(r: &mut Report, at: &Path<'_>, code: C, rest: &str) {
    let message = format!("{} {rest}", at.render());
    problem(r, at, code, message, STRUCTURE, "");
}

/// A required object member (a group of the application).
fn group<'v>(r: &mut Report, m: &Obj<'v>, parent: &Path<'_>, key: &str) -> Option<Obj<'v>> {
    fields::object(r, Member::required(m, parent, key))
}

fn company_info(r: &mut Report, m: &Obj, at: &Path<'_>, web: bool) -> Option<CompanyInfo> {
    let guarantee = fields::boolean(r, Member::required(m, at, "check_guarantee"));
    let name = req(r, m, at, "name", Fmt::FileText(MAX_NAME));
    let dba = opt(r, m, at, "dba", Fmt::Text(MAX_NAME));
    let website = opt(r, m, at, "website", Fmt::Website);
    if web && matches!(website, Some(None)) {
        let site = at.key("website");
        let msg = format!("{} is required for WEB entries", site.render());
        problem(r, &site, C::Required, msg, CLASS, "");
    }
    let address = address(r, m, at, true);
    Some(CompanyInfo {
        check_guarantee: guarantee?,
        name: name?,
        dba: dba?,
        website: website?,
        address: address?,
    })
}

/// `address` inside `parent`: address1, city, state, zip required; address2
/// optional; with `physical`, address1 must not be a PO box.
fn address(r: &mut Report, m: &Obj, parent: &Path<'_>, physical: bool) -> Option<Address> {
    let obj = &group(r, m, parent, "address")?;
    let at = parent.key("address");
    let mut line1 = req(r, obj, &at, "address1", Fmt::Text(MAX_ADDRESS_LINE));
    if physical && line1.as_deref().is_some_and(is_po_box) {
        fail(r, &at.key("address1"), C::PoBox, "must be a physical street address, not a PO box");
        line1 = None;
    }
    let line2 = opt(r, obj, &at, "address2", Fmt::Text(MAX_ADDRESS_LINE));
    let city = req(r, obj, &at, "city", Fmt::Text(MAX_CITY));
    let state = req(r, obj, &at, "state", Fmt::State);
    let zip = req(r, obj, &at, "zip", Fmt::Zip);
    Some(Address { address1: line1?, address2: line2?, city: city?, state: state?, zip: zip? })
}

fn business(r: &mut Report, m: &Obj, at: &Path<'_>, ctx: &Context<'_>) -> Option<BusinessData> {
    let method = req(r, m, at, "authorization_method", Fmt::Text(MAX_TEXT));
    let start = start_date(r, m, at, ctx);
    let code = category_code(r, m, at);
    let kind = opt(r, m, at, "business_type", Fmt::Text(MAX_TEXT));
    let goods = opt(r, m, at, "goods_or_service", Fmt::Text(MAX_TEXT));
    let tax_id = nine_digit(r, m, at, "federal_tax_id", EIN);
    let structure = req(r, m, at, "corporate_structure", Fmt::Text(MAX_TEXT));
    let code = code?;
    let derived = || Some(categories::lookup(code?)?.group.to_owned());
    Some(BusinessData {
        authorization_method: method?,
        business_start_date: start?,
        merchant_category_code: code,
        business_type: kind?.or_else(derived),
        goods_or_service: goods?,
        federal_tax_id: tax_id?,
        corporate_structure: structure?,
    })
}

/// `business_start_date`: `yyyy-mm-dd`, not after today.
fn start_date(r: &mut Report, m: &Obj, at: &Path<'_>, ctx: &Context<'_>) -> Option<NaiveDate> {
    let key = "business_start_date";
    let text = fields::text(r, Member::required(m, at, key), 32)?;
    let at = at.key(key);
    let Some(date) = parse_date(&text) else {
        let rest = format!("must be a date as yyyy-mm-dd, not '{}'", echo(&text));
        fail(r, &at, C::InvalidFormat, &rest);
        return None;
    };
    if date > ctx.today {
        let rest = format!("({date}) is in the future (today is {})", ctx.today);
        fail(r, &at, C::FutureDate, &rest);
        return None;
    }
    Some(date)
}

/// `merchant_category_code`: absent, a JSON number `1..=9999`, or a four-digit
/// string; inside an ISO 18245 range group.
fn category_code(r: &mut Report, m: &Obj, parent: &Path<'_>) -> Maybe<u16> {
    let key = "merchant_category_code";
    let at = parent.key(key);
    let (text, is_number) = match fields::member(m, key) {
        None => return Some(None),
        Some(n) if n.json_type() == JsonType::String => match n.as_str() {
            Some(s) if !s.trim().is_empty() => (s.into_owned(), false),
            _ => return Some(None),
        },
        Some(n) if n.json_type() == JsonType::Number => (n.text().to_owned(), true),
        Some(other) => {
            let kind = fields::type_name(other);
            let rest = format!("must be a four-digit merchant category code, not {kind}");
            fail(r, &at, C::InvalidType, &rest);
            return None;
        }
    };
    if let Some(code) = categories::parse(&text, is_number) {
        return Some(Some(code));
    }
    let shown = echo(&text);
    if text.bytes().all(|b| b.is_ascii_digit()) && text.parse() == Ok(0u32) {
        let rest = format!("'{shown}' is not an ISO 18245 merchant category code");
        fail(r, &at, C::InvalidValue, &rest);
    } else {
        let rest = format!("must be a four-digit merchant category code (like 5411), not '{shown}'");
        fail(r, &at, C::InvalidFormat, &rest);
    }
    None
}

/// A nine-digit identifier's check and name.
type IdRule = (fn(&str) -> bool, &'static str);
const SSN: IdRule = (ssn_ok, "SSN");
const EIN: IdRule = (ein_ok, "federal tax id (nine digits, like 12-3456789)");

/// A nine-digit identifier (SSN, EIN), as a string (`123-45-6789`, `12-3456789`,
/// nine digits) or a JSON number (the spec types both ids "number", and a JSON
/// number cannot keep leading zeros, so it is left-padded to nine digits);
/// normalized to nine digits. Its value is never echoed.
fn nine_digit(r: &mut Report, m: &Obj, parent: &Path<'_>, key: &str, kind: IdRule) -> Option<String> {
    let text = fields::number_or_text(r, Member::required(m, parent, key))?;
    let (ok, what) = kind;
    let at = parent.key(key);
    let is_number = fields::member(m, key).is_some_and(|n| n.json_type() == JsonType::Number);
    let text = if is_number {
        match pad_number_id(&text) {
            Ok(padded) => Cow::Owned(padded),
            Err(why) => {
                let rest = format!("is not a valid {what}: {}", why.reason());
                fail(r, &at, C::InvalidFormat, &rest);
                return None;
            }
        }
    } else {
        text
    };
    let digits = ok(&text).then(|| nine_digit_text(&text)).flatten();
    if digits.is_none() {
        let rest = format!("is not a valid {what}");
        fail(r, &at, C::InvalidFormat, &rest);
    }
    digits
}

fn bank(r: &mut Report, m: &Obj, at: &Path<'_>, ctx: &Context<'_>) -> Option<MerchantBankAccount> {
    let name = req(r, m, at, "name", Fmt::Text(MAX_NAME));
    let contact = opt(r, m, at, "contact_name", Fmt::Text(MAX_NAME));
    let title = opt(r, m, at, "contact_title", Fmt::Text(MAX_NAME));
    let routing = account::routing_number(r, m, at, "routing", ctx);
    let number = account::account_number(r, m, at, "account");
    let kind = account::account_type(r, m, at, "type");
    let front = image(r, m, at, "check_image_front");
    let back = image(r, m, at, "check_image_back");
    let address = address(r, m, at, false);
    Some(MerchantBankAccount {
        name: name?,
        contact_name: contact?,
        contact_title: title?,
        routing: routing?.into_owned(),
        account: number?.into_owned(),
        account_type: kind?,
        check_image_front: front?,
        check_image_back: back?,
        address: address?,
    })
}

/// A required base64 check image (TIFF, JPEG or PNG).
fn image(r: &mut Report, m: &Obj, parent: &Path<'_>, key: &str) -> Option<String> {
    let at = parent.key(key);
    let text = match fields::member(m, key) {
        Some(n) if n.as_str().is_some_and(|s| !s.trim().is_empty()) => n.as_str().unwrap_or_default(),
        None => {
            fields::missing(r, &at, STRUCTURE);
            return None;
        }
        Some(n) if n.json_type() == JsonType::String => {
            fields::missing(r, &at, STRUCTURE);
            return None;
        }
        Some(other) => {
            let kind = fields::type_name(other);
            let rest = format!("must be a base64 string, not {kind}");
            fail(r, &at, C::InvalidType, &rest);
            return None;
        }
    };
    let (code, what) = match check_image(&text) {
        Ok(()) => return Some(text.into_owned()),
        Err(ImageError::Base64) => (C::InvalidBase64, "is not valid base64"),
        Err(ImageError::TooLarge) => (C::OverLimit, "is larger than 1 MiB"),
        Err(ImageError::NotAnImage) => (C::NotAnImage, "is not a TIFF, JPEG or PNG image"),
    };
    fail(r, &at, code, what);
    None
}

fn support(r: &mut Report, m: &Obj, at: &Path<'_>) -> Option<SupportContact> {
    let name = req(r, m, at, "name", Fmt::Text(MAX_NAME));
    let email = req(r, m, at, "email", Fmt::Email);
    let phone = req(r, m, at, "phone", Fmt::Phone);
    let fax = opt(r, m, at, "fax", Fmt::Phone);
    Some(SupportContact { name: name?, email: email?, phone: phone?, fax: fax? })
}

/// Every element of `list` (at `base[i]`) as an object checked by `each`; `None`
/// when any element had a problem.
fn each<T>(
    r: &mut Report,
    list: &[Node<'_>],
    base: &Path<'_>,
    each: impl Fn(&mut Report, &Obj, &Path<'_>) -> Option<T>,
) -> Option<Vec<T>> {
    let mut out = Some(Vec::with_capacity(list.len()));
    for (i, item) in list.iter().enumerate() {
        let at = base.index(i);
        let one = fields::as_object(r, *item, &at, STRUCTURE).and_then(|o| each(r, &o, &at));
        out = out.zip(one).map(|(mut v, x)| {
            v.push(x);
            v
        });
    }
    out
}

/// A required array member with at least one element.
fn non_empty<'v>(r: &mut Report, m: &Obj<'v>, at: &Path<'_>, key: &str) -> Option<Vec<Node<'v>>> {
    let list = fields::array(r, Member::required(m, at, key))?;
    if list.is_empty() {
        fail(r, &at.key(key), C::Required, "must not be empty");
        return None;
    }
    Some(list)
}

fn principals(r: &mut Report, m: &Obj, root: &Path<'_>) -> Option<Vec<Principal>> {
    let list = non_empty(r, m, root, "principal")?;
    each(r, &list, &root.key("principal"), principal)
}

fn principal(r: &mut Report, m: &Obj, at: &Path<'_>) -> Option<Principal> {
    let name = req(r, m, at, "name", Fmt::Text(MAX_NAME));
    let title = req(r, m, at, "title", Fmt::Text(MAX_NAME));
    let ssn = nine_digit(r, m, at, "ssn", SSN);
    let license = req(r, m, at, "driver_license", Fmt::Text(MAX_DRIVER_LICENSE));
    let license_state = req(r, m, at, "driver_license_state", Fmt::State);
    let phone = req(r, m, at, "phone", Fmt::Phone);
    let fax = opt(r, m, at, "fax", Fmt::Phone);
    let email = req(r, m, at, "email", Fmt::Email);
    let address = address(r, m, at, false);
    Some(Principal {
        name: name?,
        title: title?,
        ssn: ssn?,
        driver_license: license?,
        driver_license_state: license_state?,
        phone: phone?,
        fax: fax?,
        email: email?,
        address: address?,
    })
}

/// `standard_entry_classes`, and whether `WEB` is among the recognised classes.
fn entry_classes(r: &mut Report, m: &Obj, root: &Path<'_>) -> (Option<Vec<EntryClass>>, bool) {
    let Some(list) = non_empty(r, m, root, "standard_entry_classes") else {
        return (None, false);
    };
    let base = root.key("standard_entry_classes");
    let mut seen: Vec<EntryClass> = Vec::with_capacity(list.len());
    let mut ok = true;
    for (i, item) in list.iter().enumerate() {
        let at = base.index(i);
        let parsed = match item.as_str() {
            Some(text) => EntryClass::parse(&text).ok_or_else(|| echo(&text)),
            None => {
                let other = *item;
                let kind = fields::type_name(other);
                let rest = format!("must be a string, not {kind}");
                fail(r, &at, C::InvalidType, &rest);
                ok = false;
                continue;
            }
        };
        match parsed {
            Err(text) => {
                let rest = format!("'{text}' is not an entry class the service accepts ({CLASSES})");
                fail(r, &at, C::InvalidValue, &rest);
            }
            Ok(class) if seen.contains(&class) => {
                let rest = format!("repeats '{}'", class.as_str());
                fail(r, &at, C::Conflict, &rest);
            }
            Ok(class) => {
                seen.push(class);
                continue;
            }
        }
        ok = false;
    }
    let web = seen.contains(&EntryClass::WEB);
    (ok.then_some(seen), web)
}

/// `references`: absent or null is fine; otherwise an array of complete references.
fn references(r: &mut Report, m: &Obj, root: &Path<'_>) -> Maybe<Vec<Reference>> {
    if fields::member(m, "references").is_none() {
        return Some(None);
    }
    let list = fields::array(r, Member::new(m, root, "references", Need::Optional))?;
    each(r, &list, &root.key("references"), reference).map(Some)
}

fn reference(r: &mut Report, m: &Obj, at: &Path<'_>) -> Option<Reference> {
    let name = req(r, m, at, "name", Fmt::Text(MAX_NAME));
    let contact = req(r, m, at, "contact_name", Fmt::Text(MAX_NAME));
    let phone = req(r, m, at, "phone", Fmt::Phone);
    let state = req(r, m, at, "state", Fmt::State);
    let number = match fields::member(m, "account_number") {
        None => Some(None),
        Some(n) if n.as_str().is_some_and(|s| s.is_empty()) => Some(None),
        Some(_) => account::account_number(r, m, at, "account_number").map(|n| Some(n.into_owned())),
    };
    Some(Reference {
        name: name?,
        contact_name: contact?,
        phone: phone?,
        state: state?,
        account_number: number?,
    })
}

/// A format check, its problem code, and what was expected.
type Check = (fn(&str) -> bool, C, &'static str);

/// What a text member must look like: its longest length and its format check.
#[derive(Clone, Copy)]
enum Fmt {
    /// Any text of at most this many characters (kept in NFKC).
    Text(usize),
    /// Text a NACHA file carries (the company's name): [`Fmt::Text`] that
    /// folds to the file's ASCII.
    FileText(usize),
    State,
    Zip,
    Phone,
    Email,
    Website,
}

impl Fmt {
    fn max(self) -> usize {
        match self {
            Fmt::Text(max) | Fmt::FileText(max) => max,
            Fmt::State | Fmt::Zip => 16,
            Fmt::Phone => MAX_PHONE,
            Fmt::Email => MAX_EMAIL,
            Fmt::Website => MAX_WEBSITE,
        }
    }

    /// The check, the problem code, and what was expected.
    fn check(self) -> Option<Check> {
        Some(match self {
            Fmt::Text(_) | Fmt::FileText(_) => return None,
            Fmt::State => (postal_state_ok, C::InvalidValue, "a US postal state code"),
            Fmt::Zip => (zip_ok, C::InvalidFormat, "a ZIP code (12345 or 12345-6789)"),
            Fmt::Phone => (phone_ok, C::InvalidFormat, "a US phone number (ten digits)"),
            Fmt::Email => (email_ok, C::InvalidFormat, "an email address"),
            Fmt::Website => (website_ok, C::InvalidFormat, "a website (www.example.com)"),
        })
    }
}

/// A required text member in format `f`.
fn req(r: &mut Report, m: &Obj, at: &Path<'_>, key: &str, f: Fmt) -> Option<String> {
    text(r, m, at, key, Need::Required, f).flatten()
}

/// An optional text member in format `f`.
fn opt(r: &mut Report, m: &Obj, at: &Path<'_>, key: &str, f: Fmt) -> Maybe<String> {
    text(r, m, at, key, Need::Optional, f)
}

/// A text member in format `f`.
fn text(r: &mut Report, m: &Obj, at: &Path<'_>, key: &str, need: Need, f: Fmt) -> Maybe<String> {
    let before = r.problems().len();
    let member = Member::new(m, at, key, need);
    let read = match f {
        Fmt::Text(max) => fields::free_text(r, member, max),
        Fmt::FileText(max) => fields::file_text(r, member, max),
        _ => fields::text(r, member, f.max()),
    };
    let Some(text) = read else {
        return (r.problems().len() == before).then_some(None);
    };
    match f.check() {
        Some((ok, code, what)) if !ok(&text) => {
            let rest = format!("must be {what}, not '{}'", echo(&text));
            fail(r, &at.key(key), code, &rest);
            None
        }
        _ => Some(Some(text.into_owned())),
    }
}

#[cfg(test)]
#[path = "merchant_tests.rs"]
mod tests;
