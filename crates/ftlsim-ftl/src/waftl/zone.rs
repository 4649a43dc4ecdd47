//! The Buffer Zone's map, BZMT (seed 002 Sec. III-C), and the migration plan of Algorithm 1.
//!
//! The BZMT is keyed by logical block (a `BTreeMap`, the well-kept ordered map standing for
//! the paper's B+tree: "a B+tree ... uses logical block number as key", L127). A block node
//! holds the block's popularity and its pages in the zone, each dirty (written by the host)
//! or clean (a read miss copied in, L137). Popularity counts accesses to any page of the
//! block, read misses included; "Sequentially accessing multiple pages of a block is treated
//! as one block access" (L127): an access continuing the previous one (the next page of the
//! same block) does not count again.
//!
//! Algorithm 1 (L141-174) decides per block node where its pages go when the zone is full.
//! `dirty == 1` (line 4) is read as "the node holds a dirty page": a block whose zone pages
//! are all clean copies has nothing new, so it is not rewritten (the copies are dropped).

use ftlsim_core::geometry::{BlockId, Lpn, Ppn};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Where a logical block's data lives outside the zone: its GMT entry (Sec. III-B, L109).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Home {
    /// Never migrated (Algorithm 1's "new writes").
    Unmapped,
    /// Page-mapped (GMT -1): in PMBs, found through the PMT.
    PageMapped,
    /// Block-mapped: every page at its offset in this BMB.
    BlockMapped(BlockId),
}

/// A logical page held in the zone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ZonePage {
    /// Where it is in the zone.
    pub ppn: Ppn,
    /// Written by the host (dirty), or a copy of data held elsewhere (clean, a read miss).
    pub dirty: bool,
}

/// A logical block in the zone: its popularity and its pages by offset.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockNode {
    /// Accesses to the block since it entered the zone (sequential runs count once).
    pub popularity: u32,
    pages: BTreeMap<u32, ZonePage>,
}

impl BlockNode {
    /// Pages in the zone, by offset.
    pub fn pages(&self) -> impl Iterator<Item = (u32, ZonePage)> + '_ {
        self.pages.iter().map(|(&o, &p)| (o, p))
    }

    /// Pages in the zone (Algorithm 1's `pagecount`, clean and dirty).
    pub fn page_count(&self) -> u32 {
        self.pages.len() as u32
    }

    /// The zone page at offset `off`, if any.
    pub fn page(&self, off: u32) -> Option<ZonePage> {
        self.pages.get(&off).copied()
    }

    /// Forget the zone page at offset `off`; returns it.
    pub fn remove(&mut self, off: u32) -> Option<ZonePage> {
        self.pages.remove(&off)
    }

    /// Forget the zone page of the lowest offset; returns it with its offset.
    pub fn pop_first(&mut self) -> Option<(u32, ZonePage)> {
        self.pages.pop_first()
    }

    /// Dirty pages in the zone.
    pub fn dirty_pages(&self) -> u32 {
        self.pages.values().filter(|p| p.dirty).count() as u32
    }
}

/// The BZMT.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Bzmt {
    ppb: u32,
    nodes: BTreeMap<u32, BlockNode>,
    last_access: Option<Lpn>,
    pages: u32,
}

impl Bzmt {
    /// An empty map for blocks of `ppb` pages.
    pub fn new(ppb: u32) -> Bzmt {
        Bzmt { ppb, nodes: BTreeMap::new(), last_access: None, pages: 0 }
    }

    /// An access to `lpn` (a read or a write of data that exists): one more for its block's
    /// popularity, unless it continues the previous access within the same block.
    pub fn touch(&mut self, lpn: Lpn) {
        let lbn = lpn / self.ppb;
        let sequential = self.last_access.is_some_and(|l| l + 1 == lpn && l / self.ppb == lbn);
        self.last_access = Some(lpn);
        if !sequential {
            self.nodes.entry(lbn).or_default().popularity += 1;
        }
    }

    /// The host wrote `lpn` into the zone at `ppn`; returns the zone page it replaces.
    pub fn log_write(&mut self, lpn: Lpn, ppn: Ppn) -> Option<Ppn> {
        self.log(lpn, ZonePage { ppn, dirty: true })
    }

    /// A read miss of `lpn` was copied into the zone at `ppn` (clean).
    pub fn log_read_miss(&mut self, lpn: Lpn, ppn: Ppn) -> Option<Ppn> {
        self.log(lpn, ZonePage { ppn, dirty: false })
    }

    fn log(&mut self, lpn: Lpn, page: ZonePage) -> Option<Ppn> {
        let node = self.nodes.entry(lpn / self.ppb).or_default();
        let old = node.pages.insert(lpn % self.ppb, page).map(|p| p.ppn);
        if old.is_none() {
            self.pages += 1;
        }
        old
    }

    /// Forget the zone's copy of `lpn` (a trim); returns it.
    pub fn remove(&mut self, lpn: Lpn) -> Option<ZonePage> {
        let p = self.nodes.get_mut(&(lpn / self.ppb))?.remove(lpn % self.ppb)?;
        self.pages -= 1;
        Some(p)
    }

    /// The zone's copy of `lpn`, if any.
    pub fn lookup(&self, lpn: Lpn) -> Option<ZonePage> {
        self.nodes.get(&(lpn / self.ppb))?.page(lpn % self.ppb)
    }

    /// Whether the zone holds a page the host wrote of logical block `lbn`: a read miss of
    /// that block copied in can join its BMB rewrite (`[ftl.waftl] read_miss_copy`).
    pub fn holds_written(&self, lbn: u32) -> bool {
        self.nodes.get(&lbn).is_some_and(|n| n.pages.values().any(|p| p.dirty))
    }

    /// Logical pages held (a page rewritten in the zone counts once).
    pub fn pages(&self) -> u32 {
        self.pages
    }

    /// The most popular logical block with pages in the zone (ties: the lowest number).
    pub fn most_popular(&self) -> Option<u32> {
        let mut best: Option<(u32, u32)> = None;
        for (&lbn, n) in self.nodes.iter().filter(|(_, n)| !n.pages.is_empty()) {
            if best.is_none_or(|(_, p)| n.popularity > p) {
                best = Some((lbn, n.popularity));
            }
        }
        best.map(|(lbn, _)| lbn)
    }

    /// Empty the map for a migration: every block node with pages, by logical block.
    pub fn take(&mut self) -> BTreeMap<u32, BlockNode> {
        self.pages = 0;
        self.last_access = None;
        let mut nodes = std::mem::take(&mut self.nodes);
        nodes.retain(|_, n| !n.pages.is_empty());
        nodes
    }
}

/// What Algorithm 1 does with one block node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan {
    /// Lines 3-7: a BMB with a dirty page is rewritten: the zone's pages (dirty and clean) and
    /// the rest of the old BMB into a new BMB; the old one is invalidated.
    RewriteBmb {
        /// The BMB replaced.
        old: BlockId,
    },
    /// Line 4 false, or a page-mapped block's clean copies: nothing new, the zone pages are
    /// dropped.
    Drop,
    /// Lines 11-15: a page-mapped block's dirty pages go to the active PMB.
    UpdatePmb,
    /// Lines 20-21, 26: new data to the active PMB (the most popular block regardless of its
    /// page count, or one below the threshold).
    NewToPmb {
        /// Chosen as the zone's most popular block.
        most_popular: bool,
    },
    /// Lines 23-24: new data with at least `threshold` pages to a BMB of its own.
    NewToBmb,
}

/// Algorithm 1's decision for `node` of a logical block whose GMT entry is `home`.
pub fn plan(home: Home, node: &BlockNode, most_popular: bool, threshold: u32) -> Plan {
    match home {
        Home::BlockMapped(old) if node.dirty_pages() > 0 => Plan::RewriteBmb { old },
        Home::BlockMapped(_) => Plan::Drop,
        Home::PageMapped if node.dirty_pages() > 0 => Plan::UpdatePmb,
        Home::PageMapped => Plan::Drop,
        Home::Unmapped if most_popular => Plan::NewToPmb { most_popular: true },
        Home::Unmapped if node.page_count() >= threshold => Plan::NewToBmb,
        Home::Unmapped => Plan::NewToPmb { most_popular: false },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A zone of 8-page blocks holding pages `(lpn, dirty)` at made-up addresses.
    fn zone(pages: &[(Lpn, bool)]) -> Bzmt {
        let mut z = Bzmt::new(8);
        for (i, &(lpn, dirty)) in pages.iter().enumerate() {
            if dirty {
                z.log_write(lpn, 1000 + i as Ppn);
            } else {
                z.log_read_miss(lpn, 1000 + i as Ppn);
            }
        }
        z
    }

    #[test]
    fn a_sequential_run_is_one_access_and_interleaved_ones_count_each() {
        let mut z = Bzmt::new(8);
        for lpn in 8..14 {
            z.touch(lpn); // one run over block 1
        }
        z.touch(0); // block 0
        z.touch(14); // back to block 1: not the continuation of lpn 0
        z.touch(15); // continues 14
        z.touch(16); // next block: a new access to block 2
        z.log_write(9, 1);
        z.log_write(0, 2);
        z.log_write(16, 3);
        let n = z.take();
        assert_eq!((n[&1].popularity, n[&0].popularity, n[&2].popularity), (2, 1, 1));
    }

    #[test]
    fn pages_rewritten_in_the_zone_count_once_and_the_newest_copy_wins() {
        let mut z = Bzmt::new(8);
        assert_eq!(z.log_write(3, 10), None);
        assert_eq!(z.log_write(3, 11), Some(10));
        assert_eq!(z.log_read_miss(4, 12), None);
        assert_eq!(z.pages(), 2);
        assert_eq!(z.lookup(3), Some(ZonePage { ppn: 11, dirty: true }));
        assert_eq!(z.lookup(4), Some(ZonePage { ppn: 12, dirty: false }));
        assert_eq!(z.lookup(5), None);
    }

    #[test]
    fn the_most_popular_block_breaks_ties_by_number() {
        let mut z = zone(&[(0, true), (8, true), (16, true)]);
        for lpn in [8, 16, 0, 16] {
            z.touch(lpn);
        }
        assert_eq!(z.most_popular(), Some(2));
        z.touch(8);
        assert_eq!(z.most_popular(), Some(1), "blocks 1 and 2 tie at 2: the lower wins");
    }

    #[test]
    fn each_branch_of_algorithm_1() {
        let dirty = zone(&[(0, true), (1, false)]).take().remove(&0).unwrap();
        let clean = zone(&[(0, false), (1, false)]).take().remove(&0).unwrap();
        let full = zone(&(0..8).map(|l| (l, true)).collect::<Vec<_>>()).take().remove(&0).unwrap();
        // Lines 3-7: a BMB rewritten only when the zone holds a dirty page of it.
        assert_eq!(plan(Home::BlockMapped(7), &dirty, false, 8), Plan::RewriteBmb { old: 7 });
        assert_eq!(plan(Home::BlockMapped(7), &clean, true, 8), Plan::Drop);
        // Lines 11-15: a PMB update writes dirty pages; clean copies only are dropped.
        assert_eq!(plan(Home::PageMapped, &dirty, true, 8), Plan::UpdatePmb);
        assert_eq!(plan(Home::PageMapped, &clean, false, 8), Plan::Drop);
        // Lines 20-26: new data: most popular to PMB whatever its size, else by the threshold.
        assert_eq!(plan(Home::Unmapped, &full, true, 8), Plan::NewToPmb { most_popular: true });
        assert_eq!(plan(Home::Unmapped, &full, false, 8), Plan::NewToBmb);
        assert_eq!(plan(Home::Unmapped, &dirty, false, 8), Plan::NewToPmb { most_popular: false });
        assert_eq!(plan(Home::Unmapped, &dirty, false, 2), Plan::NewToBmb, "2 pages reach a threshold of 2");
    }

    #[test]
    fn taking_the_zone_empties_it() {
        let mut z = zone(&[(0, true), (9, true)]);
        z.touch(0);
        let n = z.take();
        assert_eq!(n.keys().copied().collect::<Vec<_>>(), vec![0, 1]);
        assert_eq!((z.pages(), z.most_popular(), z.lookup(0)), (0, None, None));
    }
}
