//! The partial-page merge buffer of `host.partial_write = "merge"`: partial pages wait here
//! until their page fills (then it is programmed once, with no read) or they are evicted
//! oldest first (then read-modify-write).
//!
//! Entries carry a generation so the FIFO can drop stale positions lazily; it is compacted
//! when stale positions pile up, so its length stays bounded by the capacity.

use crate::geometry::Lpn;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, VecDeque};

/// Buffered partial pages: sector mask and version by LPN, oldest first.
#[derive(Serialize, Deserialize)]
pub(super) struct MergeBuffer {
    cap: usize,
    map: HashMap<Lpn, (u64, u32, u64)>,
    order: VecDeque<(Lpn, u64)>,
    gen: u64,
}

impl MergeBuffer {
    /// An empty buffer of `cap` pages.
    pub(super) fn new(cap: usize) -> Self {
        MergeBuffer { cap, map: HashMap::with_capacity(cap), order: VecDeque::new(), gen: 0 }
    }

    /// Whether it holds no page.
    pub(super) fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Whether it holds `cap` pages.
    pub(super) fn is_full(&self) -> bool {
        self.map.len() >= self.cap
    }

    /// The buffered sector mask and version of `lpn`.
    pub(super) fn get(&self, lpn: Lpn) -> Option<(u64, u32)> {
        self.map.get(&lpn).map(|&(m, v, _)| (m, v))
    }

    /// Every buffered page with its version, in no particular order.
    pub(super) fn entries(&self) -> impl Iterator<Item = (Lpn, u32)> + '_ {
        self.map.iter().map(|(&l, &(_, v, _))| (l, v))
    }

    /// Take `lpn` out; returns its sector mask and version.
    pub(super) fn remove(&mut self, lpn: Lpn) -> Option<(u64, u32)> {
        self.map.remove(&lpn).map(|(m, v, _)| (m, v))
    }

    /// Take the oldest page out; returns it with its version.
    pub(super) fn oldest(&mut self) -> Option<(Lpn, u32)> {
        while let Some((lpn, g)) = self.order.pop_front() {
            if let Some(&(_, v, eg)) = self.map.get(&lpn) {
                if eg == g {
                    self.map.remove(&lpn);
                    return Some((lpn, v));
                }
            }
        }
        None
    }

    /// Buffer `lpn` with sector mask `mask` as the newest page.
    pub(super) fn insert(&mut self, lpn: Lpn, mask: u64, version: u32) {
        self.gen += 1;
        self.map.insert(lpn, (mask, version, self.gen));
        self.order.push_back((lpn, self.gen));
        if self.order.len() > 4 * self.cap + 16 {
            let map = &self.map;
            self.order.retain(|&(l, g)| map.get(&l).is_some_and(|e| e.2 == g));
        }
        assert!(self.order.len() <= 4 * self.cap + 16, "merge buffer order list unbounded");
    }
}
