//! The Buffer Zone's blocks: a log striped over the planes, its blocks lent one at a time.
//!
//! Seed 002 says writes are "sequentially logged into the Buffer Zone" and that a new zone
//! "is allocated from free block pool" when the old one migrates (Sec. III-C); it describes no
//! parallelism. On a drive whose planes work in parallel (the `waftl` preset, issue 34) a log
//! that fills one block before the next would put every host write on one plane at a time,
//! while DFTL spreads its writes over all of them; so the zone keeps one open block per plane
//! (a slot) and consecutive zone pages go round the slots, as the page FTLs allocate. And a
//! zone lent whole at once would need a zone's worth of free blocks in one request (on an aged
//! drive, a zone's worth of garbage collection: 1.6 s on the preset's one bus); its blocks are
//! lent as the slots need them instead, up to the zone's size, so the collection that makes
//! room comes a block at a time, as it does for the FTLs that allocate a block when one fills.

use ftlsim_core::flash::FlashArray;
use ftlsim_core::geometry::{BlockId, Geometry, Ppn, NONE};
use serde::{Deserialize, Serialize};

/// What the zone can give for the next page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// This page (counted as used).
    Page(Ppn),
    /// Slot `0` needs a block (on its plane if possible): lend one and call
    /// [`ZoneLog::opened`], then ask again.
    Lend(u32),
    /// Every block the zone may have is full: the zone is full.
    Full,
}

/// The zone's blocks and where its next page goes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ZoneLog {
    ppb: u32,
    /// Blocks the zone may hold.
    size: u32,
    /// Blocks lent to it, in the order lent.
    pub blocks: Vec<BlockId>,
    /// Per slot (one per plane): its open block, or NONE.
    open: Vec<BlockId>,
    /// The slot the next page tries first.
    next: u32,
    /// Pages handed out.
    used: u64,
    /// No block could be lent: the zone stays at the blocks it has (counted by the caller).
    short: bool,
}

impl ZoneLog {
    /// An empty zone of `size` blocks over `planes` slots.
    pub fn new(ppb: u32, planes: u32, size: u32) -> ZoneLog {
        ZoneLog { ppb, size, blocks: Vec::new(), open: vec![NONE; planes as usize], next: 0, used: 0, short: false }
    }

    /// Blocks the full zone holds.
    pub fn size_blocks(&self) -> u32 {
        self.size
    }

    /// Pages the full zone holds.
    pub fn capacity(&self) -> u64 {
        u64::from(self.size) * u64::from(self.ppb)
    }

    /// Pages handed out since the zone began.
    pub fn used(&self) -> u64 {
        self.used
    }

    /// No block lent yet.
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// The next zone page, going round the slots.
    pub fn next(&mut self, geo: &Geometry, flash: &FlashArray) -> Next {
        let slots = self.open.len() as u32;
        for _ in 0..slots {
            let s = self.next;
            let b = self.open[s as usize];
            if b != NONE {
                let wp = flash.write_pointer(b);
                if wp < self.ppb {
                    self.next = (s + 1) % slots;
                    self.used += 1;
                    return Next::Page(geo.first_page(b) + wp);
                }
                self.open[s as usize] = NONE;
            }
            if !self.short && (self.blocks.len() as u32) < self.size {
                return Next::Lend(s);
            }
            self.next = (s + 1) % slots;
        }
        Next::Full
    }

    /// Slot `slot` got block `b` (erased) from the pool.
    pub fn opened(&mut self, slot: u32, b: BlockId) {
        debug_assert_eq!(self.open[slot as usize], NONE, "slot {slot} already has an open block");
        self.open[slot as usize] = b;
        self.blocks.push(b);
    }

    /// No block can be lent: the zone is full once its open blocks are.
    pub fn cut_short(&mut self) {
        self.short = true;
    }

    /// The zone is full (or emptied before the run): its blocks, and a fresh start.
    pub fn take(&mut self) -> Vec<BlockId> {
        self.open.fill(NONE);
        self.next = 0;
        self.used = 0;
        self.short = false;
        std::mem::take(&mut self.blocks)
    }

    /// After recovery: the zone holds `blocks` (oldest first); those not full are open again,
    /// each in its plane's slot (or any free one), the rest closed.
    pub fn restore(&mut self, blocks: &[BlockId], geo: &Geometry, flash: &FlashArray) {
        self.take();
        let slots = self.open.len();
        for &b in blocks {
            let wp = flash.write_pointer(b);
            self.used += u64::from(wp);
            self.blocks.push(b);
            if wp < self.ppb {
                let home = geo.plane_of_block(b) as usize % slots;
                if let Some(s) = (0..slots).map(|i| (home + i) % slots).find(|&s| self.open[s] == NONE) {
                    self.open[s] = b;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ftlsim_core::flash::{Oob, PageKind};

    fn geo() -> Geometry {
        Geometry {
            channels: 1,
            chips_per_channel: 1,
            dies_per_chip: 1,
            planes_per_die: 2,
            blocks_per_plane: 8,
            pages_per_block: 2,
            page_size_bytes: 4096,
            spare_bytes_per_page: 64,
            spare_usable_bytes: 64,
        }
    }

    /// Hand out pages until full, lending the lowest free block of the slot's plane; the
    /// pages in order.
    fn fill(z: &mut ZoneLog, g: &Geometry, f: &mut FlashArray, next_block: &mut [u32; 2]) -> Vec<Ppn> {
        let mut pages = Vec::new();
        loop {
            match z.next(g, f) {
                Next::Page(p) => {
                    f.program(p, Oob { lpn: p, version: 1, kind: PageKind::Staged }).unwrap();
                    pages.push(p);
                }
                Next::Lend(s) => {
                    let b = s * g.blocks_per_plane + next_block[s as usize];
                    next_block[s as usize] += 1;
                    z.opened(s, b);
                }
                Next::Full => return pages,
            }
        }
    }

    #[test]
    fn pages_go_round_the_planes_and_blocks_are_lent_as_needed() {
        let g = geo();
        let mut f = FlashArray::new(&g, false);
        let mut z = ZoneLog::new(2, 2, 4);
        let mut nb = [0, 0];
        let pages = fill(&mut z, &g, &mut f, &mut nb);
        // Plane 0 holds blocks 0-7, plane 1 blocks 8-15; 2 pages a block.
        let planes: Vec<u32> = pages.iter().map(|&p| g.plane_of_block(g.block_of(p))).collect();
        assert_eq!(planes, vec![0, 1, 0, 1, 0, 1, 0, 1]);
        assert_eq!(z.blocks, vec![0, 8, 1, 9]);
        assert_eq!(z.used(), z.capacity());
        assert_eq!(z.take(), vec![0, 8, 1, 9]);
        assert!(z.is_empty() && z.used() == 0);
    }

    #[test]
    fn a_short_zone_is_full_once_its_open_blocks_are() {
        let g = geo();
        let mut f = FlashArray::new(&g, false);
        let mut z = ZoneLog::new(2, 2, 4);
        assert_eq!(z.next(&g, &f), Next::Lend(0));
        z.opened(0, 0);
        z.cut_short();
        let pages = fill(&mut z, &g, &mut f, &mut [1, 0]);
        assert_eq!(pages, vec![0, 1], "slot 1 never got a block; slot 0's block fills");
        assert_eq!(z.next(&g, &f), Next::Full);
    }

    #[test]
    fn restore_reopens_the_blocks_not_full() {
        let g = geo();
        let mut f = FlashArray::new(&g, false);
        f.program(0, Oob { lpn: 0, version: 1, kind: PageKind::Staged }).unwrap();
        f.program(1, Oob { lpn: 1, version: 1, kind: PageKind::Staged }).unwrap();
        f.program(16, Oob { lpn: 2, version: 1, kind: PageKind::Staged }).unwrap();
        let mut z = ZoneLog::new(2, 2, 4);
        z.restore(&[0, 8], &g, &f);
        assert_eq!(z.used(), 3);
        assert_eq!(z.next(&g, &f), Next::Lend(0), "block 0 is full: slot 0 needs another");
        z.opened(0, 1);
        assert_eq!(z.next(&g, &f), Next::Page(2));
        assert_eq!(z.next(&g, &f), Next::Page(17), "block 8's second page");
    }
}
