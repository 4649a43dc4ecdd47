//! rcFTL's per-block quota management (seed 003 Sec. IV-A, Fig. 5; L107-L118): the copy-back
//! quota is kept per block, not per page. Every block b holds pages of one quota Q(b) (Q_init
//! for host writes and off-chip copies); GC moves a victim v's valid pages by copy-back into
//! the open block of quota Q(v) - dQ(v) on v's plane, dQ(v) = Q_init / CT(v), or, when the
//! quota does not cover dQ(v) (or CT(v) = 0), off-chip into a block of quota Q_init: so a plane
//! keeps one open block per quota level (L109).
//!
//! - CT(v) is looked up when v is collected (L105), from its BER class and P/E count. Its P/E
//!   count cannot change while it holds data (only its erase raises it), so this is also the
//!   CT it had when its pages were programmed.
//! - Q_init = 60 makes up to 26 reachable levels under 1-year retention (34 under 3 months):
//!   26 open blocks per plane. The levels are bounded (`[ftl.rcftl] quota_levels`, 8 by default,
//!   docs/reliability.md): a
//!   destination quota between two kept levels goes to the lower one, which only gives pages
//!   less quota than they have (never more), at the price of earlier off-chip copies.
//! - After a power cut the quotas are not on flash (the paper keeps them in DRAM): every block
//!   holding data gets quota 0, so its pages next move off-chip. Safe, if slower for a while.
//!
//! - The data-migration mode selector (Sec. IV-B, module `mode_selector`) may send a
//!   background victim off-chip although its quota allows copy-back; with it off
//!   (`[ftl.rcftl] mode_selector = false`, or no write-behind buffer) this is the paper's
//!   "rcFTL-", rCPB whenever the quota allows (L159).

mod mode_selector;
pub use mode_selector::ModeSelector;

use crate::options::{invalid, Options};
use crate::page::{GcDestination, MovePlan, PageFtl};
use ftlsim_core::config::{DriveConfig, Resolved, WriteBufferPolicy};
use ftlsim_core::error::ConfigError;
use ftlsim_core::flash::FlashArray;
use ftlsim_core::ftl::{SeriesKind, SeriesValue};
use ftlsim_core::geometry::{BlockId, Ppn};
use ftlsim_core::metrics::r6;
use ftlsim_core::reliability::{ReliabilityConfig, ReliabilityModel, PE_BOUNDS};
use serde::{Deserialize, Serialize};

/// rcFTL's options (`[ftl.rcftl]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RcftlOptions {
    /// Copy-back quota levels kept, each an open block per plane (seed 003 Fig. 5): at most
    /// this many (at least 2: Q_init and 0), or `"all"` reachable ones, as the paper keeps.
    pub quota_levels: QuotaLevels,
    /// The data-migration mode selector (seed 003 Sec. IV-B): background GC copies back only
    /// while the write-behind buffer's mean utilisation is above `mode_threshold`, else
    /// off-chip (resetting quotas). Off: rCPB whenever the quota allows ("rcFTL-", L159).
    /// Needs `host.write_buffer_policy = "write_behind"`.
    pub mode_selector: bool,
    /// The selector's utilisation threshold, 0-1 (L122: 50%; copy-back when strictly above).
    pub mode_threshold: f64,
    /// What foreground GC counts ([`GcPacing`]; the paper does not say).
    pub gc_pacing: GcPacing,
}

impl Default for RcftlOptions {
    fn default() -> Self {
        RcftlOptions {
            quota_levels: QuotaLevels::AtMost(8),
            mode_selector: true,
            mode_threshold: 0.5,
            gc_pacing: GcPacing::ErasedPages,
        }
    }
}

impl Options for RcftlOptions {
    const SECTION: &'static str = "rcftl";

    fn check(&self, _cfg: &DriveConfig) -> Result<(), ConfigError> {
        if let QuotaLevels::AtMost(n @ 0..=1) = self.quota_levels {
            return Err(invalid("rcftl", "quota_levels", n, "must be at least 2 (Q_init and 0), or \"all\""));
        }
        if !(0.0..=1.0).contains(&self.mode_threshold) {
            return Err(invalid(
                "rcftl",
                "mode_threshold",
                self.mode_threshold,
                "must be in [0, 1] (a share of the write buffer)",
            ));
        }
        Ok(())
    }
}

/// The quota levels rcFTL keeps (`[ftl.rcftl] quota_levels`): a count or `"all"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuotaLevels {
    /// Q_init, the highest reachable levels below it and 0, this many at most (>= 2).
    AtMost(u32),
    /// Every reachable level (26 under Table I's 1-year half).
    All,
}

impl QuotaLevels {
    fn max(self) -> usize {
        match self {
            QuotaLevels::AtMost(n) => n as usize,
            QuotaLevels::All => usize::MAX,
        }
    }
}

impl Serialize for QuotaLevels {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            QuotaLevels::AtMost(n) => s.serialize_u32(*n),
            QuotaLevels::All => s.serialize_str("all"),
        }
    }
}

impl<'de> Deserialize<'de> for QuotaLevels {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Count(i64),
            Word(String),
        }
        match Raw::deserialize(d)? {
            Raw::Count(n) => u32::try_from(n)
                .map(QuotaLevels::AtMost)
                .map_err(|_| D::Error::custom(format!("quota_levels = {n}: expected a count of levels or \"all\""))),
            Raw::Word(w) if w == "all" => Ok(QuotaLevels::All),
            Raw::Word(w) => {
                Err(D::Error::custom(format!("quota_levels = \"{w}\": expected a count of levels or \"all\"")))
            }
        }
    }
}

/// What rcFTL's foreground GC counts to decide when a plane collects and how much.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GcPacing {
    /// Erased pages, at host-block boundaries (issue 33; `PageFtl::short_of_space`): planes
    /// stay in step under round-robin striping.
    ErasedPages,
    /// Free blocks below `ftl.gc_threshold_blocks`, as the one-stream FTLs: a collection gains
    /// a block or none by luck, planes fall out of step (the counterfactual of issue 33).
    FreeBlocks,
}

/// How a victim's pages move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Migration {
    /// By copy-back (the quota covers the deduction and the mode selector agrees).
    Copyback,
    /// Off-chip because the quota does not cover the deduction (or CT = 0).
    OffChipByQuota,
    /// Off-chip because the mode selector chose it.
    OffChipBySelector,
}

/// The quota levels kept (highest first: Q_init, ..., 0) and every block's quota.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BlockQuotas {
    levels: Vec<u16>,
    block_q: Vec<u16>,
    /// Victims whose pages went off-chip because their quota did not cover their deduction.
    pub victims_offchip_by_quota: u64,
    /// Victims whose pages went by copy-back.
    pub victims_copyback: u64,
    /// The mode selector (decides between copy-back and off-chip where the quota allows both).
    pub selector: ModeSelector,
    /// What foreground GC counts.
    pub pacing: GcPacing,
    /// Blocks per plane, and the spare ones (beyond the logical space), for the open blocks'
    /// cost in the metrics.
    plane_blocks: (u32, f64),
}

/// The levels kept under `model`, at most `max_levels` (>= 2), highest first: Q_init, the
/// highest reachable ones below it, and 0.
fn kept_levels(model: &ReliabilityModel, max_levels: usize) -> Vec<u16> {
    assert!(max_levels >= 2, "Q_init and 0 at least");
    // The deductions any block may make at any wear the table covers.
    let mut ds: Vec<u16> = (0..3u8)
        .flat_map(|class| PE_BOUNDS.iter().map(move |&pe| (class, pe)))
        .filter_map(|(class, pe)| model.deduction(class, pe))
        .collect();
    ds.sort_unstable();
    ds.dedup();
    let mut levels: Vec<u16> =
        reachable(model.q_init(), &ds).into_iter().filter(|&l| l > 0).take(max_levels - 1).collect();
    levels.push(0);
    levels
}

/// Every quota reachable from `q_init` by spending any of `deductions` repeatedly.
fn reachable(q_init: u16, deductions: &[u16]) -> Vec<u16> {
    let mut seen = vec![false; usize::from(q_init) + 1];
    let mut todo = vec![q_init];
    seen[usize::from(q_init)] = true;
    while let Some(q) = todo.pop() {
        for &d in deductions {
            if d <= q && !seen[usize::from(q - d)] {
                seen[usize::from(q - d)] = true;
                todo.push(q - d);
            }
        }
    }
    (0..=q_init).rev().filter(|&q| seen[usize::from(q)]).collect()
}

impl BlockQuotas {
    /// Quotas for `blocks` blocks under `model`, at most `max_levels` levels (>= 2): Q_init,
    /// the highest reachable ones below it, and 0.
    pub fn new(model: &ReliabilityModel, blocks: u32, max_levels: usize, selector: ModeSelector) -> BlockQuotas {
        BlockQuotas {
            levels: kept_levels(model, max_levels),
            block_q: vec![model.q_init(); blocks as usize],
            victims_offchip_by_quota: 0,
            victims_copyback: 0,
            selector,
            pacing: GcPacing::ErasedPages,
            plane_blocks: (0, 0.0),
        }
    }

    /// The levels kept, highest first.
    pub fn levels(&self) -> &[u16] {
        &self.levels
    }

    /// The index of the highest kept level at or below `q`.
    fn level_at_most(&self, q: u16) -> usize {
        self.levels.iter().position(|&l| l <= q).expect("0 is a level")
    }

    /// Quota of block `b`.
    pub fn quota(&self, b: BlockId) -> u16 {
        self.block_q[b as usize]
    }

    /// Block `b` was opened for level `level` (its first page programmed there).
    pub fn opened(&mut self, b: BlockId, level: usize) {
        self.block_q[b as usize] = self.levels[level];
    }

    /// Where `victim`'s valid pages go: by copy-back into level `Some(i)`, or off-chip into
    /// level 0 (Q_init) with `None`; `flash` gives its class and P/E count.
    pub fn destination(&self, flash: &FlashArray, victim: BlockId) -> (usize, bool) {
        let m = flash.reliability().expect("rcftl runs with the reliability model");
        let q = self.block_q[victim as usize];
        match m.deduction(flash.reliability_class(victim), flash.pe_cycles(victim)) {
            Some(d) if d <= q => (self.level_at_most(q - d), true),
            _ => (0, false),
        }
    }

    /// Where this step of the GC job on `plane` sends its victim's pages, the quota and then
    /// the mode selector consulted: the destination level (0, Q_init, when off-chip) and why.
    /// `urgent`: foreground GC; `load`: the write buffer's mean utilisation; `starting`: the
    /// victim's first move (its decision is counted).
    pub fn migration(
        &mut self,
        flash: &FlashArray,
        victim: BlockId,
        urgent: bool,
        load: Option<f64>,
        starting: bool,
    ) -> (usize, Migration) {
        let (level, quota_allows) = self.destination(flash, victim);
        let plane = flash.geometry().plane_of(flash.geometry().first_page(victim));
        let copyback = quota_allows && self.selector.copy_back(plane, urgent, load, starting);
        if starting {
            if copyback {
                self.victims_copyback += 1;
            } else if !quota_allows {
                self.victims_offchip_by_quota += 1;
            }
        }
        match (quota_allows, copyback) {
            (_, true) => (level, Migration::Copyback),
            (false, _) => (0, Migration::OffChipByQuota),
            (true, false) => (0, Migration::OffChipBySelector),
        }
    }

    /// Victims moved by copy-back and off-chip (by quota or by the selector) so far.
    pub fn victims_by_mode(&self) -> (u64, u64) {
        (self.victims_copyback, self.victims_offchip_by_quota + self.selector.background_offchip)
    }

    /// Zero the victim counts (a measured run starts).
    pub fn reset_counts(&mut self) {
        self.victims_copyback = 0;
        self.victims_offchip_by_quota = 0;
        self.selector.reset_counts();
    }

    /// Block `b` was erased: a free block, counted at Q_init until a stream opens it.
    pub fn erased(&mut self, b: BlockId) {
        self.block_q[b as usize] = self.levels[0];
    }

    /// rcFTL's metrics by name (docs/metrics.md).
    pub fn put_metrics(&self, m: &mut serde_json::Map<String, serde_json::Value>) {
        m.insert("rcftl_quota_levels".into(), self.levels.len().into());
        let open = self.levels.len() + 1;
        m.insert("rcftl_open_blocks_per_plane".into(), open.into());
        let (blocks, spare) = self.plane_blocks;
        if blocks > 0 {
            m.insert("rcftl_open_blocks_plane_share".into(), r6(open as f64 / f64::from(blocks)).into());
            m.insert("rcftl_open_blocks_spare_share".into(), r6(open as f64 / spare).into());
        }
        m.insert("rcftl_gc_pacing".into(), serde_json::to_value(self.pacing).expect("a name"));
        let (copyback, offchip) = self.victims_by_mode();
        m.insert("rcftl_victims_copyback".into(), copyback.into());
        m.insert("rcftl_victims_offchip".into(), offchip.into());
        m.insert("rcftl_victims_offchip_by_quota".into(), self.victims_offchip_by_quota.into());
        self.selector.put_metrics(m);
        let mut hist = serde_json::Map::new();
        for &l in &self.levels {
            let n = self.block_q.iter().filter(|&&q| q == l).count();
            hist.insert(l.to_string(), n.into());
        }
        m.insert("rcftl_blocks_by_quota".into(), hist.into());
    }

    /// After a power cut: every block holding data at quota 0 (its pages move off-chip next).
    pub fn forget(&mut self, flash: &FlashArray) {
        for (b, q) in self.block_q.iter_mut().enumerate() {
            *q = if flash.write_pointer(b as BlockId) > 0 { 0 } else { self.levels[0] };
        }
    }

    /// Every valid page's quota on flash covers its block's (the quota the FTL will spend).
    pub fn check(&self, flash: &FlashArray) {
        let m = flash.reliability().expect("model on");
        let g = flash.geometry();
        for b in 0..g.blocks() {
            let first: Ppn = g.first_page(b);
            for p in first..first + flash.write_pointer(b) {
                if flash.is_valid(p) {
                    assert!(
                        self.block_q[b as usize] <= m.q_init() - flash.quota_spent(p),
                        "block {b} quota {} above what page {p} has left ({})",
                        self.block_q[b as usize],
                        m.q_init() - flash.quota_spent(p)
                    );
                }
            }
        }
    }
}

/// The per-block quotas decide where a victim's pages go: the open block of the level its
/// quota falls to (a GC stream per level), by copy-back; or off-chip into level 0 (Q_init).
impl GcDestination for BlockQuotas {
    fn gc_streams(&self) -> u32 {
        self.levels.len() as u32
    }

    fn plan(&mut self, flash: &FlashArray, victim: BlockId, urgent: bool, load: Option<f64>, first: bool) -> MovePlan {
        let (level, mode) = self.migration(flash, victim, urgent, load, first);
        MovePlan {
            gc_stream: level as u32,
            copyback: mode == Migration::Copyback,
            refused: mode == Migration::OffChipByQuota,
        }
    }

    /// A host block holds pages at Q_init (level 0); a GC block those of its stream's level.
    fn opened(&mut self, block: BlockId, gc_stream: Option<u32>) {
        BlockQuotas::opened(self, block, gc_stream.unwrap_or(0) as usize);
    }

    fn erased(&mut self, block: BlockId) {
        BlockQuotas::erased(self, block);
    }

    fn begin_measurement(&mut self) {
        self.reset_counts();
    }

    fn put_metrics(&self, m: &mut serde_json::Map<String, serde_json::Value>) {
        BlockQuotas::put_metrics(self, m);
    }

    /// Victims by migration mode per interval (Fig. 9's shares over time).
    fn series(&self) -> Vec<SeriesValue> {
        let (copyback, offchip) = self.victims_by_mode();
        vec![
            SeriesValue { name: "victims_copyback", value: copyback, kind: SeriesKind::Count },
            SeriesValue { name: "victims_offchip", value: offchip, kind: SeriesKind::Count },
        ]
    }

    fn check(&self, flash: &FlashArray) {
        BlockQuotas::check(self, flash);
    }

    fn recovered(&mut self, flash: &FlashArray) {
        self.forget(flash);
    }

    fn take_settings(&mut self, configured: &BlockQuotas) {
        self.selector.take_settings(&configured.selector);
        self.pacing = configured.pacing;
        self.plane_blocks = configured.plane_blocks;
    }

    fn paces_by_erased_pages(&self) -> bool {
        self.pacing == GcPacing::ErasedPages
    }
}

/// Open blocks per plane (registry capability): one per host stream and one per quota level
/// kept (`[ftl.rcftl] quota_levels`, at most the reachable ones).
pub fn open_blocks_per_plane(cfg: &DriveConfig) -> u32 {
    let max = RcftlOptions::of(cfg).unwrap_or_default().quota_levels.max();
    // A config without a valid model is refused before rcFTL runs; until then the default
    // model's levels stand in.
    let model =
        cfg.reliability.as_ref().and_then(|r| ReliabilityModel::new(r).ok()).unwrap_or_else(|| {
            ReliabilityModel::new(&ReliabilityConfig::default()).expect("the default model is valid")
        });
    cfg.ftl.write_streams + kept_levels(&model, max).len() as u32
}

/// rcFTL on `cfg`'s drive (the registry makes sure it has the reliability model), at most
/// `[ftl.rcftl] quota_levels` quota levels.
pub fn build(cfg: &Resolved) -> Result<PageFtl<BlockQuotas>, ConfigError> {
    let r = cfg.reliability.as_ref().expect("the registry refuses rcftl without [reliability]");
    let model = ReliabilityModel::new(r)?;
    let o = RcftlOptions::of(cfg)?;
    let d = cfg.derived();
    let write_behind =
        cfg.host.write_buffer_policy == WriteBufferPolicy::WriteBehind && d.write_buffer_pages.unwrap_or(0) > 0;
    let off_because = if !o.mode_selector {
        Some("[ftl.rcftl] mode_selector = false (rcFTL-)")
    } else if !write_behind {
        Some(
            "no write-behind buffer to read (host.write_buffer_policy = \"write_behind\" with host.write_buffer_bytes)",
        )
    } else {
        None
    };
    let selector = ModeSelector::new(cfg.geometry.planes(), o.mode_threshold, off_because);
    let mut quotas = BlockQuotas::new(&model, cfg.geometry.blocks(), o.quota_levels.max(), selector);
    quotas.pacing = o.gc_pacing;
    let g = &cfg.geometry;
    let spare = f64::from(g.blocks_per_plane) - f64::from(d.logical_pages) / f64::from(g.planes() * g.pages_per_block);
    quotas.plane_blocks = (g.blocks_per_plane, spare);
    PageFtl::with_destination(cfg, "rcftl", quotas)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ftlsim_core::reliability::CTT_ONE_YEAR;

    /// Table I's 1-year deductions reach 26 levels from 60 (the paper's Q_init): checked here so
    /// the docs' figure stays true.
    fn one_year_levels() -> usize {
        let q = 60u16;
        let mut ds: Vec<u16> = CTT_ONE_YEAR.iter().flatten().filter(|&&v| v > 0).map(|&v| q / u16::from(v)).collect();
        ds.sort_unstable();
        ds.dedup();
        reachable(q, &ds).len()
    }

    #[test]
    fn levels_are_bounded_and_rounding_only_lowers_a_quota() {
        assert_eq!(one_year_levels(), 26);
        let m = ReliabilityModel::new(&ReliabilityConfig::default()).unwrap();
        let all = BlockQuotas::new(&m, 4, 64, ModeSelector::new(1, 0.5, None));
        assert_eq!(all.levels().len(), 26);
        let q = BlockQuotas::new(&m, 4, 8, ModeSelector::new(1, 0.5, None));
        assert_eq!(q.levels(), &[60, 48, 45, 40, 36, 33, 30, 0]);
        // 60 - 12 = 48 kept; 48 - 20 = 28 -> 0 (the next kept level down is 0); 45 - 12 = 33.
        assert_eq!(q.levels()[q.level_at_most(48)], 48);
        assert_eq!(q.levels()[q.level_at_most(28)], 0);
        assert_eq!(q.levels()[q.level_at_most(33)], 33);
    }

    /// Fig. 5 with the paper's numbers scaled: a victim of quota Q and deduction dQ sends its
    /// pages by copy-back to level Q - dQ, or off-chip to Q_init when dQ > Q.
    #[test]
    fn a_victim_goes_to_its_quota_less_its_deduction_or_off_chip() {
        let g = ftlsim_core::geometry::Geometry {
            channels: 1,
            chips_per_channel: 1,
            dies_per_chip: 1,
            planes_per_die: 1,
            blocks_per_plane: 4,
            pages_per_block: 4,
            page_size_bytes: 4096,
            spare_bytes_per_page: 64,
            spare_usable_bytes: 16,
        };
        let m = ReliabilityModel::new(&ReliabilityConfig::default()).unwrap();
        let mut f = FlashArray::new(&g, false);
        // Blocks: best, median, worst, worst (at 0 cycles: CT 5, 5, 3, 3; dQ 12, 12, 20, 20).
        f.enable_reliability(m.clone(), vec![0, 1, 2, 2]);
        let mut q = BlockQuotas::new(&m, 4, 64, ModeSelector::new(1, 0.5, None));
        let level = |q: &BlockQuotas, l: u16| q.levels().iter().position(|&x| x == l).unwrap();
        assert_eq!(q.destination(&f, 0), (level(&q, 48), true));
        q.opened(2, level(&q, 40));
        assert_eq!(q.destination(&f, 2), (level(&q, 20), true), "40 - 20");
        q.opened(3, level(&q, 12));
        assert_eq!(q.destination(&f, 3), (0, false), "12 < 20: off-chip, back to Q_init");
        q.opened(1, level(&q, 12));
        assert_eq!(q.destination(&f, 1), (level(&q, 0), true), "12 - 12 = 0: one last copy-back");
        q.opened(1, level(&q, 0));
        assert_eq!(q.destination(&f, 1), (0, false));
    }
}
