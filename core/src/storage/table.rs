//! The tables of the database: their names, and which store their records
//! in postcard rather than JSON.

use redb::TableDefinition;

/// Every table of the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Table {
    /// Engine metadata: format version, pointer secret, clock position.
    Meta,
    /// Partners by id.
    Partners,
    /// Merchants by id.
    Merchants,
    /// API keys by SHA-256 hash → who they authenticate.
    Keys,
    /// Customers (bank account tokens) by id.
    Customers,
    /// Transactions by id.
    Transactions,
    /// Check images by transaction id + side, sealed.
    Images,
    /// Check images' retention: (instant they are deleted, transaction id).
    ImageExpiry,
    /// Pending transactions by (cut-off instant, id).
    Pending,
    /// Originated transactions by (settlement instant, id).
    Settlements,
    /// Status changes by (partner, sequence).
    Changes,
    /// Events by (merchant, sequence).
    Events,
    /// Large values: the loaded routing directory file.
    Blobs,
    /// Usage counters: (merchant or partner, day or month) → count and cents.
    Usage,
    /// Spent check numbers: keyed fingerprint of (merchant, account, check
    /// number) → the transaction that used it.
    Checks,
    /// Idempotency keys: (partner, key) → the request's hash and its answer.
    Idempotency,
    /// The origination file in progress: (cut-off instant, batch, transaction id)
    /// of each transaction originated at a cut-off whose file is not yet written.
    Outgoing,
    /// Written origination files by id → their summary (the text is a sealed blob).
    Files,
    /// Trace numbers (15 digits) → the transaction that carried them.
    Traces,
    /// Entries of bank files already applied (returns, notifications of change).
    Inbound,
    /// The keys of each holder: (holder id, key hash) → nothing (an index of
    /// [`Table::Keys`], to rotate or revoke a holder's keys).
    HolderKeys,
    /// Suspended partners and merchants by id → since when.
    Suspensions,
    /// The duplicate window's changes, for the other processes over a shared
    /// database (PostgreSQL): sequence (8 bytes) → change. Empty on redb.
    WindowLog,
    /// Account validations: (partner, 0, validation id) → the validation.
    Validations,
    /// Each partner's validated accounts: (partner, 0, the account's keyed
    /// fingerprint) → the id of the validation in force for it.
    ValidatedAccounts,
    /// Screening's counters per merchant: (merchant, 0, kind, …) → a
    /// payee account's history, a payee name's accounts, the average per
    /// type, the exposure (`engine/risk/screening.rs`).
    RiskCounters,
    /// Entries held by screening, by transaction id → their review (kept
    /// once decided: the risk report reads it).
    Reviews,
    /// The reviews still open: (instant held, transaction id) → nothing.
    Held,
    /// The risk report's counts per Eastern day of screening: date → counts per rule.
    RiskDays,
    /// What lists walk, newest first: (partner or merchant, 0, `t`,
    /// transaction id) and (partner, 0, `m`, instant submitted, merchant id)
    /// → nothing (`engine/rows/listings.rs`).
    Listings,
    /// The status change that ended a transaction (a void, a rejection in
    /// review, a return), by transaction id: its history's last entry
    /// (`engine/views/history.rs`).
    Endings,
    /// Webhook endpoints: (partner, 0, endpoint id) → the endpoint, its
    /// secrets sealed (`engine/webhooks/endpoints.rs`).
    WebhookEndpoints,
    /// How far each endpoint has taken each merchant's events feed and its
    /// partner's own: (endpoint id, 0, merchant or partner id) → the last
    /// position (8 bytes).
    WebhookCursors,
    /// Each endpoint's deliveries: (endpoint id, 0, delivery id) → the
    /// delivery: status, attempts, next try (`engine/webhooks/deliveries.rs`).
    WebhookDeliveries,
    /// Deliveries due: (instant, endpoint id, 0, delivery id) → nothing.
    WebhookDue,
    /// Each partner's own events (a merchant approved): (partner, 0,
    /// sequence) → the event as a webhook's `data` shows it
    /// (`engine/feeds/partner_events.rs`).
    PartnerEvents,
    /// The ICL items of cut-offs whose image cash letter is not written yet:
    /// (cut-off instant, transaction id) → nothing
    /// (`engine/settlement/cash_letters.rs`).
    IclOutgoing,
    /// Written image cash letters: id → the summary (the bytes are sealed in
    /// `blobs` under `icl/{id}`).
    CashLetters,
}

impl Table {
    /// Whether the table's records are postcard (compact binary) rather than JSON:
    /// the transactions, the two feeds and screening's rows, the records every
    /// create and every lifecycle step writes (a status change is ~60 bytes instead of ~230, and a
    /// feed page decodes 10,000 of them). Their types must not need a
    /// self-describing format (no untagged enums, no flatten, no skipped fields).
    pub(crate) const fn binary(self) -> bool {
        matches!(
            self,
            Table::Transactions
                | Table::Changes
                | Table::Events
                | Table::RiskCounters
                | Table::RiskDays
                | Table::Endings
        )
    }

    pub(crate) const fn name(self) -> &'static str {
        match self {
            Table::Meta => "meta",
            Table::Partners => "partners",
            Table::Merchants => "merchants",
            Table::Keys => "keys",
            Table::Customers => "customers",
            Table::Transactions => "transactions",
            Table::Images => "images",
            Table::ImageExpiry => "image_expiry",
            Table::Pending => "pending",
            Table::Settlements => "settlements",
            Table::Changes => "changes",
            Table::Events => "events",
            Table::Blobs => "blobs",
            Table::Usage => "usage",
            Table::Checks => "checks",
            Table::Idempotency => "idempotency",
            Table::Outgoing => "outgoing",
            Table::Files => "files",
            Table::Traces => "traces",
            Table::Inbound => "inbound",
            Table::HolderKeys => "holder_keys",
            Table::Suspensions => "suspensions",
            Table::WindowLog => "window_log",
            Table::Validations => "validations",
            Table::ValidatedAccounts => "validated_accounts",
            Table::RiskCounters => "risk_counters",
            Table::Reviews => "reviews",
            Table::Held => "held",
            Table::RiskDays => "risk_days",
            Table::Listings => "listings",
            Table::Endings => "endings",
            Table::WebhookEndpoints => "webhook_endpoints",
            Table::WebhookCursors => "webhook_cursors",
            Table::WebhookDeliveries => "webhook_deliveries",
            Table::WebhookDue => "webhook_due",
            Table::PartnerEvents => "partner_events",
            Table::IclOutgoing => "icl_outgoing",
            Table::CashLetters => "cash_letters",
        }
    }

    pub(super) const fn def(self) -> TableDefinition<'static, &'static [u8], &'static [u8]> {
        TableDefinition::new(self.name())
    }

    pub(super) const ALL: [Table; 38] = [
        Table::Meta,
        Table::Partners,
        Table::Merchants,
        Table::Keys,
        Table::Customers,
        Table::Transactions,
        Table::Images,
        Table::ImageExpiry,
        Table::Pending,
        Table::Settlements,
        Table::Changes,
        Table::Events,
        Table::Blobs,
        Table::Usage,
        Table::Checks,
        Table::Idempotency,
        Table::Outgoing,
        Table::Files,
        Table::Traces,
        Table::Inbound,
        Table::HolderKeys,
        Table::Suspensions,
        Table::WindowLog,
        Table::Validations,
        Table::ValidatedAccounts,
        Table::RiskCounters,
        Table::Reviews,
        Table::Held,
        Table::RiskDays,
        Table::Listings,
        Table::Endings,
        Table::WebhookEndpoints,
        Table::WebhookCursors,
        Table::WebhookDeliveries,
        Table::WebhookDue,
        Table::PartnerEvents,
        Table::IclOutgoing,
        Table::CashLetters,
    ];
}
