//! Field-level problems, their precedence, and the verdict every host prints.

use serde::{Deserialize, Serialize};

use crate::error::AchError;

/// Machine-readable kind of a field problem (serialized in `snake_case`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ProblemCode {
    /// The body is not valid JSON or not a JSON object.
    InvalidJson,
    /// A required field is missing, null or empty.
    Required,
    /// The field has the wrong JSON type.
    InvalidType,
    /// The field's text does not have the required shape.
    InvalidFormat,
    /// The value is not one of the allowed values.
    InvalidValue,
    /// A routing number's ABA check digit (or prefix) is wrong.
    InvalidCheckDigit,
    /// A text is longer than allowed.
    TooLong,
    /// A text is shorter than allowed.
    TooShort,
    /// The amount is not a valid amount.
    InvalidAmount,
    /// A value is over a fixed cap.
    OverLimit,
    /// The standard entry class does not allow this direction.
    DirectionNotAllowed,
    /// A street address is a PO box.
    PoBox,
    /// A date lies in the future.
    FutureDate,
    /// A check image is not valid base64.
    InvalidBase64,
    /// A check image is not a TIFF, JPEG or PNG.
    NotAnImage,
    /// Two fields exclude each other, or a value repeats.
    Conflict,
    /// A routing number is not in the routing directory.
    NotFound,
    /// A returned entry that Nacha's rules do not let be re-initiated.
    ReinitiationNotAllowed,
    /// A WEB debit to an account not validated for its partner.
    AccountNotValidated,
    /// Micro-entry amounts that are not the ones sent.
    AmountsMismatch,
    /// A body sent as another media type than its endpoint takes.
    UnsupportedMediaType,
    /// A state-changing request a browser sent from another site.
    CrossSite,
    /// Text that does not fold to the characters a NACHA file carries.
    UnsupportedCharacters,
    /// More requests than the key's rate allows.
    RateLimited,
    /// A Same Day ACH entry over the network's per-entry cap.
    SameDayLimit,
}

impl ProblemCode {
    /// Every code.
    pub const ALL: [ProblemCode; 25] = [
        ProblemCode::InvalidJson,
        ProblemCode::Required,
        ProblemCode::InvalidType,
        ProblemCode::InvalidFormat,
        ProblemCode::InvalidValue,
        ProblemCode::InvalidCheckDigit,
        ProblemCode::TooLong,
        ProblemCode::TooShort,
        ProblemCode::InvalidAmount,
        ProblemCode::OverLimit,
        ProblemCode::DirectionNotAllowed,
        ProblemCode::PoBox,
        ProblemCode::FutureDate,
        ProblemCode::InvalidBase64,
        ProblemCode::NotAnImage,
        ProblemCode::Conflict,
        ProblemCode::NotFound,
        ProblemCode::ReinitiationNotAllowed,
        ProblemCode::AccountNotValidated,
        ProblemCode::AmountsMismatch,
        ProblemCode::UnsupportedMediaType,
        ProblemCode::CrossSite,
        ProblemCode::UnsupportedCharacters,
        ProblemCode::RateLimited,
        ProblemCode::SameDayLimit,
    ];

    /// The code's name as it is serialized (`snake_case`), without serde.
    pub const fn as_str(self) -> &'static str {
        match self {
            ProblemCode::InvalidJson => "invalid_json",
            ProblemCode::Required => "required",
            ProblemCode::InvalidType => "invalid_type",
            ProblemCode::InvalidFormat => "invalid_format",
            ProblemCode::InvalidValue => "invalid_value",
            ProblemCode::InvalidCheckDigit => "invalid_check_digit",
            ProblemCode::TooLong => "too_long",
            ProblemCode::TooShort => "too_short",
            ProblemCode::InvalidAmount => "invalid_amount",
            ProblemCode::OverLimit => "over_limit",
            ProblemCode::DirectionNotAllowed => "direction_not_allowed",
            ProblemCode::PoBox => "po_box",
            ProblemCode::FutureDate => "future_date",
            ProblemCode::InvalidBase64 => "invalid_base64",
            ProblemCode::NotAnImage => "not_an_image",
            ProblemCode::Conflict => "conflict",
            ProblemCode::NotFound => "not_found",
            ProblemCode::ReinitiationNotAllowed => "reinitiation_not_allowed",
            ProblemCode::AccountNotValidated => "account_not_validated",
            ProblemCode::AmountsMismatch => "amounts_mismatch",
            ProblemCode::UnsupportedMediaType => "unsupported_media_type",
            ProblemCode::CrossSite => "cross_site",
            ProblemCode::UnsupportedCharacters => "unsupported_characters",
            ProblemCode::RateLimited => "rate_limited",
            ProblemCode::SameDayLimit => "same_day_limit",
        }
    }
}

/// Precedence of problems: the envelope message is the first problem in this order
/// (structure, then identifiers, then amounts, then class rules, then directory).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rank {
    /// The body's shape: types, required fields, allowed values.
    Structure = 0,
    /// Merchant id, customer token, routing and account numbers.
    Identifier = 1,
    /// The amount and its fixed caps.
    Amount = 2,
    /// Rules of the standard entry class (check number, state, images, direction).
    ClassRule = 3,
    /// The routing directory lookup.
    Directory = 4,
}

/// One problem with one field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankedProblem {
    /// JSON path of the field (`customer.routing_number`, `principal[0].address.zip`).
    pub field: String,
    /// Machine-readable kind.
    pub code: ProblemCode,
    /// Human-readable explanation.
    pub message: String,
    /// The catalogue error this problem maps to in the envelope.
    pub error: AchError,
    /// Precedence class.
    pub rank: Rank,
}

/// `{field, code, message}` as every host shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldError {
    /// JSON path of the field.
    pub field: String,
    /// Machine-readable kind.
    pub code: ProblemCode,
    /// Human-readable explanation.
    pub message: String,
}

/// The result of validating one request: what `achd validate`, the C library and
/// the browser module print: `{"valid", "message", "errors"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    /// Whether the request passes every rule.
    pub valid: bool,
    /// The envelope message (the first problem by precedence), or null when valid.
    pub message: Option<String>,
    /// Every problem, in precedence order (stable within a rank: document order).
    pub errors: Vec<FieldError>,
}

impl Verdict {
    /// The verdict as compact JSON: the exact bytes `achd validate` prints (without
    /// its trailing newline), the C library returns and the browser module parses.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self)
            .unwrap_or_else(|_| String::from(r#"{"valid":false,"message":null,"errors":[]}"#))
    }
}

/// Problems collected while walking a request.
#[derive(Debug, Default, Clone)]
pub struct Report {
    problems: Vec<RankedProblem>,
}

impl Report {
    /// An empty report.
    pub fn new() -> Self {
        Report::default()
    }

    /// Record a problem.
    pub fn push(
        &mut self,
        field: String,
        code: ProblemCode,
        message: impl Into<String>,
        error: AchError,
        rank: Rank,
    ) {
        self.problems.push(RankedProblem { field, code, message: message.into(), error, rank });
    }

    /// Whether no problem was found.
    pub fn is_empty(&self) -> bool {
        self.problems.is_empty()
    }

    /// The problems, sorted by precedence (stable).
    pub fn into_problems(mut self) -> Vec<RankedProblem> {
        self.problems.sort_by_key(|p| p.rank);
        self.problems
    }

    /// The problems in the order they were found.
    pub fn problems(&self) -> &[RankedProblem] {
        &self.problems
    }

    /// The catalogue error of the first problem by precedence.
    pub fn first_error(&self) -> Option<&AchError> {
        self.problems.iter().min_by_key(|p| p.rank).map(|p| &p.error)
    }

    /// The verdict: valid, or the first error's message and every field problem.
    pub fn verdict(self) -> Verdict {
        let message = self.first_error().map(ToString::to_string);
        let errors: Vec<FieldError> = self
            .into_problems()
            .into_iter()
            .map(|p| FieldError { field: p.field, code: p.code, message: p.message })
            .collect();
        Verdict { valid: errors.is_empty(), message, errors }
    }
}

/// A JSON path built on the stack while walking; rendered only when a problem is
/// found, so valid requests never pay for path strings.
#[derive(Debug, Clone, Copy)]
pub struct Path<'a> {
    parent: Option<&'a Path<'a>>,
    seg: Seg<'a>,
}

#[derive(Debug, Clone, Copy)]
enum Seg<'a> {
    Root,
    Key(&'a str),
    Index(usize),
}

impl<'a> Path<'a> {
    /// The document root (renders as the empty string).
    pub const ROOT: Path<'static> = Path { parent: None, seg: Seg::Root };

    /// The path of a member of this object.
    pub fn key(&'a self, key: &'a str) -> Path<'a> {
        Path { parent: Some(self), seg: Seg::Key(key) }
    }

    /// The path of an element of this array.
    pub fn index(&'a self, index: usize) -> Path<'a> {
        Path { parent: Some(self), seg: Seg::Index(index) }
    }

    /// `a.b[0].c`
    pub fn render(&self) -> String {
        let mut out = String::new();
        self.render_into(&mut out);
        out
    }

    fn render_into(&self, out: &mut String) {
        if let Some(parent) = self.parent {
            parent.render_into(out);
        }
        match self.seg {
            Seg::Root => {}
            Seg::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Seg::Index(i) => {
                out.push('[');
                out.push_str(&i.to_string());
                out.push(']');
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_names_are_serde_names_and_all_differ() {
        let mut seen = std::collections::HashSet::new();
        for code in ProblemCode::ALL {
            assert_eq!(serde_json::to_value(code).ok(), Some(serde_json::json!(code.as_str())), "{code:?}");
            assert!(seen.insert(code.as_str()), "{code:?} twice");
        }
    }

    #[test]
    fn paths_render_as_json_paths() {
        let root = Path::ROOT;
        let p = root.key("principal");
        let i = p.index(0);
        let a = i.key("address");
        let z = a.key("zip");
        assert_eq!(z.render(), "principal[0].address.zip");
        assert_eq!(root.render(), "");
        assert_eq!(root.key("amount").render(), "amount");
    }

    #[test]
    fn verdict_orders_by_rank_and_takes_the_first_message() {
        let mut r = Report::new();
        r.push(
            "amount".into(),
            ProblemCode::InvalidAmount,
            "x",
            AchError::InvalidAmount { value: "x".into() },
            Rank::Amount,
        );
        r.push("description".into(), ProblemCode::Required, "d", AchError::FailedToAccept, Rank::Structure);
        r.push("state".into(), ProblemCode::Required, "s", AchError::StateRequired, Rank::ClassRule);
        let v = r.verdict();
        assert!(!v.valid);
        assert_eq!(v.message.as_deref(), Some("Failed to accept this transaction"));
        let fields: Vec<&str> = v.errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["description", "amount", "state"]);
        let json = serde_json::to_string(&v.errors[0]).unwrap_or_default();
        assert_eq!(json, r#"{"field":"description","code":"required","message":"d"}"#);
    }

    #[test]
    fn empty_report_is_valid() {
        let v = Report::new().verdict();
        assert!(v.valid && v.message.is_none() && v.errors.is_empty());
    }
}
