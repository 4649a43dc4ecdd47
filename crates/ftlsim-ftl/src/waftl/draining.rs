//! A full Buffer Zone draining behind the new one (`[ftl.waftl] migration = "incremental"`).
//!
//! Seed 002 says only that migration is triggered when the zone is full (Sec. III-C, L141);
//! done in one go, it copies the whole zone (65,536 pages at 256 MB) inside one request, a
//! stall of tens of seconds on the paper's serial drive that its sub-millisecond response
//! times cannot contain. Here the full zone's block nodes wait in this set while a fresh zone
//! takes the writes; they move out one page at a time (`[ftl.waftl] migration_step`) in idle
//! time and, paced, with the writes into the new zone: the share of the drained zone still waiting never exceeds the
//! share of the new zone still free (`behind`), so it is empty by the time the new one fills.
//! Reads look here after the new zone and before the data blocks; a host write or trim of a
//! page still here supersedes it (`remove`).

use super::zone::{BlockNode, ZonePage};
use ftlsim_core::geometry::{BlockId, Lpn};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The drained zone: its block nodes still to migrate, its blocks, and its most popular block
/// as it was when the zone filled (Algorithm 1's argmax is taken over the full zone).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct DrainingZone {
    ppb: u32,
    nodes: BTreeMap<u32, BlockNode>,
    /// Zone pages still held by `nodes`, and at the start.
    pages: u32,
    pages_at_start: u32,
    /// The zone's blocks (erased once every node has moved).
    pub blocks: Vec<BlockId>,
    /// Algorithm 1's most popular block of this zone.
    pub popular: Option<u32>,
}

impl DrainingZone {
    /// Nothing draining, blocks of `ppb` pages.
    pub fn new(ppb: u32) -> DrainingZone {
        DrainingZone { ppb, ..DrainingZone::default() }
    }

    /// Start draining a full zone: its block nodes (each with pages) and blocks.
    pub fn start(&mut self, nodes: BTreeMap<u32, BlockNode>, blocks: Vec<BlockId>, popular: Option<u32>) {
        assert!(self.is_empty(), "a zone starts draining while another still drains");
        self.pages = nodes.values().map(BlockNode::page_count).sum();
        self.pages_at_start = self.pages;
        self.nodes = nodes;
        self.blocks = blocks;
        self.popular = popular;
    }

    /// No node left to migrate.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Zone pages still waiting.
    pub fn pages(&self) -> u32 {
        self.pages
    }

    /// The next node to migrate: the lowest logical block. It stays here while its pages move
    /// one at a time (each leaves with `remove`), so reads and writes still find them.
    pub fn first(&self) -> Option<u32> {
        self.nodes.first_key_value().map(|(&lbn, _)| lbn)
    }

    /// The node of `lbn`, if it still holds pages.
    pub fn node(&self, lbn: u32) -> Option<&BlockNode> {
        self.nodes.get(&lbn)
    }

    /// Take the lowest page of `lbn`'s node out (the node goes with its last page).
    pub fn take_first_page(&mut self, lbn: u32) -> Option<(u32, ZonePage)> {
        let node = self.nodes.get_mut(&lbn)?;
        let taken = node.pop_first();
        if node.page_count() == 0 {
            self.nodes.remove(&lbn);
        }
        let taken = taken?;
        self.pages -= 1;
        Some(taken)
    }

    /// Take the node of `lbn` out whole (a plan that moves or drops it at once).
    pub fn take_node(&mut self, lbn: u32) -> Option<BlockNode> {
        let node = self.nodes.remove(&lbn)?;
        self.pages -= node.page_count();
        Some(node)
    }

    /// The drained zone's copy of `lpn`, if any.
    pub fn lookup(&self, lpn: Lpn) -> Option<ZonePage> {
        self.nodes.get(&(lpn / self.ppb))?.page(lpn % self.ppb)
    }

    /// Forget the drained zone's copy of `lpn` (superseded by a write or trimmed); returns it.
    /// A node left without pages goes: nothing of it is to migrate.
    pub fn remove(&mut self, lpn: Lpn) -> Option<ZonePage> {
        let lbn = lpn / self.ppb;
        let node = self.nodes.get_mut(&lbn)?;
        let p = node.remove(lpn % self.ppb)?;
        self.pages -= 1;
        if node.page_count() == 0 {
            self.nodes.remove(&lbn);
        }
        Some(p)
    }

    /// Whether migration lags the new zone's filling: the share of this zone's pages still
    /// waiting exceeds the share of the new zone (`capacity` pages, `used` written) still
    /// free. Pages superseded by writes count as done.
    pub fn behind(&self, used: u64, capacity: u64) -> bool {
        !self.is_empty()
            && u64::from(self.pages) * capacity > u64::from(self.pages_at_start) * capacity.saturating_sub(used)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::waftl::zone::Bzmt;

    fn zone(lpns: &[Lpn]) -> DrainingZone {
        let mut b = Bzmt::new(4);
        for (i, &l) in lpns.iter().enumerate() {
            b.touch(l);
            b.log_write(l, 100 + i as u32);
        }
        let popular = b.most_popular();
        let mut d = DrainingZone::new(4);
        d.start(b.take(), vec![25], popular);
        d
    }

    #[test]
    fn pace_keeps_the_waiting_share_below_the_free_share() {
        // 8 pages waiting; a new zone of 16 pages.
        let mut d = zone(&[0, 1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(d.pages(), 8);
        assert!(!d.behind(0, 16), "nothing written yet: no hurry");
        assert!(d.behind(1, 16), "1/16 written, 8/8 waiting");
        d.take_node(0);
        assert_eq!(d.pages(), 4);
        assert!(!d.behind(8, 16), "half waiting, half free");
        assert!(d.behind(9, 16));
        d.take_node(1);
        assert!(d.is_empty());
        assert!(!d.behind(16, 16), "empty never lags");
    }

    #[test]
    fn a_superseded_page_leaves_and_an_emptied_node_goes() {
        let mut d = zone(&[4, 5, 9]);
        assert_eq!(d.lookup(5).map(|p| p.ppn), Some(101));
        assert_eq!(d.remove(5).map(|p| p.ppn), Some(101));
        assert_eq!(d.lookup(5), None);
        assert_eq!(d.remove(5), None);
        assert_eq!(d.pages(), 2);
        d.remove(9);
        assert_eq!(d.first(), Some(1));
        assert_eq!(d.take_node(1).map(|n| n.page_count()), Some(1));
        assert!(d.is_empty(), "lbn 2's node went with its last page");
        // Superseded pages count as done for the pace: 3 at the start, none left.
        assert!(!d.behind(1, 4));
    }

    #[test]
    fn the_most_popular_block_is_kept_from_the_full_zone() {
        let d = zone(&[8, 0, 8, 0, 8]);
        assert_eq!(d.popular, Some(2));
    }
}
