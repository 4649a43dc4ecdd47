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
//! Policies: LRU (a hit moves to the head) and FIFO (a hit keeps its place, seed 004 L110).
//! Another policy is a new [`WriteBufferPolicy`] variant plus its arms in
//! `WriteBuffer::on_hit` (where an updated page goes) and `WriteBuffer::victim` (which page
//! leaves); BPLRU (block-grouped LRU, seed 004's comparison) would add a second list of
//! logical blocks and evict a whole group.
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
}

/// A page-granular write buffer of fixed capacity.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WriteBuffer {
    policy: WriteBufferPolicy,
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
}

impl WriteBuffer {
    /// An empty buffer of `capacity_pages` pages (>= 1).
    pub fn new(capacity_pages: u32, policy: WriteBufferPolicy) -> WriteBuffer {
        assert!(capacity_pages >= 1, "write buffer capacity {capacity_pages} must be >= 1");
        assert_ne!(policy, WriteBufferPolicy::WriteBehind, "a write-behind buffer is crate::write_behind");
        assert!(capacity_pages < NONE, "write buffer capacity {capacity_pages} too large");
        let cap = capacity_pages as usize;
        WriteBuffer {
            policy,
            lpn: vec![0; cap],
            version: vec![0; cap],
            prev: vec![NONE; cap],
            next: vec![NONE; cap],
            head: NONE,
            tail: NONE,
            index: HashMap::with_capacity(cap),
            free: (0..capacity_pages).rev().collect(),
        }
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

    /// Drop `lpn` (a trim); returns its buffered version.
    pub fn remove(&mut self, lpn: Lpn) -> Option<u32> {
        let s = self.index.remove(&lpn)?;
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
            WriteBufferPolicy::Lru => {
                self.unlink(s);
                self.push_head(s);
            }
            // The page keeps its place: its age is its first write's.
            WriteBufferPolicy::Fifo => {}
            WriteBufferPolicy::WriteBehind => unreachable!("a write-behind buffer is crate::write_behind"),
        }
    }

    /// The slot that leaves when the buffer is full.
    fn victim(&self) -> u32 {
        match self.policy {
            WriteBufferPolicy::Lru | WriteBufferPolicy::Fifo => self.tail,
            WriteBufferPolicy::WriteBehind => unreachable!("a write-behind buffer is crate::write_behind"),
        }
    }

    fn push_head(&mut self, s: u32) {
        self.prev[s as usize] = NONE;
        self.next[s as usize] = self.head;
        if self.head != NONE {
            self.prev[self.head as usize] = s;
        } else {
            self.tail = s;
        }
        self.head = s;
    }

    fn unlink(&mut self, s: u32) {
        let (p, n) = (self.prev[s as usize], self.next[s as usize]);
        if p != NONE {
            self.next[p as usize] = n;
        } else {
            assert_eq!(self.head, s, "slot {s} without predecessor is the head");
            self.head = n;
        }
        if n != NONE {
            self.prev[n as usize] = p;
        } else {
            assert_eq!(self.tail, s, "slot {s} without successor is the tail");
            self.tail = p;
        }
        self.prev[s as usize] = NONE;
        self.next[s as usize] = NONE;
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
