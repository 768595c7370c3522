//! The route table: every endpoint, the method and path pattern that reach it,
//! and matching a request's method and path against them (404, 405).

use super::request::Request;
use crate::echo::echo;
use crate::engine::Refusal;
use crate::validation::ProblemCode;
use crate::AchError;

/// Every endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Endpoint {
    CreateTransaction,
    Void,
    Reverse,
    Reinitiate,
    CreateValidation,
    Validation,
    ConfirmValidation,
    CreateCustomer,
    DeleteCustomer,
    SubmitMerchant,
    StatusChanges,
    Events,
    Institution,
    Categories,
    OpenApi,
    Health,
    Ready,
    AdminPartners,
    AdminPartnerList,
    AdminPartnerMerchants,
    AdminPartnerLimits,
    AdminApprove,
    AdminMerchantLimits,
    AdminRouting,
    AdminReturns,
    AdminReturnRates,
    AdminClock,
    AdminMerchantSettings,
    AdminSetOriginator,
    AdminOriginator,
    AdminFiles,
    AdminFile,
    AdminCashLetters,
    AdminCashLetter,
    AdminReturnFiles,
    AdminPartnerRotate,
    AdminPartnerRevoke,
    AdminPartnerSuspend,
    AdminPartnerResume,
    AdminMerchantRotate,
    AdminMerchantRevoke,
    AdminMerchantSuspend,
    AdminMerchantResume,
    AdminOperatorRotate,
    AdminRecordValidation,
    AdminRiskRules,
    AdminSetRiskRules,
    AdminReviews,
    AdminRelease,
    AdminReject,
    AdminRiskReport,
    AdminExposure,
    AdminVolume,
    Transaction,
    Transactions,
    Merchant,
    Merchants,
    Customer,
    AdminSimulateReturn,
    AdminSimulateNotice,
    CreateWebhook,
    WebhookEndpoints,
    DeleteWebhook,
    RotateWebhookSecret,
    WebhookDeliveries,
    RetryWebhookDelivery,
}

impl Endpoint {
    /// Whether an endpoint simulates the bank (a sandbox engine's only).
    pub(crate) fn is_simulation(self) -> bool {
        matches!(self, Endpoint::AdminSimulateReturn | Endpoint::AdminSimulateNotice)
    }

    /// Whether an endpoint belongs to the operator plane.
    pub(crate) fn is_admin(self) -> bool {
        matches!(
            self,
            Endpoint::AdminPartners
                | Endpoint::AdminPartnerList
                | Endpoint::AdminPartnerMerchants
                | Endpoint::AdminPartnerLimits
                | Endpoint::AdminApprove
                | Endpoint::AdminMerchantLimits
                | Endpoint::AdminRouting
                | Endpoint::AdminReturns
                | Endpoint::AdminReturnRates
                | Endpoint::AdminClock
                | Endpoint::AdminMerchantSettings
                | Endpoint::AdminSetOriginator
                | Endpoint::AdminOriginator
                | Endpoint::AdminFiles
                | Endpoint::AdminFile
                | Endpoint::AdminCashLetters
                | Endpoint::AdminCashLetter
                | Endpoint::AdminReturnFiles
                | Endpoint::AdminPartnerRotate
                | Endpoint::AdminPartnerRevoke
                | Endpoint::AdminPartnerSuspend
                | Endpoint::AdminPartnerResume
                | Endpoint::AdminMerchantRotate
                | Endpoint::AdminMerchantRevoke
                | Endpoint::AdminMerchantSuspend
                | Endpoint::AdminMerchantResume
                | Endpoint::AdminOperatorRotate
                | Endpoint::AdminRecordValidation
                | Endpoint::AdminRiskRules
                | Endpoint::AdminSetRiskRules
                | Endpoint::AdminReviews
                | Endpoint::AdminRelease
                | Endpoint::AdminReject
                | Endpoint::AdminRiskReport
                | Endpoint::AdminExposure
                | Endpoint::AdminVolume
                | Endpoint::AdminSimulateReturn
                | Endpoint::AdminSimulateNotice
        )
    }
}

/// `(method, path pattern, endpoint)`; `{}` matches one segment, `{?}` an
/// optional last segment.
pub(super) const ROUTES: &[(&str, &str, Endpoint)] = &[
    ("POST", "/transactions", Endpoint::CreateTransaction),
    ("GET", "/transactions", Endpoint::Transactions),
    ("GET", "/transactions/{}", Endpoint::Transaction),
    ("PUT", "/transactions/{}/void", Endpoint::Void),
    ("PUT", "/transactions/{}/reverse", Endpoint::Reverse),
    ("POST", "/transactions/{}/reinitiate", Endpoint::Reinitiate),
    ("POST", "/customers", Endpoint::CreateCustomer),
    ("DELETE", "/customers/{}", Endpoint::DeleteCustomer),
    ("GET", "/customers/{}", Endpoint::Customer),
    ("POST", "/customers/{}/validations", Endpoint::CreateValidation),
    ("GET", "/customers/{}/validations/{}", Endpoint::Validation),
    ("POST", "/customers/{}/validations/{}/confirm", Endpoint::ConfirmValidation),
    ("POST", "/merchants", Endpoint::SubmitMerchant),
    ("GET", "/merchants", Endpoint::Merchants),
    ("GET", "/merchants/{}", Endpoint::Merchant),
    ("GET", "/status-changes/{?}", Endpoint::StatusChanges),
    ("GET", "/events/{?}", Endpoint::Events),
    ("GET", "/institutions/{}", Endpoint::Institution),
    ("POST", "/webhook-endpoints", Endpoint::CreateWebhook),
    ("GET", "/webhook-endpoints", Endpoint::WebhookEndpoints),
    ("DELETE", "/webhook-endpoints/{}", Endpoint::DeleteWebhook),
    ("POST", "/webhook-endpoints/{}/rotate-secret", Endpoint::RotateWebhookSecret),
    ("GET", "/webhook-endpoints/{}/deliveries", Endpoint::WebhookDeliveries),
    ("POST", "/webhook-endpoints/{}/deliveries/{}/retry", Endpoint::RetryWebhookDelivery),
    ("GET", "/categories", Endpoint::Categories),
    ("GET", "/openapi.json", Endpoint::OpenApi),
    ("GET", "/healthz", Endpoint::Health),
    ("GET", "/readyz", Endpoint::Ready),
    ("POST", "/admin/partners", Endpoint::AdminPartners),
    ("GET", "/admin/partners", Endpoint::AdminPartnerList),
    ("GET", "/admin/partners/{}/merchants", Endpoint::AdminPartnerMerchants),
    ("POST", "/admin/partners/{}/limits", Endpoint::AdminPartnerLimits),
    ("POST", "/admin/merchants/{}/approve", Endpoint::AdminApprove),
    ("POST", "/admin/merchants/{}/limits", Endpoint::AdminMerchantLimits),
    ("POST", "/admin/routing", Endpoint::AdminRouting),
    ("POST", "/admin/returns", Endpoint::AdminReturns),
    ("GET", "/admin/return-rates", Endpoint::AdminReturnRates),
    ("POST", "/admin/clock", Endpoint::AdminClock),
    ("PUT", "/admin/merchants/{}/settings", Endpoint::AdminMerchantSettings),
    ("PUT", "/admin/originator", Endpoint::AdminSetOriginator),
    ("GET", "/admin/originator", Endpoint::AdminOriginator),
    ("GET", "/admin/origination-files", Endpoint::AdminFiles),
    ("GET", "/admin/origination-files/{}", Endpoint::AdminFile),
    ("GET", "/admin/image-cash-letters", Endpoint::AdminCashLetters),
    ("GET", "/admin/image-cash-letters/{}", Endpoint::AdminCashLetter),
    ("POST", "/admin/return-files", Endpoint::AdminReturnFiles),
    ("POST", "/admin/customers/{}/validations", Endpoint::AdminRecordValidation),
    ("POST", "/admin/partners/{}/keys/rotate", Endpoint::AdminPartnerRotate),
    ("POST", "/admin/partners/{}/keys/revoke", Endpoint::AdminPartnerRevoke),
    ("POST", "/admin/partners/{}/suspend", Endpoint::AdminPartnerSuspend),
    ("POST", "/admin/partners/{}/resume", Endpoint::AdminPartnerResume),
    ("POST", "/admin/merchants/{}/keys/rotate", Endpoint::AdminMerchantRotate),
    ("POST", "/admin/merchants/{}/keys/revoke", Endpoint::AdminMerchantRevoke),
    ("POST", "/admin/merchants/{}/suspend", Endpoint::AdminMerchantSuspend),
    ("POST", "/admin/merchants/{}/resume", Endpoint::AdminMerchantResume),
    ("POST", "/admin/operator-key/rotate", Endpoint::AdminOperatorRotate),
    ("GET", "/admin/risk-rules", Endpoint::AdminRiskRules),
    ("PUT", "/admin/risk-rules", Endpoint::AdminSetRiskRules),
    ("GET", "/admin/reviews", Endpoint::AdminReviews),
    ("POST", "/admin/reviews/{}/release", Endpoint::AdminRelease),
    ("POST", "/admin/reviews/{}/reject", Endpoint::AdminReject),
    ("GET", "/admin/risk-report", Endpoint::AdminRiskReport),
    ("GET", "/admin/merchants/{}/exposure", Endpoint::AdminExposure),
    ("GET", "/admin/volume", Endpoint::AdminVolume),
    ("POST", "/admin/simulations/transactions/{}/return", Endpoint::AdminSimulateReturn),
    ("POST", "/admin/simulations/transactions/{}/notification-of-change", Endpoint::AdminSimulateNotice),
];

/// The path's parameters if it matches `pattern`.
fn matches(pattern: &str, path: &str) -> Option<Vec<String>> {
    let pat: Vec<&str> = pattern.trim_start_matches('/').split('/').collect();
    let segs: Vec<&str> = path.trim_start_matches('/').trim_end_matches('/').split('/').collect();
    let optional = pat.last() == Some(&"{?}");
    let required = if optional { pat.len() - 1 } else { pat.len() };
    if segs.len() < required || segs.len() > pat.len() {
        return None;
    }
    let mut params = Vec::new();
    for (i, p) in pat.iter().enumerate() {
        match (*p, segs.get(i)) {
            ("{}" | "{?}", Some(s)) if !s.is_empty() => params.push(percent_decode(s)?),
            ("{?}", None) => {}
            (lit, Some(s)) if lit == *s => {}
            _ => return None,
        }
    }
    Some(params)
}

/// A path segment percent-decoded (`%20` is a space; `+` and `&` are themselves).
fn percent_decode(segment: &str) -> Option<String> {
    // Decoded as a query value, where `+` would be a space and `&` would end the
    // value (`txn_…&x` would name `txn_…`): both are escaped first.
    let escaped = segment.replace('+', "%2B").replace('&', "%26");
    let decoded: Vec<u8> = form_urlencoded::parse(format!("x={escaped}").as_bytes())
        .next()
        .map(|(_, v)| v.into_owned().into_bytes())?;
    String::from_utf8(decoded).ok()
}

/// The methods some route accepts at this path (for a 405's `Allow` header).
pub(crate) fn allowed_methods(path: &str) -> Vec<&'static str> {
    let path = path.split_once('?').map_or(path, |(p, _)| p);
    ROUTES.iter().filter(|(_, pattern, _)| matches(pattern, path).is_some()).map(|(m, _, _)| *m).collect()
}

/// The pattern of the route this method and path take (`/transactions/{}`),
/// or `None` for none: a name for the endpoint that holds no identifier.
/// Asked of every request a host answers, so it allocates nothing: the
/// shape is checked as [`matches`] checks it, the parameters not decoded.
pub(crate) fn pattern(method: &str, path: &str) -> Option<&'static str> {
    let path = path.split_once('?').map_or(path, |(p, _)| p);
    ROUTES
        .iter()
        .find(|(m, pattern, _)| m.eq_ignore_ascii_case(method) && fits(pattern, path))
        .map(|(_, pattern, _)| *pattern)
}

/// Whether `path` has `pattern`'s segments: [`matches`] without the decoded
/// parameters.
fn fits(pattern: &str, path: &str) -> bool {
    let mut pat = pattern.trim_start_matches('/').split('/');
    let mut segs = path.trim_start_matches('/').trim_end_matches('/').split('/');
    loop {
        match (pat.next(), segs.next()) {
            (None, None) | (Some("{?}"), None) => return true,
            (Some("{}" | "{?}"), Some(s)) if !s.is_empty() => {}
            (Some(lit), Some(s)) if lit == s => {}
            _ => return false,
        }
    }
}

/// Whether any route matches this path.
pub(crate) fn is_api_path(path: &str) -> bool {
    let path = path.split_once('?').map_or(path, |(p, _)| p);
    ROUTES.iter().any(|(_, pattern, _)| matches(pattern, path).is_some())
}

/// 404: no endpoint has this path.
pub(crate) fn unknown_endpoint(method: &str, path: &str) -> Refusal {
    let msg = format!("there is no endpoint {} {}", echo(&method.to_ascii_uppercase()), echo(path));
    Refusal::problem_with_status(AchError::FailedToAccept, 404, "path", ProblemCode::NotFound, msg)
}

/// The endpoint and path parameters, or 404 / 405.
pub(super) fn resolve(req: &Request) -> Result<(Endpoint, Vec<String>), Refusal> {
    let method = req.method.to_ascii_uppercase();
    let mut allowed = Vec::new();
    for (m, pattern, endpoint) in ROUTES {
        if let Some(params) = matches(pattern, &req.path) {
            if *m == method {
                return Ok((*endpoint, params));
            }
            allowed.push(*m);
        }
    }
    if allowed.is_empty() {
        return Err(unknown_endpoint(&method, &req.path));
    }
    let msg = format!("{} is not allowed here; use {}", echo(&method), allowed.join(", "));
    Err(Refusal::problem_with_status(AchError::FailedToAccept, 405, "method", ProblemCode::InvalidValue, msg))
}

#[cfg(test)]
mod tests {
    use super::pattern;

    #[test]
    fn a_route_is_named_by_its_pattern_never_by_its_identifiers() {
        let txn = "/transactions/txn_0123456789abcdefghijKL";
        assert_eq!(pattern("GET", txn), Some("/transactions/{}"));
        assert_eq!(pattern("get", &format!("{txn}?partner_id=par_x")), Some("/transactions/{}"));
        assert_eq!(pattern("POST", "/transactions"), Some("/transactions"));
        assert_eq!(pattern("GET", "/status-changes/ptr_abc"), pattern("GET", "/status-changes/other"));
        assert_eq!(pattern("DELETE", "/transactions"), None, "a method the path does not take");
        assert_eq!(pattern("GET", "/no/such/path"), None);
    }

    #[test]
    fn the_shape_check_agrees_with_the_router_on_every_route() {
        let paths = [
            "/transactions",
            "/transactions/",
            "/transactions/txn_x",
            "/transactions/txn_x/void",
            "/transactions//void",
            "/status-changes",
            "/status-changes/ptr",
            "/status-changes/ptr/more",
            "/admin/merchants/mer_x/approve",
            "/customers/cus_x",
            "/customers/a%20b",
            "/",
            "",
            "/openapi.json",
        ];
        for (_, route, _) in super::ROUTES {
            for path in paths {
                assert_eq!(super::fits(route, path), super::matches(route, path).is_some(), "{route} {path}");
            }
        }
    }
}
