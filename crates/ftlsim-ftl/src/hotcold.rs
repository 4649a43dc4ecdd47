//! Hot/cold page FTL ("hotcold"): a page-level FTL that writes hot and cold pages to separate
//! open blocks, so that blocks fill with pages of one temperature and GC finds victims that
//! are mostly invalid (hot) or mostly valid and rarely chosen (cold).
//!
//! The idea is data clustering by update frequency: Chiang, Lee & Chang, "Using data
//! clustering to improve cleaning performance for flash memory", Software: Practice and
//! Experience 29(3), 1999, separate hot from cold data so that cleaning copies less; Hsieh,
//! Kuo & Chang, "Efficient identification of hot data for flash memory storage systems", ACM
//! TOS 2(1), 2006, call a page hot by how often it was written recently, with counters that
//! are periodically halved (aging). This module is the FTL docs/extending.md builds, step by
//! step, from the core's pieces only:
//! - a logical page is *hot* when it has been written at least `hot_updates` times since its
//!   counter last aged; every `decay_writes` host page writes, every counter is halved
//!   (Hsieh et al.'s aging, with an exact counter per page instead of their hashed ones);
//! - two host streams per plane (cold, hot) and GC's: blocks hold one temperature, and what
//!   GC moves (data that stayed valid: cold by construction) goes to its own block.
//!
//! Everything else is the page FTL's ([`crate::page`]): this module is its host policy
//! ([`HotColdStreams`], a [`HostStreams`]), so plane allocation, foreground and idle-time GC
//! (the core's GC driver), copy-back, FDP's refusal, snapshots and the full-scan power-loss
//! recovery are the page FTL's; the update counters live in DRAM and restart at zero after a
//! power cut.
//!
//! Departures: Hsieh et al. count in a multi-hash table of 4-bit counters (a few KB of SRAM);
//! an exact byte per logical page is simpler and is what `mapping_sram_bytes` charges.

use crate::options::{invalid, Options};
use crate::page::{HostStreams, PageFtl, PlainGc};
use ftlsim_core::config::{DriveConfig, GcCopy, Resolved};
use ftlsim_core::error::ConfigError;
use ftlsim_core::ftl::{SeriesKind, SeriesValue};
use ftlsim_core::geometry::Lpn;
use serde::{Deserialize, Serialize};

/// The hot/cold FTL's options (`[ftl.hotcold]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HotColdOptions {
    /// Writes of a logical page (since its counter last aged) from which its next write is
    /// hot, in [1, 255].
    pub hot_updates: u32,
    /// Host page writes between two agings of every counter (halving), >= 1; default: the
    /// drive's logical pages (one pass over the space).
    pub decay_writes: Option<u64>,
}

impl Default for HotColdOptions {
    fn default() -> Self {
        HotColdOptions { hot_updates: 2, decay_writes: None }
    }
}

impl Options for HotColdOptions {
    const SECTION: &'static str = "hotcold";

    fn check(&self, _cfg: &DriveConfig) -> Result<(), ConfigError> {
        if !(1..=255).contains(&self.hot_updates) {
            return Err(invalid("hotcold", "hot_updates", self.hot_updates, "must be in [1, 255] (a byte per page)"));
        }
        if self.decay_writes == Some(0) {
            return Err(invalid("hotcold", "decay_writes", 0, "must be >= 1"));
        }
        Ok(())
    }
}

/// Host streams per plane: the two temperatures (GC's follows them).
const COLD: u32 = 0;
const HOT: u32 = 1;
const HOST_STREAMS: u32 = 2;

/// Open blocks per plane (registry capability): cold, hot and GC.
pub fn open_blocks_per_plane(_: &DriveConfig) -> u32 {
    HOST_STREAMS + 1
}

/// Host page writes by temperature (`hotcold_hot_writes`, `hotcold_cold_writes`).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
struct Writes {
    hot: u64,
    cold: u64,
}

/// The hot/cold host policy: a page's temperature by its recent writes.
#[derive(Clone, Serialize, Deserialize)]
pub struct HotColdStreams {
    /// Writes per logical page since its counter last aged (saturating).
    updates: Vec<u8>,
    hot_updates: u8,
    decay_writes: u64,
    writes_since_decay: u64,
    writes: Writes,
}

/// The hot/cold FTL on `cfg`'s drive: the page FTL with the hot/cold host policy.
pub fn build(cfg: &Resolved) -> Result<PageFtl<PlainGc, HotColdStreams>, ConfigError> {
    let plain = PlainGc { copyback: cfg.ftl.gc_copy == Some(GcCopy::Copyback) };
    PageFtl::with_policies(cfg, "hotcold", plain, HotColdStreams::new(cfg)?)
}

impl HotColdStreams {
    /// Counters at zero for `cfg`'s logical pages, `[ftl.hotcold]`'s settings.
    pub fn new(cfg: &Resolved) -> Result<HotColdStreams, ConfigError> {
        let o = HotColdOptions::of(cfg)?;
        let pages = cfg.derived().logical_pages;
        Ok(HotColdStreams {
            updates: vec![0; pages as usize],
            hot_updates: o.hot_updates as u8,
            decay_writes: o.decay_writes.unwrap_or(u64::from(pages)),
            writes_since_decay: 0,
            writes: Writes::default(),
        })
    }
}

impl HostStreams for HotColdStreams {
    fn streams(&self) -> u32 {
        HOST_STREAMS
    }

    /// Hot once written often enough; every `decay_writes` writes, every counter is halved.
    fn stream(&mut self, lpn: Lpn) -> u32 {
        let n = &mut self.updates[lpn as usize];
        let stream = if *n >= self.hot_updates { HOT } else { COLD };
        *n = n.saturating_add(1);
        self.writes_since_decay += 1;
        if self.writes_since_decay >= self.decay_writes {
            self.writes_since_decay = 0;
            self.updates.iter_mut().for_each(|u| *u /= 2);
        }
        match stream {
            HOT => self.writes.hot += 1,
            _ => self.writes.cold += 1,
        }
        stream
    }

    /// A 1-byte update counter per logical page.
    fn sram_bytes_per_page(&self) -> u64 {
        1
    }

    fn begin_measurement(&mut self) {
        self.writes = Writes::default();
    }

    fn put_metrics(&self, m: &mut serde_json::Map<String, serde_json::Value>) {
        m.insert("hotcold_hot_writes".into(), self.writes.hot.into());
        m.insert("hotcold_cold_writes".into(), self.writes.cold.into());
    }

    /// Host pages written hot and cold in each interval.
    fn series(&self) -> Vec<SeriesValue> {
        vec![
            SeriesValue { name: "hot_writes", value: self.writes.hot, kind: SeriesKind::Count },
            SeriesValue { name: "cold_writes", value: self.writes.cold, kind: SeriesKind::Count },
        ]
    }

    /// The counters were in DRAM: every page is cold until written again.
    fn recovered(&mut self) {
        self.updates.fill(0);
        self.writes_since_decay = 0;
    }

    fn take_settings(&mut self, configured: &Self) {
        self.hot_updates = configured.hot_updates;
        self.decay_writes = configured.decay_writes;
    }
}
