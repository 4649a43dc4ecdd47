//! WAFTL's options (`[ftl.waftl]`, seed 002 Secs. III-IV; docs/waftl.md).

use crate::options::{invalid, Options};
use ftlsim_core::config::{DriveConfig, GcPreemption};
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
    /// How much of a migration one step does (issue 34; the paper does not say).
    pub migration_step: MigrationStep,
    /// Which read misses are copied into the zone (L137; docs/waftl.md).
    pub read_miss_copy: ReadMissCopy,
    /// Where a never-written page a read asks for is put before the run (issue 34).
    pub prewrite: Prewrite,
}

impl Default for WaftlOptions {
    fn default() -> Self {
        WaftlOptions {
            buffer_zone_bytes: 256 << 20,
            threshold_pages: 0,
            dynamic_d: None,
            idle_alpha: 0.5,
            migration: ZoneMigration::default(),
            migration_step: MigrationStep::default(),
            read_miss_copy: ReadMissCopy::default(),
            prewrite: Prewrite::default(),
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

/// The unit of migration work between two chances for a host request to go first
/// (`[ftl.waftl] migration_step`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MigrationStep {
    /// One page copy (or one block lent) per step, like GC: a request arriving waits for at
    /// most the page operation under way.
    #[default]
    Page,
    /// A whole block node (up to a block of page copies) per step: the counterfactual of
    /// issue 34 (before it, every migration was one).
    BlockNode,
}

/// Which reads the zone misses are copied into it (`[ftl.waftl] read_miss_copy`). L137: "To
/// increase opportunities to form sequential writes, reading missed data will be written into
/// Buffer Zone".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReadMissCopy {
    /// Only pages of a logical block the zone already holds written pages of and that is not
    /// page-mapped: only those copies can join a sequential write (the block's BMB rewrite,
    /// or a new block's count towards the threshold); Algorithm 1 drops a clean copy of any
    /// other block at migration unused (lines 11-15 move only a page-mapped block's dirty
    /// pages; line 4 drops a BMB's node with no dirty page).
    #[default]
    ZoneBlocks,
    /// Every read the zone does not serve (the counterfactual: 1.76 M copies on a read-heavy
    /// trace, issue 34).
    All,
    /// None.
    Off,
}

/// Where WAFTL puts a never-written page a read asks for (`[ftl.waftl] prewrite`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Prewrite {
    /// At home, as a drive in service holds data written long ago: in a page-mapped block,
    /// or at its offset in the logical block's BMB when that offset is still free.
    #[default]
    Home,
    /// Into the Buffer Zone like a host write (the counterfactual of issue 34: its later
    /// migration is timed, its zone page counted).
    Zone,
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
        if cfg.ftl.gc_preemption != GcPreemption::None {
            return Err(ConfigError::Invalid {
                key: "ftl.gc_preemption".into(),
                value: format!("\"{}\"", cfg.ftl.gc_preemption.name()),
                rule: "cannot go with waftl: a migration copies a zone page on one plane to its BMB on another, and \
                       the deferred GC work is kept per plane (WAFTL's migration is preemptible at every page \
                       instead: [ftl.waftl] migration_step)"
                    .into(),
            });
        }
        if !(self.idle_alpha > 0.0 && self.idle_alpha <= 1.0) {
            return Err(invalid("waftl", "idle_alpha", self.idle_alpha, "must be in (0, 1]"));
        }
        Ok(())
    }
}
