//! What the demand-based page FTLs (DFTL, CDFTL, SCFTL; seed 001 Sec. 3.3 and Ch. 5) share:
//! the page map kept in translation pages on flash and located by a directory in SRAM (the
//! GTD or TPD), allocation over three write streams (host, translation, GC), on-demand
//! greedy GC whose relocations update mappings through each FTL's own cache, and the
//! thesis's cache-access classes (Sec. 4.1.1). Each FTL supplies only its cache through
//! [`DemandFtl`].
//!
//! Write-backs are queued, never programmed in the middle of a cache update: a translation
//! page that an eviction writes back is programmed when the host operation or the GC that
//! raised it ends. Programming may run GC, and GC inserts the entries of the pages it moves
//! into the cache; doing that inside an eviction loop could refill the cache faster than
//! the loop empties it (a tiny cache then never makes room).

use ftlsim_core::config::{Allocation, DriveConfig, GcCopy};
use ftlsim_core::error::{ConfigError, SimError};
use ftlsim_core::flash::{FlashArray, Oob, PageKind};
use ftlsim_core::ftl::{FlashCtx, GcCounts};
use ftlsim_core::gc::{BlockManager, GcJob, GcStep, Relocate};
use ftlsim_core::geometry::{Geometry, Lpn, PlaneId, Ppn, NONE};
use ftlsim_core::scheduler::Tag;
use std::collections::BTreeSet;

/// Write stream of host data.
pub(crate) const HOST: u32 = 0;
/// Write stream of translation pages written by the FTL.
pub(crate) const TRANSLATION: u32 = 1;
/// Write stream of pages moved by GC, whatever their kind: a collection then opens at most
/// the one block its erase gives back, so GC cannot run a plane out of blocks (two GC
/// destinations could each need a fresh block in one collection; found by property tests).
const GC: u32 = 2;

/// Cache-access classes (thesis Sec. 4.1.1), translation traffic, and the counters of
/// CDFTL's second level and SCFTL's consecutive entries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
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

/// The state a demand-based FTL keeps besides its cache.
pub(crate) struct DemandState {
    pub geo: Geometry,
    /// Mapping entries per translation page (4 bytes each).
    pub per_tp: u32,
    /// Where each translation page is on flash (the GTD or TPD), NONE before its first write.
    pub directory: Vec<Ppn>,
    /// The page map as the translation pages on flash hold it.
    pub flash_map: Vec<Ppn>,
    pub bm: BlockManager,
    pub in_gc: bool,
    pub gc: GcCounts,
    pub cache: CacheCounts,
    /// Plane choice for host pages; translation pages always go round-robin.
    allocation: Allocation,
    /// Round-robin plane pointer per write stream: with one shared pointer, a fixed number
    /// of translation writes per host write could pin host data to one plane.
    next_plane: [u32; 3],
    threshold: u32,
    copyback: bool,
    pending_write_back: BTreeSet<u32>,
    jobs: Vec<Option<GcJob>>,
    name: &'static str,
}

impl DemandState {
    /// State for a validated config; `name` is the FTL's, for errors.
    pub fn new(cfg: &DriveConfig, name: &'static str) -> Result<DemandState, ConfigError> {
        let d = cfg.derive()?;
        let g = &cfg.geometry;
        let per_tp = g.page_size_bytes / 4;
        Ok(DemandState {
            geo: g.clone(),
            per_tp,
            directory: vec![NONE; d.logical_pages.div_ceil(per_tp) as usize],
            flash_map: vec![NONE; d.logical_pages as usize],
            bm: BlockManager::new(g, 3, d.held_back_blocks_per_plane, cfg.ftl.gc_victim),
            in_gc: false,
            gc: GcCounts::default(),
            cache: CacheCounts::default(),
            allocation: cfg.ftl.allocation,
            next_plane: [0; 3],
            threshold: d.gc_threshold_blocks,
            copyback: cfg.ftl.gc_copy == GcCopy::Copyback,
            pending_write_back: BTreeSet::new(),
            jobs: vec![None; g.planes() as usize],
            name,
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

    /// GC metadata: one validity bit per physical page (Table 5.2, reported apart).
    pub fn gc_metadata_bytes(&self) -> u64 {
        (u64::from(self.geo.blocks()) * u64::from(self.geo.pages_per_block)).div_ceil(8)
    }

    /// Read translation page `tvpn` for a fetch, if it exists; whether it did.
    pub fn fetch(&mut self, ctx: &mut FlashCtx, tvpn: u32) -> Result<bool, SimError> {
        let tp = self.directory[tvpn as usize];
        if tp == NONE {
            return Ok(false);
        }
        let prev = ctx.set_tag(Tag::Mapping);
        ctx.read(tp)?;
        ctx.set_tag(prev);
        self.cache.translation_reads += 1;
        Ok(true)
    }

    fn next_plane(&mut self, stream: u32) -> PlaneId {
        let p = self.next_plane[stream as usize];
        self.next_plane[stream as usize] = (p + 1) % self.geo.planes();
        p
    }

    /// The consistency of the map, the directory and the flash; `current` is the FTL's
    /// mapping of an LPN (cache first, then `flash_map`).
    pub fn check_invariants(&self, flash: &FlashArray, current: impl Fn(Lpn) -> Ppn) {
        self.bm.check_invariants(flash);
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
        let valid: u64 = (0..self.geo.blocks()).map(|b| u64::from(flash.valid_count(b))).sum();
        assert_eq!(mapped + tps, valid, "mapped data {mapped} + translation pages {tps} != valid pages {valid}");
        assert!(self.pending_write_back.is_empty(), "write-backs left pending after GC");
    }
}

/// A demand-based FTL: its cache, over the shared [`DemandState`].
pub(crate) trait DemandFtl {
    fn state(&self) -> &DemandState;
    fn state_mut(&mut self) -> &mut DemandState;
    /// The mapping of `lpn`: its cached entry, else the flash map.
    fn current(&self, lpn: Lpn) -> Ppn;
    /// Look the entry of `lpn` up for the host, fetching it on a miss.
    fn access(&mut self, ctx: &mut FlashCtx, lpn: Lpn) -> Result<Ppn, SimError>;
    /// The host changed the mapping of `lpn` (cached, modified).
    fn remap(&mut self, ctx: &mut FlashCtx, lpn: Lpn, ppn: Ppn) -> Result<(), SimError>;
    /// GC moved data page `lpn` to `dst`: update it through the cache, classifying the access.
    fn relocated(&mut self, ctx: &mut FlashCtx, lpn: Lpn, dst: Ppn) -> Result<(), SimError>;
    /// Whether rewriting a translation page reads the old copy first (not when the cache
    /// holds the whole page).
    fn rewrite_reads_old(&self) -> bool {
        true
    }

    fn host_read(&mut self, ctx: &mut FlashCtx, lpn: Lpn) -> Result<Option<u32>, SimError> {
        let mut ppn = self.access(ctx, lpn)?;
        if !self.state().pending_write_back.is_empty() {
            // Queued write-backs may run GC, which may move the page.
            self.flush_write_backs(ctx, true)?;
            ppn = self.current(lpn);
        }
        if ppn == NONE {
            return Ok(None);
        }
        let oob = ctx.read(ppn)?;
        assert_eq!(oob.lpn, lpn, "page {ppn} mapped for lpn {lpn} holds lpn {}", oob.lpn);
        Ok(Some(oob.version))
    }

    fn host_write(&mut self, ctx: &mut FlashCtx, lpn: Lpn, version: u32) -> Result<(), SimError> {
        self.access(ctx, lpn)?;
        self.flush_write_backs(ctx, true)?;
        let s = self.state();
        // GC keeps pages in their plane, so the old copy's plane is stable until it is replaced.
        let ppn = match s.allocation {
            Allocation::StaticLpn => self.allocate_in(ctx, lpn % s.geo.planes())?,
            Allocation::UpdateInPlane => match self.current(lpn) {
                NONE => self.allocate(ctx, HOST)?,
                old => self.allocate_in(ctx, s.geo.plane_of(old))?,
            },
            Allocation::RoundRobin => self.allocate(ctx, HOST)?,
        };
        // GC during the allocation may have moved the old copy: invalidate where it is now.
        let old = self.current(lpn);
        if old != NONE {
            ctx.invalidate(old)?;
            self.state_mut().bm.on_invalidate(ctx.flash(), old);
        }
        ctx.program(ppn, Oob { lpn, version, kind: PageKind::Data })?;
        self.remap(ctx, lpn, ppn)?;
        self.flush_write_backs(ctx, true)
    }

    fn host_trim(&mut self, ctx: &mut FlashCtx, lpn: Lpn) -> Result<(), SimError> {
        self.access(ctx, lpn)?;
        self.flush_write_backs(ctx, true)?;
        let old = self.current(lpn);
        if old != NONE {
            ctx.invalidate(old)?;
            self.state_mut().bm.on_invalidate(ctx.flash(), old);
            self.remap(ctx, lpn, NONE)?;
        }
        self.flush_write_backs(ctx, true)
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
        if old != NONE && self.rewrite_reads_old() {
            ctx.read(old)?;
            self.state_mut().cache.translation_reads += 1;
        }
        let ppn = if may_gc { self.allocate(ctx, TRANSLATION)? } else { self.allocate_now(ctx, TRANSLATION)? };
        ctx.program(ppn, Oob { lpn: tvpn, version: 0, kind: PageKind::Translation })?;
        let s = self.state_mut();
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
        let (ppb, planes) = (self.state().geo.pages_per_block, self.state().geo.planes());
        for _ in 0..2 * planes {
            let plane = self.state_mut().next_plane(stream);
            self.ensure_space(ctx, plane)?;
            let s = self.state_mut();
            let room = s.bm.active(plane, stream).is_some_and(|b| ctx.flash().write_pointer(b) < ppb);
            if room || s.bm.free_blocks(plane) >= 2 {
                return s.bm.allocate(ctx.flash(), plane, stream);
            }
        }
        Err(SimError::Ftl(format!("{}: every plane is down to its last free block", self.state().name)))
    }

    /// A host page in `plane`, after foreground GC there made room.
    fn allocate_in(&mut self, ctx: &mut FlashCtx, plane: PlaneId) -> Result<Ppn, SimError> {
        let ppb = self.state().geo.pages_per_block;
        // GC's queued write-backs, flushed as it ends, may take the room it made: collect again.
        for _ in 0..4 {
            self.ensure_space(ctx, plane)?;
            let s = self.state_mut();
            let room = s.bm.active(plane, HOST).is_some_and(|b| ctx.flash().write_pointer(b) < ppb);
            if room || s.bm.free_blocks(plane) >= 2 {
                return s.bm.allocate(ctx.flash(), plane, HOST);
            }
        }
        Err(SimError::Ftl(format!("{}: plane {plane} stays down to its last free block", self.state().name)))
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
                s.next_plane[stream as usize] = (p + 1) % planes;
                s.bm.allocate(ctx.flash(), p, stream)
            }
            // Every plane is low: collect first (flushes run outside GC, so this nests once).
            None => {
                assert!(!s.in_gc, "allocate_now inside GC with every plane low");
                self.allocate(ctx, stream)
            }
        }
    }

    /// One step of GC job `job` (a page move or the erase).
    fn gc_job_step(&mut self, ctx: &mut FlashCtx, job: &mut GcJob) -> Result<GcStep, SimError> {
        let step = job.step(ctx, &mut Mover { ftl: self })?;
        if step == GcStep::Erased {
            self.state_mut().bm.release(ctx.flash(), job.victim);
        }
        Ok(step)
    }

    /// Foreground GC on `plane` until it has `threshold` free blocks, then the write-backs
    /// the collections queued.
    fn ensure_space(&mut self, ctx: &mut FlashCtx, plane: PlaneId) -> Result<(), SimError> {
        let s = self.state_mut();
        if s.in_gc || s.bm.free_blocks(plane) >= s.threshold {
            return Ok(());
        }
        let prev = ctx.set_tag(Tag::Gc);
        s.in_gc = true;
        let (ppb, threshold, name) = (s.geo.pages_per_block, s.threshold, s.name);
        // Every collection but a FIFO pass over a fully valid block gains a page, so a block
        // is gained within pages_per_block collections.
        let limit = ppb * (threshold + 1) + s.geo.blocks_per_plane;
        let mut collections = 0;
        while self.state().bm.free_blocks(plane) < threshold {
            collections += 1;
            assert!(collections <= limit, "{name}: gc on plane {plane} makes no progress in {limit} collections");
            let s = self.state_mut();
            let mut job = match s.bm.next_job(&mut s.jobs[plane as usize], ctx.flash(), plane, true) {
                Some(j) => j,
                None if s.bm.free_blocks(plane) > 0 => break,
                None => {
                    return Err(SimError::Ftl(format!(
                        "{name}: plane {plane} has no free block and nothing to reclaim"
                    )))
                }
            };
            let mut steps = 0;
            while self.gc_job_step(ctx, &mut job)? == GcStep::Moved {
                steps += 1;
                assert!(steps <= ppb, "gc job does not end");
            }
            self.state_mut().gc.foreground_collections += 1;
        }
        self.state_mut().in_gc = false;
        ctx.set_tag(prev);
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

    /// [`ftlsim_core::ftl::Ftl::gc_step`]: start or continue a collection on `plane`.
    fn collect_step(&mut self, ctx: &mut FlashCtx, plane: PlaneId) -> Result<bool, SimError> {
        let s = self.state_mut();
        let mut job = match s.bm.next_job(&mut s.jobs[plane as usize], ctx.flash(), plane, false) {
            Some(j) => j,
            None => return Ok(false),
        };
        let prev = ctx.set_tag(Tag::Gc);
        s.in_gc = true;
        let r = self.gc_job_step(ctx, &mut job);
        self.state_mut().in_gc = false;
        ctx.set_tag(prev);
        match r? {
            GcStep::Moved => self.state_mut().jobs[plane as usize] = Some(job),
            GcStep::Erased => self.state_mut().gc.background_collections += 1,
        }
        self.flush_write_backs(ctx, false)?;
        Ok(true)
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
        let plane = s.geo.plane_of(src);
        let dst = s.bm.allocate(ctx.flash(), plane, GC)?;
        ctx.copy(src, dst, s.copyback && !ctx.flash().copyback_same_parity())?;
        ctx.invalidate(src)?;
        s.bm.on_invalidate(ctx.flash(), src);
        s.gc.pages_moved += 1;
        if oob.kind == PageKind::Translation {
            assert_eq!(s.directory[oob.lpn as usize], src, "translation page {} moved from a stale copy", oob.lpn);
            s.directory[oob.lpn as usize] = dst;
            return Ok(());
        }
        assert_eq!(self.ftl.current(oob.lpn), src, "lpn {} moved from a stale copy", oob.lpn);
        self.ftl.relocated(ctx, oob.lpn, dst)
    }
}
