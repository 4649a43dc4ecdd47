//! Block-level FTL ("block"): one physical block per logical block, every page at its offset.
//!
//! The original block-mapped FTL that the thesis lists as BFTL (seed 001 Sec. 3.2 and
//! Table 5.3): the map holds one physical block number per logical block, and a page lives
//! at the same offset in its physical block as in its logical block
//! (`lbn = lpn / pages_per_block`, `offset = lpn % pages_per_block`). A page update cannot
//! go out of place within the block, so it rewrites the block (read-modify-write of the
//! valid pages, issue 4):
//! - allocate a free block, copy every other valid page into it at its offset, in offset
//!   order (controller copies, tagged GC, counted in `pages_moved`), program the new page
//!   at its offset (tagged host), waste the offsets that hold no data with `skip_page` so
//!   pages stay in order within the block, invalidate the old pages and erase the old block
//!   (tagged GC). Each rewrite counts as one foreground collection;
//! - a write to an offset that is still erased in the current block (offset at or above its
//!   write pointer) is programmed in place, skipping the offsets in between; those are lost
//!   until the next rewrite. This is what a block-mapped FTL can do without a log, and it
//!   is what makes a sequential fill cost no copies;
//! - reads find the page at its offset in the mapped block; TRIM invalidates the page
//!   (the block stays mapped; the next rewrite drops the page).
//!
//! Placement: a logical block's first physical block goes to the next plane in round-robin
//! (channel-first) order, so consecutive logical blocks stripe over the planes; a rewrite
//! stays in the old block's plane and falls back to the next plane with a free block only
//! if that plane has none. Free blocks are kept per plane in FIFO order (wear spreads);
//! the held-back blocks of the over-provisioning are never used. There is no idle-time
//! work: `background_step` and `gc_step` do nothing, because every block is reclaimed by
//! the write that frees it.
//!
//! Logical space: `ceil(logical_pages / pages_per_block)` logical blocks; the last one is
//! only partly used when `logical_pages` is not a multiple of the block size, so every
//! `lpn < logical_pages` maps to a logical block. The drive needs one free block beyond the
//! data blocks (the rewrite target); a config with fewer spare blocks is rejected
//! (`overprovisioning`).
//!
//! SRAM: 4 bytes (a physical block number) per logical block.
//!
//! Metrics (`extra_metrics`, counted from the start of the measured run): `block_rewrites`,
//! `block_in_place_writes`, `pages_moved`.
//!
//! Departures: Table 5.3 sizes the BFTL map over all 4,096 physical blocks (16 KB); this
//! module counts logical blocks (15.5 KB for the thesis chip). Moves use controller copies
//! even when `ftl.gc_copy = "copyback"` (the target block may be on another plane after a
//! fallback). `ftl.gc_scope` other than `plane` holds host I/O in the scope during a
//! rewrite, like the page FTL's foreground GC.

use ftlsim_core::config::{DriveConfig, GcScope};
use ftlsim_core::error::{ConfigError, SimError};
use ftlsim_core::flash::{FlashArray, Oob, PageKind};
use ftlsim_core::ftl::{FlashCtx, Ftl, GcCounts};
use ftlsim_core::geometry::{BlockId, Geometry, Lpn, PlaneId, Ppn, NONE};
use ftlsim_core::scheduler::Tag;
use std::collections::VecDeque;

/// Per-plane FIFO pools of erased blocks, shared by the block-mapped FTLs.
#[derive(Debug, Clone)]
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

/// The config error for a drive whose spare blocks cannot hold what a block-mapped FTL needs.
pub(crate) fn spare_error(ftl: &str, usable: u32, data: u32, need: u32, what: &str) -> ConfigError {
    ConfigError::Invalid {
        key: "overprovisioning".into(),
        value: format!("{} spare blocks", usable.saturating_sub(data)),
        rule: format!(
            "the {ftl} FTL needs {need} blocks beyond the {data} data blocks ({what}); raise the over-provisioning"
        ),
    }
}

/// The block-level FTL.
pub struct BlockFtl {
    geo: Geometry,
    ppb: u32,
    logical_pages: u32,
    data: Vec<BlockId>,
    pools: FreePools,
    scope: GcScope,
    gc: GcCounts,
    rewrites: u64,
    in_place: u64,
    moved_at_start: u64,
}

impl BlockFtl {
    /// Build for a validated config.
    pub fn new(cfg: &DriveConfig) -> Result<BlockFtl, ConfigError> {
        let d = cfg.derive()?;
        let g = &cfg.geometry;
        let ppb = g.pages_per_block;
        let lbns = d.logical_pages.div_ceil(ppb);
        let pools = FreePools::new(g, d.held_back_blocks_per_plane);
        if pools.usable_blocks() < lbns + 1 {
            return Err(spare_error("block", pools.usable_blocks(), lbns, 1, "one free block to rewrite into"));
        }
        Ok(BlockFtl {
            geo: g.clone(),
            ppb,
            logical_pages: d.logical_pages,
            data: vec![NONE; lbns as usize],
            pools,
            scope: cfg.ftl.gc_scope,
            gc: GcCounts::default(),
            rewrites: 0,
            in_place: 0,
            moved_at_start: 0,
        })
    }

    /// The physical page holding `lpn`, if any.
    fn locate(&self, flash: &FlashArray, lpn: Lpn) -> Option<Ppn> {
        let (lbn, off) = (lpn / self.ppb, lpn % self.ppb);
        let b = self.data[lbn as usize];
        if b == NONE || off >= flash.write_pointer(b) {
            return None;
        }
        let ppn = self.geo.first_page(b) + off;
        flash.is_valid(ppn).then_some(ppn)
    }

    /// Rewrite logical block `lbn` into a new block with `lpn` at its offset holding `version`.
    fn rewrite(&mut self, ctx: &mut FlashCtx, lpn: Lpn, version: u32) -> Result<(), SimError> {
        let (lbn, off) = (lpn / self.ppb, lpn % self.ppb);
        let old = self.data[lbn as usize];
        let plane = self.geo.plane_of_block(old);
        let new = self.pools.alloc(Some(plane))?;
        let (old_first, new_first) = (self.geo.first_page(old), self.geo.first_page(new));
        let old_wp = ctx.flash().write_pointer(old);
        let host = ctx.set_tag(Tag::Gc);
        for o in 0..self.ppb {
            if o == off {
                skip_to(ctx, new, o)?;
                ctx.set_tag(host);
                ctx.program(new_first + o, Oob { lpn, version, kind: PageKind::Data })?;
                ctx.set_tag(Tag::Gc);
            } else if o < old_wp && ctx.flash().is_valid(old_first + o) {
                skip_to(ctx, new, o)?;
                ctx.copy(old_first + o, new_first + o, false)?;
                ctx.invalidate(old_first + o)?;
                self.gc.pages_moved += 1;
            }
        }
        retire(ctx, &mut self.pools, old)?;
        ctx.block_scope(self.geo.plane_of_block(new), self.scope);
        ctx.set_tag(host);
        self.data[lbn as usize] = new;
        self.gc.foreground_collections += 1;
        self.rewrites += 1;
        Ok(())
    }
}

impl Ftl for BlockFtl {
    fn name(&self) -> &'static str {
        "block"
    }

    fn read(&mut self, ctx: &mut FlashCtx, lpn: Lpn) -> Result<Option<u32>, SimError> {
        let Some(ppn) = self.locate(ctx.flash(), lpn) else { return Ok(None) };
        let oob = ctx.read(ppn)?;
        assert_eq!(oob.lpn, lpn, "page {ppn} mapped for lpn {lpn} holds lpn {}", oob.lpn);
        Ok(Some(oob.version))
    }

    fn write(&mut self, ctx: &mut FlashCtx, lpn: Lpn, version: u32) -> Result<(), SimError> {
        assert!(lpn < self.logical_pages, "lpn {lpn} beyond the {} logical pages", self.logical_pages);
        let (lbn, off) = (lpn / self.ppb, lpn % self.ppb);
        if let Some(old) = self.locate(ctx.flash(), lpn) {
            // Invalidate first so that the rewrite never copies the page this write supersedes.
            ctx.invalidate(old)?;
        }
        let mut b = self.data[lbn as usize];
        if b == NONE {
            b = self.pools.alloc(None)?;
            self.data[lbn as usize] = b;
        }
        if off < ctx.flash().write_pointer(b) {
            return self.rewrite(ctx, lpn, version);
        }
        skip_to(ctx, b, off)?;
        ctx.program(self.geo.first_page(b) + off, Oob { lpn, version, kind: PageKind::Data })?;
        self.in_place += 1;
        Ok(())
    }

    fn trim(&mut self, ctx: &mut FlashCtx, lpn: Lpn) -> Result<(), SimError> {
        if let Some(ppn) = self.locate(ctx.flash(), lpn) {
            ctx.invalidate(ppn)?;
        }
        Ok(())
    }

    fn background_step(&mut self, _ctx: &mut FlashCtx) -> Result<bool, SimError> {
        Ok(false)
    }

    fn gc_step(&mut self, _ctx: &mut FlashCtx, _plane: PlaneId) -> Result<bool, SimError> {
        Ok(false)
    }

    fn gc_counts(&self) -> GcCounts {
        self.gc.clone()
    }

    fn free_blocks(&self) -> u64 {
        self.pools.total()
    }

    fn mapping_sram_bytes(&self) -> u64 {
        // One 4-byte physical block number per logical block.
        self.data.len() as u64 * 4
    }

    fn begin_measurement(&mut self) {
        self.rewrites = 0;
        self.in_place = 0;
        self.moved_at_start = self.gc.pages_moved;
    }

    fn extra_metrics(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m = serde_json::Map::new();
        m.insert("block_rewrites".into(), self.rewrites.into());
        m.insert("block_in_place_writes".into(), self.in_place.into());
        m.insert("pages_moved".into(), (self.gc.pages_moved - self.moved_at_start).into());
        m
    }

    fn check_invariants(&self, flash: &FlashArray) {
        self.pools.check_invariants(flash);
        let mut owner = vec![NONE; self.geo.blocks() as usize];
        let mut mapped = 0u64;
        for (lbn, &b) in self.data.iter().enumerate() {
            if b == NONE {
                continue;
            }
            assert!(!self.pools.is_free(b) && !self.pools.is_held_back(b), "lbn {lbn}: block {b} is free or held back");
            assert_eq!(owner[b as usize], NONE, "block {b} mapped by lbns {} and {lbn}", owner[b as usize]);
            owner[b as usize] = lbn as u32;
            for ppn in flash.valid_pages(b) {
                let lpn = lbn as u32 * self.ppb + self.geo.page_in_block(ppn);
                let oob = flash.read(ppn).expect("valid page is readable");
                assert_eq!(oob.lpn, lpn, "page {ppn} of lbn {lbn} holds lpn {} not {lpn}", oob.lpn);
                assert!(lpn < self.logical_pages, "lpn {lpn} beyond the logical space");
                mapped += 1;
            }
        }
        for b in 0..self.geo.blocks() {
            if owner[b as usize] == NONE {
                assert_eq!(flash.valid_count(b), 0, "unmapped block {b} holds valid pages");
                assert!(self.pools.is_free(b) || self.pools.is_held_back(b), "block {b} is neither mapped nor free");
            }
        }
        let valid: u64 = (0..self.geo.blocks()).map(|b| u64::from(flash.valid_count(b))).sum();
        assert_eq!(mapped, valid, "mapped pages {mapped} != valid pages {valid}");
    }
}
