//! What the demand-based page FTLs (DFTL, CDFTL, SCFTL; seed 001 Sec. 3.3 and Ch. 5) share:
//! the page map kept in translation pages on flash and located by a directory in SRAM (the
//! GTD or TPD), allocation over three write streams (host, translation, GC), on-demand
//! greedy GC whose relocations update mappings through each FTL's own cache, and the
//! thesis's cache-access classes (Sec. 4.1.1). Each FTL supplies only its cache through
//! `DemandFtl`.
//!
//! Write-backs are queued, never programmed in the middle of a cache update: a translation
//! page that an eviction writes back is programmed when the host operation or the GC that
//! raised it ends. Programming may run GC, and GC inserts the entries of the pages it moves
//! into the cache; doing that inside an eviction loop could refill the cache faster than
//! the loop empties it (a tiny cache then never makes room).
//!
//! The GC itself comes in the modes that set DFTL, DLOOP and PCFTL apart (seed 000 Sec.
//! 3.3-3.4), chosen by `GcMode`: per-plane GC by controller copy or copy-back; plane-level
//! GC whose copy-backs keep the same-parity rule by wasting destination pages, with the
//! never-ending GC detected and (PCFTL) broken by one collection without copy-back; and the
//! conventional GC of PCFTL's DFTL baseline, with one active block per chip, moves through
//! the controller into the chip's active block, and all host I/O held meanwhile.
//!
//! GC tells a victim's stale pages (`ftl.invalid_tracking`, seed 001 Table 8.1) by flags in
//! SRAM, by reading each stale page and looking its LPN up (counters only), or with ILog
//! (Ch. 8, L1404: it "can be applied to other page-level FTLs"): host invalidations logged,
//! a victim's flags completed with one IP read, the IPs in a fourth write stream. Stale
//! translation pages are told by the directory, in SRAM, so only data pages are logged.

use crate::fdp::Fdp;
use crate::ilog::on_flash::IlogOnFlash;
use ftlsim_core::config::{Allocation, ForegroundGc, GcCopy, GcScope, InvalidTracking, Resolved};
use ftlsim_core::error::{ConfigError, SimError};
use ftlsim_core::flash::{FlashArray, Oob, PageKind};
use ftlsim_core::ftl::{FlashCtx, GcCounts, OpRef};
use ftlsim_core::gc::{BlockManager, GcJob, GcStep, PlaneGc, Relocate, MIN_FREE_BLOCKS};
use ftlsim_core::gc_driver::{self, Collector, Foreground, SteppedCollector};
use ftlsim_core::geometry::{BlockId, Geometry, Lpn, PlaneId, Ppn, NONE};
use ftlsim_core::scheduler::Tag;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

mod recovery;
pub(crate) use recovery::{recover, restore_scanned};

/// Write stream of host data.
pub(crate) const HOST: u32 = 0;
/// Write stream of translation pages written by the FTL.
pub(crate) const TRANSLATION: u32 = 1;
/// Write stream of data pages moved by GC: a collection opens at most the one block its
/// erase gives back, so GC cannot run a plane out of blocks. Translation pages moved by GC go
/// to the translation stream unless that would open a second block on a plane down to its
/// last free one (`translation_destination`; two GC destinations each needing a fresh block
/// in one collection was found by property tests).
const GC: u32 = 2;
/// Write streams per plane, besides ILog's.
const STREAMS: u32 = 3;
/// Write stream of ILog's invalidation pages (`ftl.invalid_tracking = "ilog"`).
const IP_STREAM: u32 = 3;

/// Cache-access classes (thesis Sec. 4.1.1), translation traffic, and the counters of
/// CDFTL's second level and SCFTL's consecutive entries.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheCounts {
    /// Hits.
    pub hits: u64,
    /// Misses needing neither a fetch nor a write-back.
    pub misses_no_penalty: u64,
    /// Misses that read one translation page and evicted no modified entry.
    pub misses_fetch: u64,
    /// Misses that evicted a modified entry (a translation page write-back).
    pub misses_write_back: u64,
    /// Translation pages read.
    pub translation_reads: u64,
    /// Translation pages written.
    pub translation_writes: u64,
    /// CDFTL: hits in the cached translation pages, also counted in `hits`.
    pub second_level_hits: u64,
    /// SCFTL: cache entries brought in by spatial fetching.
    pub spatial_entries: u64,
    /// SCFTL: consecutive entries split by an update (Fig. 5.2b-d).
    pub splits: u64,
    /// SCFTL: updates merged into the entry of the previous LPN (Fig. 5.2b).
    pub merges: u64,
}

impl CacheCounts {
    /// All mapping-cache accesses.
    pub fn accesses(&self) -> u64 {
        self.hits + self.misses_no_penalty + self.misses_fetch + self.misses_write_back
    }

    /// The metrics every demand-based FTL reports, by name (docs/metrics.md).
    pub(crate) fn put_metrics(&self, m: &mut serde_json::Map<String, serde_json::Value>) {
        let accesses = self.accesses();
        let hit_ratio = if accesses == 0 { 0.0 } else { self.hits as f64 / accesses as f64 };
        m.insert("cache_accesses".into(), accesses.into());
        m.insert("cache_hits".into(), self.hits.into());
        m.insert("cache_misses_no_penalty".into(), self.misses_no_penalty.into());
        m.insert("cache_misses_fetch".into(), self.misses_fetch.into());
        m.insert("cache_misses_write_back".into(), self.misses_write_back.into());
        m.insert("cache_hit_ratio".into(), hit_ratio.into());
        m.insert("cache_miss_ratio".into(), (1.0 - hit_ratio).into());
        m.insert("translation_pages_read".into(), self.translation_reads.into());
        m.insert("translation_pages_written".into(), self.translation_writes.into());
    }
}

/// The [`ftlsim_core::ftl::Ftl`] methods every demand FTL implements alike, through
/// [`DemandFtl`] and its `st: DemandState` field. A blanket `impl<T: DemandFtl> Ftl for T`
/// is not allowed (`Ftl` is a foreign trait), so each FTL's `impl Ftl` expands this.
macro_rules! demand_ftl_methods {
    () => {
        fn read(
            &mut self,
            ctx: &mut ::ftlsim_core::ftl::FlashCtx,
            lpn: ::ftlsim_core::geometry::Lpn,
        ) -> Result<Option<u32>, ::ftlsim_core::error::SimError> {
            $crate::demand::DemandFtl::host_read(self, ctx, lpn)
        }

        fn write(
            &mut self,
            ctx: &mut ::ftlsim_core::ftl::FlashCtx,
            lpn: ::ftlsim_core::geometry::Lpn,
            version: u32,
        ) -> Result<(), ::ftlsim_core::error::SimError> {
            $crate::demand::DemandFtl::host_write(self, ctx, lpn, version)
        }

        fn trim(
            &mut self,
            ctx: &mut ::ftlsim_core::ftl::FlashCtx,
            lpn: ::ftlsim_core::geometry::Lpn,
        ) -> Result<(), ::ftlsim_core::error::SimError> {
            $crate::demand::DemandFtl::host_trim(self, ctx, lpn)
        }

        fn background_step(
            &mut self,
            ctx: &mut ::ftlsim_core::ftl::FlashCtx,
        ) -> Result<bool, ::ftlsim_core::error::SimError> {
            ::ftlsim_core::gc_driver::idle_step(&mut $crate::demand::DemandGc(self), ctx)
        }

        fn gc_counts(&self) -> ::ftlsim_core::ftl::GcCounts {
            self.st.gc.clone()
        }

        fn free_blocks(&self) -> u64 {
            self.st.bm.free_blocks_total()
        }

        fn begin_measurement(&mut self) {
            self.st.cache = $crate::demand::CacheCounts::default();
            self.st.moves = $crate::demand::MoveCounts::default();
            if let Some(il) = self.st.ilog.as_mut() {
                il.ilog.counts = Default::default();
            }
            if let Some(f) = self.st.fdp.as_mut() {
                f.begin_measurement();
            }
        }

        fn save_state(&self) -> Vec<u8> {
            ::ftlsim_core::state::encode(self)
        }

        fn managed_gc(&mut self) -> Option<&mut dyn ::ftlsim_core::ftl::ManagedGc> {
            Some(self)
        }

        fn recovery(&mut self) -> Option<&mut dyn ::ftlsim_core::ftl::Recovery> {
            Some(self)
        }

        fn load_state(&mut self, bytes: &[u8]) -> Result<(), String> {
            let mut loaded: Self = ::ftlsim_core::state::decode(bytes)?;
            $crate::demand::DemandFtl::restore_unsaved(&mut loaded, self);
            *self = loaded;
            Ok(())
        }
    };
}
pub(crate) use demand_ftl_methods;

/// The optional parts every demand FTL has alike ([`ftlsim_core::ftl::ManagedGc`],
/// [`ftlsim_core::ftl::Recovery`]), for the type `$t`.
macro_rules! demand_ftl_parts {
    ($t:ty) => {
        impl ::ftlsim_core::ftl::ManagedGc for $t {
            fn gc_step(
                &mut self,
                ctx: &mut ::ftlsim_core::ftl::FlashCtx,
                plane: ::ftlsim_core::geometry::PlaneId,
            ) -> Result<bool, ::ftlsim_core::error::SimError> {
                ::ftlsim_core::gc_driver::managed_step(&mut $crate::demand::DemandGc(self), ctx, plane)
            }

            fn gc_due(&self) -> bool {
                self.st.gc_due()
            }

            fn spare_blocks(&self, _flash: &::ftlsim_core::flash::FlashArray) -> u64 {
                ::ftlsim_core::ftl::Ftl::free_blocks(self)
            }

            fn gc_next(
                &mut self,
                flash: &::ftlsim_core::flash::FlashArray,
                plane: ::ftlsim_core::geometry::PlaneId,
            ) -> ::ftlsim_core::ftl::GcNext {
                self.st.gc_next(flash, plane)
            }

            fn gc_job_active(&self, plane: ::ftlsim_core::geometry::PlaneId) -> bool {
                self.st.gc_job_active(plane)
            }

            fn gc_repick(
                &mut self,
                flash: &::ftlsim_core::flash::FlashArray,
                plane: ::ftlsim_core::geometry::PlaneId,
            ) -> bool {
                ::ftlsim_core::gc_driver::repick(&mut $crate::demand::DemandGc(self), flash, plane)
            }

            fn gc_copy_step(
                &mut self,
                ctx: &mut ::ftlsim_core::ftl::FlashCtx,
                plane: ::ftlsim_core::geometry::PlaneId,
            ) -> Result<bool, ::ftlsim_core::error::SimError> {
                ::ftlsim_core::gc_driver::copy_step(&mut $crate::demand::DemandGc(self), ctx, plane)
            }
        }

        impl ::ftlsim_core::ftl::Recovery for $t {
            fn checkpoint(
                &mut self,
                ctx: &mut ::ftlsim_core::ftl::FlashCtx,
            ) -> Result<(), ::ftlsim_core::error::SimError> {
                $crate::demand::DemandFtl::checkpoint_all(self, ctx)
            }

            fn recover(
                &mut self,
                ctx: &mut ::ftlsim_core::ftl::FlashCtx,
                cfg: &::ftlsim_core::config::Resolved,
            ) -> Result<(), ::ftlsim_core::error::SimError> {
                if self.st.fdp.is_some() {
                    // Which handle a page belongs to is controller memory the cut takes.
                    return Err(::ftlsim_core::error::SimError::Input(
                        "power-loss recovery under [fdp] is not supported".into(),
                    ));
                }
                // The translation pages' entries and ILog's pages are flash contents; everything
                // else is rebuilt.
                let contents = ::std::mem::take(&mut self.st.flash_map);
                let ilog = self.st.ilog.take().map($crate::ilog::on_flash::IlogOnFlash::after_power_cut);
                *self = $crate::demand::DemandFtl::built_anew(self, cfg)?;
                self.st.ilog = ilog;
                $crate::demand::recover(self, ctx, contents)
            }
        }
    };
}
pub(crate) use demand_ftl_parts;

/// What a plane-level GC that freed no page leads to (seed 000 Sec. 3.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum NeverEnding {
    /// The next collection moves pages without copy-back (PCFTL, Fig. 9 lines 27-29).
    Fallback,
    /// Keep collecting; a plane that goes `blocks_per_plane` collections in a row without
    /// progress stops the run with an error (DLOOP has no fix; a real drive would hang).
    Stop,
}

/// How a demand-based FTL collects: the paper's differences between DFTL, DLOOP and PCFTL.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub(crate) struct GcMode {
    /// Host I/O held in this scope while foreground GC runs.
    pub scope: GcScope,
    /// Valid pages move by intra-plane copy-back where the destination is on their plane.
    pub copyback: bool,
    /// A copy-back whose destination has the other parity wastes that page and takes the
    /// next one (PCFTL Sec. 3.2-3.3); otherwise the page moves through the controller.
    pub waste_for_parity: bool,
    /// One active block per chip and write stream; GC moves pages into the chip's GC block,
    /// usually on another plane (PCFTL Sec. 3.3, Fig. 7a).
    pub per_chip: bool,
    /// What a collection without progress leads to.
    pub never_ending: NeverEnding,
    /// Idle-time GC on planes with fewer free blocks than this (0 = none).
    pub background_threshold: u32,
}

impl GcMode {
    /// Per-plane GC with the shared policy keys (`ftl.gc_copy`, `ftl.gc_scope`,
    /// `ftl.background_gc`), pages moved within their plane.
    pub fn per_plane(cfg: &Resolved) -> Result<GcMode, ConfigError> {
        Ok(GcMode {
            scope: cfg.ftl.gc_scope.unwrap_or(GcScope::Plane),
            copyback: cfg.ftl.gc_copy == Some(GcCopy::Copyback),
            waste_for_parity: false,
            per_chip: false,
            never_ending: NeverEnding::Stop,
            background_threshold: background_threshold(cfg),
        })
    }

    /// The conventional GC of PCFTL's DFTL baseline (seed 000 Sec. 3.3, Fig. 7a): one active
    /// block per chip, pages moved through the controller, all host I/O held (unless
    /// `ftl.gc_copy` / `ftl.gc_scope` say otherwise).
    pub fn conventional(cfg: &Resolved) -> Result<GcMode, ConfigError> {
        Ok(GcMode { scope: cfg.ftl.gc_scope.unwrap_or(GcScope::Device), per_chip: true, ..GcMode::per_plane(cfg)? })
    }

    /// Plane-level GC (PGC, seed 000 Sec. 3.3-3.4): one plane collected, pages moved by
    /// copy-back within it, parity kept by wasting pages, other planes serving the host.
    pub fn plane_level(cfg: &Resolved, never_ending: NeverEnding) -> Result<GcMode, ConfigError> {
        Ok(GcMode {
            copyback: cfg.ftl.gc_copy.unwrap_or(GcCopy::Copyback) == GcCopy::Copyback,
            waste_for_parity: true,
            never_ending,
            ..GcMode::per_plane(cfg)?
        })
    }
}

/// The idle-time GC threshold, 0 when `ftl.background_gc` is off.
pub(crate) fn background_threshold(cfg: &Resolved) -> u32 {
    if cfg.ftl.background_gc {
        cfg.derived().background_gc_threshold_blocks
    } else {
        0
    }
}

/// GC page moves by kind, and the collections that freed no page.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MoveCounts {
    /// Intra-plane copy-backs.
    pub copybacks: u64,
    /// Moves through the controller to a page of the same plane.
    pub controller_same_plane: u64,
    /// Moves through the controller to another plane (inter-plane copies, Fig. 5).
    pub inter_plane: u64,
    /// Destination pages wasted to keep copy-back parity.
    pub wasted_pages: u64,
    /// Collections (foreground or idle-time) that used as many destination pages, moves and
    /// parity waste, as their victim gave back: they freed nothing.
    pub no_progress_collections: u64,
    /// Stale pages of victims GC read to learn they were stale (`ftl.invalid_tracking =
    /// "counters"`, seed 001 L1187).
    pub stale_pages_read: u64,
    /// The cache lookups of their LPNs that told it.
    pub validation_lookups: u64,
}

/// The state a demand-based FTL keeps besides its cache.
#[derive(Serialize, Deserialize)]
pub(crate) struct DemandState {
    pub geo: Geometry,
    /// Mapping entries per translation page (4 bytes each).
    pub per_tp: u32,
    /// Where each translation page is on flash (the GTD or TPD), NONE before its first write.
    pub directory: Vec<Ppn>,
    /// The page map as the translation pages on flash hold it.
    #[serde(deserialize_with = "ftlsim_core::big_array::deserialize")]
    pub flash_map: Vec<Ppn>,
    /// Per translation page, the backup stamp its newest copy carries in its spare area
    /// (seed 001 Fig. 8.1's MinPSN; see `recovery`).
    backup: Vec<u32>,
    pub bm: BlockManager,
    pub in_gc: bool,
    pub gc: GcCounts,
    pub cache: CacheCounts,
    pub moves: MoveCounts,
    /// Plane choice for host pages; translation pages always go round-robin.
    allocation: Allocation,
    mode: GcMode,
    /// Round-robin plane pointer per write stream (chip pointer in per-chip mode): with one
    /// shared pointer, a fixed number of translation writes per host write could pin host
    /// data to one plane.
    next_plane: Vec<u32>,
    /// Per-chip mode: the plane holding each chip's active block, by `stream * chips + chip`.
    chip_plane: Vec<PlaneId>,
    /// Flexible Data Placement (`[fdp]`, docs/fdp.md): handle 0 writes into the host and GC
    /// streams, handle `h` > 0 into its own host stream (and, persistently isolated, GC
    /// stream) after the others ([`DemandState::fdp_base`]).
    pub fdp: Option<Fdp>,
    threshold: u32,
    /// Per plane: its next (or current) collection moves pages without copy-back, because
    /// the last one there freed nothing (PCFTL's fallback).
    no_copyback: Vec<bool>,
    /// Per plane: its last idle-time collection freed nothing and the mode has no fallback
    /// (DLOOP), so idle-time GC leaves it alone until foreground GC collects there again.
    idle_stalled: Vec<bool>,
    /// Per plane: destination pages (programmed or wasted) GC has used for its victims, and
    /// the count when the collection under way there began: a collection frees space when it
    /// used fewer pages than its victim gives back, whatever the host did meanwhile.
    gc_pages_used: Vec<u64>,
    job_start_used: Vec<u64>,
    bg_cursor: u32,
    pending_write_back: BTreeSet<u32>,
    /// Each plane's collection under way (a suspended job, a parked victim).
    plane_gc: PlaneGc,
    /// The FTL's registered name (not in snapshots: the FTL being loaded has it).
    #[serde(skip)]
    pub name: &'static str,
    /// The translation read of the latest fetch in this batch: a host read of the data it
    /// located waits for it (valid within one batch only, so never in a snapshot).
    #[serde(skip)]
    fetched: Option<OpRef>,
    /// One victim per foreground trigger (`ftl.foreground_gc = "incremental"`).
    incremental: bool,
    /// How GC learns which pages of a victim are stale.
    pub tracking: InvalidTracking,
    /// Per plane: the victim whose stale pages were read (counters) or whose flags were
    /// completed (ILog), NONE after its erase.
    validated: Vec<BlockId>,
    /// ILog, with `ftl.invalid_tracking = "ilog"`.
    pub ilog: Option<IlogOnFlash>,
}

impl DemandState {
    /// A plane is below the GC threshold: the next write would collect first.
    pub(crate) fn gc_due(&self) -> bool {
        (0..self.geo.planes()).any(|p| self.bm.free_blocks(p) < self.threshold)
    }

    /// What the next collection step on `plane` does (a parked victim's erase first).
    pub(crate) fn gc_next(&mut self, flash: &FlashArray, plane: PlaneId) -> ftlsim_core::ftl::GcNext {
        self.plane_gc.next_step(&mut self.bm, flash, plane)
    }

    /// A collection is part-way on `plane`.
    pub(crate) fn gc_job_active(&self, plane: PlaneId) -> bool {
        self.plane_gc.active(plane)
    }

    /// State for a validated config; `name` is the FTL's, for errors; `allocation` the host
    /// page placement when the config leaves it to the FTL.
    pub fn new(
        cfg: &Resolved,
        name: &'static str,
        mode: GcMode,
        allocation: Allocation,
    ) -> Result<DemandState, ConfigError> {
        let d = cfg.derived();
        let g = &cfg.geometry;
        let per_tp = g.page_size_bytes / 4;
        let allocation = cfg.ftl.allocation.unwrap_or(allocation);
        if mode.per_chip && !matches!(allocation, Allocation::RoundRobin | Allocation::StaticLpn) {
            return Err(ConfigError::Invalid {
                key: "ftl.allocation".into(),
                value: serde_json::to_string(&allocation).unwrap_or_default(),
                rule: "must be static_lpn or round_robin with [ftl.dftl] gc = \"conventional\": its one active \
                       block per chip decides the plane of whatever the LPN does not"
                    .into(),
            });
        }
        let translation_pages = d.logical_pages.div_ceil(per_tp);
        let ilog = IlogOnFlash::for_config(cfg, IP_STREAM, name)?;
        let fdp = cfg.fdp.as_ref().map(|f| Fdp::new(f.handles, f.handle_type, g.blocks(), d.logical_pages));
        if fdp.is_some() && mode.per_chip {
            return Err(ConfigError::Invalid {
                key: "fdp".into(),
                value: "[fdp]".into(),
                rule: format!("{name}: placement handles need plane-level GC (not [ftl.dftl] gc = \"conventional\")"),
            });
        }
        // Handle 0 takes the host and GC streams; the others streams of their own after them.
        let fdp_streams = fdp.as_ref().map_or(0, |f| f.handles() - 1 + f.gc_streams() - 1);
        let streams = STREAMS + u32::from(ilog.is_some()) + fdp_streams;
        // Host, translation and GC blocks stay open, and the translation pages take room in
        // the planes (round-robin): the drive-level check in `derive` counts neither.
        let background_threshold =
            cfg.gc_room(d).check(name, streams, u64::from(translation_pages.div_ceil(g.planes())))?;
        let mode = GcMode {
            background_threshold: if mode.background_threshold == 0 { 0 } else { background_threshold },
            ..mode
        };
        Ok(DemandState {
            geo: g.clone(),
            per_tp,
            directory: vec![NONE; translation_pages as usize],
            backup: vec![0; translation_pages as usize],
            flash_map: ftlsim_core::big_array::filled(d.logical_pages as usize, NONE),
            bm: BlockManager::new(g, streams, d.held_back_blocks_per_plane, cfg.ftl.gc_victim),
            in_gc: false,
            gc: GcCounts::default(),
            cache: CacheCounts::default(),
            moves: MoveCounts::default(),
            allocation,
            mode,
            next_plane: vec![0; streams as usize],
            chip_plane: (0..STREAMS).flat_map(|_| 0..g.chips()).collect(),
            fdp,
            threshold: d.gc_threshold_blocks,
            no_copyback: vec![false; g.planes() as usize],
            idle_stalled: vec![false; g.planes() as usize],
            gc_pages_used: vec![0; g.planes() as usize],
            job_start_used: vec![0; g.planes() as usize],
            bg_cursor: 0,
            pending_write_back: BTreeSet::new(),
            plane_gc: PlaneGc::new(g.planes()),
            name,
            fetched: None,
            incremental: cfg.ftl.foreground_gc == ForegroundGc::Incremental,
            tracking: cfg.ftl.invalid_tracking,
            validated: vec![NONE; g.planes() as usize],
            ilog,
        })
    }

    /// Translation page holding the entry of `lpn`.
    pub fn tp_of(&self, lpn: Lpn) -> u32 {
        lpn / self.per_tp
    }

    /// Translation pages of the whole chip: the thesis sizes the directory over all of them
    /// (Table 5.2: 512 entries for the 8 GB chip).
    pub fn chip_translation_pages(&self) -> u64 {
        u64::from(self.geo.blocks()) * u64::from(self.geo.pages_per_block) / u64::from(self.per_tp)
    }

    /// GC metadata (reported apart): one validity bit per physical page (Table 5.2), one
    /// 1-byte invalid counter per block (Table 8.1's 4 KB), or ILog's BIFT and BIFQ.
    pub fn gc_metadata_bytes(&self) -> u64 {
        if let Some(il) = &self.ilog {
            return il.ilog.sram_bytes();
        }
        let (blocks, ppb) = (u64::from(self.geo.blocks()), u64::from(self.geo.pages_per_block));
        crate::threedftl::sram::gc_metadata_bytes(self.tracking, blocks, ppb)
    }

    /// Read translation page `tvpn` for a fetch, if it exists; whether it did.
    pub fn fetch(&mut self, ctx: &mut FlashCtx, tvpn: u32) -> Result<bool, SimError> {
        let tp = self.directory[tvpn as usize];
        if tp == NONE {
            return Ok(false);
        }
        let prev = ctx.set_tag(Tag::Mapping);
        ctx.read(tp)?;
        self.fetched = ctx.last_op();
        ctx.set_tag(prev);
        self.cache.translation_reads += 1;
        Ok(true)
    }

    /// GC page moves by kind (docs/metrics.md), counted since the measurement began.
    pub(crate) fn put_move_metrics(&self, m: &mut serde_json::Map<String, serde_json::Value>) {
        let v = &self.moves;
        m.insert("gc_copybacks".into(), v.copybacks.into());
        m.insert("gc_controller_copies_same_plane".into(), v.controller_same_plane.into());
        m.insert("gc_inter_plane_copies".into(), v.inter_plane.into());
        m.insert("gc_parity_wasted_pages".into(), v.wasted_pages.into());
        m.insert("gc_no_progress_collections".into(), v.no_progress_collections.into());
        m.insert("gc_stale_pages_read".into(), v.stale_pages_read.into());
        m.insert("gc_validation_lookups".into(), v.validation_lookups.into());
        if let Some(il) = &self.ilog {
            il.put_metrics(m);
        }
        if let Some(f) = &self.fdp {
            m.insert("fdp".into(), f.metrics(u64::from(self.geo.page_size_bytes)));
        }
    }

    fn next_plane(&mut self, flash: &FlashArray, stream: u32) -> PlaneId {
        let units = if self.mode.per_chip { self.geo.chips() } else { self.geo.planes() };
        let p = self.next_plane[stream as usize];
        self.next_plane[stream as usize] = (p + 1) % units;
        if self.mode.per_chip {
            self.chip_plane(flash, stream, p)
        } else {
            p
        }
    }

    /// Per-chip mode: the plane of `chip`'s active block for `stream`. When that block is
    /// full, the next one comes from the chip's plane with the most free blocks.
    fn chip_plane(&mut self, flash: &FlashArray, stream: u32, chip: u32) -> PlaneId {
        let chips = self.geo.chips();
        let slot = (stream * chips + chip) as usize;
        let p = self.chip_plane[slot];
        let ppb = self.geo.pages_per_block;
        if self.bm.active(p, stream).is_some_and(|b| flash.write_pointer(b) < ppb) {
            return p;
        }
        self.bm.close_if_full(flash, p, stream);
        let per_chip = self.geo.planes() / chips;
        let start = (p - chip) / chips;
        // Ties go to the first plane after the current one, so blocks rotate over the chip.
        let best = (1..=per_chip)
            .map(|i| chip + ((start + i) % per_chip) * chips)
            .enumerate()
            .max_by_key(|&(i, q)| (self.bm.free_blocks(q), std::cmp::Reverse(i)))
            .map(|(_, q)| q)
            .expect("a chip has planes");
        self.chip_plane[slot] = best;
        best
    }

    /// The planes one foreground GC looks after: `plane`, or in per-chip mode every plane
    /// of its chip (the chip's blocks are one pool there: GC moves pages between its planes).
    fn gc_unit(&self, plane: PlaneId) -> impl Iterator<Item = PlaneId> {
        let chips = self.geo.chips();
        let (first, step, n) = if self.mode.per_chip {
            (self.geo.chip_of(plane), chips, self.geo.planes() / chips)
        } else {
            (plane, 1, 1)
        };
        (0..n).map(move |k| first + k * step)
    }

    /// `plane`'s GC unit is below its threshold: a write there collects first.
    fn short_of_space(&self, plane: PlaneId) -> bool {
        self.unit_free_blocks(plane) < self.unit_threshold(plane)
    }

    fn unit_free_blocks(&self, plane: PlaneId) -> u32 {
        self.gc_unit(plane).map(|q| self.bm.free_blocks(q)).sum()
    }

    fn unit_threshold(&self, plane: PlaneId) -> u32 {
        self.threshold * self.gc_unit(plane).count() as u32
    }

    fn unit_free_pages(&self, flash: &FlashArray, plane: PlaneId) -> u64 {
        self.gc_unit(plane).map(|q| self.bm.free_pages(flash, q)).sum()
    }

    /// The plane of `plane`'s GC unit to collect next: one with a suspended job, else the
    /// one whose best victim has the fewest valid pages.
    fn unit_victim_plane(&mut self, flash: &FlashArray, plane: PlaneId) -> PlaneId {
        if !self.mode.per_chip {
            return plane;
        }
        if let Some(q) = self.gc_unit(plane).find(|&q| self.plane_gc.suspended(q)) {
            return q;
        }
        let mut best = (u32::MAX, plane);
        for q in self.gc_unit(plane) {
            if let Some(b) = self.bm.peek_victim(flash, q, true) {
                best = best.min((flash.valid_count(b), q));
            }
        }
        best.1
    }

    /// A page of `stream` on `plane` if its open block has room or the plane keeps a free
    /// block for GC after opening one; `None` otherwise.
    fn allocate_leaving_one(
        &mut self,
        flash: &FlashArray,
        plane: PlaneId,
        stream: u32,
    ) -> Option<Result<Ppn, SimError>> {
        let room = self.bm.active(plane, stream).is_some_and(|b| flash.write_pointer(b) < self.geo.pages_per_block);
        (room || self.bm.free_blocks(plane) >= 2).then(|| self.bm.allocate(flash, plane, stream))
    }

    /// The first stream after the host, translation, GC and ILog streams: FDP handles 1 and
    /// on write there, their host streams first, then (persistently isolated) their GC streams.
    fn fdp_base(&self) -> u32 {
        STREAMS + u32::from(self.ilog.is_some())
    }

    /// The FDP handle and host stream of a write placed on `placement` (without `[fdp]`:
    /// handle 0, the host stream).
    fn host_stream(&self, placement: u16) -> (u32, u32) {
        match &self.fdp {
            Some(f) if placement > 0 => {
                let h = f.handle(placement);
                (h, self.fdp_base() + h - 1)
            }
            _ => (0, HOST),
        }
    }

    /// The GC stream of the data pages moved out of `victim`: GC's, or (persistently
    /// isolated) the victim's handle's.
    fn gc_stream(&self, victim: BlockId) -> u32 {
        match self.fdp.as_ref().map(|f| (f.gc_stream(victim), f.handles())) {
            Some((h, handles)) if h > 0 => self.fdp_base() + handles - 1 + h - 1,
            _ => GC,
        }
    }

    /// The parity of the page GC would program next on `plane` into `stream` when it moves
    /// pages there by copy-back under the same-parity rule (a fresh block starts even), else
    /// `None`.
    fn copyback_parity(&self, flash: &FlashArray, plane: PlaneId, stream: u32) -> Option<u32> {
        let m = &self.mode;
        if !(m.copyback
            && m.waste_for_parity
            && !m.per_chip
            && !self.no_copyback[plane as usize]
            && flash.copyback_same_parity())
        {
            return None;
        }
        let wp = self.bm.active(plane, stream).map_or(0, |b| flash.write_pointer(b));
        Some(if wp >= self.geo.pages_per_block { 0 } else { wp % 2 })
    }

    /// Where GC moves the valid page `src`, and whether by copy-back. Plane-level GC may
    /// waste destination pages to keep copy-back parity (PCFTL Sec. 3.3).
    fn gc_destination(&mut self, ctx: &mut FlashCtx, src: Ppn) -> Result<(Ppn, bool), SimError> {
        let g = &self.geo;
        let (src_plane, ppb) = (g.plane_of(src), g.pages_per_block);
        let parity = g.page_in_block(src) % 2;
        let stream = self.gc_stream(g.block_of(src));
        let plane = if self.mode.per_chip {
            let chip = g.chip_of(src_plane);
            self.chip_plane(ctx.flash(), GC, chip)
        } else {
            src_plane
        };
        loop {
            let dst = self.bm.allocate(ctx.flash(), plane, stream)?;
            self.gc_pages_used[src_plane as usize] += 1;
            let idx = self.geo.page_in_block(dst);
            let copyback = self.mode.copyback && !self.no_copyback[src_plane as usize] && plane == src_plane;
            let parity_ok = !ctx.flash().copyback_same_parity() || idx % 2 == parity;
            // Wasting the last page of a block opens another; a plane down to its last free
            // block keeps that one for the rest of the collection.
            let may_waste = idx + 1 < ppb || self.bm.free_blocks(plane) >= 2;
            if copyback && !parity_ok && self.mode.waste_for_parity && may_waste {
                ctx.skip_page(dst)?;
                self.moves.wasted_pages += 1;
                continue;
            }
            let copyback = copyback && parity_ok;
            match (copyback, plane == src_plane) {
                (true, _) => self.moves.copybacks += 1,
                (false, true) => self.moves.controller_same_plane += 1,
                (false, false) => self.moves.inter_plane += 1,
            }
            return Ok((dst, copyback));
        }
    }

    /// Where GC moves the valid translation page `src`: a translation block (through the
    /// controller), so translation pages stay in blocks that begin with one, where recovery
    /// looks for them (seed 001 Fig. 8.1, line 5); its own plane's, else the next plane's
    /// that can take it without opening its last free block (a collection may take only one
    /// new block on its plane), else its own plane's last free block when the plane's GC
    /// block has room for every page the victim has left (the collection then needs no
    /// other). `None` when none can: the page then goes with the data into the GC stream,
    /// and recovery, not finding it where it looks, reads every block.
    fn translation_destination(&mut self, flash: &FlashArray, src: Ppn) -> Option<Result<Ppn, SimError>> {
        let (from, planes) = (self.geo.plane_of(src), self.geo.planes());
        for plane in (0..planes).map(|i| (from + i) % planes) {
            if let Some(dst) = self.allocate_leaving_one(flash, plane, TRANSLATION) {
                if plane == from {
                    self.gc_pages_used[plane as usize] += 1;
                    self.moves.controller_same_plane += 1;
                } else {
                    self.moves.inter_plane += 1;
                }
                return Some(dst);
            }
        }
        let ppb = self.geo.pages_per_block;
        let gc_stream = self.gc_stream(self.geo.block_of(src));
        let gc_room = self.bm.active(from, gc_stream).map_or(0, |b| ppb - flash.write_pointer(b));
        // Parity waste may take a destination page per page moved.
        let left = flash.valid_count(self.geo.block_of(src)) * if self.mode.waste_for_parity { 2 } else { 1 };
        if self.mode.per_chip || self.bm.free_blocks(from) == 0 || gc_room < left {
            return None;
        }
        self.gc_pages_used[from as usize] += 1;
        self.moves.controller_same_plane += 1;
        Some(self.bm.allocate(flash, from, TRANSLATION))
    }

    /// The host replaced or trimmed the data page `ppn`: its plane has new garbage, so idle
    /// GC may try it again.
    fn invalidate_host_page(&mut self, ctx: &mut FlashCtx, ppn: Ppn) -> Result<(), SimError> {
        ctx.invalidate(ppn)?;
        self.bm.on_invalidate(ctx.flash(), ppn);
        self.idle_stalled[self.geo.plane_of(ppn) as usize] = false;
        match self.ilog.as_mut() {
            Some(il) => il.invalidated(ctx, &mut self.bm, ppn),
            None => Ok(()),
        }
    }

    /// Note that a collection starts on `plane` (unless it resumes a suspended one).
    fn start_collection(&mut self, plane: PlaneId) {
        if !self.plane_gc.suspended(plane) {
            self.job_start_used[plane as usize] = self.gc_pages_used[plane as usize];
        }
    }

    /// Book a finished collection of a victim on `plane` (`urgent`: in the foreground). One in
    /// idle time that freed nothing, without a fallback (DLOOP), leaves the plane to
    /// foreground GC (`idle_stalled`); a foreground one lets idle time back in.
    fn collection_ends(&mut self, plane: PlaneId, urgent: bool) {
        let progress = self.finish_collection(plane);
        if urgent {
            self.idle_stalled[plane as usize] = false;
        } else if !progress && self.mode.never_ending == NeverEnding::Stop {
            self.idle_stalled[plane as usize] = true;
        }
    }

    /// Book a finished collection of a victim on `plane`; whether it freed space: it used
    /// fewer destination pages (moves and parity waste) than the erased victim gives back.
    /// One that freed nothing is the never-ending GC's symptom (Fig. 9's `old_state ==
    /// current_state`): with the fallback, the plane's next collection moves without
    /// copy-back; a fallback collection clears it.
    fn finish_collection(&mut self, plane: PlaneId) -> bool {
        let fallback = std::mem::take(&mut self.no_copyback[plane as usize]);
        if fallback {
            self.gc.fallbacks += 1;
        }
        let used = self.gc_pages_used[plane as usize] - self.job_start_used[plane as usize];
        let progress = used < u64::from(self.geo.pages_per_block);
        if !progress {
            self.moves.no_progress_collections += 1;
            if self.mode.never_ending == NeverEnding::Fallback && self.mode.copyback && !fallback {
                self.no_copyback[plane as usize] = true;
            }
        }
        progress
    }

    /// The consistency of the map, the directory and the flash; `current` is the FTL's
    /// mapping of an LPN (cache first, then `flash_map`); `other_valid` valid pages belong to
    /// blocks lent out of the block manager (WAFTL's zone and block-mapped blocks).
    pub fn check_invariants(&self, flash: &FlashArray, current: impl Fn(Lpn) -> Ppn, other_valid: u64) {
        self.bm.check_invariants(flash);
        if let Some(f) = &self.fdp {
            f.check(flash, self.geo.blocks());
        }
        let mut mapped = 0u64;
        for lpn in 0..self.flash_map.len() as Lpn {
            let ppn = current(lpn);
            if ppn == NONE {
                continue;
            }
            mapped += 1;
            assert!(flash.is_valid(ppn), "lpn {lpn} maps to invalid page {ppn}");
            assert_eq!(flash.read(ppn).expect("mapped page readable").lpn, lpn, "page {ppn} holds another lpn");
        }
        let mut tps = 0u64;
        for (tvpn, &ppn) in self.directory.iter().enumerate() {
            if ppn != NONE {
                tps += 1;
                let oob = flash.read(ppn).expect("translation page readable");
                assert_eq!((oob.kind, oob.lpn as usize), (PageKind::Translation, tvpn), "directory {tvpn} -> {ppn}");
            }
        }
        let ips = self.ilog.as_ref().map_or(0, |il| il.check_invariants(flash));
        let valid: u64 = (0..self.geo.blocks()).map(|b| u64::from(flash.valid_count(b))).sum();
        assert_eq!(
            mapped + tps + ips + other_valid,
            valid,
            "mapped data {mapped} + translation pages {tps} + IPs {ips} + {other_valid} elsewhere != valid pages {valid}"
        );
        assert!(self.pending_write_back.is_empty(), "write-backs left pending after GC");
    }
}

/// A demand-based FTL: its cache, over the shared [`DemandState`].
pub(crate) trait DemandFtl {
    /// The same FTL built anew from `cfg` (recovery starts from it).
    fn built_anew(&self, cfg: &Resolved) -> Result<Self, ConfigError>
    where
        Self: Sized;
    /// After a snapshot loaded into a copy, take back what snapshots do not hold (the
    /// registered name) from the FTL being loaded.
    fn restore_unsaved(&mut self, from: &Self)
    where
        Self: Sized,
    {
        self.state_mut().name = from.state().name;
    }
    fn state(&self) -> &DemandState;
    fn state_mut(&mut self) -> &mut DemandState;
    /// The mapping of `lpn`: its cached entry, else the flash map.
    fn current(&self, lpn: Lpn) -> Ppn;
    /// Prefetch what [`DemandFtl::current`] of `lpn` reads (GC announces its next moves).
    fn prefetch_entry(&self, lpn: Lpn) {
        ftlsim_core::big_array::prefetch(&self.state().flash_map, lpn as usize);
    }
    /// Look the entry of `lpn` up for the host, fetching it on a miss.
    fn access(&mut self, ctx: &mut FlashCtx, lpn: Lpn) -> Result<Ppn, SimError>;
    /// The host changed the mapping of `lpn` (cached, modified).
    fn remap(&mut self, ctx: &mut FlashCtx, lpn: Lpn, ppn: Ppn) -> Result<(), SimError>;
    /// GC moved data page `lpn` to `dst`: update it through the cache, classifying the access.
    fn relocated(&mut self, ctx: &mut FlashCtx, lpn: Lpn, dst: Ppn) -> Result<(), SimError>;
    /// Whether the cache holds a modified entry of translation page `tvpn` (one the flash map
    /// does not have yet).
    fn has_modified_entries(&self, tvpn: u32) -> bool;
    /// Put every modified cached entry of translation page `tvpn` in the flash map, the
    /// cached entries staying (clean); its write-back is the caller's.
    fn clean_entries(&mut self, tvpn: u32);
    /// Whether rewriting a translation page reads the old copy first (not when the cache
    /// holds the whole page).
    fn rewrite_reads_old(&self) -> bool {
        true
    }

    fn host_read(&mut self, ctx: &mut FlashCtx, lpn: Lpn) -> Result<Option<u32>, SimError> {
        self.state_mut().fetched = None;
        let mut ppn = self.access(ctx, lpn)?;
        // The data read waits for the translation read that located it.
        let located = self.state_mut().fetched.take();
        if !self.state().pending_write_back.is_empty() {
            // Queued write-backs may run GC, which may move the page.
            self.flush_write_backs(ctx, true)?;
            ppn = self.current(lpn);
        }
        if ppn == NONE {
            return Ok(None);
        }
        Ok(Some(ctx.read_mapped(ppn, lpn, located)?))
    }

    fn host_write(&mut self, ctx: &mut FlashCtx, lpn: Lpn, version: u32) -> Result<(), SimError> {
        self.access(ctx, lpn)?;
        self.flush_write_backs(ctx, true)?;
        let s = self.state();
        let (handle, stream) = s.host_stream(ctx.placement());
        // GC keeps pages in their plane, so the old copy's plane is stable until it is replaced.
        let ppn = match s.allocation {
            Allocation::StaticLpn => self.allocate_in(ctx, lpn % s.geo.planes(), stream)?,
            Allocation::UpdateInPlane => match self.current(lpn) {
                NONE => self.allocate(ctx, stream)?,
                old => self.allocate_in(ctx, s.geo.plane_of(old), stream)?,
            },
            Allocation::RoundRobin => self.allocate(ctx, stream)?,
            Allocation::Dynamic => match self.allocate_dynamic(ctx, stream)? {
                Some(ppn) => ppn,
                None => self.allocate(ctx, stream)?,
            },
        };
        // The new copy first: with ILog the invalidation may program an IP flagging the old
        // one, and a cut between the two must not leave neither (found by crash fuzzing).
        ctx.program(ppn, Oob { lpn, version, kind: PageKind::Data })?;
        let s = self.state_mut();
        if let Some(f) = s.fdp.as_mut() {
            f.host_write(lpn, handle, s.geo.block_of(ppn), s.geo.page_in_block(ppn), ctx.time());
        }
        // GC during the allocation may have moved the old copy: invalidate where it is now.
        let old = self.current(lpn);
        if old != NONE {
            self.state_mut().invalidate_host_page(ctx, old)?;
        }
        self.remap(ctx, lpn, ppn)?;
        self.flush_write_backs(ctx, true)
    }

    fn host_trim(&mut self, ctx: &mut FlashCtx, lpn: Lpn) -> Result<(), SimError> {
        self.access(ctx, lpn)?;
        self.flush_write_backs(ctx, true)?;
        let old = self.current(lpn);
        if old != NONE {
            self.state_mut().invalidate_host_page(ctx, old)?;
            self.remap(ctx, lpn, NONE)?;
        }
        self.flush_write_backs(ctx, true)
    }

    /// [`ftlsim_core::ftl::Ftl::checkpoint`]: every modified entry to the flash map and every
    /// translation page rewritten, those mapping nothing yet included: a translation page
    /// never written has no backup point, and recovery would have to read every block to
    /// find its data (a formatted drive holds its whole, empty, map).
    fn checkpoint_all(&mut self, ctx: &mut FlashCtx) -> Result<(), SimError> {
        self.flush_write_backs(ctx, true)?;
        for tvpn in 0..self.state().directory.len() as u32 {
            self.clean_entries(tvpn);
            self.write_back(tvpn);
        }
        self.flush_write_backs(ctx, true)?;
        // GC run by those programs remaps the pages it moves, leaving modified entries of
        // pages already written: written again, so that every copy's backup is the shutdown
        // (a copy written with modified entries keeps an older backup). Each round rewrites
        // only what the last one's GC touched.
        let tps = self.state().directory.len() as u32;
        for _ in 0..tps {
            let stale: Vec<u32> = (0..tps).filter(|&t| self.has_modified_entries(t)).collect();
            if stale.is_empty() {
                return Ok(());
            }
            for tvpn in stale {
                self.clean_entries(tvpn);
                self.write_back(tvpn);
            }
            self.flush_write_backs(ctx, true)?;
        }
        Err(SimError::Ftl(format!("{}: the shutdown's write-backs never stopped raising GC", self.state().name)))
    }

    /// Queue translation page `tvpn` for rewriting after its modified entries went to
    /// `flash_map` (batch update); see the module header for when it is programmed.
    fn write_back(&mut self, tvpn: u32) {
        self.state_mut().pending_write_back.insert(tvpn);
    }

    /// Rewrite translation page `tvpn`, reading the old copy first where the FTL must;
    /// `may_gc`: the allocation may collect (not while GC's queued write-backs drain).
    fn program_translation(&mut self, ctx: &mut FlashCtx, tvpn: u32, may_gc: bool) -> Result<(), SimError> {
        let prev = ctx.set_tag(Tag::Mapping);
        let old = self.state().directory[tvpn as usize];
        let mut read = None;
        if old != NONE && self.rewrite_reads_old() {
            ctx.read(old)?;
            read = ctx.last_op();
            self.state_mut().cache.translation_reads += 1;
        }
        let ppn = if may_gc { self.allocate(ctx, TRANSLATION)? } else { self.allocate_now(ctx, TRANSLATION)? };
        // The backup stamp (recovery's MinPSN): with no modified entry of this page left in
        // the cache, the copy holds every change made so far, so only pages programmed after
        // it can be newer; otherwise the stamp of the copy before, whose promise still holds.
        let backup = if self.has_modified_entries(tvpn) {
            self.state().backup[tvpn as usize]
        } else {
            ctx.flash().stamp_clock()
        };
        // The new copy holds the old one's entries: its program waits for their read.
        ctx.program_after(ppn, Oob { lpn: tvpn, version: backup, kind: PageKind::Translation }, read)?;
        let s = self.state_mut();
        s.backup[tvpn as usize] = backup;
        // GC during the allocation may have moved the old copy.
        let old = s.directory[tvpn as usize];
        if old != NONE {
            ctx.invalidate(old)?;
            s.bm.on_invalidate(ctx.flash(), old);
        }
        s.directory[tvpn as usize] = ppn;
        s.cache.translation_writes += 1;
        ctx.set_tag(prev);
        Ok(())
    }

    /// A page of `stream` after foreground GC made room. The last free block of a plane is
    /// left to GC (which needs one to relocate into): GC's own deferred writes may have
    /// used the room it made, so the plane is checked again and the next one tried.
    fn allocate(&mut self, ctx: &mut FlashCtx, stream: u32) -> Result<Ppn, SimError> {
        let planes = self.state().geo.planes();
        for _ in 0..2 * planes {
            let plane = self.state_mut().next_plane(ctx.flash(), stream);
            self.ensure_space(ctx, plane)?;
            if let Some(ppn) = self.state_mut().allocate_leaving_one(ctx.flash(), plane, stream) {
                return ppn;
            }
        }
        Err(SimError::Ftl(format!("{}: every plane is down to its last free block", self.state().name)))
    }

    /// Dynamic allocation of a host page (when timed): the least loaded plane; if it needs
    /// foreground GC, GC starts there and the page goes to the least loaded plane that can
    /// take it without GC, or to the collected one, whichever frees first (as the page
    /// FTL). `None` when untimed or no plane qualifies.
    fn allocate_dynamic(&mut self, ctx: &mut FlashCtx, stream: u32) -> Result<Option<Ppn>, SimError> {
        if !ctx.is_timed() {
            return Ok(None);
        }
        let s = self.state_mut();
        let planes = s.geo.planes();
        let from = s.next_plane[stream as usize];
        let p = ctx.least_loaded_plane((0..planes).map(|i| (from + i) % planes)).unwrap_or(from);
        s.next_plane[stream as usize] = (p + 1) % planes;
        let needs_gc = s.bm.free_blocks(p) < s.threshold;
        if needs_gc {
            self.ensure_space(ctx, p)?;
        }
        let s = self.state_mut();
        let q = if needs_gc {
            let candidates = (1..planes)
                .map(|i| (p + i) % planes)
                .filter(|&q| s.bm.free_blocks(q) >= MIN_FREE_BLOCKS)
                .chain(std::iter::once(p));
            ctx.least_loaded_plane(candidates).unwrap_or(p)
        } else {
            p
        };
        s.allocate_leaving_one(ctx.flash(), q, stream).transpose()
    }

    /// A host page in `plane`, after foreground GC there made room.
    fn allocate_in(&mut self, ctx: &mut FlashCtx, plane: PlaneId, stream: u32) -> Result<Ppn, SimError> {
        // GC's queued write-backs, flushed as it ends, may take the room it made: collect again.
        // In per-chip mode the chip may have room while this plane, fed by the LPNs that map
        // to it, has none: then it is collected alone, a block at most per page it gains.
        let tries = if self.state().mode.per_chip { 4 + 2 * self.state().geo.pages_per_block } else { 4 };
        for _ in 0..tries {
            self.ensure_space(ctx, plane)?;
            if let Some(ppn) = self.state_mut().allocate_leaving_one(ctx.flash(), plane, stream) {
                return ppn;
            }
            if self.state().mode.per_chip && !self.collect_plane(ctx, plane)? {
                break;
            }
        }
        Err(SimError::Ftl(format!("{}: plane {plane} stays down to its last free block", self.state().name)))
    }

    /// One foreground collection of `plane` alone (per-chip mode, for a plane its chip's GC
    /// left short); whether there was a victim.
    fn collect_plane(&mut self, ctx: &mut FlashCtx, plane: PlaneId) -> Result<bool, SimError> {
        let prev = ctx.set_tag(Tag::Gc);
        self.state_mut().in_gc = true;
        let r = gc_driver::collect_one(&mut DemandGc(self), ctx, plane);
        let s = self.state_mut();
        s.in_gc = false;
        if matches!(r, Ok(true)) {
            ctx.block_scope(plane, s.mode.scope);
        }
        ctx.set_tag(prev);
        if !r? {
            return Ok(false);
        }
        self.flush_write_backs(ctx, false)?;
        Ok(true)
    }

    /// A page of `stream` without GC (used while GC's deferred write-backs are flushed).
    /// Prefers planes whose open block has room, then planes that keep two free blocks
    /// after opening one (GC may open a data and a translation block); when every plane is
    /// low, it collects first.
    fn allocate_now(&mut self, ctx: &mut FlashCtx, stream: u32) -> Result<Ppn, SimError> {
        let s = self.state_mut();
        let (planes, ppb) = (s.geo.planes(), s.geo.pages_per_block);
        let start = s.next_plane[stream as usize];
        let order = || (0..planes).map(move |i| (start + i) % planes);
        let has_room = |p: PlaneId| s.bm.active(p, stream).is_some_and(|b| ctx.flash().write_pointer(b) < ppb);
        match order().find(|&p| has_room(p)).or_else(|| order().find(|&p| s.bm.free_blocks(p) >= 3)) {
            Some(p) => {
                // In per-chip mode the pointer walks chips.
                s.next_plane[stream as usize] =
                    if s.mode.per_chip { (s.geo.chip_of(p) + 1) % s.geo.chips() } else { (p + 1) % planes };
                s.bm.allocate(ctx.flash(), p, stream)
            }
            // Every plane is low: collect first (flushes run outside GC, so this nests once).
            None => {
                assert!(!s.in_gc, "allocate_now inside GC with every plane low");
                self.allocate(ctx, stream)
            }
        }
    }

    /// One step of GC job `job` (a page move or the erase); with invalid counters only, the
    /// victim's stale pages are read and looked up first, with ILog its flags completed.
    fn gc_job_step(&mut self, ctx: &mut FlashCtx, job: &mut GcJob) -> Result<GcStep, SimError> {
        let plane = self.state().geo.plane_of_block(job.victim) as usize;
        if self.state().validated[plane] != job.victim {
            match self.state().tracking {
                InvalidTracking::Flags => {}
                InvalidTracking::Counters => self.read_stale_pages(ctx, job.victim)?,
                InvalidTracking::Ilog => {
                    let s = self.state_mut();
                    s.validated[plane] = job.victim;
                    s.ilog.as_mut().expect("ILog on").validate(ctx, &mut s.bm, job.victim)?;
                }
            }
        }
        let step = job.step(ctx, &mut Mover { ftl: self })?;
        if step == GcStep::Erased {
            let s = self.state_mut();
            s.bm.release(ctx.flash(), job.victim);
            s.validated[plane] = NONE;
            if let Some(f) = s.fdp.as_mut() {
                f.erased(job.victim, s.geo.pages_per_block, ctx.time());
            }
            if let Some(il) = s.ilog.as_mut() {
                il.erased(job.victim);
            }
        }
        Ok(step)
    }

    /// With only an invalid counter per block (Table 8.1), GC cannot tell a victim's stale
    /// pages from its valid ones: it reads each page's spare area and looks its LPN up
    /// (L1187: "GC must read every page ... and remap it", which can miss in the cache and
    /// write back). The valid pages are read by their moves; here the stale ones. A stale
    /// translation page is told by the directory, in SRAM.
    fn read_stale_pages(&mut self, ctx: &mut FlashCtx, victim: BlockId) -> Result<(), SimError> {
        let first = self.state().geo.first_page(victim);
        let plane = self.state().geo.plane_of_block(victim) as usize;
        self.state_mut().validated[plane] = victim;
        for off in 0..ctx.flash().write_pointer(victim) {
            let p = first + off;
            if ctx.flash().is_valid(p) {
                continue;
            }
            let Some(oob) = ctx.read_spare(p) else { continue };
            self.state_mut().moves.stale_pages_read += 1;
            if oob.kind == PageKind::Data {
                self.access(ctx, oob.lpn)?;
                self.state_mut().moves.validation_lookups += 1;
            }
        }
        Ok(())
    }

    /// Foreground GC on `plane` until it has `threshold` free blocks, then the write-backs
    /// the collections queued. Host I/O in the mode's scope waits for it.
    fn ensure_space(&mut self, ctx: &mut FlashCtx, plane: PlaneId) -> Result<(), SimError> {
        let s = self.state_mut();
        if s.in_gc || !s.short_of_space(plane) {
            return Ok(());
        }
        let prev = ctx.set_tag(Tag::Gc);
        s.in_gc = true;
        let r = gc_driver::collect_until(&mut DemandGc(self), ctx, plane);
        let s = self.state_mut();
        s.in_gc = false;
        ctx.block_scope(plane, s.mode.scope);
        ctx.set_tag(prev);
        if r?.0 == Foreground::NothingToReclaim && s.bm.free_blocks(plane) == 0 {
            return Err(SimError::Ftl(format!("{}: plane {plane} has no free block and nothing to reclaim", s.name)));
        }
        self.flush_write_backs(ctx, false)
    }

    /// Program the queued write-backs, unless GC is running (it flushes them when it ends).
    /// `may_gc`: their allocations may collect; not while a collection's own queue drains,
    /// which would nest GC.
    fn flush_write_backs(&mut self, ctx: &mut FlashCtx, may_gc: bool) -> Result<(), SimError> {
        if self.state().in_gc {
            return Ok(());
        }
        while let Some(tvpn) = self.state_mut().pending_write_back.pop_first() {
            self.program_translation(ctx, tvpn, may_gc)?;
        }
        Ok(())
    }
}

/// A demand FTL as the GC driver sees it ([`ftlsim_core::gc_driver`]): its GC unit (a plane,
/// or a chip's planes in per-chip mode), the never-ending GC check, the victim validation of
/// each invalid tracking, and the write-backs GC defers.
pub(crate) struct DemandGc<'a, F: ?Sized>(pub &'a mut F);

impl<F: DemandFtl + ?Sized> Collector for DemandGc<'_, F> {
    fn next_victim(&mut self, flash: &FlashArray, plane: PlaneId) -> Option<GcJob> {
        let s = self.0.state_mut();
        s.plane_gc.next_job(&mut s.bm, flash, plane, true)
    }

    fn gc_steps(&mut self, ctx: &mut FlashCtx, job: &mut GcJob, _urgent: bool, steps: u32) -> Result<GcStep, SimError> {
        let mut s = self.0.gc_job_step(ctx, job)?;
        for _ in 1..steps {
            if s == GcStep::Erased {
                break;
            }
            s = self.0.gc_job_step(ctx, job)?;
        }
        Ok(s)
    }

    fn gc_counts_mut(&mut self) -> &mut GcCounts {
        &mut self.0.state_mut().gc
    }

    fn short_of_space(&self, _flash: &FlashArray, plane: PlaneId) -> bool {
        self.0.state().short_of_space(plane)
    }

    fn room(&self, flash: &FlashArray, plane: PlaneId) -> u64 {
        self.0.state().unit_free_pages(flash, plane)
    }

    fn one_victim_enough(&self, plane: PlaneId) -> bool {
        let s = self.0.state();
        s.incremental && s.unit_free_blocks(plane) >= MIN_FREE_BLOCKS * s.gc_unit(plane).count() as u32
    }

    fn victim_plane(&mut self, flash: &FlashArray, plane: PlaneId) -> PlaneId {
        self.0.state_mut().unit_victim_plane(flash, plane)
    }

    fn collection_starts(&mut self, plane: PlaneId) {
        self.0.state_mut().start_collection(plane);
    }

    fn collection_ends(&mut self, plane: PlaneId, urgent: bool) {
        self.0.state_mut().collection_ends(plane, urgent);
    }

    /// Never-ending GC: the plane has not passed its best erased-page count for a plane's
    /// worth of collections (Fig. 8's State 1-4 loop, or a longer cycle through several
    /// victims whose gains and waste cancel; Fig. 9's `old_state == current_state`).
    fn stalled(&self, _flash: &FlashArray, plane: PlaneId, collections: u32) -> Result<(), SimError> {
        let s = self.0.state();
        Err(SimError::Ftl(if s.mode.waste_for_parity {
            format!(
                "{}: never-ending GC on plane {plane}: {} collections without freeing a page \
                 (seed 000 Sec. 3.4: copy-back parity waste eats what each collection frees; \
                 pcftl falls back to GC without copy-back)",
                s.name,
                s.geo.blocks_per_plane + 1
            )
        } else {
            format!("{}: GC on plane {plane} made no progress in {collections} collections", s.name)
        }))
    }
}

impl<F: DemandFtl + ?Sized> SteppedCollector for DemandGc<'_, F> {
    fn plane_gc(&mut self) -> (&mut PlaneGc, &mut BlockManager) {
        let s = self.0.state_mut();
        (&mut s.plane_gc, &mut s.bm)
    }

    fn idle_cursor(&mut self) -> &mut u32 {
        &mut self.0.state_mut().bg_cursor
    }

    /// A job suspended there, or fewer free blocks than the mode's background threshold on
    /// a plane whose last idle collection freed something; nothing with idle GC off.
    fn idle_wanted(&self, plane: PlaneId) -> bool {
        let s = self.0.state();
        let t = s.mode.background_threshold;
        t > 0 && (s.plane_gc.suspended(plane) || (s.bm.free_blocks(plane) < t && !s.idle_stalled[plane as usize]))
    }

    /// Only with flags: the other trackings validate one victim at a time.
    fn may_switch_victim(&self) -> bool {
        self.0.state().tracking == InvalidTracking::Flags
    }

    /// The new victim's collection is booked from here (the old one's moves are its own).
    fn victim_switched(&mut self, plane: PlaneId) {
        let s = self.0.state_mut();
        s.job_start_used[plane as usize] = s.gc_pages_used[plane as usize];
    }

    fn in_gc(&mut self, running: bool) {
        self.0.state_mut().in_gc = running;
    }

    fn after_step(&mut self, ctx: &mut FlashCtx) -> Result<(), SimError> {
        self.0.flush_write_backs(ctx, false)
    }
}

/// GC relocation: data pages remap through the FTL's cache, translation pages through the
/// directory.
struct Mover<'a, F: ?Sized> {
    ftl: &'a mut F,
}

impl<F: DemandFtl + ?Sized> Relocate for Mover<'_, F> {
    fn relocate(&mut self, ctx: &mut FlashCtx, src: Ppn, oob: Oob) -> Result<(), SimError> {
        let s = self.ftl.state_mut();
        if oob.kind == PageKind::Log {
            let il = s.ilog.as_mut().expect("invalidation pages only with ILog");
            let dst = il.relocate(ctx, &mut s.bm, src, oob)?;
            if s.geo.plane_of(dst) == s.geo.plane_of(src) {
                s.gc_pages_used[s.geo.plane_of(src) as usize] += 1;
                s.moves.controller_same_plane += 1;
            } else {
                s.moves.inter_plane += 1;
            }
            s.gc.pages_moved += 1;
            return Ok(());
        }
        let (dst, copyback) = match oob.kind {
            PageKind::Translation => match s.translation_destination(ctx.flash(), src) {
                Some(dst) => (dst?, false),
                None => s.gc_destination(ctx, src)?,
            },
            _ => s.gc_destination(ctx, src)?,
        };
        ctx.copy_read(src, oob, dst, copyback)?;
        ctx.invalidate(src)?;
        s.bm.on_invalidate(ctx.flash(), src);
        s.gc.pages_moved += 1;
        if oob.kind == PageKind::Translation {
            assert_eq!(s.directory[oob.lpn as usize], src, "translation page {} moved from a stale copy", oob.lpn);
            s.directory[oob.lpn as usize] = dst;
            return Ok(());
        }
        if let Some(f) = s.fdp.as_mut() {
            f.gc_move(oob.lpn, s.geo.block_of(dst), ctx.time());
        }
        assert_eq!(self.ftl.current(oob.lpn), src, "lpn {} moved from a stale copy", oob.lpn);
        self.ftl.relocated(ctx, oob.lpn, dst)
    }

    fn wanted_parity(&self, flash: &FlashArray, victim: BlockId) -> Option<u32> {
        let s = self.ftl.state();
        s.copyback_parity(flash, s.geo.plane_of_block(victim), s.gc_stream(victim))
    }

    fn prefetch(&self, lpn: Lpn) {
        self.ftl.prefetch_entry(lpn);
    }
}
