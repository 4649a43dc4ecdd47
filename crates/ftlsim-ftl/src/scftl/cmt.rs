//! SCFTL's cached mapping table (seed 001 Sec. 5.1.2): fully associative consecutive
//! entries, with the flags D-NRU and NRU choose victims by (Table 5.1): recently accessed
//! (A), modified (M), and H, "the entry's translation page has MC >= c".
//!
//! How it is kept, and why (SCFTL replayed 75x slower than DFTL before):
//! - Each flag is one bit per slot. A victim is the first entry of the best admissible
//!   class from the clock hand. Every class of Table 5.1 (and of NRU) is one or two of six
//!   flag combinations ([`Combo`]); for each combination a summary bit per 64-slot word says
//!   whether the word holds one, kept up to date on every flag change. The first entry of a
//!   combination from the hand is then found in a few word operations (one summary word
//!   covers 4,096 slots), and the order found is exactly that of a scan.
//! - The covering entry of an LPN is a lookup in a per-LPN slot array (`cover`), not an
//!   ordered-map search: spatial fetching asks it for every LPN of a 64-LPN window. It
//!   costs the simulator 4 bytes per logical page (the simulated SRAM is the CMT's size).
//! - Modified entries are chained per translation page, so a batch update and an MC that
//!   crosses c visit only them. H is kept for modified entries only (no class tells clean
//!   entries apart by MC).
//!
//! Invariants ([`Cmt::check_invariants`]): `cover` points every LPN of every entry at its
//! slot and nothing else anywhere; used bits and the free list agree; flags of unused slots
//! are clear; the chains hold exactly the modified entries, each on its page's chain.

use crate::slot_chains::SlotChains;
use ftlsim_core::bits::Bits;
use ftlsim_core::geometry::{Lpn, Ppn, NONE};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// One CMT entry; `lpn..=lpn+cons` maps to `ppn..=ppn+cons` (`ppn` NONE only with cons 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Entry {
    pub lpn: Lpn,
    pub ppn: Ppn,
    pub cons: u32,
}

impl Entry {
    pub fn end(&self) -> Lpn {
        self.lpn + self.cons
    }
    pub fn ppn_of(&self, lpn: Lpn) -> Ppn {
        if self.ppn == NONE {
            NONE
        } else {
            self.ppn + (lpn - self.lpn)
        }
    }
}

/// A combination of flags that victim classes are made of: the value A, M and H must have
/// (`None`: either).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Combo(usize);

/// Number of combinations.
const COMBOS: usize = 6;

impl Combo {
    /// Not recently accessed, clean.
    pub const UNUSED_CLEAN: Combo = Combo(0);
    /// Not recently accessed, modified, its page's MC >= c.
    pub const UNUSED_DIRTY_HIGH: Combo = Combo(1);
    /// Not recently accessed, modified, MC < c.
    pub const UNUSED_DIRTY_LOW: Combo = Combo(2);
    /// Recently accessed, clean.
    pub const USED_CLEAN: Combo = Combo(3);
    /// Recently accessed, modified, MC >= c.
    pub const USED_DIRTY_HIGH: Combo = Combo(4);
    /// Recently accessed, modified, MC < c.
    pub const USED_DIRTY_LOW: Combo = Combo(5);
}

/// The CMT.
#[derive(Serialize, Deserialize)]
pub(super) struct Cmt {
    cap: usize,
    slots: Vec<Entry>,
    used: Bits,
    accessed: Bits,
    modified: Bits,
    high: Bits,
    /// Under LRU: last use of each slot, and the slots by last use.
    track_lru: bool,
    stamp: Vec<u64>,
    lru: BTreeSet<(u64, u32)>,
    /// The slot whose entry covers each LPN, NONE when uncached.
    #[serde(deserialize_with = "ftlsim_core::big_array::deserialize")]
    cover: Vec<u32>,
    /// Entries per translation page (entries never span two).
    per_tp: u32,
    /// Modified entries chained per translation page: head by page, links by slot.
    dirty_chains: SlotChains,
    entries: usize,
    free: Vec<u32>,
    /// Per combination, one bit per 64-slot word: the word holds an entry of it.
    /// `summary[w / 64][c]` bit `w % 64`: word `w` holds an entry of combination `c` (the
    /// six combinations side by side, so that a refresh touches one cache line).
    summary: Vec<[u64; COMBOS]>,
    /// The clock hand: victims are searched from here.
    clock: usize,
    now: u64,
}

impl Cmt {
    /// An empty table of `cap` entries over `logical_pages` LPNs, `per_tp` to a translation
    /// page; `track_lru` keeps the use order (LRU replacement).
    pub fn new(cap: usize, logical_pages: u32, per_tp: u32, track_lru: bool) -> Cmt {
        let blank = Entry { lpn: NONE, ppn: NONE, cons: 0 };
        Cmt {
            cap,
            slots: vec![blank; cap],
            used: Bits::new(cap as u64),
            accessed: Bits::new(cap as u64),
            modified: Bits::new(cap as u64),
            high: Bits::new(cap as u64),
            track_lru,
            stamp: vec![0; cap],
            lru: BTreeSet::new(),
            cover: ftlsim_core::big_array::filled(logical_pages as usize, NONE),
            per_tp,
            dirty_chains: SlotChains::new(logical_pages.div_ceil(per_tp) as usize, cap),
            entries: 0,
            free: (0..cap as u32).rev().collect(),
            summary: vec![[0; COMBOS]; cap.div_ceil(64).div_ceil(64)],
            clock: 0,
            now: 0,
        }
    }

    /// The slots of word `w` in each combination, by [`Combo`] index.
    #[inline]
    fn combo_words(&self, w: usize) -> [u64; COMBOS] {
        let (u, a, m, h) =
            (self.used.words()[w], self.accessed.words()[w], self.modified.words()[w], self.high.words()[w]);
        let (unused, used) = (u & !a, u & a);
        [unused & !m, unused & m & h, unused & m & !h, used & !m, used & m & h, used & m & !h]
    }

    /// The slots of word `w` in combination `c` (one of [`Cmt::combo_words`]).
    #[inline]
    fn combo_word(&self, w: usize, c: usize) -> u64 {
        let (u, a, m, h) =
            (self.used.words()[w], self.accessed.words()[w], self.modified.words()[w], self.high.words()[w]);
        let by_a = if c < 3 { u & !a } else { u & a };
        by_a & match c % 3 {
            0 => !m,
            1 => m & h,
            _ => m & !h,
        }
    }

    /// Bring the summary bits of the word holding slot `s` up to date.
    #[inline]
    fn refresh(&mut self, s: u32) {
        let w = s as usize / 64;
        let (i, bit) = (w / 64, 1u64 << (w % 64));
        let words = self.combo_words(w);
        // Branch-free: whether a combination is present in a word is unpredictable.
        for (sum, x) in self.summary[i].iter_mut().zip(words) {
            *sum = (*sum & !bit) | (bit * u64::from(x != 0));
        }
    }

    /// Capacity in entries.
    pub fn cap(&self) -> usize {
        self.cap
    }

    /// The slot whose entry covers `lpn`.
    #[inline]
    pub fn find(&self, lpn: Lpn) -> Option<u32> {
        let s = self.cover[lpn as usize];
        (s != NONE).then_some(s)
    }

    /// Prefetch the cover entry of `lpn` (a hint).
    pub fn prefetch(&self, lpn: Lpn) {
        ftlsim_core::big_array::prefetch(&self.cover, lpn as usize);
    }

    fn cover(&mut self, lo: Lpn, hi_inclusive: Lpn, slot: u32) {
        self.cover[lo as usize..=hi_inclusive as usize].fill(slot);
    }

    pub fn free_slots(&self) -> usize {
        self.free.len()
    }

    /// The entry in slot `s`.
    #[inline]
    pub fn entry(&self, s: u32) -> Entry {
        self.slots[s as usize]
    }

    /// Point entry `s` at `ppn`.
    pub fn set_ppn(&mut self, s: u32, ppn: Ppn) {
        self.slots[s as usize].ppn = ppn;
    }

    /// Shorten entry `s` to `cons` (it covers `lpn..=lpn + cons`).
    pub fn truncate(&mut self, s: u32, cons: u32) {
        let e = &mut self.slots[s as usize];
        assert!(cons < e.cons, "truncate of {e:?} to {cons}");
        let (from, to) = (e.lpn + cons + 1, e.end());
        e.cons = cons;
        self.cover(from, to, NONE);
    }

    /// Lengthen entry `s` by its next LPN.
    pub fn extend(&mut self, s: u32) {
        let e = &mut self.slots[s as usize];
        e.cons += 1;
        let end = e.end();
        assert_eq!(self.cover[end as usize], NONE, "extending slot {s} over a cached lpn {end}");
        self.cover[end as usize] = s;
    }

    pub fn accessed(&self, s: u32) -> bool {
        self.accessed.get(s)
    }

    pub fn modified(&self, s: u32) -> bool {
        self.modified.get(s)
    }

    /// Mark entry `s` modified; `high`: its translation page's MC is at least c.
    pub fn mark_modified(&mut self, s: u32, high: bool) {
        debug_assert!(self.used.get(s));
        if !self.modified.get(s) {
            self.modified.set(s, true);
            self.link_dirty(s);
        }
        self.high.set(s, high);
        self.refresh(s);
    }

    fn tp_of_slot(&self, s: u32) -> usize {
        (self.slots[s as usize].lpn / self.per_tp) as usize
    }

    fn link_dirty(&mut self, s: u32) {
        self.dirty_chains.push(self.tp_of_slot(s), s);
    }

    fn unlink_dirty(&mut self, s: u32) {
        self.dirty_chains.remove(self.tp_of_slot(s), s);
    }

    /// Mark used now (LRU order), and recently accessed if `accessed`.
    pub fn touch(&mut self, s: u32, accessed: bool) {
        if self.track_lru {
            self.lru.remove(&(self.stamp[s as usize], s));
            self.now += 1;
            self.stamp[s as usize] = self.now;
            self.lru.insert((self.now, s));
        }
        if accessed && !self.accessed.get(s) {
            self.accessed.set(s, true);
            self.refresh(s);
        }
    }

    /// Cache `e`, modified or not (`high` as in [`Cmt::mark_modified`]), A clear; returns
    /// its slot.
    pub fn insert(&mut self, e: Entry, modified: bool, high: bool) -> u32 {
        let s = self.free.pop().expect("insert into a full cache");
        debug_assert!(self.find(e.lpn).is_none() && self.find(e.end()).is_none(), "overlapping entry {e:?}");
        self.slots[s as usize] = e;
        self.used.set(s, true);
        self.modified.set(s, modified);
        self.high.set(s, modified && high);
        if modified {
            self.link_dirty(s);
        }
        self.cover(e.lpn, e.end(), s);
        self.entries += 1;
        self.refresh(s);
        self.touch(s, false);
        s
    }

    /// Put `e` (clean, A clear) in slot `s` in place of its clean entry: [`Cmt::remove`] then
    /// [`Cmt::insert`] into the same slot, without the round trip through the free list and
    /// with the summary refreshed only if the flags changed. Returns whether the old entry
    /// was recently accessed.
    pub fn replace_clean(&mut self, s: u32, e: Entry) -> bool {
        let old = self.slots[s as usize];
        debug_assert!(self.used.get(s) && !self.modified.get(s) && !self.high.get(s), "replace of {old:?}");
        self.cover(old.lpn, old.end(), NONE);
        debug_assert!(self.find(e.lpn).is_none() && self.find(e.end()).is_none(), "overlapping entry {e:?}");
        self.slots[s as usize] = e;
        self.cover(e.lpn, e.end(), s);
        if self.track_lru {
            self.lru.remove(&(self.stamp[s as usize], s));
        }
        let accessed = self.accessed.get(s);
        if accessed {
            self.accessed.set(s, false);
            self.refresh(s);
        }
        self.touch(s, false);
        accessed
    }

    /// Remove slot `s`; returns its entry and whether it was recently accessed and modified.
    pub fn remove(&mut self, s: u32) -> (Entry, bool, bool) {
        let e = self.slots[s as usize];
        let flags = (self.accessed.get(s), self.modified.get(s));
        if flags.1 {
            self.unlink_dirty(s);
        }
        self.cover(e.lpn, e.end(), NONE);
        self.entries -= 1;
        if self.track_lru {
            self.lru.remove(&(self.stamp[s as usize], s));
        }
        for bits in [&mut self.used, &mut self.accessed, &mut self.modified, &mut self.high] {
            bits.set(s, false);
        }
        self.refresh(s);
        self.free.push(s);
        (e, flags.0, flags.1)
    }

    /// Move the start of entry `s` up by one LPN (head split).
    pub fn drop_head(&mut self, s: u32) {
        let e = &mut self.slots[s as usize];
        let old = e.lpn;
        e.lpn += 1;
        e.ppn += 1;
        e.cons -= 1;
        self.cover[old as usize] = NONE;
    }

    /// Slots of the entries starting in `lo..hi`, by LPN.
    pub fn slots_in(&self, lo: Lpn, hi: Lpn) -> impl Iterator<Item = u32> + '_ {
        let hi = hi.min(self.cover.len() as Lpn);
        (lo..hi).filter_map(move |l| {
            let s = self.cover[l as usize];
            (s != NONE && self.slots[s as usize].lpn == l).then_some(s)
        })
    }

    /// Slots by start LPN.
    pub fn slots_by_lpn(&self) -> impl Iterator<Item = u32> + '_ {
        self.slots_in(0, self.cover.len() as Lpn)
    }

    /// Set H of the modified entries of translation page `tp` to `v`.
    pub fn set_high_of_page(&mut self, tp: u32, v: bool) {
        let mut s = self.dirty_chains.first(tp as usize);
        while s != NONE {
            self.high.set(s, v);
            self.refresh(s);
            s = self.dirty_chains.next(s);
        }
    }

    /// Make every modified entry of translation page `tp` clean, handing each to `f`.
    pub fn clean_page(&mut self, tp: u32, mut f: impl FnMut(Entry)) {
        let mut s = self.dirty_chains.take(tp as usize);
        while s != NONE {
            self.modified.set(s, false);
            self.high.set(s, false);
            self.refresh(s);
            f(self.slots[s as usize]);
            s = self.dirty_chains.next(s);
        }
    }

    /// Every A bit cleared: the NRU epoch ends.
    pub fn clear_accessed(&mut self) {
        self.accessed.clear();
        for w in 0..self.used.words().len() {
            self.refresh((w * 64) as u32);
        }
    }

    /// The least recently used slot (LRU replacement).
    pub fn least_recent(&self) -> Option<u32> {
        debug_assert!(self.track_lru);
        self.lru.iter().next().map(|&(_, s)| s)
    }

    /// The first slot in combination `c` from the clock hand, wrapping around, with its
    /// distance from the hand.
    pub fn first_of(&self, c: Combo) -> Option<(usize, u32)> {
        let c = c.0;
        let (w0, b0) = (self.clock / 64, self.clock % 64);
        let at = |w: usize, x: u64| {
            let s = (w * 64) as u32 + x.trailing_zeros();
            let s_ = s as usize;
            (if s_ >= self.clock { s_ - self.clock } else { s_ + self.cap - self.clock }, s)
        };
        // The hand's word from the hand on.
        let x = self.combo_word(w0, c) & (u64::MAX << b0);
        if x != 0 {
            return Some(at(w0, x));
        }
        // The next word with one by the summary, wrapping to the hand's word's low bits.
        let words = self.used.words().len();
        let sum = &self.summary;
        let next = |from: usize, to: usize| -> Option<usize> {
            // First word index in from..to whose summary bit is set.
            let mut w = from;
            while w < to {
                let bits = sum[w / 64][c] >> (w % 64);
                if bits != 0 {
                    let found = w + bits.trailing_zeros() as usize;
                    return (found < to).then_some(found);
                }
                w = (w / 64 + 1) * 64;
            }
            None
        };
        if let Some(w) = next(w0 + 1, words).or_else(|| next(0, w0)) {
            return Some(at(w, self.combo_word(w, c)));
        }
        let x = self.combo_word(w0, c) & !(u64::MAX << b0);
        (x != 0).then(|| at(w0, x))
    }

    /// Move the clock hand past slot `s`.
    pub fn advance_clock(&mut self, s: u32) {
        self.clock = if s as usize + 1 == self.cap { 0 } else { s as usize + 1 };
    }

    /// `cover` holds exactly the entries of the used slots; used bits and the free list
    /// agree; unused slots have no flags. `high(e)` is what H should be for entry `e`.
    pub fn check_invariants(&self, high: impl Fn(&Entry) -> bool) {
        assert_eq!(self.entries, self.cap - self.free.len(), "cmt entries and free slots disagree");
        let mut covered = 0usize;
        for s in 0..self.cap as u32 {
            if !self.used.get(s) {
                continue;
            }
            let e = self.slots[s as usize];
            for l in e.lpn..=e.end() {
                assert_eq!(self.cover[l as usize], s, "lpn {l} of {e:?} not covered by its slot {s}");
            }
            covered += e.cons as usize + 1;
            let m = self.modified.get(s);
            assert_eq!(self.high.get(s), m && high(&e), "cmt slot {s}: H bit of {e:?}");
            assert_eq!(self.tp_of_slot(s), (e.end() / self.per_tp) as usize, "{e:?} spans translation pages");
        }
        let mut chained = 0;
        for tp in 0..self.dirty_chains.chains() {
            for s in self.dirty_chains.iter(tp) {
                assert!(self.modified.get(s), "clean slot {s} on the modified chain of page {tp}");
                assert_eq!(self.tp_of_slot(s), tp, "slot {s} chained to page {tp}");
                chained += 1;
            }
        }
        let modified: u32 = self.modified.words().iter().map(|w| w.count_ones()).sum();
        assert_eq!(chained, modified, "modified entries and chains disagree");
        assert_eq!(self.cover.iter().filter(|&&s| s != NONE).count(), covered, "stale cover entries");
        for &s in &self.free {
            let flags = [&self.used, &self.accessed, &self.modified, &self.high].map(|b| b.get(s));
            assert_eq!(flags, [false; 4], "free cmt slot {s} has flags");
        }
        if self.track_lru {
            assert_eq!(self.lru.len(), self.entries, "lru order and entries disagree");
        }
        for c in 0..COMBOS {
            for w in 0..self.used.words().len() {
                let bit = self.summary[w / 64][c] >> (w % 64) & 1 == 1;
                assert_eq!(bit, self.combo_words(w)[c] != 0, "summary of combination {c}, word {w}");
                assert_eq!(self.combo_word(w, c), self.combo_words(w)[c], "combination {c} of word {w}");
            }
        }
    }
}
