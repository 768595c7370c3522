//! How a host sets an engine up: its options and its clock.

use chrono::{DateTime, Utc};

use crate::clock::ManualClock;
use crate::secrets::EncryptionKey;
use crate::storage::StorageHook;

/// How the engine is set up by its host.
#[derive(Debug, Clone)]
pub struct EngineOptions {
    /// The operator's key (the operator plane: partners, approvals, returns,
    /// directory, the sandbox clock, key rotation). Accepted until an operator
    /// key rotation retires it; from then on the rotated keys stored in the
    /// database are the operator's. `None`: no operator access at all.
    pub operator_key: Option<String>,
    /// Sandbox: the clock is set by the operator (`Operation::SetClock`).
    pub sandbox: bool,
    /// The key that seals account numbers. `None`: for a file database, the key file
    /// `<database>.key` (created with mode 0600 if missing); in memory, a fresh key.
    pub encryption_key: Option<EncryptionKey>,
    /// Where time comes from.
    pub clock: EngineClock,
    /// How long a similar transaction counts as a duplicate (message 17) for
    /// merchants that decline duplicates; `None`: 24 hours.
    pub duplicate_window: Option<chrono::Duration>,
    /// Told of every storage fault and recovery (the host logs them); `None`:
    /// nobody is told (the operations still answer message 7).
    pub storage_hook: Option<StorageHook>,
    /// The screening rules in force until the operator sets some
    /// (`PUT /admin/risk-rules`); `None`: every rule on, with its defaults.
    pub risk_rules: Option<crate::model::RiskRules>,
    /// Whether webhook endpoints may be `http://` URLs and private or
    /// loopback addresses (a sandbox's always may).
    pub webhook_allow_private: bool,
}

/// The engine's clock.
#[derive(Debug, Clone)]
pub enum EngineClock {
    /// The operating system's clock (production).
    #[cfg(not(target_arch = "wasm32"))]
    System,
    /// A clock that moves only when set (tests, the sandbox, the browser).
    Manual(ManualClock),
}

impl EngineOptions {
    /// Options with a manual clock at `start` (tests, sandbox, browser).
    pub fn manual(start: DateTime<Utc>) -> Self {
        EngineOptions {
            operator_key: None,
            sandbox: false,
            encryption_key: None,
            clock: EngineClock::Manual(ManualClock::new(start)),
            duplicate_window: None,
            storage_hook: None,
            risk_rules: None,
            webhook_allow_private: false,
        }
    }

    /// Options on the system clock (production).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn system() -> Self {
        EngineOptions {
            operator_key: None,
            sandbox: false,
            encryption_key: None,
            clock: EngineClock::System,
            duplicate_window: None,
            storage_hook: None,
            risk_rules: None,
            webhook_allow_private: false,
        }
    }

    /// With this operator key.
    pub fn with_operator_key(mut self, key: impl Into<String>) -> Self {
        self.operator_key = Some(key.into());
        self
    }

    /// Taking webhook endpoints at `http://` URLs and private or loopback
    /// addresses (a sandbox always does).
    pub fn with_private_webhooks(mut self) -> Self {
        self.webhook_allow_private = true;
        self
    }

    /// In sandbox mode (the operator sets the clock).
    pub fn sandbox(mut self) -> Self {
        self.sandbox = true;
        self
    }

    /// With this encryption key.
    pub fn with_encryption_key(mut self, key: EncryptionKey) -> Self {
        self.encryption_key = Some(key);
        self
    }

    /// With these screening rules until the operator sets some.
    pub fn with_risk_rules(mut self, rules: crate::model::RiskRules) -> Self {
        self.risk_rules = Some(rules);
        self
    }

    /// Telling `hook` of every storage fault and recovery.
    pub fn with_storage_hook(mut self, hook: StorageHook) -> Self {
        self.storage_hook = Some(hook);
        self
    }
}
