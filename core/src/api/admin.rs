//! The operator plane: partners and their merchants, approvals, limits, the
//! routing directory, returns, files and the volume per day, and the sandbox
//! clock. Basic auth with the operator key.

use chrono::NaiveDate;
use serde::Deserialize;

use super::input::{typed_body, typed_body_with_lists, typed_data, with_data};
use super::list_query;
use super::render::{self, Response};
use super::request::Request;
use super::routes::Endpoint;
use crate::echo::echo;
use crate::engine::{Engine, KeyHolder, Operation, Refusal, DEFAULT_GRACE_SECONDS, MAX_GRACE_SECONDS};
use crate::limits::Limits;
use crate::validation::{FieldError, ProblemCode};
use crate::{calendar, AchError};

/// The operator's reads: the partners and their merchants, the originator,
/// the origination files, the return rates, the volume per day. `None`: the
/// endpoint is an operation, not a read.
pub(crate) fn read(
    engine: &Engine,
    e: Endpoint,
    params: &[String],
    req: &Request,
) -> Result<Option<Response>, Refusal> {
    let param = || params.first().map_or("", String::as_str);
    Ok(Some(match e {
        Endpoint::AdminRiskRules => {
            typed_body::<Nothing>(req)?;
            render::data(engine.risk_rules()?)
        }
        Endpoint::AdminReviews => {
            typed_body::<Nothing>(req)?;
            render::data(serde_json::json!({"reviews": engine.reviews()?}))
        }
        Endpoint::AdminRiskReport => {
            let (from, to) = period(req, crate::engine::REPORT_DAYS)?;
            render::data(engine.risk_report(from, to)?)
        }
        Endpoint::AdminVolume => {
            let (from, to) = period(req, crate::model::MAX_VOLUME_DAYS)?;
            render::data(engine.volume(from, to)?)
        }
        Endpoint::AdminPartnerList => {
            let page = with_data(req, |data, _| list_query::page_request(data))?;
            render::data(engine.partners(&page)?)
        }
        Endpoint::AdminPartnerMerchants => {
            let page = with_data(req, |data, _| list_query::page_request(data))?;
            render::data(engine.partner_merchants(param(), &page)?)
        }
        Endpoint::AdminExposure => {
            typed_body::<Nothing>(req)?;
            render::data(engine.exposure(param())?)
        }
        Endpoint::AdminOriginator => match engine.originator()? {
            Some(o) => render::data(o),
            None => {
                let msg = "no originator is set: PUT /admin/originator first";
                return Err(Refusal::not_found("originator", msg));
            }
        },
        Endpoint::AdminFiles => render::data(engine.origination_files()?),
        Endpoint::AdminReturnRates => render::return_rates(&engine.return_rates()?),
        Endpoint::AdminFile => {
            let id = params.first().map_or("", String::as_str);
            let Some((summary, bytes)) = engine.origination_file(id)? else {
                return Err(Refusal::not_found("file_id", format!("no origination file '{}'", echo(id))));
            };
            let mut payload = serde_json::to_value(&summary).unwrap_or_default();
            if let serde_json::Value::Object(map) = &mut payload {
                map.insert("text".into(), String::from_utf8_lossy(&bytes).into_owned().into());
            }
            render::data(payload)
        }
        Endpoint::AdminCashLetters => render::data(engine.image_cash_letters()?),
        Endpoint::AdminCashLetter => {
            let id = param();
            let Some((summary, bytes)) = engine.image_cash_letter(id)? else {
                return Err(Refusal::not_found("letter_id", format!("no image cash letter '{}'", echo(id))));
            };
            let mut payload = serde_json::to_value(&summary).unwrap_or_default();
            if let serde_json::Value::Object(map) = &mut payload {
                use base64::Engine as _;
                let content = base64::engine::general_purpose::STANDARD.encode(&bytes);
                map.insert(CASH_LETTER_CONTENT.into(), content.into());
            }
            render::data(payload)
        }
        _ => return Ok(None),
    }))
}

/// The member of `GET /admin/image-cash-letters/{id}`'s payload holding the
/// file's bytes in base64 (an HTTP host answers the bytes themselves).
pub const CASH_LETTER_CONTENT: &str = "content_base64";

fn invalid(field: &str, message: impl Into<String>) -> Refusal {
    Refusal::Refused {
        error: AchError::FailedToAccept,
        status: 422,
        errors: vec![FieldError {
            field: field.into(),
            code: ProblemCode::InvalidValue,
            message: message.into(),
        }],
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewPartner {
    name: String,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Approval {
    #[serde(default)]
    limits: Option<Limits>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Return {
    transaction_id: String,
    return_code: String,
    #[serde(default)]
    return_date: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SimulatedReturn {
    return_code: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SimulatedNotice {
    change_code: String,
    #[serde(default)]
    corrected_data: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ClockSetting {
    now: String,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Rotation {
    #[serde(default)]
    grace_seconds: Option<i64>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Nothing {}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Decision {
    #[serde(default)]
    note: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReportPeriod {
    from: String,
    to: String,
}

/// The period of `GET /admin/risk-report` and `GET /admin/volume`: `from`
/// and `to`, Eastern dates, `from` not after `to`, at most `most_days` days.
fn period(req: &Request, most_days: i64) -> Result<(NaiveDate, NaiveDate), Refusal> {
    let p: ReportPeriod = typed_data(req)?;
    let date = |field: &str, text: &str| {
        NaiveDate::parse_from_str(text, "%Y-%m-%d")
            .map_err(|_| invalid(field, format!("{field} must be a date, YYYY-MM-DD")))
    };
    let (from, to) = (date("from", &p.from)?, date("to", &p.to)?);
    if from > to {
        return Err(invalid("to", "to must not be before from"));
    }
    if (to - from).num_days() >= most_days {
        return Err(invalid("to", format!("a report covers at most {most_days} days")));
    }
    Ok((from, to))
}

/// The grace window of a rotation: [`DEFAULT_GRACE_SECONDS`] unless the body
/// names one from 0 to [`MAX_GRACE_SECONDS`].
fn grace(req: &Request) -> Result<u32, Refusal> {
    match typed_body::<Rotation>(req)?.grace_seconds {
        None => Ok(DEFAULT_GRACE_SECONDS),
        Some(s) => u32::try_from(s).ok().filter(|s| *s <= MAX_GRACE_SECONDS).ok_or_else(|| {
            invalid(
                "grace_seconds",
                format!(
                    "grace_seconds must be 0 (old keys refused at once) to {MAX_GRACE_SECONDS} (30 days)"
                ),
            )
        }),
    }
}

/// The key holder an endpoint's path names.
fn holder(e: Endpoint, id: String) -> KeyHolder {
    match e {
        Endpoint::AdminPartnerRotate
        | Endpoint::AdminPartnerRevoke
        | Endpoint::AdminPartnerSuspend
        | Endpoint::AdminPartnerResume => KeyHolder::Partner { partner_id: id },
        Endpoint::AdminOperatorRotate => KeyHolder::Operator,
        _ => KeyHolder::Merchant { merchant_id: id },
    }
}

/// Limits from the body, every amount within what an entry can carry.
fn limits(l: Limits) -> Result<Limits, Refusal> {
    if let Some((field, m)) = l.amount_out_of_range() {
        return Err(invalid(field, format!("{field} is {}; limits are at most $99,999,999.99", m.dollars())));
    }
    if l.requests_per_second.is_some_and(|n| !(1..=MAX_REQUESTS_PER_SECOND).contains(&n)) {
        let why = format!("requests_per_second must be 1 to {MAX_REQUESTS_PER_SECOND}");
        return Err(invalid("requests_per_second", why));
    }
    Ok(l)
}

/// The highest request rate an operator may give a partner.
const MAX_REQUESTS_PER_SECOND: u32 = 1_000_000;

/// A merchant's limits: [`limits`] without the partner-only request rate.
fn merchant_limits(l: Limits) -> Result<Limits, Refusal> {
    if l.requests_per_second.is_some() {
        return Err(invalid("requests_per_second", "a request rate is set per partner"));
    }
    limits(l)
}

/// The operation an admin request asks for.
pub(crate) fn plan(e: Endpoint, params: &[String], req: &Request) -> Result<Operation, Refusal> {
    let param = || params.first().cloned().unwrap_or_default();
    Ok(match e {
        Endpoint::AdminPartners => Operation::CreatePartner { name: typed_body::<NewPartner>(req)?.name },
        Endpoint::AdminPartnerLimits => {
            let limits = limits(typed_body(req)?)?;
            if limits.exposure_limit.is_some() {
                return Err(invalid("exposure_limit", "an exposure limit is set per merchant"));
            }
            Operation::SetPartnerLimits { partner_id: param(), limits }
        }
        Endpoint::AdminSetRiskRules => Operation::SetRiskRules { update: typed_body(req)? },
        Endpoint::AdminRelease | Endpoint::AdminReject => Operation::DecideReview {
            transaction_id: param(),
            release: e == Endpoint::AdminRelease,
            note: typed_body::<Decision>(req)?.note,
        },
        Endpoint::AdminApprove => Operation::ApproveMerchant {
            merchant_id: param(),
            limits: merchant_limits(typed_body::<Approval>(req)?.limits.unwrap_or_default())?,
        },
        Endpoint::AdminMerchantLimits => {
            Operation::SetMerchantLimits { merchant_id: param(), limits: merchant_limits(typed_body(req)?)? }
        }
        Endpoint::AdminRecordValidation => {
            Operation::RecordValidation { customer_id: param(), body: req.body.clone() }
        }
        Endpoint::AdminRouting => {
            let text = String::from_utf8(req.body.clone())
                .map_err(|_| invalid("", "the directory file is not text (UTF-8)"))?;
            Operation::LoadDirectory { text }
        }
        Endpoint::AdminReturns => {
            let r: Return = typed_body(req)?;
            let return_date = match r.return_date.as_deref() {
                None => None,
                Some(d) => Some(
                    NaiveDate::parse_from_str(d, "%Y-%m-%d")
                        .map_err(|_| invalid("return_date", "return_date must be YYYY-MM-DD"))?,
                ),
            };
            Operation::RecordReturn {
                transaction_id: r.transaction_id,
                return_code: r.return_code,
                return_date,
            }
        }
        Endpoint::AdminSimulateReturn => {
            let r: SimulatedReturn = typed_body(req)?;
            Operation::RecordReturn { transaction_id: param(), return_code: r.return_code, return_date: None }
        }
        Endpoint::AdminSimulateNotice => {
            let n: SimulatedNotice = typed_body(req)?;
            let code = n.change_code.as_bytes();
            if !(code.len() == 3 && code[0] == b'C' && code[1..].iter().all(u8::is_ascii_digit)) {
                return Err(invalid("change_code", "change_code must be C and two digits (C01)"));
            }
            if n.corrected_data.len() > 29 || !n.corrected_data.is_ascii() {
                return Err(invalid("corrected_data", "corrected_data must be at most 29 ASCII characters"));
            }
            Operation::SimulateNotice {
                transaction_id: param(),
                change_code: n.change_code,
                corrected_data: n.corrected_data,
            }
        }
        Endpoint::AdminMerchantSettings => {
            Operation::SetMerchantSettings { merchant_id: param(), settings: typed_body(req)? }
        }
        Endpoint::AdminSetOriginator => {
            Operation::SetOriginator { originator: typed_body_with_lists(req, &["same_day_cutoffs"])? }
        }
        Endpoint::AdminReturnFiles => Operation::IngestReturnFile { bytes: req.body.clone() },
        Endpoint::AdminClock => {
            let c: ClockSetting = typed_body(req)?;
            let now = calendar::parse_instant(&c.now).map_err(|_| {
                invalid("now", "now must be an RFC 3339 instant with an offset (2026-11-23T18:30:00-05:00)")
            })?;
            Operation::SetClock { now }
        }
        Endpoint::AdminPartnerRotate | Endpoint::AdminMerchantRotate | Endpoint::AdminOperatorRotate => {
            Operation::RotateKeys { holder: holder(e, param()), grace_seconds: grace(req)? }
        }
        Endpoint::AdminPartnerRevoke | Endpoint::AdminMerchantRevoke => {
            typed_body::<Nothing>(req)?;
            Operation::RevokeKeys { holder: holder(e, param()) }
        }
        Endpoint::AdminPartnerSuspend
        | Endpoint::AdminPartnerResume
        | Endpoint::AdminMerchantSuspend
        | Endpoint::AdminMerchantResume => {
            typed_body::<Nothing>(req)?;
            let suspended = matches!(e, Endpoint::AdminPartnerSuspend | Endpoint::AdminMerchantSuspend);
            Operation::SetSuspended { holder: holder(e, param()), suspended }
        }
        _ => return Err(invalid("path", "not an operator endpoint")),
    })
}
