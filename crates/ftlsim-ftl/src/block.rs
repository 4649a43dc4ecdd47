//! Block-level FTL ("block"): one physical block per logical block, every page at its offset.
//!
//! The original block-mapped FTL that the thesis lists as BFTL (seed 001 Sec. 3.2 and
//! Table 5.3): the map holds one physical block number per logical block, and a page lives
//! at the same offset in its physical block as in its logical block
//! (`lbn = lpn / pages_per_block`, `offset = lpn % pages_per_block`). A page update cannot
//! go out of place within the block, so it rewrites the block, once per host request: the
//! engine hands each run of consecutive whole pages of a request to [`Ftl::write_run`], which
//! this module splits by logical block (issue 4):
//! - a logical block whose written offsets include one below the write pointer of its
//!   current block is rewritten: allocate a free block, copy every valid page the request
//!   does not overwrite into it at its offset, in offset order (controller copies, tagged
//!   GC, counted in `pages_moved`), program the request's pages at their offsets (tagged
//!   host), waste the offsets that hold no data with `skip_page` so pages stay in order
//!   within the block, invalidate the old pages and erase the old block (tagged GC). Each
//!   rewrite counts as one foreground collection;
//! - offsets that are all still erased in the current block (at or above its write pointer)
//!   are programmed in place, skipping the offsets in between; those are lost until the next
//!   rewrite. This is what a block-mapped FTL can do without a log, and it is what makes a
//!   sequential fill cost no copies;
//! - partial pages go through the host's partial-page policy one page at a time
//!   ([`Ftl::write`]), so each costs its own rewrite;
//! - reads find the page at its offset in the mapped block; TRIM invalidates the page
//!   (the block stays mapped; the next rewrite drops the page).
//!
//! Placement: a logical block's first physical block goes to the next plane in round-robin
//! (channel-first) order, so consecutive logical blocks stripe over the planes; a rewrite
//! stays in the old block's plane and falls back to the next plane with a free block only
//! if that plane has none. Free blocks are kept per plane in FIFO order (wear spreads;
//! `pools`); the held-back blocks of the over-provisioning are never used. There is no
//! idle-time work: `background_step` and `gc_step` do nothing, because every block is
//! reclaimed by the write that frees it.
//!
//! Logical space: `ceil(logical_pages / pages_per_block)` logical blocks; the last one is
//! only partly used when `logical_pages` is not a multiple of the block size, so every
//! `lpn < logical_pages` maps to a logical block. The drive needs one free block beyond the
//! data blocks (the rewrite target); a config with fewer spare blocks is rejected
//! (`overprovisioning`).
//!
//! SRAM (Table 5.3's BFTL column): the block map is 4 bytes (a block number) per physical
//! block, 16 KB for the thesis chip's 4,096 blocks; the thesis sizes every map over the
//! physical capacity (its PFTL map, 4,096 KB, is 4 bytes per physical page too). GC metadata,
//! reported as `sram_gc_metadata_bytes` and not in `mapping_sram_bytes`, is one free bit per
//! block (Table 5.3: 0.50 KB).
//!
//! Metrics (`extra_metrics`; counters from the start of the measured run): `block_rewrites`,
//! `block_in_place_writes` (pages), `pages_moved`, `sram_gc_metadata_bytes`.
//!
//! Departures: moves use controller copies even when `ftl.gc_copy = "copyback"` (the target
//! block may be on another plane after a fallback). `ftl.gc_scope` other than `plane` holds
//! host I/O in the scope during a rewrite, like the page FTL's foreground GC.

pub(crate) mod pools;
pub(crate) mod recovery;

use ftlsim_core::config::{GcScope, Resolved};
use ftlsim_core::error::{ConfigError, SimError};
use ftlsim_core::flash::{FlashArray, Oob, PageKind};
use ftlsim_core::ftl::{FlashCtx, Ftl, GcCounts, Recovery};
use ftlsim_core::geometry::{BlockId, Geometry, Lpn, Ppn, NONE};
use ftlsim_core::scheduler::Tag;
use pools::{reclaim_on_write_path, retire, skip_to, FreePools};
use serde::{Deserialize, Serialize};

/// The block-level FTL.
#[derive(Serialize, Deserialize)]
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
    pub fn new(cfg: &Resolved) -> Result<BlockFtl, ConfigError> {
        let d = cfg.derived();
        let g = &cfg.geometry;
        let ppb = g.pages_per_block;
        let lbns = d.logical_pages.div_ceil(ppb);
        let pools = FreePools::new(g, d.held_back_blocks_per_plane);
        if pools.usable_blocks() < lbns + 1 {
            return Err(ConfigError::Invalid {
                key: "overprovisioning".into(),
                value: format!("{} spare blocks", pools.usable_blocks().saturating_sub(lbns)),
                rule: format!("the block FTL needs one free block beyond the {lbns} data blocks to rewrite into; raise the over-provisioning"),
            });
        }
        Ok(BlockFtl {
            geo: g.clone(),
            ppb,
            logical_pages: d.logical_pages,
            data: vec![NONE; lbns as usize],
            pools,
            scope: cfg.ftl.gc_scope.unwrap_or_default(),
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

    /// Write offsets `lo..lo + versions.len()` of logical block `lbn`, offset `lo + i`
    /// holding `versions[i]`: in place when they are all still erased in its block,
    /// otherwise by one rewrite.
    fn write_block(&mut self, ctx: &mut FlashCtx, lbn: u32, lo: u32, versions: &[u32]) -> Result<(), SimError> {
        let first_lpn = lbn * self.ppb;
        for lpn in (first_lpn + lo..).take(versions.len()) {
            if let Some(old) = self.locate(ctx.flash(), lpn) {
                // Invalidate first so that the rewrite never copies a page this write supersedes.
                ctx.invalidate(old)?;
            }
        }
        let mut b = self.data[lbn as usize];
        if b == NONE {
            b = self.pools.alloc(None)?;
            self.data[lbn as usize] = b;
        }
        if lo < ctx.flash().write_pointer(b) {
            return self.rewrite(ctx, lbn, lo, versions);
        }
        skip_to(ctx, b, lo)?;
        for (off, &version) in (lo..).zip(versions) {
            ctx.program(self.geo.first_page(b) + off, Oob { lpn: first_lpn + off, version, kind: PageKind::Data })?;
        }
        self.in_place += versions.len() as u64;
        Ok(())
    }

    /// Rewrite logical block `lbn` into a new block with offsets `lo..lo + versions.len()`
    /// holding `versions` and the other valid pages copied from the old block.
    fn rewrite(&mut self, ctx: &mut FlashCtx, lbn: u32, lo: u32, versions: &[u32]) -> Result<(), SimError> {
        let written = lo..lo + versions.len() as u32;
        let old = self.data[lbn as usize];
        let plane = self.geo.plane_of_block(old);
        let new = self.pools.alloc(Some(plane))?;
        let (old_first, new_first) = (self.geo.first_page(old), self.geo.first_page(new));
        let old_wp = ctx.flash().write_pointer(old);
        let host = ctx.set_tag(Tag::Gc);
        for o in 0..self.ppb {
            if written.contains(&o) {
                let (lpn, version) = (lbn * self.ppb + o, versions[(o - lo) as usize]);
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
        Ok(Some(ctx.read_mapped(ppn, lpn, None)?))
    }

    fn write(&mut self, ctx: &mut FlashCtx, lpn: Lpn, version: u32) -> Result<(), SimError> {
        self.write_run(ctx, lpn, &[version])
    }

    fn write_run(&mut self, ctx: &mut FlashCtx, first: Lpn, versions: &[u32]) -> Result<(), SimError> {
        let end = first + versions.len() as u32;
        assert!(end <= self.logical_pages, "lpn {} beyond the {} logical pages", end - 1, self.logical_pages);
        if versions.is_empty() {
            return Ok(());
        }
        for lbn in first / self.ppb..=(end - 1) / self.ppb {
            let lo = first.max(lbn * self.ppb);
            let hi = end.min((lbn + 1) * self.ppb);
            self.write_block(ctx, lbn, lo % self.ppb, &versions[(lo - first) as usize..(hi - first) as usize])?;
        }
        Ok(())
    }

    fn trim(&mut self, ctx: &mut FlashCtx, lpn: Lpn) -> Result<(), SimError> {
        if let Some(ppn) = self.locate(ctx.flash(), lpn) {
            ctx.invalidate(ppn)?;
        }
        Ok(())
    }

    reclaim_on_write_path!();

    fn mapping_sram_bytes(&self) -> u64 {
        block_map_sram_bytes(&self.geo)
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
        m.insert("sram_gc_metadata_bytes".into(), free_bitmap_sram_bytes(&self.geo).into());
        m
    }

    fn save_state(&self) -> Vec<u8> {
        ftlsim_core::state::encode(self)
    }

    fn load_state(&mut self, bytes: &[u8]) -> Result<(), String> {
        *self = ftlsim_core::state::decode(bytes)?;
        Ok(())
    }

    fn recovery(&mut self) -> Option<&mut dyn Recovery> {
        Some(self)
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

/// Table 5.3's block map: a 4-byte block number per physical block of the drive.
pub(crate) fn block_map_sram_bytes(g: &Geometry) -> u64 {
    u64::from(g.blocks()) * 4
}

/// Table 5.3's block-level GC metadata: one free bit per physical block.
pub(crate) fn free_bitmap_sram_bytes(g: &Geometry) -> u64 {
    u64::from(g.blocks()).div_ceil(8)
}

impl Recovery for BlockFtl {
    /// Full scan and merge of what a cut left spread (`block::recovery`): the map holds one
    /// block per logical block, so a rewrite cut part-way leaves its logical block in two
    /// blocks, merged into a third. Worst case m + n pages read.
    fn recover(&mut self, ctx: &mut FlashCtx, cfg: &Resolved) -> Result<(), SimError> {
        *self = BlockFtl::new(cfg)?;
        self.data = recovery::rebuild_block_map(ctx, &mut self.pools, self.logical_pages, 0)?.data;
        Ok(())
    }
}
