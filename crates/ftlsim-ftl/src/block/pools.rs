//! What the block-mapped FTLs ([`crate::block`], [`crate::fast`]) share: per-plane FIFO pools
//! of erased blocks, in-order page skipping, block retirement, and the
//! [`Ftl`](ftlsim_core::ftl::Ftl) methods of an FTL that reclaims blocks only on the write path.
//!
//! Invariants (`FreePools::check_invariants`): a pool holds erased blocks of its own plane,
//! each once, never a held-back block, and agrees with the per-block free flags.

use ftlsim_core::error::SimError;
use ftlsim_core::flash::FlashArray;
use ftlsim_core::ftl::FlashCtx;
use ftlsim_core::geometry::{BlockId, Geometry, PlaneId};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Per-plane FIFO pools of erased blocks, shared by the block-mapped FTLs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct FreePools {
    geo: Geometry,
    free: Vec<VecDeque<BlockId>>,
    is_free: Vec<bool>,
    held_back: u32,
    cursor: PlaneId,
}

impl FreePools {
    /// Every block free except the last `held_back` of each plane.
    pub(crate) fn new(g: &Geometry, held_back: u32) -> FreePools {
        let mut is_free = vec![false; g.blocks() as usize];
        let free = (0..g.planes())
            .map(|p| {
                let first = g.first_block(p);
                let usable = first..first + g.blocks_per_plane - held_back;
                for b in usable.clone() {
                    is_free[b as usize] = true;
                }
                usable.collect::<VecDeque<_>>()
            })
            .collect();
        FreePools { geo: g.clone(), free, is_free, held_back, cursor: 0 }
    }

    /// Blocks that can ever be allocated.
    pub(crate) fn usable_blocks(&self) -> u32 {
        self.geo.planes() * (self.geo.blocks_per_plane - self.held_back)
    }

    /// Free blocks of the whole drive.
    pub(crate) fn total(&self) -> u64 {
        self.free.iter().map(|f| f.len() as u64).sum()
    }

    /// Is the block in a free pool?
    pub(crate) fn is_free(&self, b: BlockId) -> bool {
        self.is_free[b as usize]
    }

    /// Is the block one of the held-back blocks?
    pub(crate) fn is_held_back(&self, b: BlockId) -> bool {
        b % self.geo.blocks_per_plane >= self.geo.blocks_per_plane - self.held_back
    }

    /// An erased block: from `prefer` if that plane has one, otherwise from the next plane
    /// in round-robin order that has one.
    pub(crate) fn alloc(&mut self, prefer: Option<PlaneId>) -> Result<BlockId, SimError> {
        let planes = self.geo.planes();
        let plane = match prefer.filter(|&p| !self.free[p as usize].is_empty()) {
            Some(p) => p,
            None => {
                let p = (0..planes)
                    .map(|i| (self.cursor + i) % planes)
                    .find(|&p| !self.free[p as usize].is_empty())
                    .ok_or_else(|| SimError::Ftl("no free block left in the drive".into()))?;
                self.cursor = (p + 1) % planes;
                p
            }
        };
        let b = self.free[plane as usize].pop_front().expect("the plane has a free block");
        self.is_free[b as usize] = false;
        Ok(b)
    }

    /// Take block `b` out of its pool (recovery found it written).
    pub(crate) fn claim(&mut self, b: BlockId) {
        if std::mem::take(&mut self.is_free[b as usize]) {
            self.free[self.geo.plane_of_block(b) as usize].retain(|&x| x != b);
        }
    }

    /// Return an erased block to its plane's pool.
    pub(crate) fn release(&mut self, flash: &FlashArray, b: BlockId) {
        assert!(!self.is_free[b as usize], "block {b} released twice");
        assert_eq!(flash.write_pointer(b), 0, "released block {b} is not erased");
        self.is_free[b as usize] = true;
        self.free[self.geo.plane_of_block(b) as usize].push_back(b);
    }

    /// Pools hold erased blocks of their own plane, each once, and agree with `is_free`.
    pub(crate) fn check_invariants(&self, flash: &FlashArray) {
        let mut n = 0;
        for (p, pool) in self.free.iter().enumerate() {
            for &b in pool {
                n += 1;
                assert_eq!(self.geo.plane_of_block(b) as usize, p, "block {b} in the wrong plane's pool");
                assert!(self.is_free[b as usize], "pooled block {b} not marked free");
                assert_eq!(flash.write_pointer(b), 0, "pooled block {b} not erased");
                assert!(!self.is_held_back(b), "held-back block {b} in a pool");
            }
        }
        assert_eq!(n, self.is_free.iter().filter(|&&f| f).count(), "free flags disagree with the pools");
    }
}

/// Waste the erased pages of `block` below page index `idx` (keeps programs in order).
pub(crate) fn skip_to(ctx: &mut FlashCtx, block: BlockId, idx: u32) -> Result<(), SimError> {
    let first = ctx.flash().geometry().first_page(block);
    while ctx.flash().write_pointer(block) < idx {
        let wp = ctx.flash().write_pointer(block);
        ctx.skip_page(first + wp)?;
    }
    Ok(())
}

/// Erase a block with no valid page (if it was ever written) and return it to its pool.
pub(crate) fn retire(ctx: &mut FlashCtx, pools: &mut FreePools, block: BlockId) -> Result<(), SimError> {
    if ctx.flash().write_pointer(block) > 0 {
        ctx.erase(block)?;
    }
    pools.release(ctx.flash(), block);
    Ok(())
}

/// The [`Ftl`](ftlsim_core::ftl::Ftl) methods of an FTL whose every block is reclaimed by the
/// write that frees it (a block rewrite, a log merge): no idle-time GC work, GC counts from
/// `self.gc`, free blocks from `self.pools`.
macro_rules! reclaim_on_write_path {
    () => {
        fn background_step(
            &mut self,
            _ctx: &mut ftlsim_core::ftl::FlashCtx,
        ) -> Result<bool, ftlsim_core::error::SimError> {
            Ok(false)
        }

        fn gc_counts(&self) -> ftlsim_core::ftl::GcCounts {
            self.gc.clone()
        }

        fn free_blocks(&self) -> u64 {
            self.pools.total()
        }
    };
}
pub(crate) use reclaim_on_write_path;
