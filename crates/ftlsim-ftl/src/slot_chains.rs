//! Intrusive lists of mapping-cache slots, one list per translation page: the modified
//! entries of each page, so that a write-back (DFTL's, SCFTL's batch update) finds them
//! without scanning the cache. O(1) insert and removal, no allocation after construction.

use ftlsim_core::geometry::NONE;
use serde::{Deserialize, Serialize};

/// One doubly linked list of slots per chain (translation page).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SlotChains {
    head: Vec<u32>,
    prev: Vec<u32>,
    next: Vec<u32>,
}

impl SlotChains {
    /// `chains` empty lists over `slots` slots.
    pub fn new(chains: usize, slots: usize) -> SlotChains {
        SlotChains { head: vec![NONE; chains], prev: vec![NONE; slots], next: vec![NONE; slots] }
    }

    /// Put slot `s` (on no list) at the head of list `chain`.
    pub fn push(&mut self, chain: usize, s: u32) {
        let h = self.head[chain];
        self.prev[s as usize] = NONE;
        self.next[s as usize] = h;
        if h != NONE {
            self.prev[h as usize] = s;
        }
        self.head[chain] = s;
    }

    /// Take slot `s` off list `chain`.
    pub fn remove(&mut self, chain: usize, s: u32) {
        let (p, n) = (self.prev[s as usize], self.next[s as usize]);
        if p == NONE {
            debug_assert_eq!(self.head[chain], s, "slot {s} is not on list {chain}");
            self.head[chain] = n;
        } else {
            self.next[p as usize] = n;
        }
        if n != NONE {
            self.prev[n as usize] = p;
        }
    }

    /// First slot of list `chain` ([`NONE`] if empty); walk on with [`SlotChains::next`].
    pub fn first(&self, chain: usize) -> u32 {
        self.head[chain]
    }

    /// Empty list `chain` and return its first slot: the former members stay linked to each
    /// other through [`SlotChains::next`] until they are pushed again.
    pub fn take(&mut self, chain: usize) -> u32 {
        std::mem::replace(&mut self.head[chain], NONE)
    }

    /// The slot after `s` on its list ([`NONE`] at the end).
    pub fn next(&self, s: u32) -> u32 {
        self.next[s as usize]
    }

    /// Number of lists.
    pub fn chains(&self) -> usize {
        self.head.len()
    }

    /// The slots of list `chain`, in order.
    pub fn iter(&self, chain: usize) -> impl Iterator<Item = u32> + '_ {
        std::iter::successors(Some(self.head[chain]).filter(|&s| s != NONE), |&s| {
            Some(self.next[s as usize]).filter(|&n| n != NONE)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_remove_take_keep_every_list_consistent() {
        let mut c = SlotChains::new(2, 6);
        for s in [0, 1, 2] {
            c.push(0, s);
        }
        c.push(1, 5);
        assert_eq!(c.iter(0).collect::<Vec<_>>(), vec![2, 1, 0]);
        c.remove(0, 1);
        assert_eq!(c.iter(0).collect::<Vec<_>>(), vec![2, 0]);
        c.remove(0, 2);
        assert_eq!(c.iter(0).collect::<Vec<_>>(), vec![0]);
        let first = c.take(0);
        assert_eq!((first, c.next(first)), (0, NONE));
        assert_eq!(c.first(0), NONE);
        assert_eq!(c.iter(1).collect::<Vec<_>>(), vec![5]);
        assert_eq!(c.chains(), 2);
    }
}
