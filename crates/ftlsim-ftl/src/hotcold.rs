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
//! - two host streams per plane (cold, hot) and one GC stream: blocks hold one temperature,
//!   and what GC moves (data that stayed valid: cold by construction) goes to its own block;
//! - round-robin plane allocation; foreground GC on the written plane when its free blocks
//!   fall below `ftl.gc_threshold_blocks`, greedy (or `ftl.gc_victim`) victims, whole victims
//!   moved within the plane (`ftl.gc_copy`); no idle-time GC;
//! - power loss: the full scan of the page FTL (the map comes back from the spare areas); the
//!   update counters lived in DRAM and restart at zero.
//!
//! Departures: Hsieh et al. count in a multi-hash table of 4-bit counters (a few KB of SRAM);
//! an exact byte per logical page is simpler and is what `mapping_sram_bytes` charges.

use crate::options::{invalid, Options};
use ftlsim_core::big_array;
use ftlsim_core::config::{DriveConfig, GcCopy, Resolved};
use ftlsim_core::error::{ConfigError, SimError};
use ftlsim_core::flash::{FlashArray, Oob, PageKind};
use ftlsim_core::ftl::{FlashCtx, Ftl, GcCounts, Recovery, SeriesKind, SeriesValue};
use ftlsim_core::gc::{BlockManager, GcStep, Relocate};
use ftlsim_core::geometry::{Geometry, Lpn, PlaneId, Ppn, NONE};
use ftlsim_core::recovery;
use ftlsim_core::scheduler::Tag;
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

/// Block streams per plane: the two host temperatures and GC.
const COLD: u32 = 0;
const HOT: u32 = 1;
const GC: u32 = 2;
const STREAMS: u32 = 3;

/// Open blocks per plane (registry capability): cold, hot and GC.
pub fn open_blocks_per_plane(_: &DriveConfig) -> u32 {
    STREAMS
}

/// Host page writes by temperature (`hotcold_hot_writes`, `hotcold_cold_writes`).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
struct Writes {
    hot: u64,
    cold: u64,
}

/// The hot/cold FTL.
#[derive(Serialize, Deserialize)]
pub struct HotCold {
    geo: Geometry,
    /// Logical page -> physical page (NONE: never written or trimmed).
    #[serde(deserialize_with = "ftlsim_core::big_array::deserialize")]
    map: Vec<Ppn>,
    /// Writes per logical page since its counter last aged (saturating).
    updates: Vec<u8>,
    hot_updates: u8,
    decay_writes: u64,
    writes_since_decay: u64,
    bm: BlockManager,
    next_plane: PlaneId,
    threshold: u32,
    copyback: bool,
    gc: GcCounts,
    writes: Writes,
}

/// GC moves a victim's valid pages into its plane's GC stream and remaps them.
struct Mover<'a> {
    map: &'a mut [Ppn],
    bm: &'a mut BlockManager,
    copyback: bool,
    moved: &'a mut u64,
}

impl Relocate for Mover<'_> {
    fn relocate(&mut self, ctx: &mut FlashCtx, src: Ppn, oob: Oob) -> Result<(), SimError> {
        let g = ctx.flash().geometry();
        let (plane, parity) = (g.plane_of(src), g.page_in_block(src) % 2);
        let dst = self.bm.allocate(ctx.flash(), plane, GC)?;
        // Under the same-parity rule a copy-back needs a destination of the source's parity;
        // the page goes through the controller otherwise.
        let parity_ok = !ctx.flash().copyback_same_parity() || ctx.flash().geometry().page_in_block(dst) % 2 == parity;
        ctx.copy_read(src, oob, dst, self.copyback && parity_ok)?;
        assert_eq!(self.map[oob.lpn as usize], src, "lpn {} maps elsewhere than its valid page {src}", oob.lpn);
        self.map[oob.lpn as usize] = dst;
        ctx.invalidate(src)?;
        self.bm.on_invalidate(ctx.flash(), src);
        *self.moved += 1;
        Ok(())
    }
}

/// The hot/cold FTL on `cfg`'s drive.
pub fn build(cfg: &Resolved) -> Result<HotCold, ConfigError> {
    HotCold::new(cfg)
}

impl HotCold {
    /// Build for a resolved config (`[ftl.hotcold]`).
    pub fn new(cfg: &Resolved) -> Result<HotCold, ConfigError> {
        let d = cfg.derived();
        let o = HotColdOptions::of(cfg)?;
        // Three open blocks per plane beside the GC reserve.
        cfg.gc_room(d).check("hotcold", STREAMS, 0)?;
        let g = &cfg.geometry;
        Ok(HotCold {
            geo: g.clone(),
            map: big_array::filled(d.logical_pages as usize, NONE),
            updates: vec![0; d.logical_pages as usize],
            hot_updates: o.hot_updates as u8,
            decay_writes: o.decay_writes.unwrap_or(u64::from(d.logical_pages)),
            writes_since_decay: 0,
            bm: BlockManager::new(g, STREAMS, d.held_back_blocks_per_plane, cfg.ftl.gc_victim),
            next_plane: 0,
            threshold: d.gc_threshold_blocks,
            copyback: cfg.ftl.gc_copy == Some(GcCopy::Copyback),
            gc: GcCounts::default(),
            writes: Writes::default(),
        })
    }

    /// The write stream of a write of `lpn` (and count it): hot once written often enough.
    fn temperature(&mut self, lpn: Lpn) -> u32 {
        let n = &mut self.updates[lpn as usize];
        let stream = if *n >= self.hot_updates { HOT } else { COLD };
        *n = n.saturating_add(1);
        self.writes_since_decay += 1;
        if self.writes_since_decay >= self.decay_writes {
            self.writes_since_decay = 0;
            self.updates.iter_mut().for_each(|u| *u /= 2);
        }
        stream
    }

    /// Foreground GC on `plane` until it has `threshold` free blocks: whole victims, best
    /// first, moved within the plane.
    fn ensure_space(&mut self, ctx: &mut FlashCtx, plane: PlaneId) -> Result<(), SimError> {
        let prev = ctx.set_tag(Tag::Gc);
        let mut collections = 0;
        while self.bm.free_blocks(plane) < self.threshold {
            let mut job = self.bm.next_job(&mut None, ctx.flash(), plane, true).ok_or_else(|| {
                SimError::Ftl(format!(
                    "hotcold: plane {plane} is full of valid data and nothing can be reclaimed (raise the \
                     over-provisioning)"
                ))
            })?;
            let mut mover = Mover {
                map: &mut self.map,
                bm: &mut self.bm,
                copyback: self.copyback,
                moved: &mut self.gc.pages_moved,
            };
            let mut steps = 0;
            while job.step(ctx, &mut mover)? == GcStep::Moved {
                steps += 1;
                assert!(steps <= self.geo.pages_per_block, "GC of block {} does not end", job.victim);
            }
            self.bm.release(ctx.flash(), job.victim);
            self.gc.foreground_collections += 1;
            collections += 1;
            assert!(collections <= self.geo.blocks_per_plane, "plane {plane}: GC made no progress");
        }
        ctx.set_tag(prev);
        Ok(())
    }

    fn unmap(&mut self, ctx: &mut FlashCtx, lpn: Lpn) -> Result<(), SimError> {
        let old = std::mem::replace(&mut self.map[lpn as usize], NONE);
        if old != NONE {
            ctx.invalidate(old)?;
            self.bm.on_invalidate(ctx.flash(), old);
        }
        Ok(())
    }
}

impl Ftl for HotCold {
    fn name(&self) -> &'static str {
        "hotcold"
    }

    fn read(&mut self, ctx: &mut FlashCtx, lpn: Lpn) -> Result<Option<u32>, SimError> {
        match self.map[lpn as usize] {
            NONE => Ok(None),
            ppn => Ok(Some(ctx.read_mapped(ppn, lpn, None)?)),
        }
    }

    fn write(&mut self, ctx: &mut FlashCtx, lpn: Lpn, version: u32) -> Result<(), SimError> {
        let stream = self.temperature(lpn);
        let plane = self.next_plane;
        self.next_plane = (plane + 1) % self.geo.planes();
        self.ensure_space(ctx, plane)?;
        let ppn = self.bm.allocate(ctx.flash(), plane, stream)?;
        ctx.program(ppn, Oob { lpn, version, kind: PageKind::Data })?;
        // The old copy goes only once the new one is on flash: a power cut in between
        // must not lose both.
        self.unmap(ctx, lpn)?;
        self.map[lpn as usize] = ppn;
        match stream {
            HOT => self.writes.hot += 1,
            _ => self.writes.cold += 1,
        }
        Ok(())
    }

    fn trim(&mut self, ctx: &mut FlashCtx, lpn: Lpn) -> Result<(), SimError> {
        self.unmap(ctx, lpn)
    }

    fn background_step(&mut self, _ctx: &mut FlashCtx) -> Result<bool, SimError> {
        Ok(false)
    }

    fn gc_counts(&self) -> GcCounts {
        self.gc.clone()
    }

    fn free_blocks(&self) -> u64 {
        self.bm.free_blocks_total()
    }

    fn mapping_sram_bytes(&self) -> u64 {
        // A 4-byte physical page number and a 1-byte update counter per logical page.
        self.map.len() as u64 * 5
    }

    fn begin_measurement(&mut self) {
        self.writes = Writes::default();
    }

    /// The time series' own columns: host pages written hot and cold in each interval.
    fn series(&self) -> Vec<SeriesValue> {
        vec![
            SeriesValue { name: "hot_writes", value: self.writes.hot, kind: SeriesKind::Count },
            SeriesValue { name: "cold_writes", value: self.writes.cold, kind: SeriesKind::Count },
        ]
    }

    fn extra_metrics(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m = serde_json::Map::new();
        m.insert("hotcold_hot_writes".into(), self.writes.hot.into());
        m.insert("hotcold_cold_writes".into(), self.writes.cold.into());
        m
    }

    fn check_invariants(&self, flash: &FlashArray) {
        self.bm.check_invariants(flash);
        let mut mapped = 0u64;
        for (lpn, &ppn) in self.map.iter().enumerate() {
            if ppn != NONE {
                mapped += 1;
                assert!(flash.is_valid(ppn), "lpn {lpn} maps to invalid page {ppn}");
                assert_eq!(flash.owner(ppn) as usize, lpn, "page {ppn} holds lpn {} not {lpn}", flash.owner(ppn));
            }
        }
        let valid: u64 = (0..self.geo.blocks()).map(|b| u64::from(flash.valid_count(b))).sum();
        assert_eq!(mapped, valid, "mapped pages {mapped} != valid pages {valid}");
    }

    fn save_state(&self) -> Vec<u8> {
        ftlsim_core::state::encode(self)
    }

    fn load_state(&mut self, bytes: &[u8]) -> Result<(), String> {
        *self = ftlsim_core::state::decode(bytes)?;
        Ok(())
    }

    fn recovery(&mut self) -> Option<&mut dyn Recovery> {
        Some(self)
    }
}

impl Recovery for HotCold {
    /// The page FTL's full scan: every written page's spare area, the newest copy of each
    /// logical page kept, then the blocks' states. The update counters were in DRAM: they
    /// restart at zero, so every page is cold until written again.
    fn recover(&mut self, ctx: &mut FlashCtx, cfg: &Resolved) -> Result<(), SimError> {
        *self = HotCold::new(cfg)?;
        let map = &mut self.map;
        recovery::scan_blocks(ctx, 0..self.geo.blocks(), |flash, ppn, oob| recovery::keep_newest(map, flash, ppn, oob));
        recovery::revalidate_map(ctx, &self.map)?;
        self.bm.rebuild(ctx, |_| u64::MAX)?;
        Ok(())
    }
}
