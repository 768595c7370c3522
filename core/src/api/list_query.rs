//! A list's query: `limit`, `after` and a transaction list's filters, read
//! from the request's data (the query string, or a JSON body), every problem
//! reported at once with its member's name. Members a list does not take
//! are ignored, as everywhere in the API.

use crate::engine::Refusal;
use crate::model::{PageRequest, Status, TransactionFilter, DEFAULT_PAGE, MAX_PAGE};
use crate::validation::json::{JsonBody, Node};
use crate::validation::{FieldError, ProblemCode};
use crate::AchError;

/// The problems found so far.
type Problems = Vec<FieldError>;

fn problem(problems: &mut Problems, field: &str, code: ProblemCode, message: impl Into<String>) {
    problems.push(FieldError { field: field.to_owned(), code, message: message.into() });
}

/// Member `name` as text: a string, or a number's digits as sent (a query
/// string's values are strings, a JSON body's `limit` may be a number).
fn text(data: &JsonBody<'_>, name: &str, problems: &mut Problems) -> Option<String> {
    let node: Node<'_> = data.object()?.get(name)?;
    if node.is_null() {
        return None;
    }
    match (node.as_str(), node.number_text()) {
        (Some(s), _) => Some(s.into_owned()),
        (None, Some(n)) => Some(n.to_owned()),
        _ => {
            problem(problems, name, ProblemCode::InvalidType, format!("{name} must be a string"));
            None
        }
    }
}

/// `limit` and `after`.
fn page(data: &JsonBody<'_>, problems: &mut Problems) -> PageRequest {
    let limit = match text(data, "limit", problems) {
        None => DEFAULT_PAGE,
        Some(t) => match t.parse::<usize>() {
            Ok(n) if (1..=MAX_PAGE).contains(&n) && t.bytes().all(|b| b.is_ascii_digit()) => n,
            _ => {
                let message = format!("limit must be a whole number from 1 to {MAX_PAGE}");
                problem(problems, "limit", ProblemCode::InvalidValue, message);
                DEFAULT_PAGE
            }
        },
    };
    let after = text(data, "after", problems).filter(|a| !a.is_empty());
    PageRequest { limit, after }
}

/// A date member, `YYYY-MM-DD`.
fn date(data: &JsonBody<'_>, name: &str, problems: &mut Problems) -> Option<chrono::NaiveDate> {
    let t = text(data, name, problems)?;
    let parsed = (t.len() == 10).then(|| crate::calendar::parse_date(&t).ok()).flatten();
    if parsed.is_none() {
        problem(problems, name, ProblemCode::InvalidFormat, format!("{name} must be a date, YYYY-MM-DD"));
    }
    parsed
}

/// The refusal of what `problems` found, if anything.
fn verdict<T>(value: T, problems: Problems) -> Result<T, Refusal> {
    if problems.is_empty() {
        return Ok(value);
    }
    Err(Refusal::Refused { error: AchError::FailedToAccept, status: 422, errors: problems })
}

/// `GET /merchants`'s query.
pub(super) fn page_request(data: &JsonBody<'_>) -> Result<PageRequest, Refusal> {
    let mut problems = Vec::new();
    let page = page(data, &mut problems);
    verdict(page, problems)
}

/// `GET /transactions`'s query.
pub(super) fn transaction_filter(data: &JsonBody<'_>) -> Result<TransactionFilter, Refusal> {
    let mut problems = Vec::new();
    let page = page(data, &mut problems);
    let merchant_id = text(data, "merchant_id", &mut problems);
    if let Some(m) = &merchant_id {
        if !crate::ids::is_valid(crate::ids::IdKind::Merchant, m) {
            let e = AchError::InvalidMerchantId { value: crate::echo::echo(m) };
            problem(&mut problems, "merchant_id", ProblemCode::InvalidFormat, e.to_string());
        }
    }
    let status = text(data, "status", &mut problems).and_then(|s| {
        let status = [Status::A, Status::B, Status::S, Status::R].into_iter().find(|st| st.as_str() == s);
        if status.is_none() {
            problem(&mut problems, "status", ProblemCode::InvalidValue, "status must be A, B, S or R");
        }
        status
    });
    let created_from = date(data, "created_from", &mut problems);
    let created_to = date(data, "created_to", &mut problems);
    if let (Some(from), Some(to)) = (created_from, created_to) {
        if from > to {
            problem(
                &mut problems,
                "created_to",
                ProblemCode::InvalidValue,
                "created_to is before created_from",
            );
        }
    }
    verdict(TransactionFilter { merchant_id, status, created_from, created_to, page }, problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(text: &str) -> Result<TransactionFilter, Vec<(String, ProblemCode)>> {
        let body = JsonBody::parse(text).map_err(|_| Vec::new())?;
        transaction_filter(&body).map_err(|r| r.errors().iter().map(|e| (e.field.clone(), e.code)).collect())
    }

    #[test]
    fn a_list_query_reads_each_member_and_reports_every_problem() {
        let f = filter(r#"{"limit":"7","status":"S","created_from":"2026-11-01","created_to":"2026-11-30"}"#);
        let f = f.unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!((f.page.limit, f.status), (7, Some(Status::S)));
        assert_eq!(f.created_from.map(|d| d.to_string()).as_deref(), Some("2026-11-01"));
        assert_eq!(filter("{}").map(|f| f.page), Ok(PageRequest { limit: DEFAULT_PAGE, after: None }));
        assert_eq!(filter(r#"{"limit":100}"#).map(|f| f.page.limit), Ok(100));
        let bad = filter(
            r#"{"limit":"0","status":"X","created_from":"2026-1-1","created_to":"nope","merchant_id":"m"}"#,
        );
        let fields: Vec<String> = bad.err().unwrap_or_default().into_iter().map(|(f, _)| f).collect();
        assert_eq!(fields, ["limit", "merchant_id", "status", "created_from", "created_to"]);
        for limit in [r#""101""#, r#""-1""#, r#""+5""#, r#""1.0""#, "1.5", r#""""#, "true"] {
            let refused = filter(&format!(r#"{{"limit":{limit}}}"#)).err();
            let code = if limit == "true" { ProblemCode::InvalidType } else { ProblemCode::InvalidValue };
            assert_eq!(refused, Some(vec![("limit".to_owned(), code)]), "{limit}");
        }
        let reversed = filter(r#"{"created_from":"2026-11-02","created_to":"2026-11-01"}"#);
        assert_eq!(reversed.err(), Some(vec![("created_to".to_owned(), ProblemCode::InvalidValue)]));
    }
}
