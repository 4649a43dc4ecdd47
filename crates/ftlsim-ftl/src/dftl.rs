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
//!   page, writes it anew with every modified cached entry of that page, and marks them clean
//!   (modified entries are chained per translation page, so this visits only them).
//! - Translation blocks are separate from data blocks (their own write stream) and are
//!   garbage-collected like data blocks; moving a translation page updates the GTD only.
//!   This, the allocation and the GC are shared with SCFTL in `demand.rs`.
//! - GC of data blocks updates mappings through the cache: a cached entry is updated in
//!   place (a hit); otherwise the known new PPN is inserted without reading the translation
//!   page, a miss without penalty (Sec. 5.2.1, and Sec. 5.3.2 on small cache entries).
//!   Write-backs are queued and programmed when the cache update, host operation or GC that
//!   raised them ends (`demand.rs`), so GC never runs inside an eviction.
//! - Cache accesses are classified as in Sec. 4.1.1: hit, miss without penalty, miss with
//!   fetching penalty (one translation read), miss with write-back penalty (evicts a
//!   modified entry, whether or not it also fetched).
//!
//! - GC mode (`[ftl.dftl] gc`): per-plane GC by default; `conventional` is the baseline
//!   PCFTL compares against (seed 000 Sec. 3.3, Fig. 7a): one active block per chip, pages
//!   moved through the controller between planes, all host I/O held (`demand.rs`, `GcMode`),
//!   and host pages placed by LPN, `lpn % planes` (Sec. 3.1, L74: the unevenness PCFTL removes).
//!   DLOOP and PCFTL (`dloop.rs`, `pcftl.rs`) are this engine with their own placement and GC.
//!
//! SRAM (Table 5.2): GTD = 4 B per translation page of the whole chip (the thesis sizes it
//! over all 4096 x 256 pages: 512 entries = 2.00 KB), CMT = 8.25 B per entry, GC metadata =
//! one validity bit per physical page (128 KB for the 8 GB chip), reported apart.
//! Departures: host and translation pages are allocated round-robin over the planes, each
//! stream with its own pointer; the protected segment is half the CMT (the source does not give its size); pages moved by GC
//! share one GC block per plane whatever their kind (translation pages written by the FTL
//! still go to translation blocks), because two GC destinations could each need a fresh
//! block in one collection and exhaust the plane (found by the property test).

use crate::demand::{demand_ftl_methods, demand_ftl_parts, CacheCounts, DemandFtl, DemandState, GcMode};
use crate::options::Options;
use crate::slot_chains::SlotChains;
use ftlsim_core::config::{Allocation, DriveConfig, GcPreemption, Resolved};
use ftlsim_core::error::{ConfigError, SimError};
use ftlsim_core::flash::FlashArray;
use ftlsim_core::ftl::{FlashCtx, Ftl};
use ftlsim_core::geometry::{Lpn, Ppn, NONE};
use serde::{Deserialize, Serialize};

/// CMT entry size in quarter bytes: 8.25 B (Table 5.2).
const ENTRY_QUARTER_BYTES: u64 = 33;
/// Default CMT: 2,048 entries (Table 5.2), 16,896 bytes.
const DEFAULT_CACHE_BYTES: u64 = 16_896;
/// CDFTL default (Table 5.2): 256 CMT entries (2,112 B) and two 8 KB translation pages.
const CDFTL_DEFAULT_CACHE_BYTES: u64 = 2_112 + 16_384;
/// CDFTL's GTD entry: a 4-byte PPN and 3 bits locating the page in the CTP (Table 5.2's
/// 2.19 KB for 512 entries).
const CDFTL_GTD_ENTRY_BITS: u64 = 35;
const PROBATION: u8 = 0;
const PROTECTED: u8 = 1;

/// Segmented-LRU cache of mapping entries, O(1) per operation.
#[derive(Serialize, Deserialize)]
struct Cmt {
    cap: usize,
    protected_cap: usize,
    per_tp: u32,
    lpn: Vec<Lpn>,
    ppn: Vec<Ppn>,
    dirty: Vec<bool>,
    /// Modified entries chained per translation page, so a batch update visits only them.
    dirty_chains: SlotChains,
    seg: Vec<u8>,
    prev: Vec<u32>,
    next: Vec<u32>,
    head: [u32; 2],
    tail: [u32; 2],
    len: [usize; 2],
    /// The slot caching each LPN's entry, NONE when uncached: a direct array rather than a
    /// hash map (GC updates one random entry per page moved; hashing cost a third of DFTL's
    /// preconditioning). 4 bytes per logical page of simulator memory.
    #[serde(deserialize_with = "ftlsim_core::big_array::deserialize")]
    slot_of: Vec<u32>,
    entries: usize,
    free: Vec<u32>,
}

impl Cmt {
    fn new(cap: usize, per_tp: u32, translation_pages: usize, logical_pages: u32) -> Cmt {
        Cmt {
            cap,
            protected_cap: cap / 2,
            per_tp,
            lpn: vec![NONE; cap],
            ppn: vec![NONE; cap],
            dirty: vec![false; cap],
            dirty_chains: SlotChains::new(translation_pages, cap),
            seg: vec![PROBATION; cap],
            prev: vec![NONE; cap],
            next: vec![NONE; cap],
            head: [NONE; 2],
            tail: [NONE; 2],
            len: [0; 2],
            slot_of: ftlsim_core::big_array::filled(logical_pages as usize, NONE),
            entries: 0,
            free: (0..cap as u32).rev().collect(),
        }
    }

    /// The slot caching `lpn`'s entry.
    #[inline]
    fn lookup(&self, lpn: Lpn) -> Option<u32> {
        let s = self.slot_of[lpn as usize];
        (s != NONE).then_some(s)
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
        let s = self.lookup(lpn)?;
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
        let dirty = self.dirty[s as usize];
        self.clean(s);
        self.slot_of[self.lpn[s as usize] as usize] = NONE;
        self.entries -= 1;
        self.free.push(s);
        (self.lpn[s as usize], self.ppn[s as usize], dirty)
    }

    fn insert(&mut self, lpn: Lpn, ppn: Ppn, dirty: bool) -> u32 {
        let s = self.free.pop().expect("insert into a full cache");
        self.lpn[s as usize] = lpn;
        self.ppn[s as usize] = ppn;
        self.push_front(s, PROBATION);
        self.slot_of[lpn as usize] = s;
        self.entries += 1;
        if dirty {
            self.mark_dirty(s);
        }
        s
    }

    /// Point slot `s` at `ppn`, modified.
    fn update(&mut self, s: u32, ppn: Ppn) {
        self.ppn[s as usize] = ppn;
        self.mark_dirty(s);
    }

    fn mark_dirty(&mut self, s: u32) {
        if self.dirty[s as usize] {
            return;
        }
        self.dirty[s as usize] = true;
        self.dirty_chains.push((self.lpn[s as usize] / self.per_tp) as usize, s);
    }

    fn clean(&mut self, s: u32) {
        if !self.dirty[s as usize] {
            return;
        }
        self.dirty[s as usize] = false;
        self.dirty_chains.remove((self.lpn[s as usize] / self.per_tp) as usize, s);
    }

    /// Clean every modified entry of translation page `tp`, handing each to `f`.
    fn drain_dirty(&mut self, tp: u32, mut f: impl FnMut(Lpn, Ppn)) {
        let mut s = self.dirty_chains.take(tp as usize);
        while s != NONE {
            f(self.lpn[s as usize], self.ppn[s as usize]);
            self.dirty[s as usize] = false;
            s = self.dirty_chains.next(s);
        }
    }
}

/// The DFTL (and, with its second level, CDFTL).
#[derive(Serialize, Deserialize)]
pub struct Dftl {
    st: DemandState,
    cmt: Cmt,
    gtd_bytes: u64,
    cmt_bytes: u64,
    /// Cached translation pages, least recent first, with their modified flag (CDFTL).
    ctp: Vec<(u32, bool)>,
    ctp_cap: usize,
    ctp_bytes: u64,
    /// Translation-page write-backs started (a miss that raised one has write-back penalty).
    write_back_events: u64,
    plane_info_bytes: u64,
    /// The constructor of this flavour, which recovery builds anew from (not in snapshots:
    /// the FTL being loaded has it).
    #[serde(skip)]
    remake: Option<Remake>,
}

/// How DFTL collects (`[ftl.dftl] gc`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum DftlGc {
    /// Per-plane GC with the shared policy keys (`ftl.gc_copy`, `ftl.gc_scope`).
    #[default]
    Plane,
    /// The conventional GC PCFTL compares against (seed 000 Sec. 3.3, Fig. 7a): one active
    /// block per chip, valid pages moved through the controller into the chip's active block
    /// (usually on another plane), all host I/O held while it runs.
    Conventional,
}

/// DFTL's (and CDFTL's) options (`[ftl.dftl]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct DftlOptions {
    /// GC mode.
    pub gc: DftlGc,
}

impl Options for DftlOptions {
    const SECTION: &'static str = "dftl";

    fn check(&self, cfg: &DriveConfig) -> Result<(), ConfigError> {
        if self.gc == DftlGc::Conventional && cfg.ftl.gc_preemption != GcPreemption::None {
            return Err(ConfigError::Invalid {
                key: "ftl.gc_preemption".into(),
                value: format!("\"{}\"", cfg.ftl.gc_preemption.name()),
                rule: "cannot go with [ftl.dftl] gc = \"conventional\" (a GC that holds every plane blocks reads by \
                       design)"
                    .into(),
            });
        }
        Ok(())
    }
}

/// CDFTL's options (`[ftl.cdftl]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct CdftlOptions {
    /// Translation pages the second-level cache (CTP) holds, out of `ftl.mapping_cache_bytes`
    /// (the rest is CMT). Default: 8/9 of the bytes in whole pages (Table 5.2's 2 pages
    /// beside 256 entries); Table 6.1 has 8 pages beside 33 KB.
    pub ctp_pages: Option<u32>,
}

impl Options for CdftlOptions {
    const SECTION: &'static str = "cdftl";
}

/// A flavour's constructor.
pub(crate) type Remake = fn(&Resolved) -> Result<Dftl, ConfigError>;

/// What an FTL built on the DFTL engine changes: CDFTL its cache, DLOOP and PCFTL their
/// placement and GC (seed 000), PCFTL its write cache. The mapping-table model is the same.
pub(crate) struct Flavour {
    pub name: &'static str,
    /// CDFTL's second level of cached translation pages.
    pub second_level: bool,
    pub gc: GcMode,
    /// Host page placement when `ftl.allocation` is unset.
    pub allocation: Allocation,
    /// Keeps PCFTL's Plane Info table (Sec. 3.3): 9 bytes per plane of DRAM.
    pub plane_info: bool,
    /// The flavour's constructor, for recovery to build the FTL anew.
    pub remake: Remake,
}

/// Plane Info entry: a 5-byte plane address, 2-byte active block, 2-byte free-block count
/// (seed 000 Sec. 3.3).
const PLANE_INFO_ENTRY_BYTES: u64 = 9;

impl Dftl {
    /// DFTL for a validated config; `[ftl.dftl] gc` picks its GC mode.
    pub fn new(cfg: &Resolved) -> Result<Dftl, ConfigError> {
        Dftl::build(cfg, Flavour { name: "dftl", remake: Dftl::new, ..Dftl::plain(cfg)? })
    }

    /// CDFTL for a validated config: the DFTL engine with a second-level cache of whole
    /// translation pages (see `cdftl.rs`).
    pub fn cdftl(cfg: &Resolved) -> Result<Dftl, ConfigError> {
        Dftl::build(cfg, Flavour { name: "cdftl", second_level: true, remake: Dftl::cdftl, ..Dftl::plain(cfg)? })
    }

    fn plain(cfg: &Resolved) -> Result<Flavour, ConfigError> {
        // PCFTL's DFTL baseline places pages by LPN (seed 000 Sec. 3.1, L74: "distributed based
        // on their LPNs", the unevenness PCFTL removes; its SDWPP is DLOOP's within 2-3%,
        // Sec. 5.3), the rest of the drive round-robin.
        let (gc, allocation) = match DftlOptions::of(cfg)?.gc {
            DftlGc::Plane => (GcMode::per_plane(cfg)?, Allocation::RoundRobin),
            DftlGc::Conventional => (GcMode::conventional(cfg)?, Allocation::StaticLpn),
        };
        Ok(Flavour { name: "dftl", second_level: false, gc, allocation, plane_info: false, remake: Dftl::new })
    }

    pub(crate) fn build(cfg: &Resolved, f: Flavour) -> Result<Dftl, ConfigError> {
        let (name, second_level) = (f.name, f.second_level);
        let st = DemandState::new(cfg, name, f.gc, f.allocation)?;
        let page = u64::from(cfg.geometry.page_size_bytes);
        let bytes = cfg.ftl.mapping_cache_bytes.unwrap_or(if second_level {
            CDFTL_DEFAULT_CACHE_BYTES
        } else {
            DEFAULT_CACHE_BYTES
        });
        // CDFTL splits its SRAM 8:1 between cached translation pages and CMT entries (Table
        // 5.2: 2 pages of 8 KB and 256 entries), unless told how many pages (`[ftl.cdftl] ctp_pages`).
        let ctp_cap = match (second_level, CdftlOptions::of(cfg)?.ctp_pages) {
            (false, _) => 0,
            (true, Some(n)) if n >= 1 && u64::from(n) * page < bytes => n as usize,
            (true, Some(n)) => {
                return Err(ConfigError::Invalid {
                    key: "ftl.cdftl.ctp_pages".into(),
                    value: n.to_string(),
                    rule: format!(
                        "must be at least 1 and leave room for CMT entries in mapping_cache_bytes = {bytes} \
                         ({page}-byte pages)"
                    ),
                })
            }
            (true, None) => (bytes * 8 / 9 / page).max(1) as usize,
        };
        let ctp_bytes = ctp_cap as u64 * page;
        let entries = (bytes.saturating_sub(ctp_bytes) * 4 / ENTRY_QUARTER_BYTES) as usize;
        if entries < 2 {
            return Err(ConfigError::Invalid {
                key: "ftl.mapping_cache_bytes".into(),
                value: bytes.to_string(),
                rule: "must hold at least 2 DFTL entries of 8.25 bytes (17 bytes)".into(),
            });
        }
        let gtd_entries = st.chip_translation_pages();
        Ok(Dftl {
            cmt: Cmt::new(entries, st.per_tp, st.directory.len(), st.flash_map.len() as u32),
            gtd_bytes: if second_level { (gtd_entries * CDFTL_GTD_ENTRY_BITS).div_ceil(8) } else { gtd_entries * 4 },
            cmt_bytes: (entries as u64 * ENTRY_QUARTER_BYTES).div_ceil(4),
            ctp: Vec::with_capacity(ctp_cap),
            ctp_cap,
            ctp_bytes,
            write_back_events: 0,
            remake: Some(f.remake),
            plane_info_bytes: if f.plane_info { u64::from(cfg.geometry.planes()) * PLANE_INFO_ENTRY_BYTES } else { 0 },
            st,
        })
    }

    /// Cache counters.
    pub fn cache_counts(&self) -> &CacheCounts {
        &self.st.cache
    }

    /// SRAM of the GTD, the CMT, the cached translation pages and the GC metadata, bytes.
    pub fn sram_components(&self) -> (u64, u64, u64, u64) {
        (self.gtd_bytes, self.cmt_bytes, self.ctp_bytes, self.st.gc_metadata_bytes())
    }

    /// Bring translation page `tvpn` into the CTP (most recent), reading it from flash;
    /// a modified page evicted to make room is written back with the CMT's modified entries
    /// of that page folded in: DFTL's batch update (seed 001 L480), which CDFTL's first level
    /// inherits (L488: "similar to DFTL"). Without it the copy lacks entries the cache still
    /// holds, so it keeps its old backup stamp and recovery must scan past it.
    fn ctp_load(&mut self, ctx: &mut FlashCtx, tvpn: u32) -> Result<(), SimError> {
        if self.ctp_touch(tvpn) {
            return Ok(());
        }
        if self.ctp.len() == self.ctp_cap {
            let (victim, dirty) = self.ctp.remove(0);
            if dirty {
                self.batch_update(victim);
            }
        }
        self.st.fetch(ctx, tvpn)?;
        self.ctp.push((tvpn, false));
        Ok(())
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

    /// Batch update: every modified cached entry of translation page `tvpn` goes to flash.
    fn batch_update(&mut self, tvpn: u32) {
        let map = &mut self.st.flash_map;
        self.cmt.drain_dirty(tvpn, |lpn, ppn| map[lpn as usize] = ppn);
        self.write_back_events += 1;
        self.write_back(tvpn);
    }

    /// Count a miss by what it cost since the counters read `reads` and `write_backs`.
    fn classify(&mut self, reads: u64, write_backs: u64, second_level: bool) {
        let c = &mut self.st.cache;
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

    /// Make a free CMT slot, evicting the victim if the cache is full; a modified victim is
    /// written back (CDFTL: into its cached translation page).
    fn make_room(&mut self, ctx: &mut FlashCtx) -> Result<(), SimError> {
        if !self.cmt.is_full() {
            return Ok(());
        }
        let (lpn, ppn, dirty) = self.cmt.evict();
        if dirty {
            self.st.flash_map[lpn as usize] = ppn;
            let tvpn = self.st.tp_of(lpn);
            if self.ctp_cap > 0 {
                self.ctp_modify(ctx, tvpn)?;
            } else {
                self.batch_update(tvpn);
            }
        }
        Ok(())
    }
}

impl DemandFtl for Dftl {
    fn built_anew(&self, cfg: &Resolved) -> Result<Dftl, ConfigError> {
        (self.remake.expect("a Dftl knows its flavour's constructor"))(cfg)
    }

    fn restore_unsaved(&mut self, from: &Dftl) {
        self.st.name = from.st.name;
        self.remake = from.remake;
    }

    fn has_modified_entries(&self, tvpn: u32) -> bool {
        self.cmt.dirty_chains.first(tvpn as usize) != NONE
    }

    fn clean_entries(&mut self, tvpn: u32) {
        let map = &mut self.st.flash_map;
        self.cmt.drain_dirty(tvpn, |lpn, ppn| map[lpn as usize] = ppn);
        // CDFTL: a cached translation page's entries are in the flash map already.
        if let Some(e) = self.ctp.iter_mut().find(|e| e.0 == tvpn) {
            e.1 = false;
        }
    }

    fn state(&self) -> &DemandState {
        &self.st
    }

    fn state_mut(&mut self) -> &mut DemandState {
        &mut self.st
    }

    fn current(&self, lpn: Lpn) -> Ppn {
        match self.cmt.lookup(lpn) {
            Some(s) => self.cmt.ppn[s as usize],
            None => self.st.flash_map[lpn as usize],
        }
    }

    fn prefetch_entry(&self, lpn: Lpn) {
        ftlsim_core::big_array::prefetch(&self.cmt.slot_of, lpn as usize);
        ftlsim_core::big_array::prefetch(&self.st.flash_map, lpn as usize);
    }

    fn access(&mut self, ctx: &mut FlashCtx, lpn: Lpn) -> Result<Ppn, SimError> {
        if let Some(s) = self.cmt.touch(lpn) {
            self.st.cache.hits += 1;
            return Ok(self.cmt.ppn[s as usize]);
        }
        let (reads, write_backs) = (self.st.cache.translation_reads, self.write_back_events);
        // Fetch first, then make room: a CTP load may evict the page a modified victim's
        // entry would go to.
        let tvpn = self.st.tp_of(lpn);
        let mut second_level = false;
        if self.ctp_cap > 0 {
            second_level = self.ctp_touch(tvpn);
            if !second_level {
                self.ctp_load(ctx, tvpn)?;
            }
        } else {
            self.st.fetch(ctx, tvpn)?;
        }
        self.make_room(ctx)?;
        // Programming the victim's write-back may run GC, which caches the pages it moves:
        // perhaps `lpn`, perhaps into the slot just freed.
        self.flush_write_backs(ctx, true)?;
        let ppn = match self.cmt.touch(lpn) {
            Some(s) => self.cmt.ppn[s as usize],
            None => {
                self.make_room(ctx)?;
                let ppn = self.st.flash_map[lpn as usize];
                self.cmt.insert(lpn, ppn, false);
                ppn
            }
        };
        self.classify(reads, write_backs, second_level);
        Ok(ppn)
    }

    fn remap(&mut self, ctx: &mut FlashCtx, lpn: Lpn, ppn: Ppn) -> Result<(), SimError> {
        match self.cmt.lookup(lpn) {
            Some(s) => self.cmt.update(s, ppn),
            None => {
                self.make_room(ctx)?;
                self.cmt.insert(lpn, ppn, true);
            }
        }
        Ok(())
    }

    fn relocated(&mut self, ctx: &mut FlashCtx, lpn: Lpn, dst: Ppn) -> Result<(), SimError> {
        let tvpn = self.st.tp_of(lpn);
        if let Some(s) = self.cmt.lookup(lpn) {
            self.st.cache.hits += 1;
            self.cmt.update(s, dst);
        } else if self.ctp_touch(tvpn) {
            // CDFTL: the page's translation page is cached; update it there.
            self.st.flash_map[lpn as usize] = dst;
            self.ctp.last_mut().expect("touched page").1 = true;
            self.st.cache.hits += 1;
            self.st.cache.second_level_hits += 1;
        } else {
            // The new PPN is known: nothing to fetch (Sec. 5.2.1).
            let (reads, write_backs) = (self.st.cache.translation_reads, self.write_back_events);
            self.make_room(ctx)?;
            self.classify(reads, write_backs, false);
            self.cmt.insert(lpn, dst, true);
        }
        Ok(())
    }

    fn rewrite_reads_old(&self) -> bool {
        // CDFTL holds the whole page in SRAM.
        self.ctp_cap == 0
    }
}

demand_ftl_parts!(Dftl);

impl Ftl for Dftl {
    fn name(&self) -> &'static str {
        self.st.name
    }

    demand_ftl_methods!();

    fn mapping_sram_bytes(&self) -> u64 {
        self.gtd_bytes + self.cmt_bytes + self.ctp_bytes
    }

    fn extra_metrics(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m = serde_json::Map::new();
        self.st.cache.put_metrics(&mut m);
        m.insert("sram_gtd_bytes".into(), self.gtd_bytes.into());
        m.insert("sram_cmt_bytes".into(), self.cmt_bytes.into());
        m.insert("sram_gc_metadata_bytes".into(), self.st.gc_metadata_bytes().into());
        m.insert("cmt_entries".into(), (self.cmt.cap as u64).into());
        self.st.put_move_metrics(&mut m);
        if self.plane_info_bytes > 0 {
            m.insert("dram_plane_info_bytes".into(), self.plane_info_bytes.into());
        }
        if self.ctp_cap > 0 {
            m.insert("sram_ctp_bytes".into(), self.ctp_bytes.into());
            m.insert("ctp_pages".into(), (self.ctp_cap as u64).into());
            m.insert("cache_second_level_hits".into(), self.st.cache.second_level_hits.into());
        }
        m
    }

    fn check_invariants(&self, flash: &FlashArray) {
        self.check_with_lent(flash, 0);
    }
}

impl Dftl {
    /// The block manager, for an FTL built on this one that borrows whole blocks (WAFTL).
    pub(crate) fn block_manager(&mut self) -> &mut ftlsim_core::gc::BlockManager {
        &mut self.st.bm
    }

    /// [`Ftl::check_invariants`] with `lent_valid` valid pages in blocks lent out of the block
    /// manager.
    pub(crate) fn check_with_lent(&self, flash: &FlashArray, lent_valid: u64) {
        self.st.check_invariants(flash, |lpn| self.current(lpn), lent_valid);
        assert!(self.ctp.len() <= self.ctp_cap, "ctp holds {} pages, capacity {}", self.ctp.len(), self.ctp_cap);
        let mut seen: Vec<u32> = self.ctp.iter().map(|e| e.0).collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), self.ctp.len(), "a translation page is cached twice");
        assert_eq!(self.cmt.entries, self.cmt.cap - self.cmt.free.len(), "cmt entries and free slots disagree");
        let indexed = self.cmt.slot_of.iter().filter(|&&s| s != NONE).count();
        assert_eq!(indexed, self.cmt.entries, "cmt slots by lpn and entries disagree");
        let mut chained = 0;
        for tp in 0..self.cmt.dirty_chains.chains() {
            for s in self.cmt.dirty_chains.iter(tp) {
                assert!(self.cmt.dirty[s as usize], "clean slot {s} on the modified list of translation page {tp}");
                assert_eq!(self.st.tp_of(self.cmt.lpn[s as usize]) as usize, tp, "slot {s} on another page's list");
                chained += 1;
            }
        }
        let listed = self.cmt.dirty.iter().filter(|&&d| d).count();
        assert_eq!(listed, chained, "modified entries and the per-page lists disagree");
    }
}
