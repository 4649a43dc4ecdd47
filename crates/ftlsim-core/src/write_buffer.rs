//! The controller's DRAM write cache: a page-granular write-buffer stage between the host
//! interface and the FTL (PCFTL, Wang & Xie, IEEE TPDS 2015, Sec. 3.1 and Fig. 4).
//!
//! A host write of a page enters the buffer at the head of a recency list; a write of a page
//! already buffered replaces it in place and moves it to the head (absorbed: no flash work).
//! When the buffer is full, the victim (the tail, under LRU) leaves it and the caller writes
//! it to flash through the FTL. A read of a buffered page is served from the buffer. A trim
//! drops the page. Nothing is flushed implicitly.
//!
//! Structure: a `HashMap` from LPN to slot plus an intrusive doubly linked list over slot
//! arrays (as DFTL's CMT), so every operation is O(1) and, after construction, allocates
//! nothing (the map is created with the capacity it will ever hold).
//!
//! Invariants (checked by [`WriteBuffer::check_invariants`]): the list and the map hold the
//! same pages, at most `capacity` of them; free slots plus used slots = capacity.
//!
//! Policies: LRU (a hit moves to the head), FIFO (a hit keeps its place, seed 004 L110) and
//! BPLRU (Kim & Ahn, FAST 2008; seed 004's comparison): the pages of a logical block are one
//! contiguous run of the list, moved to the head on any write to the block (to the tail once
//! every page of it is buffered: LRU compensation) and evicted whole
//! ([`Insert::EvictedBlock`]); the caller pads a leaving block (`host.bplru_padding_pages`).
//! Another page policy is a new [`WriteBufferPolicy`] variant, its `CachePolicy` twin and
//! its arms in `WriteBuffer::on_hit` (where an updated page goes) and `WriteBuffer::victim`
//! (which page leaves).
//!
//! Departures from the paper: reads do not change the recency order (the paper's cache
//! "only accepts write requests", Fig. 4(3) serves a read without moving the page); the
//! plane-dispatch of evicted pages (Fig. 3) is the FTL's allocation policy, not this stage.

use crate::config::WriteBufferPolicy;
use crate::geometry::{Lpn, NONE};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// What a buffered write did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Insert {
    /// The page was buffered already: replaced (absorbed, no flash work).
    Hit,
    /// A new page took a free slot.
    Added,
    /// A new page took the slot of this victim `(lpn, version)`, which must go to flash.
    Evicted(Lpn, u32),
    /// BPLRU: the least recently written logical block left whole; its pages are in
    /// [`WriteBuffer::evicted`] (in LPN order), and must go to flash.
    EvictedBlock,
}

/// The caching policies of [`WriteBufferPolicy`]: write-behind is no cache
/// (crate::write_behind). The variants keep the config's order and names, so a snapshot
/// holds the same bytes either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum CachePolicy {
    Lru,
    Fifo,
    Bplru,
}

impl CachePolicy {
    fn of(policy: WriteBufferPolicy) -> CachePolicy {
        match policy {
            WriteBufferPolicy::Lru => CachePolicy::Lru,
            WriteBufferPolicy::Fifo => CachePolicy::Fifo,
            WriteBufferPolicy::Bplru => CachePolicy::Bplru,
            WriteBufferPolicy::WriteBehind => panic!("a write-behind buffer is crate::write_behind"),
        }
    }
}

/// A BPLRU block's run of slots in the page list (its pages are kept contiguous).
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct Group {
    first: u32,
    last: u32,
    count: u32,
}

/// A page-granular write buffer of fixed capacity.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WriteBuffer {
    policy: CachePolicy,
    lpn: Vec<Lpn>,
    version: Vec<u32>,
    prev: Vec<u32>,
    next: Vec<u32>,
    /// Most recently inserted.
    head: u32,
    /// Next victim under LRU.
    tail: u32,
    index: HashMap<Lpn, u32>,
    free: Vec<u32>,
    /// BPLRU: pages per logical block, and each buffered block's run of slots.
    block_pages: u32,
    groups: HashMap<Lpn, Group>,
    /// BPLRU: the pages of the block evicted last.
    evicted: Vec<(Lpn, u32)>,
    /// Sectors written per slot (bit i: sector i of the page), for a buffer that holds
    /// partial pages (a channel system's, seed 004 Sec. 3.1); empty otherwise.
    masks: Vec<u128>,
}

impl WriteBuffer {
    /// An empty buffer of `capacity_pages` pages (>= 1); BPLRU groups `block_pages` pages.
    pub fn with_blocks(capacity_pages: u32, policy: WriteBufferPolicy, block_pages: u32) -> WriteBuffer {
        assert!(block_pages >= 1, "BPLRU blocks of {block_pages} pages");
        let bplru = policy == WriteBufferPolicy::Bplru;
        WriteBuffer {
            block_pages,
            groups: HashMap::with_capacity(if bplru { capacity_pages as usize } else { 0 }),
            evicted: Vec::with_capacity(if bplru { block_pages.min(capacity_pages) as usize } else { 0 }),
            ..Self::new(capacity_pages, policy)
        }
    }

    /// An empty buffer of `capacity_pages` pages (>= 1).
    pub fn new(capacity_pages: u32, policy: WriteBufferPolicy) -> WriteBuffer {
        assert!(capacity_pages >= 1, "write buffer capacity {capacity_pages} must be >= 1");
        assert!(capacity_pages < NONE, "write buffer capacity {capacity_pages} too large");
        let cap = capacity_pages as usize;
        WriteBuffer {
            policy: CachePolicy::of(policy),
            lpn: vec![0; cap],
            version: vec![0; cap],
            prev: vec![NONE; cap],
            next: vec![NONE; cap],
            head: NONE,
            tail: NONE,
            index: HashMap::with_capacity(cap),
            free: (0..capacity_pages).rev().collect(),
            block_pages: 1,
            groups: HashMap::new(),
            evicted: Vec::new(),
            masks: Vec::new(),
        }
    }

    /// The same buffer keeping the sectors written of each page ([`WriteBuffer::insert_sectors`]).
    /// Its owner takes victims ([`WriteBuffer::pop_victim`]) before it would be full: an
    /// insert never evicts.
    pub fn with_sector_masks(mut self) -> WriteBuffer {
        self.masks = vec![0; self.lpn.len()];
        self
    }

    /// Room for `capacity_pages` pages (more than now): a write-through channel system stages
    /// a whole request.
    pub fn grow(&mut self, capacity_pages: u32) {
        let old = self.lpn.len() as u32;
        assert!(capacity_pages > old && capacity_pages < NONE, "grow {old} to {capacity_pages}");
        let n = capacity_pages as usize;
        self.lpn.resize(n, 0);
        self.version.resize(n, 0);
        self.prev.resize(n, NONE);
        self.next.resize(n, NONE);
        if !self.masks.is_empty() {
            self.masks.resize(n, 0);
        }
        self.free.extend((old..capacity_pages).rev());
        self.index.reserve(n - self.index.len());
    }

    /// Buffer sectors `mask` of `lpn` as `version` (a buffer [`WriteBuffer::with_sector_masks`]):
    /// a hit joins them to the sectors buffered already (sector-level concatenation).
    pub fn insert_sectors(&mut self, lpn: Lpn, version: u32, mask: u128) -> Insert {
        assert!(!self.masks.is_empty(), "a buffer without sector masks");
        assert!(self.index.contains_key(&lpn) || !self.free.is_empty(), "a sector-mask buffer never evicts on insert");
        let out = self.insert(lpn, version);
        let s = self.index[&lpn] as usize;
        self.masks[s] = if out == Insert::Hit { self.masks[s] | mask } else { mask };
        out
    }

    /// Take the next victim out (the tail page; under BPLRU the tail block whole, in LPN
    /// order) into `out` as `(lpn, version, sectors)` (sectors 0 without masks); returns the
    /// pages taken, 0 when empty.
    pub fn pop_victim(&mut self, out: &mut Vec<(Lpn, u32, u128)>) -> u32 {
        out.clear();
        if self.tail == NONE {
            return 0;
        }
        let mask = |b: &WriteBuffer, s: u32| b.masks.get(s as usize).copied().unwrap_or(0);
        if self.policy != CachePolicy::Bplru {
            let s = self.victim();
            let (l, v) = (self.lpn[s as usize], self.version[s as usize]);
            out.push((l, v, mask(self, s)));
            self.unlink(s);
            self.index.remove(&l);
            self.free.push(s);
            return 1;
        }
        let g = self.lpn[self.tail as usize] / self.block_pages;
        let gr = self.groups[&g];
        let mut s = gr.first;
        for _ in 0..gr.count {
            out.push((self.lpn[s as usize], self.version[s as usize], mask(self, s)));
            s = self.next[s as usize];
        }
        self.evict_tail_group();
        out.sort_unstable_by_key(|p| p.0);
        gr.count
    }

    /// The first page the next victim would write (its lowest page under BPLRU).
    pub fn peek_victim(&self) -> Option<Lpn> {
        if self.tail == NONE {
            return None;
        }
        if self.policy != CachePolicy::Bplru {
            return Some(self.lpn[self.victim() as usize]);
        }
        let gr = self.groups[&(self.lpn[self.tail as usize] / self.block_pages)];
        let mut s = gr.first;
        let mut low = Lpn::MAX;
        for _ in 0..gr.count {
            low = low.min(self.lpn[s as usize]);
            s = self.next[s as usize];
        }
        Some(low)
    }

    /// Capacity in pages.
    pub fn capacity_pages(&self) -> u32 {
        self.lpn.len() as u32
    }

    /// Pages buffered now.
    pub fn len(&self) -> u32 {
        self.index.len() as u32
    }

    /// Whether no page is buffered.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// The buffered version of `lpn`, if any (a read hit; the order is left alone).
    pub fn get(&self, lpn: Lpn) -> Option<u32> {
        self.index.get(&lpn).map(|&s| self.version[s as usize])
    }

    /// Buffer version `version` of `lpn`; says whether it was a hit, took a free slot or
    /// evicted a victim that the caller must write to flash.
    pub fn insert(&mut self, lpn: Lpn, version: u32) -> Insert {
        if self.policy == CachePolicy::Bplru {
            return self.insert_bplru(lpn, version);
        }
        if let Some(&s) = self.index.get(&lpn) {
            assert_eq!(self.lpn[s as usize], lpn, "write buffer slot {s} holds another page");
            self.version[s as usize] = version;
            self.on_hit(s);
            return Insert::Hit;
        }
        let (slot, out) = match self.free.pop() {
            Some(s) => (s, Insert::Added),
            None => {
                let v = self.victim();
                assert!(v != NONE, "a full write buffer has a victim");
                let (vl, vv) = (self.lpn[v as usize], self.version[v as usize]);
                self.unlink(v);
                let removed = self.index.remove(&vl);
                assert_eq!(removed, Some(v), "victim lpn {vl} indexed at its slot");
                (v, Insert::Evicted(vl, vv))
            }
        };
        self.lpn[slot as usize] = lpn;
        self.version[slot as usize] = version;
        self.push_head(slot);
        self.index.insert(lpn, slot);
        assert!(self.index.len() <= self.lpn.len(), "write buffer over capacity");
        out
    }

    /// The pages of the block the last [`Insert::EvictedBlock`] evicted, in LPN order.
    pub fn evicted(&self) -> &[(Lpn, u32)] {
        &self.evicted
    }

    /// Take the evicted block's pages (to write them while the buffer is borrowed again);
    /// hand the vector back with [`WriteBuffer::restore_evicted`] so no allocation recurs.
    pub fn take_evicted(&mut self) -> Vec<(Lpn, u32)> {
        std::mem::take(&mut self.evicted)
    }

    /// Give back the vector [`WriteBuffer::take_evicted`] took.
    pub fn restore_evicted(&mut self, mut v: Vec<(Lpn, u32)>) {
        v.clear();
        self.evicted = v;
    }

    /// Pages per BPLRU block.
    pub fn block_pages(&self) -> u32 {
        self.block_pages
    }

    /// BPLRU's insert: the page joins its block's run, and the run moves to the head (or to
    /// the tail once every page of the block is buffered: LRU compensation, the block will
    /// not be written again soon); a full buffer first evicts the tail block whole.
    fn insert_bplru(&mut self, lpn: Lpn, version: u32) -> Insert {
        let g = lpn / self.block_pages;
        if let Some(&s) = self.index.get(&lpn) {
            self.version[s as usize] = version;
            self.move_group(g, true);
            return Insert::Hit;
        }
        let mut out = Insert::Added;
        if self.free.is_empty() {
            self.evict_tail_group();
            out = Insert::EvictedBlock;
        }
        let s = self.free.pop().expect("a slot is free after an eviction");
        self.lpn[s as usize] = lpn;
        self.version[s as usize] = version;
        self.index.insert(lpn, s);
        match self.groups.get_mut(&g) {
            Some(gr) => {
                // Join the run right after its last slot, so the run stays contiguous.
                let last = gr.last;
                gr.last = s;
                gr.count += 1;
                let n = self.next[last as usize];
                self.prev[s as usize] = last;
                self.next[s as usize] = n;
                self.next[last as usize] = s;
                if n != NONE {
                    self.prev[n as usize] = s;
                } else {
                    self.tail = s;
                }
            }
            None => {
                self.push_head(s);
                self.groups.insert(g, Group { first: s, last: s, count: 1 });
            }
        }
        let full = self.groups[&g].count >= self.block_pages;
        self.move_group(g, !full);
        assert!(self.index.len() <= self.lpn.len(), "write buffer over capacity");
        out
    }

    /// Splice block `g`'s run to the head (`to_head`) or to the tail of the list.
    fn move_group(&mut self, g: Lpn, to_head: bool) {
        let Group { first, last, .. } = self.groups[&g];
        self.unlink_run(first, last);
        if to_head {
            self.push_head_run(first, last);
        } else {
            self.push_tail_run(first, last);
        }
    }

    /// Evict the block whose run ends the list, whole, into `evicted` (LPN order).
    fn evict_tail_group(&mut self) {
        let g = self.lpn[self.tail as usize] / self.block_pages;
        let gr = self.groups.remove(&g).expect("the tail slot's block is buffered");
        self.evicted.clear();
        let mut s = gr.first;
        for i in 0..gr.count {
            let next = self.next[s as usize];
            let (l, v) = (self.lpn[s as usize], self.version[s as usize]);
            assert_eq!(l / self.block_pages, g, "slot {s} in block {g}'s run holds lpn {l}");
            self.evicted.push((l, v));
            self.index.remove(&l);
            self.unlink(s);
            self.free.push(s);
            if i + 1 < gr.count {
                s = next;
            }
        }
        self.evicted.sort_unstable();
    }

    /// Drop `lpn` (a trim); returns its buffered version.
    pub fn remove(&mut self, lpn: Lpn) -> Option<u32> {
        let s = self.index.remove(&lpn)?;
        if self.policy == CachePolicy::Bplru {
            let g = lpn / self.block_pages;
            let gr = self.groups.get_mut(&g).expect("a buffered page's block is buffered");
            gr.count -= 1;
            if gr.count == 0 {
                self.groups.remove(&g);
            } else if gr.first == s {
                gr.first = self.next[s as usize];
            } else if gr.last == s {
                gr.last = self.prev[s as usize];
            }
        }
        self.unlink(s);
        self.free.push(s);
        assert!(self.free.len() <= self.lpn.len(), "more free slots than capacity");
        Some(self.version[s as usize])
    }

    /// Buffered pages from the head (most recent) to the tail (next LRU victim).
    pub fn iter_recent(&self) -> impl Iterator<Item = (Lpn, u32)> + '_ {
        let mut s = self.head;
        let mut left = self.lpn.len();
        std::iter::from_fn(move || {
            if s == NONE {
                return None;
            }
            assert!(left > 0, "write buffer list longer than its capacity");
            left -= 1;
            let out = (self.lpn[s as usize], self.version[s as usize]);
            s = self.next[s as usize];
            Some(out)
        })
    }

    /// Where a hit page goes.
    fn on_hit(&mut self, s: u32) {
        match self.policy {
            CachePolicy::Lru => {
                self.unlink(s);
                self.push_head(s);
            }
            // The page keeps its place: its age is its first write's.
            CachePolicy::Fifo => {}
            CachePolicy::Bplru => unreachable!("BPLRU moves blocks (insert_bplru)"),
        }
    }

    /// The slot that leaves when the buffer is full.
    fn victim(&self) -> u32 {
        match self.policy {
            CachePolicy::Lru | CachePolicy::Fifo => self.tail,
            CachePolicy::Bplru => unreachable!("BPLRU evicts blocks (evict_tail_group)"),
        }
    }

    fn push_head(&mut self, s: u32) {
        self.push_head_run(s, s);
    }

    /// Put the detached run `first..=last` at the head.
    fn push_head_run(&mut self, first: u32, last: u32) {
        self.prev[first as usize] = NONE;
        self.next[last as usize] = self.head;
        if self.head != NONE {
            self.prev[self.head as usize] = last;
        } else {
            self.tail = last;
        }
        self.head = first;
    }

    /// Put the detached run `first..=last` at the tail.
    fn push_tail_run(&mut self, first: u32, last: u32) {
        self.next[last as usize] = NONE;
        self.prev[first as usize] = self.tail;
        if self.tail != NONE {
            self.next[self.tail as usize] = first;
        } else {
            self.head = first;
        }
        self.tail = last;
    }

    fn unlink(&mut self, s: u32) {
        self.unlink_run(s, s);
        self.prev[s as usize] = NONE;
        self.next[s as usize] = NONE;
    }

    /// Detach the run `first..=last` from the list (its inner links stay).
    fn unlink_run(&mut self, first: u32, last: u32) {
        let (p, n) = (self.prev[first as usize], self.next[last as usize]);
        if p != NONE {
            self.next[p as usize] = n;
        } else {
            assert_eq!(self.head, first, "slot {first} without predecessor is the head");
            self.head = n;
        }
        if n != NONE {
            self.prev[n as usize] = p;
        } else {
            assert_eq!(self.tail, last, "slot {last} without successor is the tail");
            self.tail = p;
        }
    }

    /// Whole-state check (tests): list and map agree, sizes add up.
    pub fn check_invariants(&self) {
        let mut n = 0usize;
        let mut prev = NONE;
        let mut s = self.head;
        while s != NONE {
            assert!(n < self.lpn.len(), "write buffer list has a cycle");
            assert_eq!(self.prev[s as usize], prev, "slot {s} back link");
            assert_eq!(self.index.get(&self.lpn[s as usize]), Some(&s), "slot {s} indexed");
            prev = s;
            s = self.next[s as usize];
            n += 1;
        }
        assert_eq!(self.tail, prev, "tail is the last slot of the list");
        assert_eq!(n, self.index.len(), "list length {n} vs map {}", self.index.len());
        assert_eq!(n + self.free.len(), self.lpn.len(), "used + free = capacity");
        if self.policy == CachePolicy::Bplru {
            // Each block's pages form one run of the list, as its group says.
            let mut pages = 0;
            for (&g, gr) in &self.groups {
                let mut s = gr.first;
                for k in 0..gr.count {
                    assert_eq!(self.lpn[s as usize] / self.block_pages, g, "block {g}'s run is not contiguous");
                    if k + 1 == gr.count {
                        assert_eq!(s, gr.last, "block {g}'s run ends elsewhere");
                    }
                    s = self.next[s as usize];
                }
                pages += gr.count as usize;
            }
            assert_eq!(pages, self.index.len(), "blocks' pages add up to the buffered pages");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(b: &WriteBuffer) -> Vec<Lpn> {
        b.iter_recent().map(|e| e.0).collect()
    }

    #[test]
    fn lru_evicts_the_tail_and_hits_move_to_the_head() {
        let mut b = WriteBuffer::new(2, WriteBufferPolicy::Lru);
        assert_eq!(b.insert(1, 10), Insert::Added);
        assert_eq!(b.insert(2, 20), Insert::Added);
        assert_eq!(b.insert(3, 30), Insert::Evicted(1, 10));
        assert_eq!(order(&b), vec![3, 2]);
        assert_eq!(b.insert(2, 21), Insert::Hit);
        assert_eq!(order(&b), vec![2, 3]);
        assert_eq!(b.get(2), Some(21));
        assert_eq!(b.insert(4, 40), Insert::Evicted(3, 30));
        assert_eq!(b.remove(2), Some(21));
        assert_eq!(b.remove(2), None);
        assert_eq!(order(&b), vec![4]);
        assert_eq!(b.insert(5, 50), Insert::Added);
        b.check_invariants();
        assert_eq!(b.len(), 2);
    }

    #[test]
    fn fifo_evicts_the_oldest_first_write_and_updates_keep_their_place() {
        let mut b = WriteBuffer::new(2, WriteBufferPolicy::Fifo);
        assert_eq!(b.insert(1, 10), Insert::Added);
        assert_eq!(b.insert(2, 20), Insert::Added);
        assert_eq!(b.insert(1, 11), Insert::Hit);
        assert_eq!(order(&b), vec![2, 1], "the update did not move page 1");
        assert_eq!(b.insert(3, 30), Insert::Evicted(1, 11), "page 1 came first, with its newest version");
        assert_eq!(b.insert(4, 40), Insert::Evicted(2, 20));
        b.check_invariants();
    }

    #[test]
    fn bplru_moves_and_evicts_whole_blocks_and_sends_full_ones_to_the_tail() {
        // Blocks of 4 pages: lpns 0-3 block 0, 4-7 block 1, 8-11 block 2.
        let mut b = WriteBuffer::with_blocks(5, WriteBufferPolicy::Bplru, 4);
        for (lpn, v) in [(0, 1), (4, 2), (1, 3), (8, 4)] {
            assert_eq!(b.insert(lpn, v), Insert::Added);
        }
        // Recency by block: 2 (8), 0 (0, 1), 1 (4).
        assert_eq!(order(&b), vec![8, 0, 1, 4]);
        assert_eq!(b.insert(5, 5), Insert::Added, "block 1 joins and moves to the head");
        assert_eq!(order(&b), vec![4, 5, 8, 0, 1]);
        b.check_invariants();
        // Full: the least recently written block (0) leaves whole, in LPN order.
        assert_eq!(b.insert(9, 6), Insert::EvictedBlock);
        assert_eq!(b.evicted(), &[(0, 1), (1, 3)]);
        assert_eq!(order(&b), vec![8, 9, 4, 5]);
        // A hit moves its block to the head; a trim keeps the runs contiguous.
        assert_eq!(b.insert(4, 7), Insert::Hit);
        assert_eq!(b.remove(9), Some(6));
        b.check_invariants();
        assert_eq!(order(&b), vec![4, 5, 8]);
        // LRU compensation: a block whose every page is buffered goes to the tail.
        let mut c = WriteBuffer::with_blocks(8, WriteBufferPolicy::Bplru, 2);
        c.insert(0, 1);
        c.insert(2, 2);
        c.insert(1, 3);
        assert_eq!(order(&c), vec![2, 0, 1], "block 0 complete: next to leave");
        c.check_invariants();
    }

    #[test]
    fn bplru_random_ops_keep_its_runs() {
        let mut b = WriteBuffer::with_blocks(7, WriteBufferPolicy::Bplru, 3);
        let mut x = 99u64;
        for i in 0..20_000u32 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let lpn = ((x >> 33) % 20) as Lpn;
            if (x >> 20).is_multiple_of(6) {
                b.remove(lpn);
            } else if b.insert(lpn, i) == Insert::EvictedBlock {
                let ev = b.evicted();
                assert!(!ev.is_empty() && ev.iter().all(|e| e.0 / 3 == ev[0].0 / 3), "{ev:?}");
                assert!(ev.windows(2).all(|w| w[0].0 < w[1].0));
            }
            b.check_invariants();
        }
    }

    #[test]
    fn a_sector_mask_buffer_gives_victims_on_demand_and_grows() {
        let mut b = WriteBuffer::new(2, WriteBufferPolicy::Fifo).with_sector_masks();
        assert_eq!(b.insert_sectors(5, 1, 0b0011), Insert::Added);
        assert_eq!(b.insert_sectors(6, 2, 0b1000), Insert::Added);
        assert_eq!(b.insert_sectors(5, 3, 0b0100), Insert::Hit, "sectors join");
        assert_eq!(b.peek_victim(), Some(5));
        let mut out = Vec::new();
        assert_eq!(b.pop_victim(&mut out), 1);
        assert_eq!(out, vec![(5, 3, 0b0111)]);
        b.grow(4);
        for (lpn, v) in [(7, 4), (8, 5), (9, 6)] {
            assert_eq!(b.insert_sectors(lpn, v, 1), Insert::Added);
        }
        assert_eq!(b.len(), 4);
        b.check_invariants();
        // BPLRU: the tail block whole, in LPN order, with its sectors.
        let mut c = WriteBuffer::with_blocks(8, WriteBufferPolicy::Bplru, 4).with_sector_masks();
        c.insert_sectors(9, 1, 1);
        c.insert_sectors(2, 2, 2);
        c.insert_sectors(1, 3, 4);
        assert_eq!(c.peek_victim(), Some(9), "block 2 was written least recently");
        assert_eq!(c.pop_victim(&mut out), 1);
        assert_eq!(c.peek_victim(), Some(1));
        assert_eq!(c.pop_victim(&mut out), 2);
        assert_eq!(out, vec![(1, 3, 4), (2, 2, 2)]);
        assert_eq!(c.pop_victim(&mut out), 0);
        c.check_invariants();
    }

    #[test]
    fn capacity_one_and_random_ops_keep_invariants() {
        let mut b = WriteBuffer::new(1, WriteBufferPolicy::Lru);
        assert_eq!(b.insert(7, 1), Insert::Added);
        assert_eq!(b.insert(7, 2), Insert::Hit);
        assert_eq!(b.insert(8, 3), Insert::Evicted(7, 2));
        b.check_invariants();
        let mut b = WriteBuffer::new(5, WriteBufferPolicy::Lru);
        let mut x = 12345u64;
        for i in 0..10_000u32 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let lpn = ((x >> 33) % 9) as Lpn;
            if (x >> 20).is_multiple_of(5) {
                b.remove(lpn);
            } else {
                b.insert(lpn, i);
            }
            b.check_invariants();
        }
    }
}
