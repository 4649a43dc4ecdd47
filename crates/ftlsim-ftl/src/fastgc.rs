//! FastGC (Wu et al., DAC 2018) as seed 003 describes it, the baseline rcFTL beats at high
//! wear: GC copies valid pages back within their plane while a page's consecutive
//! copy-backs stay below one threshold per P/E range, chosen for the worst blocks because
//! FastGC does not tell blocks apart ("a single copyback threshold value was used for all
//! the blocks with the same P/E cycles, the copyback threshold was conservatively selected",
//! L50; "block-unaware worst-case setting", L69), tracked per page (L27). Our reading: the
//! threshold is Table I's worst row at the source block's P/E count; the count is the flash
//! model's per-page consecutive copy-back count, reset by a host write or an off-chip copy.
//! The per-page counters cost pages at the end of every block (`[ftl.copyback_table] pages`,
//! docs/reliability.md). Everything else is the page FTL (`page`), whose GC this only limits
//! ([`PerPageLimit`], a [`GcDestination`]); rcFTL's per-page quota (`rcftl_per_page`) is the
//! same policy with the quota rule.

use crate::options::Options;
use crate::page::{GcDestination, MovePlan, PageFtl};
use ftlsim_core::config::Resolved;
use ftlsim_core::error::ConfigError;
use ftlsim_core::flash::FlashArray;
use ftlsim_core::geometry::{BlockId, Ppn};
use serde::{Deserialize, Serialize};

/// The per-page copy-back table's options (`[ftl.copyback_table]`), read by FastGC and
/// rcftl-per-page: the per-page scheme's "flash requirement" (seed 003 L27, L145).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CopybackTableOptions {
    /// Pages at the end of every block holding the per-page copy-back counters or quotas of
    /// its pages; 0 keeps them in the spare area at no cost.
    pub pages: u32,
}

impl Default for CopybackTableOptions {
    fn default() -> Self {
        CopybackTableOptions { pages: 1 }
    }
}

impl Options for CopybackTableOptions {
    const SECTION: &'static str = "copyback_table";
}

/// Which copy-backs a per-page scheme allows under the reliability model (seed 003).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Limit {
    /// FastGC: a page's consecutive copy-backs stay below the worst class's threshold at the
    /// source block's P/E count, one limit for every block (seed 003 L50).
    WorstCase,
    /// Per-page quota: a copy-back when the page's quota covers Q_init / CT(source block)
    /// (seed 003 Sec. IV-A, Fig. 4).
    Quota,
}

/// GC copies back wherever the per-page limit allows, whatever `ftl.gc_copy` says (the
/// `rcftl` preset's "controller" is its baseline's, `page`), and closes every block with the
/// per-page table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PerPageLimit {
    /// The rule.
    pub limit: Limit,
    /// Pages of the per-page copy-back table closing each block.
    pub table_pages: u32,
}

impl GcDestination for PerPageLimit {
    fn table_pages(&self) -> u32 {
        self.table_pages
    }

    fn plan(&mut self, _: &FlashArray, _: BlockId, _: bool, _: Option<f64>, _: bool) -> MovePlan {
        MovePlan { gc_stream: 0, copyback: true, refused: false }
    }

    fn allows_copyback(&self, flash: &FlashArray, src: Ppn) -> bool {
        let Some(m) = flash.reliability() else { return true };
        match self.limit {
            Limit::WorstCase => {
                let pe = flash.pe_cycles(flash.geometry().block_of(src));
                flash.copyback_count(src) < m.worst_ct(pe)
            }
            Limit::Quota => flash.copyback_allowed(src),
        }
    }
}

/// FastGC on `cfg`'s drive (the registry makes sure it has the reliability model).
pub fn build(cfg: &Resolved) -> Result<PageFtl<PerPageLimit>, ConfigError> {
    limited(cfg, "fastgc", Limit::WorstCase)
}

/// The page FTL named `name` with copy-backs limited per page by `limit`.
pub(crate) fn limited(cfg: &Resolved, name: &'static str, limit: Limit) -> Result<PageFtl<PerPageLimit>, ConfigError> {
    let table_pages = CopybackTableOptions::of(cfg)?.pages;
    PageFtl::with_destination(cfg, name, PerPageLimit { limit, table_pages })
}
