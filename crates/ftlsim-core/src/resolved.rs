//! A drive config that has passed every rule, with its derived quantities (issue 59: a
//! config validated once). Parsing a config ([`DriveConfig::from_toml`], `with_overrides`)
//! checks its syntax and types; the rules that need the whole config, and the quantities
//! computed from it, come once, here, when the run's config is final (`ftlsim_ftl::resolve`
//! completes it against its FTL first). Every constructor of the simulator (FTLs, the
//! scheduler, the simulator, a channel system) takes a [`Resolved`], so none checks again
//! and none can be handed a config that was never checked.

use crate::config::{Derived, DriveConfig};
use crate::error::ConfigError;
use std::sync::atomic::{AtomicU64, Ordering};

/// A checked drive config and what is derived from it.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    cfg: DriveConfig,
    derived: Derived,
}

/// Derivations made by this process ([`derivations`]).
static DERIVATIONS: AtomicU64 = AtomicU64::new(0);

/// How many configs this process has checked and derived: a test counts a run's.
pub fn derivations() -> u64 {
    DERIVATIONS.load(Ordering::Relaxed)
}

impl Resolved {
    /// `cfg` checked against every rule (the first broken one is the error, naming its key)
    /// and its quantities derived. A run's config comes through `ftlsim_ftl::resolve`, which
    /// completes it against its FTL before it calls this.
    pub fn validate(cfg: DriveConfig) -> Result<Resolved, ConfigError> {
        DERIVATIONS.fetch_add(1, Ordering::Relaxed);
        let derived = cfg.derive()?;
        Ok(Resolved { cfg, derived })
    }

    /// The config.
    pub fn cfg(&self) -> &DriveConfig {
        &self.cfg
    }

    /// The quantities derived from it.
    pub fn derived(&self) -> &Derived {
        &self.derived
    }

    /// The config, given back (e.g. to change it and check it again).
    pub fn into_cfg(self) -> DriveConfig {
        self.cfg
    }
}

impl std::ops::Deref for Resolved {
    type Target = DriveConfig;
    fn deref(&self) -> &DriveConfig {
        &self.cfg
    }
}
