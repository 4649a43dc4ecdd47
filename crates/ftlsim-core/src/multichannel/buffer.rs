//! The write buffer of a multichannel SSD (seed 004 Sec. 3.1, 4.4): shared by every unit or
//! partitioned among them, holding unit pages with the sectors written so far.
//!
//! The buffer admits host pages while it has room; a unit flushes its own oldest page (FIFO,
//! LRU) or least recently written logical block (BPLRU) when the channel system lets it.
//! A write to a page that is buffered and not being flushed is absorbed: its sectors join
//! the buffered ones (sector-level concatenation of unaligned writes, Sec. 3.1). A page being
//! flushed keeps its slot until its program ends, and a new write of it takes a new slot.
//!
//! Structure: each unit's pages are a drive's write buffer ([`WriteBuffer`] with sector
//! masks: the same FIFO, LRU and BPLRU code, O(1) per operation), from which the unit takes
//! its victims; this layer keeps the slots, shared or partitioned, including those of pages
//! being flushed. Capacities are in unit pages. Capacity 0 is write-through: a request enters
//! only an empty buffer and is acknowledged once flushed (the "0 KB" of Table IV).

use crate::config::{BufferSharing, WriteBufferPolicy};
use crate::geometry::Lpn;
use crate::write_buffer::{Insert, WriteBuffer};

/// A buffered unit page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dirty {
    /// The unit's logical page.
    pub lpn: Lpn,
    /// Sectors written (bit i: sector i of the unit page).
    pub mask: u128,
    /// Data version (the oracle's).
    pub version: u32,
}

/// What an insert did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// The page was buffered: its sectors joined (absorbed, no flash work).
    Hit,
    /// The page took a free slot.
    Added,
    /// No room (the whole buffer, or the unit's share of a partitioned one).
    Full,
}

/// Pages a unit's buffer has room for at first; it doubles when more of the unit's pages are
/// buffered (up to the slots the unit may hold, or a whole request when write-through).
const FIRST_ROOM: u32 = 64;

/// The channel system's write buffer.
#[derive(Debug)]
pub struct ChannelBuffer {
    sharing: BufferSharing,
    capacity: u32,
    share: u32,
    /// Per unit: its buffered pages, and the slots it holds (buffered plus being flushed).
    pages: Vec<WriteBuffer>,
    used: Vec<u32>,
    total_used: u32,
    /// Scratch for a victim's pages.
    taken: Vec<(Lpn, u32, u128)>,
}

impl ChannelBuffer {
    /// A buffer of `capacity` unit pages over `units` units (0: write-through); BPLRU groups
    /// `block_pages` unit pages. A partitioned buffer gives each unit `capacity / units`.
    pub fn new(
        capacity: u32,
        units: u32,
        policy: WriteBufferPolicy,
        sharing: BufferSharing,
        block_pages: u32,
    ) -> ChannelBuffer {
        assert!(units >= 1 && block_pages >= 1);
        let share = if sharing == BufferSharing::Partitioned { capacity / units } else { capacity };
        let per_unit = if capacity == 0 { FIRST_ROOM } else { share.clamp(1, FIRST_ROOM) };
        ChannelBuffer {
            sharing,
            capacity,
            share,
            pages: (0..units)
                .map(|_| WriteBuffer::with_blocks(per_unit, policy, block_pages).with_sector_masks())
                .collect(),
            used: vec![0; units as usize],
            total_used: 0,
            taken: Vec::new(),
        }
    }

    /// Write-through (no buffering, capacity 0).
    pub fn write_through(&self) -> bool {
        self.capacity == 0
    }

    /// Capacity, unit pages.
    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// Slots held (buffered and being flushed).
    pub fn used(&self) -> u32 {
        self.total_used
    }

    /// Buffered (dirty) pages of `unit`, not counting those being flushed.
    pub fn dirty(&self, unit: u32) -> u32 {
        self.pages[unit as usize].len()
    }

    /// Whether a new page of `unit` has a slot.
    pub fn has_room(&self, unit: u32) -> bool {
        if self.write_through() {
            return true;
        }
        match self.sharing {
            BufferSharing::Shared => self.total_used < self.capacity,
            BufferSharing::Partitioned => self.used[unit as usize] < self.share,
        }
    }

    /// Buffer sectors `mask` of `unit`'s page `lpn` as `version`.
    pub fn insert(&mut self, unit: u32, lpn: Lpn, mask: u128, version: u32) -> Admit {
        let u = unit as usize;
        let hit = self.pages[u].get(lpn).is_some();
        if !hit && !self.has_room(unit) {
            return Admit::Full;
        }
        let q = &mut self.pages[u];
        if !hit && q.len() == q.capacity_pages() {
            q.grow(q.capacity_pages() * 2);
        }
        match q.insert_sectors(lpn, version, mask) {
            Insert::Hit => Admit::Hit,
            Insert::Added => {
                self.used[u] += 1;
                self.total_used += 1;
                Admit::Added
            }
            other => unreachable!("a unit's buffer evicted on insert ({other:?})"),
        }
    }

    /// The version buffered for `unit`'s page `lpn`, if any.
    pub fn get(&self, unit: u32, lpn: Lpn) -> Option<u32> {
        self.pages[unit as usize].get(lpn)
    }

    /// The first page `unit`'s next victim would write (the lowest buffered page of a BPLRU
    /// block), without taking it.
    pub fn next_victim_lpn(&self, unit: u32) -> Option<Lpn> {
        self.pages[unit as usize].peek_victim()
    }

    /// Take `unit`'s next victim into `out` (cleared first; in LPN order for a BPLRU block):
    /// its pages leave the buffer's index and keep their slots until [`ChannelBuffer::release`].
    /// Returns the pages taken (a BPLRU block's buffered pages, 1 for a page policy), 0 when
    /// empty.
    pub fn take_victim(&mut self, unit: u32, out: &mut Vec<Dirty>) -> u32 {
        out.clear();
        let n = self.pages[unit as usize].pop_victim(&mut self.taken);
        out.extend(self.taken.iter().map(|&(lpn, version, mask)| Dirty { lpn, mask, version }));
        n
    }

    /// The flush of `pages` of `unit` has ended: free their slots.
    pub fn release(&mut self, unit: u32, pages: u32) {
        let u = unit as usize;
        assert!(self.used[u] >= pages && self.total_used >= pages, "release of {pages} slots not held");
        self.used[u] -= pages;
        self.total_used -= pages;
    }

    /// Forget everything: the power went (the pages are lost, slots in flight included).
    pub fn clear(&mut self) {
        let mut scratch = Vec::new();
        for q in &mut self.pages {
            while q.pop_victim(&mut scratch) > 0 {}
        }
        self.used.iter_mut().for_each(|u| *u = 0);
        self.total_used = 0;
    }

    /// Whole-state consistency (tests).
    pub fn check_invariants(&self) {
        let mut used = 0;
        for (u, q) in self.pages.iter().enumerate() {
            q.check_invariants();
            assert!(self.used[u] >= q.len(), "unit {u}: fewer slots than pages");
            if self.sharing == BufferSharing::Partitioned && !self.write_through() {
                assert!(self.used[u] <= self.share, "unit {u}: {} slots > share {}", self.used[u], self.share);
            }
            used += self.used[u];
        }
        assert_eq!(used, self.total_used, "slot total");
        assert!(self.write_through() || self.total_used <= self.capacity, "over capacity");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lpns(v: &[Dirty]) -> Vec<Lpn> {
        v.iter().map(|d| d.lpn).collect()
    }

    #[test]
    fn fifo_keeps_an_updated_page_in_place_and_concatenates_sectors() {
        let mut b = ChannelBuffer::new(3, 2, WriteBufferPolicy::Fifo, BufferSharing::Shared, 4);
        assert_eq!(b.insert(0, 10, 0b0011, 1), Admit::Added);
        assert_eq!(b.insert(1, 5, 0xff, 2), Admit::Added);
        assert_eq!(b.insert(0, 11, 0xff, 3), Admit::Added);
        assert_eq!(b.insert(0, 10, 0b1100, 4), Admit::Hit);
        assert_eq!(b.insert(1, 6, 0xff, 5), Admit::Full);
        let mut out = Vec::new();
        assert_eq!(b.take_victim(0, &mut out), 1);
        assert_eq!(out, vec![Dirty { lpn: 10, mask: 0b1111, version: 4 }]);
        // Its slot is held until the flush ends; a new write of it takes another.
        assert_eq!(b.insert(0, 10, 1, 6), Admit::Full);
        b.release(0, 1);
        assert_eq!(b.insert(0, 10, 1, 6), Admit::Added);
        b.take_victim(0, &mut out);
        assert_eq!(lpns(&out), vec![11]);
        b.check_invariants();
    }

    #[test]
    fn partitioned_refuses_a_full_share_while_others_have_room() {
        let mut b = ChannelBuffer::new(4, 2, WriteBufferPolicy::Fifo, BufferSharing::Partitioned, 4);
        assert_eq!(b.insert(0, 1, 1, 1), Admit::Added);
        assert_eq!(b.insert(0, 2, 1, 2), Admit::Added);
        assert_eq!(b.insert(0, 3, 1, 3), Admit::Full);
        assert_eq!(b.insert(1, 3, 1, 3), Admit::Added);
        b.check_invariants();
    }

    #[test]
    fn lru_moves_a_hit_and_bplru_evicts_whole_blocks_full_ones_first() {
        let mut l = ChannelBuffer::new(8, 1, WriteBufferPolicy::Lru, BufferSharing::Shared, 4);
        l.insert(0, 1, 1, 1);
        l.insert(0, 2, 1, 2);
        l.insert(0, 1, 1, 3);
        let mut out = Vec::new();
        l.take_victim(0, &mut out);
        assert_eq!(lpns(&out), vec![2]);

        let mut b = ChannelBuffer::new(16, 1, WriteBufferPolicy::Bplru, BufferSharing::Shared, 4);
        b.insert(0, 9, 1, 1); // block 2
        b.insert(0, 1, 1, 2); // block 0
        b.insert(0, 8, 1, 3); // block 2 again: most recent
        assert_eq!(b.take_victim(0, &mut out), 1);
        assert_eq!(lpns(&out), vec![1]);
        b.release(0, 1);
        for lpn in 4..8 {
            b.insert(0, lpn, 1, 10 + lpn); // block 1, complete: to the tail
        }
        b.insert(0, 12, 1, 20); // block 3
        assert_eq!(b.take_victim(0, &mut out), 4);
        assert_eq!(lpns(&out), vec![4, 5, 6, 7]);
        assert_eq!(b.take_victim(0, &mut out), 2);
        assert_eq!(lpns(&out), vec![8, 9]);
        b.check_invariants();
    }

    #[test]
    fn write_through_admits_anything() {
        let mut b = ChannelBuffer::new(0, 2, WriteBufferPolicy::Fifo, BufferSharing::Shared, 4);
        for lpn in 0..10 {
            assert_eq!(b.insert(0, lpn, 1, lpn), Admit::Added);
        }
        assert!(b.write_through());
        b.check_invariants();
    }
}
