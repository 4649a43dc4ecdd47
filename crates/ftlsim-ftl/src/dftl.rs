//! DFTL, demand-based page-level FTL (Gupta et al., ASPLOS 2009, as summarised in the
//! thesis, seed 001 Sec. 3.3 and configured in Table 5.2).
//!
//! - The page map lives in translation pages on flash (page kind `Translation`, OOB LPN =
//!   translation page number). A global translation directory (GTD) in SRAM locates them.
//! - A cached mapping table (CMT) in SRAM, segmented LRU: new entries enter the
//!   probationary segment; a hit there promotes to the protected segment (half the cache),
//!   whose least recent entry falls back to probationary; the victim is the least recent
//!   probationary entry. 8.25 bytes per entry (Table 5.2: 16.50 KB = 2,048 entries).
//! - Lazy write-back with batch update: evicting a modified entry reads its translation
//!   page, writes it anew with every modified cached entry of that page, and marks them clean.
//! - Translation blocks are separate from data blocks (their own write stream) and are
//!   garbage-collected like data blocks; moving a translation page updates the GTD only.
//! - GC of data blocks updates mappings through the cache: a cached entry is updated in
//!   place (a hit); otherwise the known new PPN is inserted without reading the translation
//!   page, a miss without penalty (Sec. 5.2.1, and Sec. 5.3.2 on small cache entries).
//!   Write-backs caused by evictions during GC are programmed when the GC ends, so GC never
//!   re-enters itself.
//! - Cache accesses are classified as in Sec. 4.1.1: hit, miss without penalty, miss with
//!   fetching penalty (one translation read), miss with write-back penalty (evicts a
//!   modified entry, whether or not it also fetched).
//!
//! SRAM (Table 5.2): GTD = 4 B per translation page of the whole chip (the thesis sizes it
//! over all 4096 x 256 pages: 512 entries = 2.00 KB), CMT = 8.25 B per entry, GC metadata =
//! one validity bit per physical page (128 KB for the 8 GB chip), reported apart.
//! Departures: data and translation pages share the round-robin plane allocation; the
//! protected segment is half the CMT (the source does not give its size); pages moved by GC
//! share one GC block per plane whatever their kind (translation pages written by the FTL
//! still go to translation blocks), because two GC destinations could each need a fresh
//! block in one collection and exhaust the plane (found by the property test).

use ftlsim_core::config::{Allocation, DriveConfig, GcCopy};
use ftlsim_core::error::{ConfigError, SimError};
use ftlsim_core::flash::{FlashArray, Oob, PageKind};
use ftlsim_core::ftl::{FlashCtx, Ftl, GcCounts};
use ftlsim_core::gc::{BlockManager, GcJob, GcStep, Relocate};
use ftlsim_core::geometry::{Geometry, Lpn, PlaneId, Ppn, NONE};
use ftlsim_core::scheduler::Tag;
use std::collections::{BTreeSet, HashMap};

/// CMT entry size in quarter bytes: 8.25 B (Table 5.2).
const ENTRY_QUARTER_BYTES: u64 = 33;
/// Default CMT: 2,048 entries (Table 5.2), 16,896 bytes.
const DEFAULT_CACHE_BYTES: u64 = 16_896;
/// CDFTL default (Table 5.2): 256 CMT entries (2,112 B) and two 8 KB translation pages.
const CDFTL_DEFAULT_CACHE_BYTES: u64 = 2_112 + 16_384;
/// CDFTL's GTD entry: a 4-byte PPN and 3 bits locating the page in the CTP (Table 5.2's
/// 2.19 KB for 512 entries).
const CDFTL_GTD_ENTRY_BITS: u64 = 35;
const HOST: u32 = 0;
const TRANSLATION: u32 = 1;
const GC: u32 = 2;
const PROBATION: u8 = 0;
const PROTECTED: u8 = 1;

/// Cache-access classes (thesis Sec. 4.1.1) and translation traffic.
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
    /// Hits in the cached translation pages (CDFTL's second level), also counted in `hits`.
    pub second_level_hits: u64,
}

/// Segmented-LRU cache of mapping entries, O(1) per operation.
struct Cmt {
    cap: usize,
    protected_cap: usize,
    lpn: Vec<Lpn>,
    ppn: Vec<Ppn>,
    dirty: Vec<bool>,
    seg: Vec<u8>,
    prev: Vec<u32>,
    next: Vec<u32>,
    head: [u32; 2],
    tail: [u32; 2],
    len: [usize; 2],
    index: HashMap<Lpn, u32>,
    free: Vec<u32>,
}

impl Cmt {
    fn new(cap: usize) -> Cmt {
        Cmt {
            cap,
            protected_cap: cap / 2,
            lpn: vec![NONE; cap],
            ppn: vec![NONE; cap],
            dirty: vec![false; cap],
            seg: vec![PROBATION; cap],
            prev: vec![NONE; cap],
            next: vec![NONE; cap],
            head: [NONE; 2],
            tail: [NONE; 2],
            len: [0; 2],
            index: HashMap::with_capacity(cap),
            free: (0..cap as u32).rev().collect(),
        }
    }

    fn unlink(&mut self, s: u32) {
        let g = self.seg[s as usize] as usize;
        let (p, n) = (self.prev[s as usize], self.next[s as usize]);
        if p == NONE {
            self.head[g] = n
        } else {
            self.next[p as usize] = n
        }
        if n == NONE {
            self.tail[g] = p
        } else {
            self.prev[n as usize] = p
        }
        self.len[g] -= 1;
    }

    fn push_front(&mut self, s: u32, g: u8) {
        let gi = g as usize;
        self.seg[s as usize] = g;
        self.prev[s as usize] = NONE;
        self.next[s as usize] = self.head[gi];
        if self.head[gi] != NONE {
            self.prev[self.head[gi] as usize] = s;
        } else {
            self.tail[gi] = s;
        }
        self.head[gi] = s;
        self.len[gi] += 1;
    }

    /// Look up and, on a hit, promote.
    fn touch(&mut self, lpn: Lpn) -> Option<u32> {
        let s = *self.index.get(&lpn)?;
        self.unlink(s);
        self.push_front(s, PROTECTED);
        if self.len[PROTECTED as usize] > self.protected_cap {
            let t = self.tail[PROTECTED as usize];
            self.unlink(t);
            self.push_front(t, PROBATION);
        }
        Some(s)
    }

    fn is_full(&self) -> bool {
        self.free.is_empty()
    }

    /// Remove the victim (least recent probationary entry, else protected).
    fn evict(&mut self) -> (Lpn, Ppn, bool) {
        let s = if self.tail[PROBATION as usize] != NONE {
            self.tail[PROBATION as usize]
        } else {
            self.tail[PROTECTED as usize]
        };
        assert!(s != NONE, "evicting from an empty cache");
        self.unlink(s);
        self.index.remove(&self.lpn[s as usize]);
        self.free.push(s);
        (self.lpn[s as usize], self.ppn[s as usize], self.dirty[s as usize])
    }

    fn insert(&mut self, lpn: Lpn, ppn: Ppn, dirty: bool) -> u32 {
        let s = self.free.pop().expect("insert into a full cache");
        self.lpn[s as usize] = lpn;
        self.ppn[s as usize] = ppn;
        self.dirty[s as usize] = dirty;
        self.push_front(s, PROBATION);
        self.index.insert(lpn, s);
        s
    }
}

/// The DFTL.
pub struct Dftl {
    geo: Geometry,
    per_tp: u32,
    gtd: Vec<Ppn>,
    flash_map: Vec<Ppn>,
    cmt: Cmt,
    bm: BlockManager,
    /// Round-robin plane pointer per write stream: with one shared pointer, a fixed number
    /// of translation writes per host write could pin host data to one plane.
    next_plane: [u32; 3],
    threshold: u32,
    copyback: bool,
    in_gc: bool,
    pending_write_back: BTreeSet<u32>,
    jobs: Vec<Option<GcJob>>,
    gc: GcCounts,
    cache: CacheCounts,
    gtd_bytes: u64,
    cmt_bytes: u64,
    gc_metadata_bytes: u64,
    name: &'static str,
    /// Cached translation pages, least recent first, with their modified flag (CDFTL).
    ctp: Vec<(u32, bool)>,
    ctp_cap: usize,
    ctp_bytes: u64,
    write_back_events: u64,
}

impl Dftl {
    /// DFTL for a validated config.
    pub fn new(cfg: &DriveConfig) -> Result<Dftl, ConfigError> {
        Dftl::build(cfg, false)
    }

    /// CDFTL for a validated config: the DFTL engine with a second-level cache of whole
    /// translation pages (see `cdftl.rs`).
    pub fn cdftl(cfg: &DriveConfig) -> Result<Dftl, ConfigError> {
        Dftl::build(cfg, true)
    }

    fn build(cfg: &DriveConfig, second_level: bool) -> Result<Dftl, ConfigError> {
        let d = cfg.derive()?;
        let g = &cfg.geometry;
        if cfg.ftl.allocation != Allocation::RoundRobin {
            return Err(ConfigError::Invalid {
                key: "ftl.allocation".into(),
                value: "static_lpn".into(),
                rule: "dftl allocates round-robin only".into(),
            });
        }
        let per_tp = g.page_size_bytes / 4;
        let tps = d.logical_pages.div_ceil(per_tp);
        let page = u64::from(g.page_size_bytes);
        let bytes = cfg.ftl.mapping_cache_bytes.unwrap_or(if second_level {
            CDFTL_DEFAULT_CACHE_BYTES
        } else {
            DEFAULT_CACHE_BYTES
        });
        // CDFTL splits its SRAM 8:1 between cached translation pages and CMT entries (Table
        // 5.2: 2 pages of 8 KB and 256 entries).
        let ctp_cap = if second_level { (bytes * 8 / 9 / page).max(1) as usize } else { 0 };
        let ctp_bytes = ctp_cap as u64 * page;
        let entries = (bytes.saturating_sub(ctp_bytes) * 4 / ENTRY_QUARTER_BYTES) as usize;
        if entries < 2 {
            return Err(ConfigError::Invalid {
                key: "ftl.mapping_cache_bytes".into(),
                value: bytes.to_string(),
                rule: "must hold at least 2 DFTL entries of 8.25 bytes (17 bytes)".into(),
            });
        }
        Ok(Dftl {
            geo: g.clone(),
            per_tp,
            gtd: vec![NONE; tps as usize],
            flash_map: vec![NONE; d.logical_pages as usize],
            cmt: Cmt::new(entries),
            bm: BlockManager::new(g, 3, d.held_back_blocks_per_plane, cfg.ftl.gc_victim),
            next_plane: [0; 3],
            threshold: d.gc_threshold_blocks,
            copyback: cfg.ftl.gc_copy == GcCopy::Copyback,
            in_gc: false,
            pending_write_back: BTreeSet::new(),
            jobs: vec![None; g.planes() as usize],
            gc: GcCounts::default(),
            cache: CacheCounts::default(),
            gtd_bytes: if second_level {
                (u64::from(d.physical_pages / per_tp) * CDFTL_GTD_ENTRY_BITS).div_ceil(8)
            } else {
                u64::from(d.physical_pages / per_tp) * 4
            },
            cmt_bytes: (entries as u64 * ENTRY_QUARTER_BYTES).div_ceil(4),
            gc_metadata_bytes: u64::from(d.physical_pages).div_ceil(8),
            name: if second_level { "cdftl" } else { "dftl" },
            ctp: Vec::with_capacity(ctp_cap),
            ctp_cap,
            ctp_bytes,
            write_back_events: 0,
        })
    }

    /// Cache counters.
    pub fn cache_counts(&self) -> &CacheCounts {
        &self.cache
    }

    /// SRAM of the GTD, the CMT, the cached translation pages and the GC metadata, bytes.
    pub fn sram_components(&self) -> (u64, u64, u64, u64) {
        (self.gtd_bytes, self.cmt_bytes, self.ctp_bytes, self.gc_metadata_bytes)
    }

    /// Bring translation page `tvpn` into the CTP (most recent), reading it from flash;
    /// a modified page evicted to make room is written back (deferred during GC).
    fn ctp_load(&mut self, ctx: &mut FlashCtx, tvpn: u32) -> Result<(), SimError> {
        // A write-back may run GC, which may load pages itself: evict until there is room.
        for _ in 0..=self.ctp_cap + self.geo.pages_per_block as usize {
            if self.ctp_touch(tvpn) {
                return Ok(());
            }
            if self.ctp.len() < self.ctp_cap {
                let tp = self.gtd[tvpn as usize];
                if tp != NONE {
                    let prev = ctx.set_tag(Tag::Mapping);
                    ctx.read(tp)?;
                    ctx.set_tag(prev);
                    self.cache.translation_reads += 1;
                }
                self.ctp.push((tvpn, false));
                return Ok(());
            }
            let (victim, dirty) = self.ctp.remove(0);
            if dirty {
                self.write_back_events += 1;
                if self.in_gc {
                    self.pending_write_back.insert(victim);
                } else {
                    self.program_translation(ctx, victim, true)?;
                }
            }
        }
        unreachable!("cdftl: translation-page cache does not drain")
    }

    /// Make `tvpn` the most recent cached translation page, if it is cached.
    fn ctp_touch(&mut self, tvpn: u32) -> bool {
        match self.ctp.iter().position(|e| e.0 == tvpn) {
            Some(i) => {
                let e = self.ctp.remove(i);
                self.ctp.push(e);
                true
            }
            None => false,
        }
    }

    /// Record a modification of translation page `tvpn` in the CTP, loading it if needed.
    fn ctp_modify(&mut self, ctx: &mut FlashCtx, tvpn: u32) -> Result<(), SimError> {
        self.ctp_load(ctx, tvpn)?;
        let last = self.ctp.last_mut().expect("page just loaded");
        assert_eq!(last.0, tvpn, "ctp_load leaves the page most recent");
        last.1 = true;
        Ok(())
    }

    fn current(&self, lpn: Lpn) -> Ppn {
        match self.cmt.index.get(&lpn) {
            Some(&s) => self.cmt.ppn[s as usize],
            None => self.flash_map[lpn as usize],
        }
    }

    /// Batch update: every modified cached entry of translation page `tvpn` goes to flash.
    fn write_back(&mut self, ctx: &mut FlashCtx, tvpn: u32) -> Result<(), SimError> {
        let lo = tvpn * self.per_tp;
        let hi = (lo + self.per_tp).min(self.flash_map.len() as u32);
        for s in 0..self.cmt.cap {
            let l = self.cmt.lpn[s];
            if l != NONE && (lo..hi).contains(&l) && self.cmt.index.get(&l) == Some(&(s as u32)) && self.cmt.dirty[s] {
                self.flash_map[l as usize] = self.cmt.ppn[s];
                self.cmt.dirty[s] = false;
            }
        }
        // The evicted entry itself was copied to `flash_map` by `evict_for`.
        self.write_back_events += 1;
        if self.in_gc {
            self.pending_write_back.insert(tvpn);
            return Ok(());
        }
        self.program_translation(ctx, tvpn, true)
    }

    /// Rewrite translation page `tvpn`, reading the old copy first unless the whole page is
    /// held in SRAM (CDFTL).
    fn program_translation(&mut self, ctx: &mut FlashCtx, tvpn: u32, may_gc: bool) -> Result<(), SimError> {
        let prev = ctx.set_tag(Tag::Mapping);
        let old = self.gtd[tvpn as usize];
        if old != NONE && self.ctp_cap == 0 {
            ctx.read(old)?;
            self.cache.translation_reads += 1;
        }
        let ppn = if may_gc { self.allocate(ctx, TRANSLATION)? } else { self.allocate_now(ctx, TRANSLATION)? };
        ctx.program(ppn, Oob { lpn: tvpn, version: 0, kind: PageKind::Translation })?;
        let old = self.gtd[tvpn as usize];
        if old != NONE {
            ctx.invalidate(old)?;
            self.bm.on_invalidate(ctx.flash(), old);
        }
        self.gtd[tvpn as usize] = ppn;
        self.cache.translation_writes += 1;
        ctx.set_tag(prev);
        Ok(())
    }

    /// Look an entry up for the host, fetching it on a miss.
    fn access(&mut self, ctx: &mut FlashCtx, lpn: Lpn) -> Result<Ppn, SimError> {
        if let Some(s) = self.cmt.touch(lpn) {
            self.cache.hits += 1;
            return Ok(self.cmt.ppn[s as usize]);
        }
        let (reads, write_backs) = (self.cache.translation_reads, self.write_back_events);
        // Fetch first, then make room: nothing may run between making room and inserting
        // (a fetch may write back, which may run GC, which inserts entries).
        let tvpn = lpn / self.per_tp;
        let mut second_level = false;
        if self.ctp_cap > 0 {
            second_level = self.ctp_touch(tvpn);
            if !second_level {
                self.ctp_load(ctx, tvpn)?;
            }
        } else if self.gtd[tvpn as usize] != NONE {
            let prev = ctx.set_tag(Tag::Mapping);
            ctx.read(self.gtd[tvpn as usize])?;
            ctx.set_tag(prev);
            self.cache.translation_reads += 1;
        }
        let ppn = match self.room_for(ctx, lpn)? {
            (_, Some(_)) => {
                let slot = self.cmt.touch(lpn).expect("present entry");
                self.cmt.ppn[slot as usize]
            }
            (_, None) => {
                let ppn = self.flash_map[lpn as usize];
                self.cmt.insert(lpn, ppn, false);
                ppn
            }
        };
        self.classify(reads, write_backs, second_level);
        Ok(ppn)
    }

    /// Count a miss by what it cost since the counters read `reads` and `write_backs`.
    fn classify(&mut self, reads: u64, write_backs: u64, second_level: bool) {
        let c = &mut self.cache;
        if self.write_back_events > write_backs {
            c.misses_write_back += 1;
        } else if c.translation_reads > reads {
            c.misses_fetch += 1;
        } else if second_level {
            c.hits += 1;
            c.second_level_hits += 1;
        } else {
            c.misses_no_penalty += 1;
        }
    }

    /// Evict until there is a free slot, unless `lpn` got cached meanwhile (a write-back may
    /// run GC, which inserts the entries of the pages it moves). Returns whether a modified
    /// entry was evicted, and the slot of `lpn` if it is now cached.
    fn room_for(&mut self, ctx: &mut FlashCtx, lpn: Lpn) -> Result<(bool, Option<u32>), SimError> {
        let mut dirty = false;
        for _ in 0..=self.cmt.cap + self.geo.pages_per_block as usize {
            if let Some(&s) = self.cmt.index.get(&lpn) {
                return Ok((dirty, Some(s)));
            }
            if !self.cmt.is_full() {
                return Ok((dirty, None));
            }
            dirty |= self.evict_for(ctx)?;
        }
        unreachable!("dftl: cache does not drain (capacity {})", self.cmt.cap)
    }

    /// Evict if full, writing back a modified victim first.
    fn evict_for(&mut self, ctx: &mut FlashCtx) -> Result<bool, SimError> {
        if !self.cmt.is_full() {
            return Ok(false);
        }
        let (lpn, ppn, dirty) = self.cmt.evict();
        if dirty {
            self.flash_map[lpn as usize] = ppn;
            if self.ctp_cap > 0 {
                // CDFTL: a modified entry goes to its cached translation page.
                self.ctp_modify(ctx, lpn / self.per_tp)?;
            } else {
                self.write_back(ctx, lpn / self.per_tp)?;
            }
        }
        Ok(dirty)
    }

    /// Set the mapping of `lpn` (cached, modified), inserting it if it is not cached.
    fn set(&mut self, ctx: &mut FlashCtx, lpn: Lpn, ppn: Ppn) -> Result<(), SimError> {
        if let Some(&s) = self.cmt.index.get(&lpn) {
            self.cmt.ppn[s as usize] = ppn;
            self.cmt.dirty[s as usize] = true;
            return Ok(());
        }
        if let (_, Some(s)) = self.room_for(ctx, lpn)? {
            self.cmt.ppn[s as usize] = ppn;
            self.cmt.dirty[s as usize] = true;
            return Ok(());
        }
        self.cmt.insert(lpn, ppn, true);
        Ok(())
    }

    fn next_plane(&mut self, stream: u32) -> PlaneId {
        let p = self.next_plane[stream as usize];
        self.next_plane[stream as usize] = (p + 1) % self.geo.planes();
        p
    }

    /// A page of `stream` after foreground GC made room. The last free block of a plane is
    /// left to GC (which needs one to relocate into): GC's own deferred writes may have
    /// used the room it made, so the plane is checked again and the next one tried.
    fn allocate(&mut self, ctx: &mut FlashCtx, stream: u32) -> Result<Ppn, SimError> {
        let ppb = self.geo.pages_per_block;
        for _ in 0..2 * self.geo.planes() {
            let plane = self.next_plane(stream);
            self.ensure_space(ctx, plane)?;
            let room = self.bm.active(plane, stream).is_some_and(|b| ctx.flash().write_pointer(b) < ppb);
            if room || self.bm.free_blocks(plane) >= 2 {
                return self.bm.allocate(ctx.flash(), plane, stream);
            }
        }
        Err(SimError::Ftl("dftl: every plane is down to its last free block".into()))
    }

    /// A page of `stream` without GC (used while GC's deferred write-backs are flushed).
    /// Prefers planes whose open block has room, then planes that keep two free blocks
    /// after opening one (GC may open a data and a translation block); when every plane is
    /// low, it collects first.
    fn allocate_now(&mut self, ctx: &mut FlashCtx, stream: u32) -> Result<Ppn, SimError> {
        let planes = self.geo.planes();
        let ppb = self.geo.pages_per_block;
        let start = self.next_plane[stream as usize];
        let has_room =
            |f: &Dftl, p: PlaneId| f.bm.active(p, stream).is_some_and(|b| ctx.flash().write_pointer(b) < ppb);
        let pick = (0..planes)
            .map(|i| (start + i) % planes)
            .find(|&p| has_room(self, p))
            .or_else(|| (0..planes).map(|i| (start + i) % planes).find(|&p| self.bm.free_blocks(p) >= 3));
        match pick {
            Some(p) => {
                self.next_plane[stream as usize] = (p + 1) % planes;
                self.bm.allocate(ctx.flash(), p, stream)
            }
            // Every plane is low: collect first (flushes run outside GC, so this nests once).
            None => {
                assert!(!self.in_gc, "allocate_now inside GC with every plane low");
                self.allocate(ctx, stream)
            }
        }
    }

    fn step(&mut self, ctx: &mut FlashCtx, job: &mut GcJob) -> Result<GcStep, SimError> {
        let mut mover = Mover { ftl: self };
        let s = job.step(ctx, &mut mover)?;
        if s == GcStep::Erased {
            self.bm.release(ctx.flash(), job.victim);
        }
        Ok(s)
    }

    fn ensure_space(&mut self, ctx: &mut FlashCtx, plane: PlaneId) -> Result<(), SimError> {
        if self.in_gc || self.bm.free_blocks(plane) >= self.threshold {
            return Ok(());
        }
        let prev = ctx.set_tag(Tag::Gc);
        self.in_gc = true;
        let mut collections = 0;
        while self.bm.free_blocks(plane) < self.threshold {
            collections += 1;
            // Every collection but a FIFO pass over a fully valid block gains a page, so a
            // block is gained within pages_per_block collections.
            let limit = self.geo.pages_per_block * (self.threshold + 1) + self.geo.blocks_per_plane;
            assert!(collections <= limit, "dftl: gc on plane {plane} makes no progress in {limit} collections");
            let mut job = match self.bm.next_job(&mut self.jobs[plane as usize], ctx.flash(), plane, true) {
                Some(j) => j,
                None if self.bm.free_blocks(plane) > 0 => break,
                None => {
                    return Err(SimError::Ftl(format!("dftl: plane {plane} has no free block and nothing to reclaim")))
                }
            };
            let mut steps = 0;
            while self.step(ctx, &mut job)? == GcStep::Moved {
                steps += 1;
                assert!(steps <= self.geo.pages_per_block, "gc job does not end");
            }
            self.gc.foreground_collections += 1;
        }
        self.in_gc = false;
        ctx.set_tag(prev);
        self.flush_pending(ctx)
    }

    fn flush_pending(&mut self, ctx: &mut FlashCtx) -> Result<(), SimError> {
        while let Some(tvpn) = self.pending_write_back.pop_first() {
            self.program_translation(ctx, tvpn, false)?;
        }
        Ok(())
    }
}

/// GC relocation: data pages remap through the cache, translation pages through the GTD.
struct Mover<'a> {
    ftl: &'a mut Dftl,
}

impl Relocate for Mover<'_> {
    fn relocate(&mut self, ctx: &mut FlashCtx, src: Ppn, oob: Oob) -> Result<(), SimError> {
        let f = &mut *self.ftl;
        let plane = f.geo.plane_of(src);
        // One GC destination for data and translation pages alike: a collection then opens at
        // most the one block its erase gives back, so GC cannot run out of blocks.
        let dst = f.bm.allocate(ctx.flash(), plane, GC)?;
        ctx.copy(src, dst, f.copyback && !ctx.flash().copyback_same_parity())?;
        ctx.invalidate(src)?;
        f.bm.on_invalidate(ctx.flash(), src);
        f.gc.pages_moved += 1;
        match oob.kind {
            PageKind::Translation => {
                assert_eq!(f.gtd[oob.lpn as usize], src, "translation page {} moved from a stale copy", oob.lpn);
                f.gtd[oob.lpn as usize] = dst;
            }
            _ => {
                assert_eq!(f.current(oob.lpn), src, "lpn {} moved from a stale copy", oob.lpn);
                let tvpn = oob.lpn / f.per_tp;
                if let Some(&s) = f.cmt.index.get(&oob.lpn) {
                    f.cache.hits += 1;
                    f.cmt.ppn[s as usize] = dst;
                    f.cmt.dirty[s as usize] = true;
                } else if f.ctp_touch(tvpn) {
                    // CDFTL: the page's translation page is cached; update it there.
                    f.flash_map[oob.lpn as usize] = dst;
                    f.ctp.last_mut().expect("touched page").1 = true;
                    f.cache.hits += 1;
                    f.cache.second_level_hits += 1;
                } else {
                    let (reads, write_backs) = (f.cache.translation_reads, f.write_back_events);
                    let (_, present) = f.room_for(ctx, oob.lpn)?;
                    assert!(present.is_none(), "gc does not re-enter, so the entry cannot appear");
                    f.classify(reads, write_backs, false);
                    f.cmt.insert(oob.lpn, dst, true);
                }
            }
        }
        Ok(())
    }
}

impl Ftl for Dftl {
    fn name(&self) -> &'static str {
        self.name
    }

    fn read(&mut self, ctx: &mut FlashCtx, lpn: Lpn) -> Result<Option<u32>, SimError> {
        let ppn = self.access(ctx, lpn)?;
        if ppn == NONE {
            return Ok(None);
        }
        let oob = ctx.read(ppn)?;
        assert_eq!(oob.lpn, lpn, "page {ppn} mapped for lpn {lpn} holds lpn {}", oob.lpn);
        Ok(Some(oob.version))
    }

    fn write(&mut self, ctx: &mut FlashCtx, lpn: Lpn, version: u32) -> Result<(), SimError> {
        self.access(ctx, lpn)?;
        let ppn = self.allocate(ctx, HOST)?;
        // GC during the allocation may have moved the old copy: invalidate where it is now.
        let old = self.current(lpn);
        if old != NONE {
            ctx.invalidate(old)?;
            self.bm.on_invalidate(ctx.flash(), old);
        }
        ctx.program(ppn, Oob { lpn, version, kind: PageKind::Data })?;
        self.set(ctx, lpn, ppn)
    }

    fn trim(&mut self, ctx: &mut FlashCtx, lpn: Lpn) -> Result<(), SimError> {
        let old = self.access(ctx, lpn)?;
        if old != NONE {
            ctx.invalidate(old)?;
            self.bm.on_invalidate(ctx.flash(), old);
            self.set(ctx, lpn, NONE)?;
        }
        Ok(())
    }

    fn background_step(&mut self, _ctx: &mut FlashCtx) -> Result<bool, SimError> {
        // DFTL collects on demand only (the thesis's setup: greedy GC on demand).
        Ok(false)
    }

    fn gc_step(&mut self, ctx: &mut FlashCtx, plane: PlaneId) -> Result<bool, SimError> {
        let mut job = match self.bm.next_job(&mut self.jobs[plane as usize], ctx.flash(), plane, false) {
            Some(j) => j,
            None => return Ok(false),
        };
        let prev = ctx.set_tag(Tag::Gc);
        self.in_gc = true;
        let r = self.step(ctx, &mut job);
        self.in_gc = false;
        ctx.set_tag(prev);
        match r? {
            GcStep::Moved => self.jobs[plane as usize] = Some(job),
            GcStep::Erased => self.gc.background_collections += 1,
        }
        self.flush_pending(ctx)?;
        Ok(true)
    }

    fn gc_counts(&self) -> GcCounts {
        self.gc.clone()
    }

    fn free_blocks(&self) -> u64 {
        self.bm.free_blocks_total()
    }

    fn mapping_sram_bytes(&self) -> u64 {
        self.gtd_bytes + self.cmt_bytes + self.ctp_bytes
    }

    fn begin_measurement(&mut self) {
        self.cache = CacheCounts::default();
    }

    fn extra_metrics(&self) -> serde_json::Map<String, serde_json::Value> {
        let c = &self.cache;
        let accesses = c.hits + c.misses_no_penalty + c.misses_fetch + c.misses_write_back;
        let share = |n: u64| if accesses == 0 { 0.0 } else { n as f64 / accesses as f64 };
        let mut m = serde_json::Map::new();
        let mut put = |k: &str, v: serde_json::Value| {
            m.insert(k.to_string(), v);
        };
        put("cache_accesses", accesses.into());
        put("cache_hits", c.hits.into());
        put("cache_misses_no_penalty", c.misses_no_penalty.into());
        put("cache_misses_fetch", c.misses_fetch.into());
        put("cache_misses_write_back", c.misses_write_back.into());
        put("cache_hit_ratio", share(c.hits).into());
        put("cache_miss_ratio", (1.0 - share(c.hits)).into());
        put("translation_pages_read", c.translation_reads.into());
        put("translation_pages_written", c.translation_writes.into());
        put("sram_gtd_bytes", self.gtd_bytes.into());
        put("sram_cmt_bytes", self.cmt_bytes.into());
        put("sram_gc_metadata_bytes", self.gc_metadata_bytes.into());
        put("cmt_entries", (self.cmt.cap as u64).into());
        if self.ctp_cap > 0 {
            put("sram_ctp_bytes", self.ctp_bytes.into());
            put("ctp_pages", (self.ctp_cap as u64).into());
            put("cache_second_level_hits", c.second_level_hits.into());
        }
        m
    }

    fn check_invariants(&self, flash: &FlashArray) {
        self.bm.check_invariants(flash);
        let mut mapped = 0u64;
        for lpn in 0..self.flash_map.len() as Lpn {
            let ppn = self.current(lpn);
            if ppn == NONE {
                continue;
            }
            mapped += 1;
            assert!(flash.is_valid(ppn), "lpn {lpn} maps to invalid page {ppn}");
            assert_eq!(flash.read(ppn).expect("mapped page readable").lpn, lpn, "page {ppn} holds another lpn");
        }
        let mut tps = 0u64;
        for (tvpn, &ppn) in self.gtd.iter().enumerate() {
            if ppn != NONE {
                tps += 1;
                let oob = flash.read(ppn).expect("translation page readable");
                assert_eq!((oob.kind, oob.lpn as usize), (PageKind::Translation, tvpn), "gtd {tvpn} -> page {ppn}");
            }
        }
        let valid: u64 = (0..self.geo.blocks()).map(|b| u64::from(flash.valid_count(b))).sum();
        assert_eq!(mapped + tps, valid, "mapped data {mapped} + translation pages {tps} != valid pages {valid}");
        assert!(self.pending_write_back.is_empty(), "write-backs left pending after GC");
        assert!(self.ctp.len() <= self.ctp_cap, "ctp holds {} pages, capacity {}", self.ctp.len(), self.ctp_cap);
        let mut seen: Vec<u32> = self.ctp.iter().map(|e| e.0).collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), self.ctp.len(), "a translation page is cached twice");
        assert_eq!(self.cmt.index.len(), self.cmt.cap - self.cmt.free.len(), "cmt index and slots disagree");
    }
}
