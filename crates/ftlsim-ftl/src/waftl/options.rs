//! WAFTL's options (`[ftl.waftl]`, seed 002 Secs. III-IV; docs/waftl.md).

use crate::options::{invalid, Options};
use ftlsim_core::config::DriveConfig;
use ftlsim_core::error::ConfigError;
use serde::{Deserialize, Serialize};

/// `[ftl.waftl]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WaftlOptions {
    /// Buffer Zone size, bytes, in whole blocks spread evenly over the planes (Table II: 256 MB,
    /// 512 MB, 1 GB). Its blocks come out of the drive's spare blocks: to keep a spare area
    /// beside the zone, raise `overprovisioning.share` by the zone's share (docs/waftl.md).
    pub buffer_zone_bytes: u64,
    /// Migration threshold, pages (Algorithm 1 line 23); 0 = a full block (the figures' 64).
    pub threshold_pages: u32,
    /// The dynamic threshold's control parameter D (Eqs. 1-2; Figs. 18-19: 0.03, 0.06);
    /// unset = the static threshold.
    pub dynamic_d: Option<f64>,
    /// Eq. 3's adjust factor alpha of the idle-time prediction (not given by the paper).
    pub idle_alpha: f64,
    /// When a full zone's block nodes move out (the paper does not say; docs/waftl.md).
    pub migration: ZoneMigration,
}

impl Default for WaftlOptions {
    fn default() -> Self {
        WaftlOptions {
            buffer_zone_bytes: 256 << 20,
            threshold_pages: 0,
            dynamic_d: None,
            idle_alpha: 0.5,
            migration: ZoneMigration::default(),
        }
    }
}

/// When WAFTL migrates a full Buffer Zone (`[ftl.waftl] migration`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ZoneMigration {
    /// A fresh zone is lent at once and the full one drains behind it: block nodes move in
    /// idle time (with `ftl.background_gc`) and, paced, with the writes into the new zone, so
    /// that it is empty before the new one fills. Needs room for two zones.
    #[default]
    Incremental,
    /// All of Algorithm 1 in the request that finds the zone full (the whole zone copied before
    /// that request completes).
    Foreground,
}

impl Options for WaftlOptions {
    const SECTION: &'static str = "waftl";

    fn check(&self, cfg: &DriveConfig) -> Result<(), ConfigError> {
        let g = &cfg.geometry;
        let zone_unit = u64::from(g.planes()) * u64::from(g.pages_per_block) * u64::from(g.page_size_bytes);
        if self.buffer_zone_bytes < zone_unit {
            return Err(invalid(
                "waftl",
                "buffer_zone_bytes",
                self.buffer_zone_bytes,
                format!("must hold at least one block per plane ({zone_unit} bytes)"),
            ));
        }
        if self.threshold_pages > g.pages_per_block {
            return Err(invalid(
                "waftl",
                "threshold_pages",
                self.threshold_pages,
                format!("must be at most a block ({} pages); 0 = a full block", g.pages_per_block),
            ));
        }
        if let Some(d) = self.dynamic_d.filter(|d| !(*d > 0.0 && *d < 1.0)) {
            return Err(invalid("waftl", "dynamic_d", d, "must be in (0, 1)"));
        }
        if !(self.idle_alpha > 0.0 && self.idle_alpha <= 1.0) {
            return Err(invalid("waftl", "idle_alpha", self.idle_alpha, "must be in (0, 1]"));
        }
        Ok(())
    }
}
