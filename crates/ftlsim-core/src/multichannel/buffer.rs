//! The write buffer of a multichannel SSD (seed 004 Sec. 3.1, 4.4): shared by every unit or
//! partitioned among them, holding unit pages with the sectors written so far.
//!
//! The buffer admits host pages while it has room; a unit flushes its own oldest page (FIFO,
//! LRU) or least recently written logical block (BPLRU) when the channel system lets it.
//! A write to a page that is buffered and not being flushed is absorbed: its sectors join
//! the buffered ones (sector-level concatenation of unaligned writes, Sec. 3.1). A page being
//! flushed keeps its slot until its program ends, and a new write of it takes a new slot.
//!
//! Structure: per unit a map from unit page to entry and an ordered map from a recency or
//! arrival key to the page (FIFO, LRU) or logical block (BPLRU), so each operation is
//! O(log n); capacities are in unit pages. Capacity 0 is write-through: a request enters
//! only an empty buffer and is acknowledged once flushed (the "0 KB" of Table IV).

use crate::config::{BufferSharing, WriteBufferPolicy};
use crate::geometry::Lpn;
use std::collections::{BTreeMap, HashMap};

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

#[derive(Debug, Clone, Copy)]
struct Entry {
    mask: u128,
    version: u32,
    /// FIFO/LRU: the page's key in `order`.
    key: i64,
}

#[derive(Debug, Default)]
struct UnitQueue {
    pages: HashMap<Lpn, Entry>,
    /// FIFO/LRU: key -> page; BPLRU: key -> logical block.
    order: BTreeMap<i64, Lpn>,
    /// BPLRU: logical block -> (key, buffered pages).
    blocks: HashMap<Lpn, (i64, u32)>,
    /// Slots held: buffered pages plus pages being flushed.
    used: u32,
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

/// The channel system's write buffer.
#[derive(Debug)]
pub struct ChannelBuffer {
    policy: WriteBufferPolicy,
    sharing: BufferSharing,
    capacity: u32,
    share: u32,
    block_pages: u32,
    units: Vec<UnitQueue>,
    used: u32,
    seq: i64,
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
        ChannelBuffer {
            policy,
            sharing,
            capacity,
            share,
            block_pages,
            units: (0..units).map(|_| UnitQueue::default()).collect(),
            used: 0,
            seq: 0,
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
        self.used
    }

    /// Buffered (dirty) pages of `unit`, not counting those being flushed.
    pub fn dirty(&self, unit: u32) -> u32 {
        self.units[unit as usize].pages.len() as u32
    }

    /// Whether a new page of `unit` has a slot.
    pub fn has_room(&self, unit: u32) -> bool {
        if self.write_through() {
            return true;
        }
        match self.sharing {
            BufferSharing::Shared => self.used < self.capacity,
            BufferSharing::Partitioned => self.units[unit as usize].used < self.share,
        }
    }

    fn next_key(&mut self) -> i64 {
        self.seq += 1;
        self.seq
    }

    /// Buffer sectors `mask` of `unit`'s page `lpn` as `version`.
    pub fn insert(&mut self, unit: u32, lpn: Lpn, mask: u128, version: u32) -> Admit {
        let hit = self.units[unit as usize].pages.contains_key(&lpn);
        if !hit && !self.has_room(unit) {
            return Admit::Full;
        }
        let key = self.next_key();
        let (policy, bp) = (self.policy, self.block_pages);
        let q = &mut self.units[unit as usize];
        if let Some(e) = q.pages.get_mut(&lpn) {
            e.mask |= mask;
            e.version = version;
            if policy == WriteBufferPolicy::Lru {
                q.order.remove(&e.key);
                e.key = key;
                q.order.insert(key, lpn);
            }
        } else {
            q.pages.insert(lpn, Entry { mask, version, key });
            if policy != WriteBufferPolicy::Bplru {
                q.order.insert(key, lpn);
            }
            q.used += 1;
            self.used += 1;
        }
        if policy == WriteBufferPolicy::Bplru {
            // The block moves to the head on any write; once every page of it is buffered it
            // goes to the tail instead (LRU compensation, Kim & Ahn Sec. 3.3).
            let lbn = lpn / bp;
            let (old_key, count) = q.blocks.get(&lbn).copied().unwrap_or((0, 0));
            if count > 0 {
                q.order.remove(&old_key);
            }
            let count = if hit { count } else { count + 1 };
            let new_key = if count == bp { -key } else { key };
            q.order.insert(new_key, lbn);
            q.blocks.insert(lbn, (new_key, count));
        }
        if hit {
            Admit::Hit
        } else {
            Admit::Added
        }
    }

    /// The version buffered for `unit`'s page `lpn`, if any.
    pub fn get(&self, unit: u32, lpn: Lpn) -> Option<u32> {
        self.units[unit as usize].pages.get(&lpn).map(|e| e.version)
    }

    /// The first page `unit`'s next victim would write (the lowest buffered page of a BPLRU
    /// block), without taking it.
    pub fn next_victim_lpn(&self, unit: u32) -> Option<Lpn> {
        let q = &self.units[unit as usize];
        let (_, &first) = q.order.first_key_value()?;
        if self.policy != WriteBufferPolicy::Bplru {
            return Some(first);
        }
        let base = first * self.block_pages;
        (base..base + self.block_pages).find(|l| q.pages.contains_key(l))
    }

    /// Take `unit`'s next victim into `out` (cleared first; in LPN order for a BPLRU block):
    /// its pages leave the buffer's index and keep their slots until [`ChannelBuffer::release`].
    /// Returns the BPLRU block's buffered page count (1 for a page policy), 0 when empty.
    pub fn take_victim(&mut self, unit: u32, out: &mut Vec<Dirty>) -> u32 {
        out.clear();
        let bp = self.block_pages;
        let policy = self.policy;
        let q = &mut self.units[unit as usize];
        let Some((_, first)) = q.order.pop_first() else { return 0 };
        if policy == WriteBufferPolicy::Bplru {
            let (_, count) = q.blocks.remove(&first).expect("a BPLRU block in the order is indexed");
            let base = first * bp;
            for lpn in base..base + bp {
                if let Some(e) = q.pages.remove(&lpn) {
                    out.push(Dirty { lpn, mask: e.mask, version: e.version });
                }
            }
            debug_assert_eq!(out.len() as u32, count);
            count
        } else {
            let e = q.pages.remove(&first).expect("a page in the order is indexed");
            out.push(Dirty { lpn: first, mask: e.mask, version: e.version });
            1
        }
    }

    /// Forget everything: the power went (the pages are lost, slots in flight included).
    pub fn clear(&mut self) {
        for q in &mut self.units {
            *q = UnitQueue::default();
        }
        self.used = 0;
    }

    /// The flush of `pages` of `unit` has ended: free their slots.
    pub fn release(&mut self, unit: u32, pages: u32) {
        let q = &mut self.units[unit as usize];
        assert!(q.used >= pages && self.used >= pages, "release of {pages} slots not held");
        q.used -= pages;
        self.used -= pages;
    }

    /// Whole-state consistency (tests).
    pub fn check_invariants(&self) {
        let mut used = 0;
        for (u, q) in self.units.iter().enumerate() {
            assert!(q.used as usize >= q.pages.len(), "unit {u}: fewer slots than pages");
            if self.policy == WriteBufferPolicy::Bplru {
                let counted: u32 = q.blocks.values().map(|b| b.1).sum();
                assert_eq!(counted as usize, q.pages.len(), "unit {u}: block counts");
                assert_eq!(q.order.len(), q.blocks.len(), "unit {u}: block order");
            } else {
                assert_eq!(q.order.len(), q.pages.len(), "unit {u}: page order");
            }
            if self.sharing == BufferSharing::Partitioned && !self.write_through() {
                assert!(q.used <= self.share, "unit {u}: {} slots > share {}", q.used, self.share);
            }
            used += q.used;
        }
        assert_eq!(used, self.used, "slot total");
        assert!(self.write_through() || self.used <= self.capacity, "over capacity");
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
