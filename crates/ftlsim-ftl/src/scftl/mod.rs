//! SCFTL, the thesis's demand-based page-level FTL with an efficient caching strategy
//! (seed 001 Ch. 5: Sec. 5.1 design, Figs. 5.1-5.2, Table 5.1 D-NRU, Table 5.2 sizes).
//!
//! - Two-level translation (Sec. 5.1.1): the page map lives in translation pages on flash
//!   (page kind `Translation`, OOB LPN = translation page number); the translation page
//!   directory (TPD) in SRAM holds, per translation page, its PPN, a 3-bit modified counter
//!   (MC, saturating at 7) and a modified flag (Fig. 5.1, Table 5.2: 4.5 B per entry).
//! - CMT (Sec. 5.1.2.1): small entries of (start LPN tag, start PPN, 5-bit consecutive field
//!   C, valid/modified/recently-accessed bits), 9 B each (Table 5.2); an entry maps
//!   LPN..=LPN+C to PPN..=PPN+C (C <= 31). Entries never overlap nor span two translation
//!   pages. `ftl.mapping_cache_bytes` / 9 gives the entries (default 18,432 B = 2,048).
//! - Spatial fetching (Sec. 5.1.2.1, Fig. 5.1): a miss reads the translation page once and
//!   caches the requested entry (with the run of consecutively mapped neighbours that contains
//!   it, as one consecutive entry) by normal fetching, then the other entries of a window of
//!   up to 64 LPNs (`ftl.scftl.fetch_limit`; Sec. 5.2: "the number of fetches in each access
//!   is limited to 64") by spatial fetching, nearest runs first. The window takes neighbours on both sides like
//!   Fig. 5.1 (10-13 for 11: (n-1)/2 before, n/2 after) and slides to stay inside the
//!   translation page. Spatial fetching stops when D-NRU finds no admissible victim.
//! - The four update cases of Fig. 5.2: (a) C = 0, updated in place; (b) head and (c) tail
//!   of a consecutive entry: the entry shrinks and a new entry holds the update; (d) middle:
//!   the entry splits into head, updated entry and tail. A split needs free slots, so an
//!   update hit can evict. Re-merge (Fig. 5.2b): if the page programmed just before the new
//!   PPN (same block, PPN - 1) holds LPN - 1 and the cached entry covering LPN - 1 ends there
//!   at that PPN, the update extends that entry instead (only the LPN of the previously
//!   programmed PPN is checked, as the thesis says).
//! - Replacement (Sec. 5.1.2.2, Table 5.1): D-NRU by default; `ftl.scftl.replacement = "lru"`
//!   or `"nru"` for the Fig. 5.13 comparison. D-NRU normal fetching takes, in order,
//!   !A&!M, !A&M&MC>=c, !A&M&MC<c, A&!M, A&M&MC>=c, A&M&MC<c; spatial fetching takes !A&!M,
//!   !A&M&MC>=c, A&!M, A&M&MC>=c and never an entry with MC < c. c defaults to 7, the
//!   3-bit maximum (`ftl.scftl.modified_threshold`). Ties within a class go to the first
//!   entry found by a clock hand that moves past each victim. Recently-accessed (A) bits: set by host hits, host updates and normal
//!   fetches; not set by D-NRU spatial fetches nor by GC relocations; all A bits are cleared
//!   at once whenever a victim had to be taken with its A bit set (no admissible entry had A
//!   clear): the NRU epoch ends. NRU uses the classes !A&!M, !A&M, A&!M, A&M for every fetch
//!   and sets A on spatial fetches too; LRU evicts the least recently used entry.
//! - MC counts the mapping entries of the translation page that became modified in the cache
//!   (an update of an LPN whose covering entry was not already modified), saturating at 7.
//! - Write-back with batch update: evicting a modified entry re-reads its translation page
//!   (SCFTL does not cache it, Sec. 5.1.2.1) and writes it anew with every modified cached
//!   entry of that page, which become clean; the TPD's MC and modified flag reset.
//! - Shared with `dftl` (`demand.rs`): translation pages have their own write stream and are
//!   garbage-collected like data pages (GC moves both kinds into one GC block per plane); GC
//!   updates mappings through the cache (a miss without penalty, Sec. 5.2.1); write-backs
//!   are queued and programmed when the cache update, host operation or GC that raised them
//!   ends.
//!
//! Departures: unmapped neighbours are not spatially fetched (only mapped runs are); the
//! window slides inside the translation page; GC relocations do not set A; host and
//! translation pages are allocated round-robin over the planes with separate pointers (with
//! one shared pointer, several write-backs per host write could pile host data on one plane
//! until it has nothing to reclaim).

mod cmt;

use crate::demand::{demand_ftl_methods, demand_ftl_parts, CacheCounts, DemandFtl, DemandState, GcMode};
use crate::options::{invalid, Options};
use cmt::{Cmt, Combo, Entry};
use ftlsim_core::config::{Allocation, DriveConfig, Resolved};
use ftlsim_core::error::{ConfigError, SimError};
use ftlsim_core::flash::{FlashArray, PageKind};
use ftlsim_core::ftl::{FlashCtx, Ftl};
use ftlsim_core::geometry::{Lpn, Ppn, NONE};
use serde::{Deserialize, Serialize};

/// CMT entry size, bytes (Table 5.2).
const ENTRY_BYTES: u64 = 9;
/// TPD entry size in half bytes: 4.5 B (Table 5.2).
const TPD_HALF_BYTES: u64 = 9;
/// Default CMT: 2,048 entries (Table 5.2), 18,432 bytes.
const DEFAULT_CACHE_BYTES: u64 = 18_432;
/// Largest consecutive field (5 bits).
pub const MAX_CONSECUTIVE: u32 = 31;
/// Largest MC (3 bits).
pub const MC_MAX: u8 = 7;

/// Mapping-cache replacement of SCFTL (seed 001 Sec. 5.1.2.2; Sec. 5.3.1 compares all three).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum CacheReplacement {
    /// Least recently used.
    #[serde(rename = "lru")]
    Lru,
    /// Not recently used (classes !A&!M, !A&M, A&!M, A&M).
    #[serde(rename = "nru")]
    Nru,
    /// D-NRU of Table 5.1.
    #[default]
    #[serde(rename = "d-nru")]
    DNru,
}

/// SCFTL's options (`[ftl.scftl]`, seed 001 Ch. 5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ScftlOptions {
    /// CMT replacement policy.
    pub replacement: CacheReplacement,
    /// D-NRU's modified-counter threshold c (Table 5.1), in [1, 7] (3-bit counters).
    pub modified_threshold: u8,
    /// Mapping entries fetched per translation-page read (Sec. 5.2: 64).
    pub fetch_limit: u32,
}

impl Default for ScftlOptions {
    fn default() -> Self {
        ScftlOptions { replacement: CacheReplacement::DNru, modified_threshold: 7, fetch_limit: 64 }
    }
}

impl Options for ScftlOptions {
    const SECTION: &'static str = "scftl";

    fn check(&self, cfg: &DriveConfig) -> Result<(), ConfigError> {
        if !(1..=7).contains(&self.modified_threshold) {
            return Err(invalid(
                "scftl",
                "modified_threshold",
                self.modified_threshold,
                "must be in [1, 7] (3-bit counters)",
            ));
        }
        let entries_per_translation_page = cfg.geometry.page_size_bytes / 4;
        if self.fetch_limit == 0 || self.fetch_limit > entries_per_translation_page {
            return Err(invalid(
                "scftl",
                "fetch_limit",
                self.fetch_limit,
                format!("must be in [1, {entries_per_translation_page}] (the entries of one translation page)"),
            ));
        }
        Ok(())
    }
}

/// Why an entry is being brought into the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fetch {
    Normal,
    Spatial,
}

/// The SCFTL.
#[derive(Serialize, Deserialize)]
pub struct Scftl {
    st: DemandState,
    policy: CacheReplacement,
    c: u8,
    fetch_limit: u32,
    tpd_mc: Vec<u8>,
    tpd_modified: Vec<bool>,
    cmt: Cmt,
    tpd_bytes: u64,
    cmt_bytes: u64,
    /// Scratch for spatial fetching's runs (kept to save an allocation per miss).
    #[serde(skip)]
    runs: Vec<(Lpn, u32)>,
}

impl Scftl {
    /// Build for a validated config (`[ftl.scftl]` sets replacement, c and the fetch limit).
    pub fn new(cfg: &Resolved) -> Result<Scftl, ConfigError> {
        let st = DemandState::new(cfg, "scftl", GcMode::per_plane(cfg)?, Allocation::RoundRobin)?;
        let bytes = cfg.ftl.mapping_cache_bytes.unwrap_or(DEFAULT_CACHE_BYTES);
        let entries = (bytes / ENTRY_BYTES) as usize;
        if entries < 2 {
            return Err(ConfigError::Invalid {
                key: "ftl.mapping_cache_bytes".into(),
                value: bytes.to_string(),
                rule: "must hold at least 2 SCFTL entries of 9 bytes (18 bytes)".into(),
            });
        }
        let tps = st.directory.len();
        let o = ScftlOptions::of(cfg)?;
        Ok(Scftl {
            policy: o.replacement,
            c: o.modified_threshold,
            fetch_limit: o.fetch_limit,
            tpd_mc: vec![0; tps],
            tpd_modified: vec![false; tps],
            cmt: Cmt::new(entries, st.flash_map.len() as u32, st.per_tp, o.replacement == CacheReplacement::Lru),
            tpd_bytes: (st.chip_translation_pages() * TPD_HALF_BYTES).div_ceil(2),
            cmt_bytes: entries as u64 * ENTRY_BYTES,
            runs: Vec::with_capacity(o.fetch_limit as usize),
            st,
        })
    }

    /// Cache counters.
    pub fn cache_counts(&self) -> &CacheCounts {
        &self.st.cache
    }

    /// SRAM of the TPD, the CMT and the GC metadata, bytes.
    pub fn sram_components(&self) -> (u64, u64, u64) {
        (self.tpd_bytes, self.cmt_bytes, self.st.gc_metadata_bytes())
    }

    /// CMT capacity in entries.
    pub fn cmt_entries(&self) -> usize {
        self.cmt.cap()
    }

    /// Cached entries as (start LPN, start PPN, consecutive, modified, recently accessed), by LPN.
    pub fn cached_entries(&self) -> Vec<(Lpn, Ppn, u32, bool, bool)> {
        self.cmt
            .slots_by_lpn()
            .map(|s| {
                let e = self.cmt.entry(s);
                (e.lpn, e.ppn, e.cons, self.cmt.modified(s), self.cmt.accessed(s))
            })
            .collect()
    }

    /// MC of translation page `tvpn`.
    pub fn modified_counter(&self, tvpn: u32) -> u8 {
        self.tpd_mc[tvpn as usize]
    }

    fn tp_of(&self, lpn: Lpn) -> u32 {
        self.st.tp_of(lpn)
    }

    /// Whether entries of translation page `tvpn` are in the high-MC classes (MC >= c).
    fn high(&self, tvpn: u32) -> bool {
        self.tpd_mc[tvpn as usize] >= self.c
    }

    /// Set the MC of `tvpn`, moving its cached entries between the high- and low-MC classes
    /// when the value crosses c.
    fn set_mc(&mut self, tvpn: u32, mc: u8) {
        let was = self.high(tvpn);
        self.tpd_mc[tvpn as usize] = mc;
        let now = self.high(tvpn);
        if was != now {
            self.cmt.set_high_of_page(tvpn, now);
        }
    }

    /// The victim classes of `fetch`, best first, each as the flag combinations it holds
    /// (Table 5.1 for D-NRU; NRU's four classes ignore MC).
    fn classes(&self, fetch: Fetch) -> &'static [&'static [Combo]] {
        use Combo as C;
        const NRU: &[&[Combo]] = &[
            &[C::UNUSED_CLEAN],
            &[C::UNUSED_DIRTY_HIGH, C::UNUSED_DIRTY_LOW],
            &[C::USED_CLEAN],
            &[C::USED_DIRTY_HIGH, C::USED_DIRTY_LOW],
        ];
        const DNRU_NORMAL: &[&[Combo]] = &[
            &[C::UNUSED_CLEAN],
            &[C::UNUSED_DIRTY_HIGH],
            &[C::UNUSED_DIRTY_LOW],
            &[C::USED_CLEAN],
            &[C::USED_DIRTY_HIGH],
            &[C::USED_DIRTY_LOW],
        ];
        // Spatial fetching never evicts a modified entry whose page has MC < c.
        const DNRU_SPATIAL: &[&[Combo]] =
            &[&[C::UNUSED_CLEAN], &[C::UNUSED_DIRTY_HIGH], &[C::USED_CLEAN], &[C::USED_DIRTY_HIGH]];
        match (self.policy, fetch) {
            (CacheReplacement::Nru, _) => NRU,
            (CacheReplacement::DNru, Fetch::Normal) => DNRU_NORMAL,
            (CacheReplacement::DNru, Fetch::Spatial) => DNRU_SPATIAL,
            (CacheReplacement::Lru, _) => unreachable!("LRU has no classes"),
        }
    }

    /// The victim slot for `fetch`, if any entry may be evicted: the least recently used
    /// under LRU, else the entry of the best class nearest the clock hand.
    fn pick_victim(&self, fetch: Fetch) -> Option<u32> {
        if self.policy == CacheReplacement::Lru {
            return self.cmt.least_recent();
        }
        self.classes(fetch).iter().find_map(|combos| match combos {
            [c] => self.cmt.first_of(*c).map(|(_, s)| s),
            _ => combos.iter().filter_map(|&c| self.cmt.first_of(c)).min().map(|(_, s)| s),
        })
    }

    /// Evict one entry for `fetch`, writing it back if modified. None if nothing may go.
    fn evict_one(&mut self, fetch: Fetch) -> Option<bool> {
        let s = self.pick_victim(fetch)?;
        Some(self.evict(s))
    }

    /// Evict slot `s` (the victim picked), writing it back if modified; whether it was.
    fn evict(&mut self, s: u32) -> bool {
        self.cmt.advance_clock(s);
        let (e, accessed, modified) = self.cmt.remove(s);
        if accessed && self.policy != CacheReplacement::Lru {
            // No admissible entry had A clear: the NRU epoch ends.
            self.cmt.clear_accessed();
        }
        if modified {
            for l in e.lpn..=e.end() {
                self.st.flash_map[l as usize] = e.ppn_of(l);
            }
            self.batch_update(self.tp_of(e.lpn));
        }
        modified
    }

    /// Batch update: every modified cached entry of translation page `tvpn` goes to flash.
    fn batch_update(&mut self, tvpn: u32) {
        self.clean_entries(tvpn);
        self.write_back(tvpn);
    }

    /// Make a free slot for normal fetching; whether a modified entry was evicted.
    fn make_room(&mut self) -> bool {
        self.cmt.free_slots() == 0 && self.evict_one(Fetch::Normal).expect("normal fetching can always evict")
    }

    /// The fetch window of `lpn`: up to `fetch_limit` LPNs around it inside its translation page.
    fn window(&self, lpn: Lpn) -> (Lpn, Lpn) {
        let tp_lo = self.tp_of(lpn) * self.st.per_tp;
        let tp_hi = (tp_lo + self.st.per_tp).min(self.st.flash_map.len() as u32);
        let n = self.fetch_limit;
        let lo = lpn.saturating_sub((n - 1) / 2).max(tp_lo);
        let hi = (lo + n).min(tp_hi);
        (hi.saturating_sub(n).max(tp_lo), hi)
    }

    /// The run of uncached LPNs around `lpn` in `lo..hi` whose on-flash mappings are
    /// consecutive (at most MAX_CONSECUTIVE + 1 long), as (start, length).
    fn run_at(&self, lpn: Lpn, lo: Lpn, hi: Lpn) -> (Lpn, u32) {
        let m = &self.st.flash_map;
        let linked = |a: Lpn| m[a as usize] != NONE && m[a as usize + 1] == m[a as usize] + 1;
        let (mut start, mut end) = (lpn, lpn);
        while end - start < MAX_CONSECUTIVE && end + 1 < hi && linked(end) && self.cmt.find(end + 1).is_none() {
            end += 1;
        }
        while end - start < MAX_CONSECUTIVE && start > lo && linked(start - 1) && self.cmt.find(start - 1).is_none() {
            start -= 1;
        }
        (start, end - start + 1)
    }

    /// Cache the other mapped runs of the window `lo..hi` of `lpn`, nearest first, while
    /// the replacement policy admits a victim. Returns whether a modified entry was evicted.
    fn spatial_fetch(&mut self, lpn: Lpn, lo: Lpn, hi: Lpn) -> bool {
        let mut runs = std::mem::take(&mut self.runs);
        runs.clear();
        let mut l = lo;
        while l < hi {
            if let Some(s) = self.cmt.find(l) {
                l = self.cmt.entry(s).end() + 1;
            } else if self.st.flash_map[l as usize] == NONE {
                l += 1;
            } else {
                let (start, len) = self.run_at(l, l, hi);
                runs.push((start, len));
                l = start + len;
            }
        }
        // Nearest first: the runs are in LPN order and none holds `lpn` (it is cached), so
        // merge those before it (nearest last) with those after it; on a tie the one before
        // goes first.
        let split = runs.partition_point(|&(start, _)| start < lpn);
        // The window lies in `lpn`'s translation page.
        let tp = self.tp_of(lpn);
        let accessed = self.policy != CacheReplacement::DNru;
        let (mut before, mut after) = (split, split);
        let mut dirty = false;
        while before > 0 || after < runs.len() {
            let back = before.checked_sub(1).map(|i| (lpn - (runs[i].0 + runs[i].1 - 1), i));
            let ahead = runs.get(after).map(|&(start, _)| (start - lpn, after));
            let i = match (back, ahead) {
                (Some(b), Some(a)) if a.0 < b.0 => a.1,
                (Some(b), _) => b.1,
                (None, Some(a)) => a.1,
                (None, None) => unreachable!("loop condition"),
            };
            if i < split {
                before -= 1;
            } else {
                after += 1;
            }
            let (start, len) = runs[i];
            // A clean victim's slot takes the new entry at once (the common case: nothing
            // else happens between the two, and its flags barely change); a modified one is
            // evicted and written back first.
            let mut reuse = None;
            if self.cmt.free_slots() == 0 {
                match self.pick_victim(Fetch::Spatial) {
                    Some(v) if !self.cmt.modified(v) => reuse = Some(v),
                    Some(v) => dirty |= self.evict(v),
                    None => break,
                }
            }
            // Evictions write back only cached entries, so the run's mappings still hold.
            let ppn = self.st.flash_map[start as usize];
            let entry = Entry { lpn: start, ppn, cons: len - 1 };
            let s = match reuse {
                Some(v) => {
                    self.cmt.advance_clock(v);
                    if self.cmt.replace_clean(v, entry) && self.policy != CacheReplacement::Lru {
                        // No admissible entry had A clear: the NRU epoch ends.
                        self.cmt.clear_accessed();
                    }
                    v
                }
                // (An eviction above may have written this page back: MC is read now.)
                None => self.cmt.insert(entry, false, self.high(tp)),
            };
            self.cmt.touch(s, accessed);
            self.st.cache.spatial_entries += 1;
        }
        self.runs = runs;
        dirty
    }

    /// The entry that the update `lpn -> ppn` re-merges into (Fig. 5.2b): the page programmed
    /// just before `ppn` holds `lpn - 1`, whose cached entry ends there at that page.
    fn merge_target(&self, ctx: &FlashCtx, lpn: Lpn, ppn: Ppn) -> Option<u32> {
        if ppn == NONE || lpn.is_multiple_of(self.st.per_tp) || self.st.geo.page_in_block(ppn) == 0 {
            return None;
        }
        let prev = ppn - 1;
        let oob = ctx.flash().read(prev).ok()?;
        if oob.kind != PageKind::Data || oob.lpn != lpn - 1 {
            return None;
        }
        let p = self.cmt.find(lpn - 1)?;
        let e = self.cmt.entry(p);
        (e.end() == lpn - 1 && e.ppn != NONE && e.ppn_of(lpn - 1) == prev && e.cons < MAX_CONSECUTIVE).then_some(p)
    }

    /// Set the mapping of `lpn` to `ppn` (modified) with the four cases of Fig. 5.2,
    /// evicting for splits. `accessed`: a host update (sets A). Returns (hit, evicted dirty).
    fn update(&mut self, ctx: &mut FlashCtx, lpn: Lpn, ppn: Ppn, accessed: bool) -> Result<(bool, bool), SimError> {
        let hit = self.cmt.find(lpn).is_some();
        let mut dirty = false;
        // Each pass either applies the update or evicts one entry.
        for _ in 0..=self.cmt.cap() {
            let cover = self.cmt.find(lpn);
            let merge = self.merge_target(ctx, lpn, ppn).filter(|&p| Some(p) != cover);
            let newly_modified = cover.is_none_or(|s| !self.cmt.modified(s));
            let need = match cover {
                None => usize::from(merge.is_none()),
                Some(s) => {
                    let e = self.cmt.entry(s);
                    if e.cons == 0 || (lpn == e.lpn && merge.is_some()) {
                        0
                    } else if lpn == e.lpn || lpn == e.end() {
                        1
                    } else {
                        2
                    }
                }
            };
            if self.cmt.free_slots() < need {
                dirty |= self.evict_one(Fetch::Normal).expect("normal fetching can always evict");
                continue;
            }
            let tvpn = self.tp_of(lpn);
            if newly_modified {
                self.set_mc(tvpn, (self.tpd_mc[tvpn as usize] + 1).min(MC_MAX));
            }
            self.tpd_modified[tvpn as usize] = true;
            let high = self.high(tvpn);
            let single = Entry { lpn, ppn, cons: 0 };
            if let Some(s) = cover {
                let e = self.cmt.entry(s);
                if e.cons == 0 {
                    // (a) normal update (or re-merge of a single entry).
                    if merge.is_some() {
                        self.cmt.remove(s);
                    } else {
                        self.cmt.set_ppn(s, ppn);
                        self.cmt.mark_modified(s, high);
                        self.cmt.touch(s, accessed);
                    }
                } else if lpn == e.lpn {
                    // (b) head update.
                    self.cmt.drop_head(s);
                    self.st.cache.splits += 1;
                    if merge.is_none() {
                        let n = self.cmt.insert(single, true, high);
                        self.cmt.touch(n, accessed);
                    }
                } else if lpn == e.end() {
                    // (c) tail update.
                    self.cmt.truncate(s, e.cons - 1);
                    self.st.cache.splits += 1;
                    let n = self.cmt.insert(single, true, high);
                    self.cmt.touch(n, accessed);
                } else {
                    // (d) middle update: head, the updated entry, tail (with the entry's flags).
                    let tail = Entry { lpn: lpn + 1, ppn: e.ppn_of(lpn + 1), cons: e.end() - lpn - 1 };
                    self.cmt.truncate(s, lpn - e.lpn - 1);
                    self.st.cache.splits += 1;
                    let t = self.cmt.insert(tail, self.cmt.modified(s), high);
                    self.cmt.touch(t, self.cmt.accessed(s));
                    let n = self.cmt.insert(single, true, high);
                    self.cmt.touch(n, accessed);
                }
            } else if merge.is_none() {
                let n = self.cmt.insert(single, true, high);
                self.cmt.touch(n, accessed);
            }
            if let Some(p) = merge {
                self.cmt.extend(p);
                self.cmt.mark_modified(p, high);
                self.cmt.touch(p, accessed);
                self.st.cache.merges += 1;
            }
            return Ok((hit, dirty));
        }
        unreachable!("scftl: update of lpn {lpn} does not find room")
    }
}

impl DemandFtl for Scftl {
    fn built_anew(&self, cfg: &Resolved) -> Result<Scftl, ConfigError> {
        Scftl::new(cfg)
    }

    fn has_modified_entries(&self, tvpn: u32) -> bool {
        self.tpd_modified[tvpn as usize]
    }

    fn clean_entries(&mut self, tvpn: u32) {
        let map = &mut self.st.flash_map;
        self.cmt.clean_page(tvpn, |e| {
            for l in e.lpn..=e.end() {
                map[l as usize] = e.ppn_of(l);
            }
        });
        self.set_mc(tvpn, 0);
        self.tpd_modified[tvpn as usize] = false;
    }

    fn state(&self) -> &DemandState {
        &self.st
    }

    fn state_mut(&mut self) -> &mut DemandState {
        &mut self.st
    }

    fn current(&self, lpn: Lpn) -> Ppn {
        match self.cmt.find(lpn) {
            Some(s) => self.cmt.entry(s).ppn_of(lpn),
            None => self.st.flash_map[lpn as usize],
        }
    }

    /// Look an entry up for the host, fetching it (and its neighbours) on a miss.
    fn access(&mut self, ctx: &mut FlashCtx, lpn: Lpn) -> Result<Ppn, SimError> {
        if let Some(s) = self.cmt.find(lpn) {
            self.st.cache.hits += 1;
            self.cmt.touch(s, true);
            return Ok(self.cmt.entry(s).ppn_of(lpn));
        }
        // A miss will look at its whole fetch window: start fetching its lines now.
        let (lo, hi) = self.window(lpn);
        for l in (lo..hi).step_by(16) {
            self.cmt.prefetch(l);
            ftlsim_core::big_array::prefetch(&self.st.flash_map, l as usize);
        }
        let mut dirty = self.make_room();
        // Programming the victim's write-back may run GC, which caches the pages it moves:
        // perhaps `lpn`, perhaps into the slot just freed.
        self.flush_write_backs(ctx, true)?;
        if let Some(s) = self.cmt.find(lpn) {
            self.cmt.touch(s, true);
            let c = &mut self.st.cache;
            if dirty {
                c.misses_write_back += 1
            } else {
                c.misses_no_penalty += 1
            }
            return Ok(self.cmt.entry(s).ppn_of(lpn));
        }
        dirty |= self.make_room();
        let fetched = self.st.fetch(ctx, self.tp_of(lpn))?;
        let (start, len) = if fetched { self.run_at(lpn, lo, hi) } else { (lpn, 1) };
        let ppn = self.st.flash_map[start as usize];
        let high = self.high(self.tp_of(start));
        let s = self.cmt.insert(Entry { lpn: start, ppn, cons: len - 1 }, false, high);
        self.cmt.touch(s, true);
        if fetched {
            dirty |= self.spatial_fetch(lpn, lo, hi);
        }
        match (dirty, fetched) {
            (true, _) => self.st.cache.misses_write_back += 1,
            (false, true) => self.st.cache.misses_fetch += 1,
            (false, false) => self.st.cache.misses_no_penalty += 1,
        }
        Ok(self.current(lpn))
    }

    fn prefetch_entry(&self, lpn: Lpn) {
        self.cmt.prefetch(lpn);
        ftlsim_core::big_array::prefetch(&self.st.flash_map, lpn as usize);
    }

    fn remap(&mut self, ctx: &mut FlashCtx, lpn: Lpn, ppn: Ppn) -> Result<(), SimError> {
        self.update(ctx, lpn, ppn, true).map(|_| ())
    }

    fn relocated(&mut self, ctx: &mut FlashCtx, lpn: Lpn, dst: Ppn) -> Result<(), SimError> {
        // The new PPN is known: a miss fetches nothing (Sec. 5.2.1).
        let (hit, dirty) = self.update(ctx, lpn, dst, false)?;
        let c = &mut self.st.cache;
        if hit {
            c.hits += 1
        } else if dirty {
            c.misses_write_back += 1
        } else {
            c.misses_no_penalty += 1
        }
        Ok(())
    }
}

demand_ftl_parts!(Scftl);

impl Ftl for Scftl {
    fn name(&self) -> &'static str {
        "scftl"
    }

    demand_ftl_methods!();

    fn mapping_sram_bytes(&self) -> u64 {
        self.tpd_bytes + self.cmt_bytes
    }

    fn extra_metrics(&self) -> serde_json::Map<String, serde_json::Value> {
        let c = &self.st.cache;
        let mut m = serde_json::Map::new();
        c.put_metrics(&mut m);
        self.st.put_move_metrics(&mut m);
        m.insert("cmt_spatial_entries".into(), c.spatial_entries.into());
        m.insert("cmt_splits".into(), c.splits.into());
        m.insert("cmt_merges".into(), c.merges.into());
        m.insert("sram_tpd_bytes".into(), self.tpd_bytes.into());
        m.insert("sram_cmt_bytes".into(), self.cmt_bytes.into());
        m.insert("sram_gc_metadata_bytes".into(), self.st.gc_metadata_bytes().into());
        m.insert("cmt_entries".into(), (self.cmt.cap() as u64).into());
        let policy = match self.policy {
            CacheReplacement::Lru => "lru",
            CacheReplacement::Nru => "nru",
            CacheReplacement::DNru => "d-nru",
        };
        m.insert("cmt_replacement".into(), policy.into());
        m
    }

    fn check_invariants(&self, flash: &FlashArray) {
        self.st.check_invariants(flash, |lpn| self.current(lpn), 0);
        self.cmt.check_invariants(|e| self.high(self.tp_of(e.lpn)));
        for s in self.cmt.slots_by_lpn() {
            let e = self.cmt.entry(s);
            assert!(e.cons <= MAX_CONSECUTIVE && (e.cons == 0 || e.ppn != NONE), "bad entry {e:?}");
            assert_eq!(self.tp_of(e.lpn), self.tp_of(e.end()), "entry {e:?} spans translation pages");
            let modified = self.cmt.modified(s);
            assert!(!modified || self.tpd_modified[self.tp_of(e.lpn) as usize], "modified {e:?}, TPD clean");
            if !modified {
                for l in e.lpn..=e.end() {
                    assert_eq!(self.st.flash_map[l as usize], e.ppn_of(l), "clean entry {e:?} differs at {l}");
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ftlsim_core::flash::Oob;
    use ftlsim_core::ftl::FlashCounts;

    /// 4 planes of 32 blocks of 16 pages of 4 KiB (1,024 entries per translation page).
    fn config(cache_bytes: u64) -> Resolved {
        crate::unit_drive(&format!("name = \"scftl\"\nmapping_cache_bytes = {cache_bytes}"))
    }

    /// An entry with its M and A flags.
    fn entry(lpn: Lpn, ppn: Ppn, cons: u32, modified: bool, accessed: bool) -> (Entry, bool, bool) {
        (Entry { lpn, ppn, cons }, modified, accessed)
    }

    /// Cache `e` as if fetched (clean entries also on "flash").
    fn put(f: &mut Scftl, (e, modified, accessed): (Entry, bool, bool)) -> u32 {
        if !modified {
            for l in e.lpn..=e.end() {
                f.st.flash_map[l as usize] = e.ppn_of(l);
            }
        } else {
            let tp = f.tp_of(e.lpn) as usize;
            f.tpd_modified[tp] = true;
        }
        let high = f.high(f.tp_of(e.lpn));
        let s = f.cmt.insert(e, modified, high);
        f.cmt.touch(s, accessed);
        s
    }

    fn entries(f: &Scftl) -> Vec<(Lpn, Ppn, u32, bool)> {
        f.cached_entries().into_iter().map(|(l, p, c, m, _)| (l, p, c, m)).collect()
    }

    /// Run `body` with an SCFTL and a flash context.
    fn with_ctx(cache_bytes: u64, body: impl FnOnce(&mut Scftl, &mut FlashCtx)) {
        let cfg = config(cache_bytes);
        let mut flash = FlashArray::new(&cfg.geometry, false);
        let mut f = Scftl::new(&cfg).unwrap();
        let (mut ops, mut counts) = (Vec::new(), FlashCounts::default());
        let mut ctx = FlashCtx::new(&mut flash, &mut ops, &mut counts, ftlsim_core::ftl::FlashTime::Timed);
        body(&mut f, &mut ctx);
    }

    #[test]
    fn update_case_a_normal() {
        with_ctx(9 * 8, |f, ctx| {
            put(f, entry(5, 40, 0, false, false));
            // PPN 16 is the first page of block 1: no previously programmed page to merge with.
            assert_eq!(f.update(ctx, 5, 16, true).unwrap(), (true, false));
            assert_eq!(entries(f), vec![(5, 16, 0, true)]);
            assert_eq!((f.st.cache.splits, f.st.cache.merges, f.modified_counter(0)), (0, 0, 1));
        });
    }

    #[test]
    fn update_case_b_head_splits() {
        with_ctx(9 * 8, |f, ctx| {
            put(f, entry(8, 40, 3, false, false));
            f.update(ctx, 8, 16, true).unwrap();
            assert_eq!(entries(f), vec![(8, 16, 0, true), (9, 41, 2, false)]);
            assert_eq!(f.st.cache.splits, 1);
        });
    }

    #[test]
    fn update_case_c_tail_splits() {
        with_ctx(9 * 8, |f, ctx| {
            put(f, entry(8, 40, 3, false, false));
            f.update(ctx, 11, 16, true).unwrap();
            assert_eq!(entries(f), vec![(8, 40, 2, false), (11, 16, 0, true)]);
        });
    }

    #[test]
    fn update_case_d_middle_splits_in_three() {
        with_ctx(9 * 8, |f, ctx| {
            put(f, entry(8, 40, 4, false, false));
            f.update(ctx, 10, 16, true).unwrap();
            assert_eq!(entries(f), vec![(8, 40, 1, false), (10, 16, 0, true), (11, 43, 1, false)]);
            assert_eq!(f.current(12), 44);
        });
    }

    #[test]
    fn split_in_a_full_cache_evicts() {
        with_ctx(9 * 2, |f, ctx| {
            put(f, entry(100, 60, 0, false, false));
            put(f, entry(8, 40, 4, false, true));
            f.update(ctx, 10, 16, true).unwrap();
            // The middle split needs two slots; the cache has two: both entries go, and the
            // update lands alone (the split entry itself was evicted).
            assert_eq!(entries(f), vec![(10, 16, 0, true)]);
            assert_eq!(f.current(12), 44, "evicted clean entries are on flash");
        });
    }

    #[test]
    fn update_re_merges_with_the_previous_lpn() {
        with_ctx(9 * 8, |f, ctx| {
            // Pages 0 and 1 of block 0 hold LPNs 7 and 8, programmed in sequence.
            ctx.program(0, Oob { lpn: 7, version: 1, kind: PageKind::Data }).unwrap();
            ctx.program(1, Oob { lpn: 8, version: 1, kind: PageKind::Data }).unwrap();
            put(f, entry(7, 0, 0, true, true));
            put(f, entry(8, 40, 2, false, false));
            // Head update of 8..=10 at PPN 1 joins LPN 7's entry instead of a new one.
            f.update(ctx, 8, 1, true).unwrap();
            assert_eq!(entries(f), vec![(7, 0, 1, true), (9, 41, 1, false)]);
            assert_eq!((f.st.cache.splits, f.st.cache.merges), (1, 1));
            // A single-entry update merges and frees its slot; the next sequential write too.
            ctx.program(2, Oob { lpn: 9, version: 1, kind: PageKind::Data }).unwrap();
            f.update(ctx, 9, 2, true).unwrap();
            assert_eq!(entries(f), vec![(7, 0, 2, true), (10, 42, 0, false)]);
            ctx.program(3, Oob { lpn: 10, version: 1, kind: PageKind::Data }).unwrap();
            f.update(ctx, 10, 3, true).unwrap();
            assert_eq!(entries(f), vec![(7, 0, 3, true)]);
        });
    }

    #[test]
    fn only_the_lpn_of_the_previous_page_is_checked() {
        with_ctx(9 * 8, |f, ctx| {
            // Page 0 holds LPN 3, not 7: no merge although 7's entry would fit by PPN.
            ctx.program(0, Oob { lpn: 3, version: 1, kind: PageKind::Data }).unwrap();
            ctx.program(1, Oob { lpn: 8, version: 1, kind: PageKind::Data }).unwrap();
            put(f, entry(7, 0, 0, true, true));
            f.update(ctx, 8, 1, true).unwrap();
            assert_eq!(entries(f), vec![(7, 0, 0, true), (8, 1, 0, true)]);
            assert_eq!(f.st.cache.merges, 0);
        });
    }

    #[test]
    fn consecutive_field_saturates_at_31() {
        with_ctx(9 * 8, |f, ctx| {
            // Block 8 (PPNs 128..) holds LPNs 28..=31 in its first pages.
            for i in 0..4u32 {
                ctx.program(128 + i, Oob { lpn: 28 + i, version: 1, kind: PageKind::Data }).unwrap();
            }
            // LPNs 1..=31 at PPNs 101..=131: C = 30, LPN 32 at PPN 132 may still join.
            let s = put(f, entry(1, 101, 30, true, true));
            assert_eq!(f.merge_target(ctx, 32, 132), Some(s));
            // LPNs 0..=31 at PPNs 100..=131: C = 31, the 5-bit maximum, so it may not.
            f.cmt.remove(s);
            put(f, entry(0, 100, 31, true, true));
            assert_eq!(f.merge_target(ctx, 32, 132), None);
        });
    }

    /// Evict repeatedly with `fetch` and list the LPNs in victim order.
    fn victims(f: &mut Scftl, fetch: Fetch) -> Vec<Lpn> {
        let mut out = Vec::new();
        while let Some(s) = f.pick_victim(fetch) {
            out.push(f.cmt.remove(s).0.lpn);
        }
        out
    }

    /// One entry of each Table 5.1 class, in scrambled slot order: translation page 0 has
    /// MC = 7 (>= c), translation page 1 has MC = 2 (< c). 1,024 entries per page.
    fn table_5_1(f: &mut Scftl) {
        f.tpd_mc[0] = 7;
        f.tpd_mc[1] = 2;
        let (hi, lo) = (0, 1024);
        put(f, entry(lo + 6, 6, 0, true, true)); // A & M & MC < c: 6th / never
        put(f, entry(hi + 5, 5, 0, true, true)); // A & M & MC >= c: 5th / 4th
        put(f, entry(lo + 4, 4, 0, false, true)); // A & !M: 4th / 3rd
        put(f, entry(lo + 3, 3, 0, true, false)); // !A & M & MC < c: 3rd / never
        put(f, entry(hi + 2, 2, 0, true, false)); // !A & M & MC >= c: 2nd / 2nd
        put(f, entry(lo + 1, 1, 0, false, false)); // !A & !M: 1st / 1st
    }

    #[test]
    fn dnru_normal_fetching_order_of_table_5_1() {
        with_ctx(9 * 8, |f, _| {
            table_5_1(f);
            assert_eq!(victims(f, Fetch::Normal), vec![1025, 2, 1027, 1028, 5, 1030]);
        });
    }

    #[test]
    fn dnru_spatial_fetching_order_of_table_5_1() {
        with_ctx(9 * 8, |f, _| {
            table_5_1(f);
            assert_eq!(victims(f, Fetch::Spatial), vec![1025, 2, 1028, 5], "MC < c entries are never victims");
            assert_eq!(victims(f, Fetch::Normal), vec![1027, 1030]);
        });
    }

    #[test]
    fn nru_and_lru_orders() {
        with_ctx(9 * 8, |f, _| {
            f.policy = CacheReplacement::Nru;
            table_5_1(f);
            assert_eq!(
                victims(f, Fetch::Spatial),
                vec![1025, 1027, 2, 1028, 1030, 5],
                "NRU ignores MC; ties go by the clock hand"
            );
        });
        with_ctx(9 * 8, |f, _| {
            f.policy = CacheReplacement::Lru;
            f.cmt = Cmt::new(f.cmt.cap(), f.st.flash_map.len() as u32, f.st.per_tp, true);
            table_5_1(f);
            let s = f.cmt.find(1030).unwrap();
            f.cmt.touch(s, true);
            assert_eq!(victims(f, Fetch::Spatial), vec![5, 1028, 1027, 2, 1025, 1030]);
        });
    }

    #[test]
    fn recently_accessed_bits_clear_when_a_victim_had_a_set() {
        with_ctx(9 * 2, |f, _| {
            put(f, entry(1, 1, 0, false, true));
            put(f, entry(2, 2, 0, false, true));
            // Every entry is recently accessed: the victim has A set, and the rest lose A.
            assert_eq!(f.evict_one(Fetch::Normal), Some(false));
            assert!(f.cached_entries().iter().all(|e| !e.4));
        });
    }

    #[test]
    fn spatial_fetching_takes_both_sides_of_the_miss() {
        with_ctx(9 * 64, |f, ctx| {
            assert_eq!(f.window(11), (0, 64));
            assert_eq!(f.window(100), (69, 133), "31 before, 32 after");
            assert_eq!(f.window(1023), (960, 1024), "slid inside the translation page");
            // Translation page 0 on flash; LPNs 0..=99 mapped, runs of 4 consecutive PPNs.
            ctx.program(0, Oob { lpn: 0, version: 0, kind: PageKind::Translation }).unwrap();
            f.st.directory[0] = 0;
            for l in 0..100u32 {
                f.st.flash_map[l as usize] = 1000 + (l / 4) * 10 + l % 4;
            }
            assert_eq!(f.access(ctx, 50).unwrap(), 1000 + 120 + 2);
            assert_eq!(f.st.cache.misses_fetch, 1);
            assert_eq!(f.st.cache.translation_reads, 1);
            let got = entries(f);
            // Window 19..=82: runs 19 (tail of 16..19), 20..23, ..., 80..82: 1 + 15 + 1 entries.
            assert_eq!(got.len(), 17);
            assert_eq!(got[0], (19, 1000 + 40 + 3, 0, false));
            assert_eq!(got[16], (80, 1200, 2, false));
            assert_eq!(f.st.cache.spatial_entries, 16);
            // The requested entry is recently accessed, the spatially fetched ones are not.
            assert!(f.cached_entries().iter().all(|e| e.4 == (e.0 == 48)));
            assert_eq!(f.access(ctx, 21).unwrap(), 1051);
            assert_eq!(f.st.cache.hits, 1);
        });
    }
}
