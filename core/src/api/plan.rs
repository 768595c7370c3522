//! Planning a request admitted on its head: with its body, the endpoint's
//! answer now (a read: a feed page, a look-up, health) or the engine operation
//! to run.

use super::admit::{self, Admitted};
use super::input::{named_partner, partner_id, with_data};
use super::request::Request;
use super::routes::Endpoint;
use super::{admin, list_query, render, Plan};
use crate::engine::{Engine, Operation, Refusal};
use crate::validation::routing_number_problem;
use crate::{categories, AchError};

/// A partner operation, made idempotent by the `Idempotency-Key` header if given.
fn partner_op(req: &Request, operation: Operation) -> Operation {
    match &req.idempotency_key {
        Some(key) => Operation::Idempotent { key: key.clone(), operation: Box::new(operation) },
        None => operation,
    }
}

/// Plan a request (see [`super::plan`]).
pub(crate) fn plan(engine: &Engine, req: &Request) -> Result<Plan, Refusal> {
    plan_admitted(engine, admit::admit(engine, req)?, req)
}

/// Plan a request admitted on its head (see [`super::plan_admitted`]). An
/// authentication still to be confirmed is confirmed before any answer, or
/// left to the operation's write transaction.
pub(crate) fn plan_admitted(engine: &Engine, mut admitted: Admitted, req: &Request) -> Result<Plan, Refusal> {
    let unconfirmed = admitted.unconfirmed.take();
    let caller = admitted.caller.clone();
    let plan = plan_confirmed(engine, admitted, req);
    let (Some(unconfirmed), Some(caller)) = (unconfirmed, caller) else { return plan };
    match plan {
        Ok(Plan::Execute { caller, prepared }) => {
            Ok(Plan::Execute { caller, prepared: Box::new(prepared.confirming(Some(unconfirmed))) })
        }
        other => {
            engine.confirm(&caller, &unconfirmed)?;
            other
        }
    }
}

/// [`plan_admitted`] of a request whose authentication is confirmed or left
/// to the caller.
fn plan_confirmed(engine: &Engine, admitted: Admitted, req: &Request) -> Result<Plan, Refusal> {
    let req = &*admit::split_query(req);
    if req.body.len() > admitted.body_limit() {
        return Err(admit::too_large(admitted.body_limit()));
    }
    let Admitted { endpoint, params, caller, .. } = admitted;
    let Some(caller) = caller else {
        return match endpoint {
            Endpoint::Health | Endpoint::Ready => health(engine, endpoint),
            _ => openapi(),
        };
    };
    let param = |i: usize| params.get(i).cloned().unwrap_or_default();
    let execute = |prepared| Ok(Plan::Execute { caller: caller.clone(), prepared: Box::new(prepared) });
    if endpoint.is_admin() {
        if endpoint.is_simulation() && !engine.is_sandbox() {
            return Err(super::routes::unknown_endpoint(&req.method, &req.path));
        }
        if let Some(answer) = admin::read(engine, endpoint, &params, req)? {
            return Ok(Plan::Done(answer));
        }
        return admin::plan(endpoint, &params, req).map(|op| engine.prepare(op)).and_then(execute);
    }
    match endpoint {
        Endpoint::Institution => {
            with_data(req, |data, _| named_partner(data, &caller))?;
            institution(engine, &param(0))
        }
        Endpoint::Categories => {
            with_data(req, |data, _| named_partner(data, &caller))?;
            Ok(Plan::Done(render::data(serde_json::json!({
                "groups": categories::groups(),
                "categories": categories::all(),
            }))))
        }
        Endpoint::Events => {
            let pointer = params.first().map(String::as_str);
            let page = engine.events(&caller, pointer)?;
            Ok(Plan::Done(render::events_page(&page)))
        }
        Endpoint::Validation => {
            let partner = with_data(req, |data, _| partner_id(data, &caller))?;
            let view = engine.validation(&caller, &partner, &param(0), &param(1))?;
            Ok(Plan::Done(render::data(view)))
        }
        Endpoint::Transaction
        | Endpoint::Transactions
        | Endpoint::Merchant
        | Endpoint::Merchants
        | Endpoint::Customer => with_data(req, |data, _| read(engine, endpoint, &caller, &param(0), data)),
        Endpoint::WebhookEndpoints => {
            let partner = with_data(req, |data, _| partner_id(data, &caller))?;
            let endpoints = engine.webhook_endpoints(&caller, &partner)?;
            Ok(Plan::Done(render::data(serde_json::json!({ "endpoints": endpoints }))))
        }
        Endpoint::WebhookDeliveries => {
            let partner = with_data(req, |data, _| partner_id(data, &caller))?;
            let deliveries = engine.webhook_deliveries(&caller, &partner, &param(0))?;
            Ok(Plan::Done(render::data(serde_json::json!({ "deliveries": deliveries }))))
        }
        // Webhook endpoints answer secrets: never idempotent (an answer kept
        // for a retry would keep the secret).
        Endpoint::CreateWebhook
        | Endpoint::DeleteWebhook
        | Endpoint::RotateWebhookSecret
        | Endpoint::RetryWebhookDelivery => {
            let operation = with_data(req, |data, bytes| {
                let partner_id = partner_id(data, &caller)?;
                Ok(match endpoint {
                    Endpoint::CreateWebhook => {
                        let body: NewEndpoint = serde_json::from_slice(bytes).map_err(|e| {
                            Refusal::problem(
                                AchError::FailedToAccept,
                                "",
                                crate::validation::ProblemCode::InvalidValue,
                                super::detail(e.to_string()),
                            )
                        })?;
                        Operation::CreateWebhookEndpoint {
                            partner_id,
                            url: body.url,
                            event_types: body.event_types,
                        }
                    }
                    Endpoint::DeleteWebhook => {
                        Operation::DeleteWebhookEndpoint { partner_id, endpoint_id: param(0) }
                    }
                    Endpoint::RotateWebhookSecret => {
                        Operation::RotateWebhookSecret { partner_id, endpoint_id: param(0) }
                    }
                    _ => Operation::RetryWebhookDelivery {
                        partner_id,
                        endpoint_id: param(0),
                        delivery_id: param(1),
                    },
                })
            })?;
            execute(engine.prepare(operation))
        }
        Endpoint::StatusChanges => {
            let partner = with_data(req, |data, _| partner_id(data, &caller))?;
            let pointer = params.first().map_or("0", String::as_str);
            let page = engine.status_changes(&caller, &partner, pointer)?;
            Ok(Plan::Done(render::status_page(&page)))
        }
        // The body is parsed once: the partner, the typed request and the
        // idempotency digest all come from that parse.
        _ => with_data(req, |data, bytes| {
            let partner_id = partner_id(data, &caller)?;
            let body = || bytes.to_vec();
            let operation = match endpoint {
                Endpoint::CreateTransaction => Operation::CreateTransaction { partner_id, body: body() },
                Endpoint::Void => Operation::VoidTransaction { partner_id, transaction_id: param(0) },
                Endpoint::Reverse => Operation::ReverseTransaction { partner_id, transaction_id: param(0) },
                Endpoint::Reinitiate => Operation::ReinitiateTransaction {
                    partner_id,
                    transaction_id: param(0),
                    same_day: same_day_member(data)?,
                },
                Endpoint::CreateCustomer => Operation::CreateCustomer { partner_id, body: body() },
                Endpoint::DeleteCustomer => Operation::DeleteCustomer { partner_id, customer_id: param(0) },
                Endpoint::CreateValidation => {
                    Operation::CreateValidation { partner_id, customer_id: param(0), body: body() }
                }
                Endpoint::ConfirmValidation => Operation::ConfirmValidation {
                    partner_id,
                    customer_id: param(0),
                    validation_id: param(1),
                    body: body(),
                },
                _ => Operation::SubmitMerchant { partner_id, body: body() },
            };
            Ok(engine.prepare_parsed(partner_op(req, operation), data))
        })
        .and_then(execute),
    }
}

/// `POST /webhook-endpoints`'s body.
#[derive(serde::Deserialize)]
struct NewEndpoint {
    url: String,
    #[serde(default)]
    event_types: Option<Vec<String>>,
}

/// A partner's or a merchant's read of its own data.
fn read(
    engine: &Engine,
    endpoint: Endpoint,
    caller: &crate::engine::Caller,
    id: &str,
    data: &crate::validation::json::JsonBody<'_>,
) -> Result<Plan, Refusal> {
    let named = data.object().and_then(|o| o.get("partner_id"));
    let partner_id = match named {
        None => None,
        Some(p) => match p.as_str() {
            Some(p) if !p.is_empty() => Some(p.into_owned()),
            _ if matches!(caller, crate::engine::Caller::Partner { .. }) => {
                return Err(Refusal::PartnerIdRequired)
            }
            _ => return Err(Refusal::Authentication),
        },
    };
    let partner_id = partner_id.as_deref();
    let answer = match endpoint {
        Endpoint::Transaction => render::data(engine.transaction(caller, partner_id, id)?),
        Endpoint::Transactions => {
            let filter = list_query::transaction_filter(data)?;
            render::data(engine.transactions(caller, partner_id, &filter)?)
        }
        Endpoint::Merchant => render::data(engine.merchant(caller, partner_id, id)?),
        Endpoint::Merchants => {
            let page = list_query::page_request(data)?;
            render::data(engine.merchants(caller, partner_id, &page)?)
        }
        _ => render::data(engine.customer(caller, partner_id, id)?),
    };
    Ok(Plan::Done(answer))
}

/// `GET /healthz` (liveness: the service answers; no disk access) and `GET
/// /readyz` (readiness: writes commit, [`Engine::ready`]; message 7 and 503
/// when they do not). Neither needs a key.
fn health(engine: &Engine, endpoint: Endpoint) -> Result<Plan, Refusal> {
    if endpoint == Endpoint::Health {
        return Ok(Plan::Done(render::data(serde_json::json!({ "status": "live" }))));
    }
    if engine.ready() {
        Ok(Plan::Done(render::data(serde_json::json!({ "status": "ready" }))))
    } else {
        Err(Refusal::refused(AchError::DatabaseUnavailable))
    }
}

/// `GET /institutions/{routing_number}`: the bank behind a routing number.
fn institution(engine: &Engine, routing_number: &str) -> Result<Plan, Refusal> {
    let directory = engine.directory_now().map_err(|_| Refusal::refused(AchError::DatabaseUnavailable))?;
    if let Some((code, error)) = routing_number_problem(routing_number, &directory) {
        let message = error.to_string();
        return Err(Refusal::problem(error, "routing_number", code, message));
    }
    let Some(found) = directory.lookup(routing_number) else {
        return Err(Refusal::refused(AchError::RoutingNotFound { value: routing_number.to_owned() }));
    };
    let d = found.destination;
    Ok(Plan::Done(render::data(serde_json::json!({
        "routing_number": routing_number,
        "name": d.name,
        "city": d.city,
        "state": d.state,
        "new_routing_number": found.requested.new_routing_number,
    }))))
}

/// `GET /openapi.json`: the OpenAPI document of the whole API.
#[cfg(feature = "openapi")]
fn openapi() -> Result<Plan, Refusal> {
    Ok(Plan::Done(super::Response {
        status: 200,
        body: include_str!("../../../docs/openapi.json").to_owned(),
        replayed: false,
    }))
}

/// `GET /openapi.json` in a build without the document (the browser module).
#[cfg(not(feature = "openapi"))]
fn openapi() -> Result<Plan, Refusal> {
    let msg = "this build does not carry the OpenAPI document; achd serves it";
    Err(Refusal::problem_with_status(
        AchError::FailedToAccept,
        404,
        "path",
        crate::validation::ProblemCode::NotFound,
        msg,
    ))
}

/// `same_day` of a request's data: `true` or `false` (a query string's
/// `true` or `false` too), or left out or null: `false`.
fn same_day_member(data: &crate::validation::json::JsonBody<'_>) -> Result<bool, Refusal> {
    let Some(v) = data.object().and_then(|o| o.get("same_day")) else { return Ok(false) };
    if v.is_null() {
        return Ok(false);
    }
    let text = v.as_str();
    match (v.as_bool(), text.as_deref()) {
        (Some(b), _) => Ok(b),
        (None, Some("true")) => Ok(true),
        (None, Some("false")) => Ok(false),
        _ => Err(Refusal::problem(
            AchError::FailedToAccept,
            "same_day",
            crate::validation::ProblemCode::InvalidType,
            format!("same_day must be true or false, not {}", v.literal()),
        )),
    }
}
