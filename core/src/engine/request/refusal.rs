//! A refusal: what an operation answers when it turns a request down. Either
//! the authentication failure (401), or a catalogued refusal with its HTTP
//! status and field problems. Nothing is written for a refused operation.

use std::fmt;

use crate::error::{AchError, AUTHENTICATION_FAILED};
use crate::storage::StorageError;
use crate::validation::{FieldError, ProblemCode, Report};

/// A request turned down.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Refusal {
    /// Missing or wrong credentials, or a `partner_id` that is not the key's:
    /// `Authentication failed.` (HTTP 401).
    Authentication,
    /// A right partner key, but no `partner_id` in the body or the query string:
    /// `Authentication failed.` (HTTP 401) with a field problem naming
    /// `partner_id`, so the client knows what to add. (A wrong `partner_id` is
    /// [`Refusal::Authentication`]: which partner a key belongs to is never told.)
    PartnerIdRequired,
    /// An idempotent request made again: the refusal it got the first time
    /// (hosts add `Idempotent-Replayed: true`). Never stored.
    #[serde(skip)]
    Replayed(Box<Refusal>),
    /// A catalogued refusal.
    Refused {
        /// The envelope message.
        error: AchError,
        /// HTTP status.
        status: u16,
        /// Field problems (may be empty).
        errors: Vec<FieldError>,
    },
}

impl Refusal {
    /// A refusal with the error's own status and no field problems.
    pub fn refused(error: AchError) -> Self {
        let status = error.http_status();
        Refusal::Refused { error, status, errors: Vec::new() }
    }

    /// A refusal with one field problem.
    pub fn problem(error: AchError, field: &str, code: ProblemCode, message: impl Into<String>) -> Self {
        Refusal::refused(error).with(field, code, message)
    }

    /// A refusal with one field problem: `field` conflicts with what is stored
    /// (already used, already approved, not yet approved).
    pub(crate) fn conflict(error: AchError, field: &str, message: impl Into<String>) -> Self {
        Refusal::problem(error, field, ProblemCode::Conflict, message)
    }

    /// A refusal with one field problem and the status given (for the general
    /// messages, whose status depends on what was refused).
    pub fn problem_with_status(
        error: AchError,
        status: u16,
        field: &str,
        code: ProblemCode,
        message: impl Into<String>,
    ) -> Self {
        Refusal::Refused {
            error,
            status,
            errors: vec![FieldError { field: field.into(), code, message: message.into() }],
        }
    }

    /// "Not found" for a resource the caller may not see or that does not exist
    /// (the same answer either way): message 10, HTTP 404, the field named.
    pub fn not_found(field: &str, message: impl Into<String>) -> Self {
        Refusal::Refused {
            error: AchError::FailedToAccept,
            status: 404,
            errors: vec![FieldError {
                field: field.into(),
                code: ProblemCode::NotFound,
                message: message.into(),
            }],
        }
    }

    /// A validation report: its first error and every problem.
    pub fn from_report(report: Report) -> Self {
        let verdict_error = report.first_error().cloned().unwrap_or(AchError::FailedToAccept);
        let errors = report.verdict().errors;
        let status = verdict_error.http_status();
        Refusal::Refused { error: verdict_error, status, errors }
    }

    /// Add a field problem.
    pub fn with(mut self, field: &str, code: ProblemCode, message: impl Into<String>) -> Self {
        if let Refusal::Refused { errors, .. } = &mut self {
            errors.push(FieldError { field: field.into(), code, message: message.into() });
        }
        self
    }

    /// What the request was refused the first time it was made (itself,
    /// but for a [`Refusal::Replayed`]).
    pub fn first(&self) -> &Refusal {
        match self {
            Refusal::Replayed(first) => first.first(),
            other => other,
        }
    }

    /// The envelope message.
    pub fn message(&self) -> String {
        match self {
            Refusal::Replayed(first) => first.message(),
            Refusal::Authentication | Refusal::PartnerIdRequired => AUTHENTICATION_FAILED.to_owned(),
            Refusal::Refused { error, .. } => error.to_string(),
        }
    }

    /// HTTP status: 401 for authentication; for a refusal, its message's one
    /// status ([`AchError::has_one_status`]) or, for the general messages, the
    /// status it was given.
    pub fn status(&self) -> u16 {
        match self {
            Refusal::Replayed(first) => first.status(),
            Refusal::Authentication | Refusal::PartnerIdRequired => 401,
            Refusal::Refused { error, .. } if error.has_one_status() => error.http_status(),
            Refusal::Refused { status, .. } => *status,
        }
    }

    /// The catalogue error, if any (none for authentication).
    pub fn error(&self) -> Option<&AchError> {
        match self {
            Refusal::Replayed(first) => first.error(),
            Refusal::Authentication | Refusal::PartnerIdRequired => None,
            Refusal::Refused { error, .. } => Some(error),
        }
    }

    /// Field problems.
    pub fn errors(&self) -> &[FieldError] {
        match self {
            Refusal::Replayed(first) => first.errors(),
            Refusal::Authentication => &[],
            Refusal::PartnerIdRequired => PARTNER_ID_REQUIRED.as_slice(),
            Refusal::Refused { errors, .. } => errors,
        }
    }
}

/// The field problem of [`Refusal::PartnerIdRequired`].
static PARTNER_ID_REQUIRED: std::sync::LazyLock<[FieldError; 1]> = std::sync::LazyLock::new(|| {
    [FieldError {
        field: "partner_id".into(),
        code: ProblemCode::Required,
        message: "partner_id is required with this key: send it in the body or in the query string".into(),
    }]
});

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

impl std::error::Error for Refusal {}

impl From<crate::lifecycle::TransitionRefusal> for Refusal {
    fn from(r: crate::lifecycle::TransitionRefusal) -> Self {
        Refusal::Refused { status: r.http_status(), errors: vec![r.field_error()], error: r.error }
    }
}

impl From<StorageError> for Refusal {
    /// Storage failures are message 7 (HTTP 503); the detail is not shown to clients.
    fn from(_: StorageError) -> Self {
        Refusal::refused(AchError::DatabaseUnavailable)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::error::catalogue_samples;

    #[test]
    fn each_specific_message_answers_its_one_status_whatever_it_was_given() {
        for error in catalogue_samples() {
            for given in [400, 404, 405, 409, 413, 422, 503] {
                let f = Refusal::Refused { error: error.clone(), status: given, errors: Vec::new() };
                let want = if error.has_one_status() { error.http_status() } else { given };
                assert_eq!(f.status(), want, "{error:?} given {given}");
                assert_eq!(crate::api::finish(Err(f)).status, want, "{error:?} rendered");
            }
        }
        let general: Vec<u16> =
            catalogue_samples().iter().filter(|e| !e.has_one_status()).map(AchError::code).collect();
        assert_eq!(general, [1, 3, 4, 10]);
    }

    #[test]
    fn a_missing_partner_id_is_an_authentication_failure_that_names_it() {
        let f = Refusal::PartnerIdRequired;
        assert_eq!((f.status(), f.message().as_str()), (401, "Authentication failed."));
        assert_eq!(f.errors()[0].field, "partner_id");
        assert_eq!(f.errors()[0].code, ProblemCode::Required);
        assert!(Refusal::Authentication.errors().is_empty());
    }
}
