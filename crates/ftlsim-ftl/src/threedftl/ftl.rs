//! The 3DFTL FTL on the flash model (seed 001 Ch. 6): data pages only, each written with its
//! group's mapping entries in its spare area (`translate`, `spare`), so no translation page
//! is ever written; lookups read spare areas on a CMT miss (one or two pages); on-demand
//! greedy GC per plane rewrites each page it moves with its group's entries.
//!
//! Where the thesis is silent (docs/3dftl.md):
//! - The page map is kept whole in host memory for speed (`map`); write-through makes it
//!   equal to what the spare areas hold, and the flash reads a lookup costs are charged by
//!   `translate` from the GTD and LTD pointers.
//! - A page whose data is stale may still be the LTD entry of a sub-group (its page of the
//!   group was written compressed, and the next one could not carry that sub-group) or the
//!   GTD entry (its LPN trimmed). Before GC erases a block holding such a page, the sub-group
//!   is re-homed: a valid page of it is moved (preferably in the victim's plane) after its
//!   line has read the old carrier, so the move carries its entries; a sub-group with no
//!   mapped LPN left is forgotten. Counted as `threedftl_rehome_moves`.
//! - Allocation is round-robin over planes (the thesis's chip has no parallelism, Sec. 4.2.1).
//! - A lookup's spare-area read costs a whole page read: the thesis counts them as page reads
//!   (L1003, L1025) and never says only the spare bytes cross the bus. `[ftl.threedftl]
//!   lookup_transfer = "spare"` moves the spare area alone (448 B on the thesis's chip), a
//!   sensitivity (docs/results/thesis-ch6-8.md).
//!
//! Invalid pages (`ftl.invalid_tracking`, Sec. 8.1, Table 8.1): flags in SRAM; counters only,
//! GC then reading every stale page of a victim and looking its LPN up; or ILog (`crate::ilog`),
//! host and re-home invalidations logged, GC completing a victim's flags with at most one IP
//! read; its IPs on flash are `crate::ilog::on_flash`'s.

use super::spare::{Format, COMPRESSED_BYTES, THESIS};
use super::sram::{self, InvalidTracking};
use super::translate::Translation;
use crate::ilog::on_flash::IlogOnFlash;
use ftlsim_core::config::{Allocation, GcCopy, Resolved};
use ftlsim_core::error::{ConfigError, SimError};
use ftlsim_core::flash::{FlashArray, Oob, PageKind};
use ftlsim_core::ftl::{FlashCtx, Ftl, GcCounts, OpRef, Recovery};
use ftlsim_core::gc::{BlockManager, GcJob, GcStep, Relocate, MIN_FREE_BLOCKS};
use ftlsim_core::gc_driver::{self, Collector};
use ftlsim_core::geometry::{BlockId, Geometry, Lpn, PlaneId, Ppn, NONE};
use ftlsim_core::scheduler::Tag;
use serde::{Deserialize, Serialize};

/// Write streams: host data, GC moves, ILog's invalidation pages.
const HOST: u32 = 0;
const GC_STREAM: u32 = 1;
const IP_STREAM: u32 = 2;
/// Table 6.1's CMT: 128 lines (32.73 KB).
const DEFAULT_LINES: u64 = 128;

/// What a lookup's spare-area read moves over the bus (`[ftl.threedftl] lookup_transfer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum LookupTransfer {
    /// The whole page, as a page read (the thesis counts page reads).
    #[default]
    Page,
    /// The spare area alone (`geometry.spare_bytes_per_page`).
    Spare,
}

/// 3DFTL's options (`[ftl.threedftl]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct ThreeDftlOptions {
    /// What a lookup's spare-area read transfers.
    pub lookup_transfer: LookupTransfer,
}

impl crate::options::Options for ThreeDftlOptions {
    const SECTION: &'static str = "threedftl";
}

/// What 3DFTL counts besides its lookups.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Counts {
    rehome_moves: u64,
    forgotten_subgroups: u64,
    stale_pages_read: u64,
    validation_lookups: u64,
}

/// 3DFTL.
#[derive(Serialize, Deserialize)]
pub struct ThreeDftl {
    geo: Geometry,
    #[serde(deserialize_with = "ftlsim_core::big_array::deserialize")]
    map: Vec<Ppn>,
    bm: BlockManager,
    tr: Translation,
    next_plane: u32,
    threshold: u32,
    copyback: bool,
    gc: GcCounts,
    counts: Counts,
    tracking: InvalidTracking,
    /// What a lookup's spare-area read moves over the bus.
    lookup_transfer: LookupTransfer,
    /// Per plane: the victim whose stale pages were read (counters) or whose flags were
    /// completed (ILog), NONE after its erase.
    validated: Vec<BlockId>,
    /// ILog, with `ftl.invalid_tracking = "ilog"`.
    ilog: Option<IlogOnFlash>,
    /// Per physical page, the sub-groups its spare area carries (a bit each; 0 for a page
    /// not written since its erase): spare-area content, which survives a power cut and is
    /// all recovery reads of the pre-cut state.
    carried: Vec<u8>,
}

/// Invalidate data page `old`, logging it in ILog when on (`log`).
fn invalidate_data(
    ctx: &mut FlashCtx,
    bm: &mut BlockManager,
    ilog: &mut Option<IlogOnFlash>,
    old: Ppn,
    log: bool,
) -> Result<(), SimError> {
    ctx.invalidate(old)?;
    bm.on_invalidate(ctx.flash(), old);
    match ilog {
        Some(il) if log => il.invalidated(ctx, bm, old),
        _ => Ok(()),
    }
}

/// Moves a valid page for GC: its group's line must know its sub-group (a GC-caused miss
/// reads spare areas), then the copy carries the entries the line knows.
struct Mover<'a> {
    map: &'a mut [Ppn],
    carried: &'a mut [u8],
    bm: &'a mut BlockManager,
    tr: &'a mut Translation,
    ilog: &'a mut Option<IlogOnFlash>,
    copyback: bool,
    lookup_transfer: LookupTransfer,
    moved: &'a mut u64,
    /// Whether the sources' invalidations go to ILog (not a victim's: it is erased next).
    log: bool,
}

impl Mover<'_> {
    fn move_page(&mut self, ctx: &mut FlashCtx, src: Ppn, lpn: Lpn) -> Result<(), SimError> {
        spare_reads(ctx, self.tr, lpn, true, self.lookup_transfer)?;
        let g = ctx.flash().geometry();
        let (plane, parity) = (g.plane_of(src), g.page_in_block(src) % 2);
        let dst = self.bm.allocate(ctx.flash(), plane, GC_STREAM)?;
        let g = ctx.flash().geometry();
        let parity_ok = !ctx.flash().copyback_same_parity() || g.page_in_block(dst) % 2 == parity;
        ctx.copy(src, dst, self.copyback && parity_ok)?;
        assert_eq!(self.map[lpn as usize], src, "lpn {lpn} maps elsewhere than its valid page {src}");
        self.map[lpn as usize] = dst;
        invalidate_data(ctx, self.bm, self.ilog, src, self.log)?;
        self.carried[dst as usize] = carried_mask(self.tr.written(lpn, dst, self.map), lpn);
        *self.moved += 1;
        Ok(())
    }
}

impl Relocate for Mover<'_> {
    fn relocate(&mut self, ctx: &mut FlashCtx, src: Ppn, oob: Oob) -> Result<(), SimError> {
        if oob.kind == PageKind::Log {
            let il = self.ilog.as_mut().expect("invalidation pages only with ILog");
            il.relocate(ctx, self.bm, src, oob)?;
            *self.moved += 1;
            return Ok(());
        }
        self.move_page(ctx, src, oob.lpn)
    }
}

/// The sub-groups a page of `lpn` written in `format` carries.
fn carried_mask(format: Format, lpn: Lpn) -> u8 {
    match format {
        Format::Uncompressed => 1 << THESIS.subgroup_of(lpn % THESIS.group),
        Format::Compressed { carried } => carried,
    }
}

/// Read the spare areas `lpn`'s lookup needs (tagged mapping), each waiting for the one
/// before, as page reads or spare-area reads (`transfer`); the last one's operation, for the
/// data read to wait for.
fn spare_reads(
    ctx: &mut FlashCtx,
    tr: &mut Translation,
    lpn: Lpn,
    gc: bool,
    transfer: LookupTransfer,
) -> Result<Option<OpRef>, SimError> {
    let access = tr.lookup(lpn, gc);
    if access.reads().is_empty() {
        return Ok(None);
    }
    let prev = ctx.set_tag(Tag::Mapping);
    let mut last = None;
    for &p in access.reads() {
        match transfer {
            LookupTransfer::Page => ctx.read_after(p, last)?,
            LookupTransfer::Spare => ctx.read_spare_after(p, last)?,
        };
        last = ctx.last_op();
    }
    ctx.set_tag(prev);
    Ok(last)
}

impl ThreeDftl {
    /// Build for a validated config.
    pub fn new(cfg: &Resolved) -> Result<ThreeDftl, ConfigError> {
        let d = cfg.derived();
        let g = &cfg.geometry;
        if (g.spare_usable_bytes as usize) < COMPRESSED_BYTES {
            return Err(ConfigError::Invalid {
                key: "geometry.spare_usable_bytes".into(),
                value: g.spare_usable_bytes.to_string(),
                rule: format!(
                    "3dftl writes up to {COMPRESSED_BYTES} bytes of mapping entries per spare area (seed 001 L986); \
                     the thesis's chip has 112 usable (the `thesis` preset)"
                ),
            });
        }
        if let Some(a) = cfg.ftl.allocation.filter(|&a| a != Allocation::RoundRobin) {
            return Err(ConfigError::Invalid {
                key: "ftl.allocation".into(),
                value: format!("{a:?}"),
                rule: "3dftl allocates round-robin over planes (the thesis's chip has no parallelism)".into(),
            });
        }
        let lines = cfg.ftl.mapping_cache_bytes.map_or(DEFAULT_LINES, sram::cmt_lines);
        if lines == 0 {
            return Err(ConfigError::Invalid {
                key: "ftl.mapping_cache_bytes".into(),
                value: cfg.ftl.mapping_cache_bytes.unwrap_or(0).to_string(),
                rule: format!("must hold at least one CMT line of {} bits", sram::LINE_BITS),
            });
        }
        let ilog = IlogOnFlash::for_config(cfg, IP_STREAM, "3dftl")?;
        let groups = d.logical_pages.div_ceil(THESIS.group);
        Ok(ThreeDftl {
            geo: g.clone(),
            map: ftlsim_core::big_array::filled(d.logical_pages as usize, NONE),
            bm: BlockManager::new(g, 3, d.held_back_blocks_per_plane, cfg.ftl.gc_victim),
            tr: Translation::new(THESIS, groups, lines as usize),
            next_plane: 0,
            threshold: d.gc_threshold_blocks,
            copyback: cfg.ftl.gc_copy == Some(GcCopy::Copyback),
            gc: GcCounts::default(),
            counts: Counts::default(),
            tracking: cfg.ftl.invalid_tracking,
            lookup_transfer: <ThreeDftlOptions as crate::options::Options>::of(cfg)?.lookup_transfer,
            validated: vec![NONE; g.planes() as usize],
            ilog,
            carried: vec![0; (g.blocks() * g.pages_per_block) as usize],
        })
    }

    fn mover(&mut self, log: bool) -> Mover<'_> {
        Mover {
            map: &mut self.map,
            carried: &mut self.carried,
            bm: &mut self.bm,
            tr: &mut self.tr,
            ilog: &mut self.ilog,
            copyback: self.copyback,
            lookup_transfer: self.lookup_transfer,
            moved: &mut self.gc.pages_moved,
            log,
        }
    }

    /// One step of `job`: a page moved, or, once no valid page is left, the stale pages'
    /// mapping duties re-homed and the victim erased.
    fn step(&mut self, ctx: &mut FlashCtx, job: &mut GcJob) -> Result<GcStep, SimError> {
        let plane = self.geo.plane_of_block(job.victim) as usize;
        if self.validated[plane] != job.victim {
            self.validated[plane] = job.victim;
            match self.tracking {
                InvalidTracking::Flags => {}
                InvalidTracking::Counters => self.read_stale_pages(ctx, job.victim)?,
                InvalidTracking::Ilog => {
                    let il = self.ilog.as_mut().expect("ILog on");
                    il.validate(ctx, &mut self.bm, job.victim)?;
                }
            }
        }
        if ctx.flash().valid_count(job.victim) == 0 {
            self.rehome(ctx, job.victim)?;
        }
        let s = job.step(ctx, &mut self.mover(false))?;
        if s == GcStep::Erased {
            self.bm.release(ctx.flash(), job.victim);
            self.validated[plane] = NONE;
            let first = self.geo.first_page(job.victim) as usize;
            let pages = first..first + self.geo.pages_per_block as usize;
            self.carried[pages].fill(0);
            if let Some(il) = self.ilog.as_mut() {
                il.erased(job.victim);
            }
        }
        Ok(s)
    }

    /// With only an invalid counter per block (Table 8.1), GC reads each stale page of the
    /// victim and looks its LPN up to learn it is stale (L1187); the valid ones are read by
    /// their moves.
    fn read_stale_pages(&mut self, ctx: &mut FlashCtx, victim: BlockId) -> Result<(), SimError> {
        let first = self.geo.first_page(victim);
        for off in 0..ctx.flash().write_pointer(victim) {
            let p = first + off;
            if ctx.flash().is_valid(p) {
                continue;
            }
            let Some(oob) = ctx.read_spare(p) else { continue };
            self.counts.stale_pages_read += 1;
            if oob.kind != PageKind::Data {
                continue; // an invalidation page: the IPT (SRAM) tells
            }
            spare_reads(ctx, &mut self.tr, oob.lpn, true, self.lookup_transfer)?;
            self.counts.validation_lookups += 1;
        }
        Ok(())
    }

    /// Before `victim` (no valid page left) is erased: every sub-group whose LTD entry, and
    /// every group whose GTD entry, is one of its pages gets a new carrier (a valid page of
    /// it moved) or is forgotten when nothing of it is mapped.
    fn rehome(&mut self, ctx: &mut FlashCtx, victim: BlockId) -> Result<(), SimError> {
        let first = self.geo.first_page(victim);
        let (group_size, per) = (THESIS.group, THESIS.per_subgroup());
        for off in 0..ctx.flash().write_pointer(victim) {
            let p = first + off;
            let Ok(oob) = ctx.flash().read(p) else { continue };
            if oob.kind != PageKind::Data {
                continue;
            }
            let group = oob.lpn / group_size;
            for k in 0..THESIS.subgroups {
                if self.tr.ltd(group)[k as usize] != p {
                    continue;
                }
                let slots = group * group_size + k * per..(group * group_size + (k + 1) * per);
                match self.pick(slots, victim) {
                    Some(lpn) => self.rehome_move(ctx, lpn)?,
                    None => {
                        self.tr.forget_subgroup(group, k);
                        self.counts.forgotten_subgroups += 1;
                    }
                }
            }
            if self.tr.gtd(group) == p {
                let slots = group * group_size..(group + 1) * group_size;
                match self.pick(slots, victim) {
                    Some(lpn) => self.rehome_move(ctx, lpn)?,
                    None => (0..THESIS.subgroups).for_each(|k| self.tr.forget_subgroup(group, k)),
                }
            }
            debug_assert!(self.tr.carried_by(group, p) == 0 && self.tr.gtd(group) != p, "page {p} still carries");
        }
        Ok(())
    }

    /// A mapped LPN among `slots` to move, preferably one on the victim's plane.
    fn pick(&self, slots: std::ops::Range<u32>, victim: BlockId) -> Option<Lpn> {
        let plane = self.geo.plane_of_block(victim);
        let mapped = slots.filter(|&l| (l as usize) < self.map.len() && self.map[l as usize] != NONE);
        let mut first = None;
        for l in mapped {
            if self.geo.plane_of(self.map[l as usize]) == plane {
                return Some(l);
            }
            first.get_or_insert(l);
        }
        first
    }

    fn rehome_move(&mut self, ctx: &mut FlashCtx, lpn: Lpn) -> Result<(), SimError> {
        let src = self.map[lpn as usize];
        self.mover(true).move_page(ctx, src, lpn)?;
        self.counts.rehome_moves += 1;
        Ok(())
    }

    /// The plane for the next host page, after foreground GC made room there; the next
    /// plane when this one has nothing to reclaim.
    fn place(&mut self, ctx: &mut FlashCtx, lpn: Lpn) -> Result<PlaneId, SimError> {
        let planes = self.geo.planes();
        for _ in 0..planes {
            let plane = self.next_plane;
            self.next_plane = (plane + 1) % planes;
            if self.ensure_space(ctx, plane)? {
                return Ok(plane);
            }
        }
        Err(SimError::Ftl(format!(
            "lpn {lpn}: every plane is full of valid data and nothing can be reclaimed (raise the over-provisioning)"
        )))
    }

    /// Foreground greedy GC on `plane` until it is back at the threshold; `false` when it
    /// has no free block to spare and nothing to reclaim.
    fn ensure_space(&mut self, ctx: &mut FlashCtx, plane: PlaneId) -> Result<bool, SimError> {
        if self.bm.free_blocks(plane) >= self.threshold {
            return Ok(true);
        }
        let prev = ctx.set_tag(Tag::Gc);
        let r = gc_driver::collect_until(self, ctx, plane);
        ctx.set_tag(prev);
        r?;
        Ok(self.bm.free_blocks(plane) >= MIN_FREE_BLOCKS)
    }
}

impl Collector for ThreeDftl {
    fn next_victim(&mut self, flash: &FlashArray, plane: PlaneId) -> Option<GcJob> {
        self.bm.next_job(&mut None, flash, plane, true)
    }

    fn gc_steps(&mut self, ctx: &mut FlashCtx, job: &mut GcJob, _urgent: bool, steps: u32) -> Result<GcStep, SimError> {
        let mut s = self.step(ctx, job)?;
        for _ in 1..steps {
            if s == GcStep::Erased {
                break;
            }
            s = self.step(ctx, job)?;
        }
        Ok(s)
    }

    fn gc_counts_mut(&mut self) -> &mut GcCounts {
        &mut self.gc
    }

    fn short_of_space(&self, _flash: &FlashArray, plane: PlaneId) -> bool {
        self.bm.free_blocks(plane) < self.threshold
    }

    fn room(&self, flash: &FlashArray, plane: PlaneId) -> u64 {
        self.bm.free_pages(flash, plane)
    }
}

impl Ftl for ThreeDftl {
    fn name(&self) -> &'static str {
        "3dftl"
    }

    fn read(&mut self, ctx: &mut FlashCtx, lpn: Lpn) -> Result<Option<u32>, SimError> {
        let located = spare_reads(ctx, &mut self.tr, lpn, false, self.lookup_transfer)?;
        let ppn = self.map[lpn as usize];
        if ppn == NONE {
            return Ok(None);
        }
        Ok(Some(ctx.read_mapped(ppn, lpn, located)?))
    }

    fn write(&mut self, ctx: &mut FlashCtx, lpn: Lpn, version: u32) -> Result<(), SimError> {
        // GC first: its moves may take this group's line out of the CMT.
        let plane = self.place(ctx, lpn)?;
        spare_reads(ctx, &mut self.tr, lpn, false, self.lookup_transfer)?;
        let ppn = self.bm.allocate(ctx.flash(), plane, HOST)?;
        ctx.program(ppn, Oob { lpn, version, kind: PageKind::Data })?;
        let old = std::mem::replace(&mut self.map[lpn as usize], ppn);
        if old != NONE {
            invalidate_data(ctx, &mut self.bm, &mut self.ilog, old, true)?;
        }
        self.carried[ppn as usize] = carried_mask(self.tr.written(lpn, ppn, &self.map), lpn);
        Ok(())
    }

    fn trim(&mut self, ctx: &mut FlashCtx, lpn: Lpn) -> Result<(), SimError> {
        let old = std::mem::replace(&mut self.map[lpn as usize], NONE);
        if old != NONE {
            invalidate_data(ctx, &mut self.bm, &mut self.ilog, old, true)?;
        }
        Ok(())
    }

    fn background_step(&mut self, _ctx: &mut FlashCtx) -> Result<bool, SimError> {
        // The thesis's GC is on demand only (Sec. 4.2.1).
        Ok(false)
    }

    fn gc_counts(&self) -> GcCounts {
        self.gc.clone()
    }

    fn free_blocks(&self) -> u64 {
        self.bm.free_blocks_total()
    }

    fn mapping_sram_bytes(&self) -> u64 {
        let (gtd, cmt) = self.sram();
        gtd + cmt
    }

    fn begin_measurement(&mut self) {
        self.tr.counts = Default::default();
        self.counts = Counts::default();
        if let Some(il) = self.ilog.as_mut() {
            il.ilog.counts = Default::default();
        }
    }

    fn extra_metrics(&self) -> serde_json::Map<String, serde_json::Value> {
        let c = &self.tr.counts;
        let mut m = serde_json::Map::new();
        let host = c.hits + c.pointer_hits + c.one_read_misses + c.two_read_misses + c.unwritten;
        m.insert("cache_accesses".into(), host.into());
        m.insert("cache_hits".into(), c.hits.into());
        m.insert("cache_hit_ratio".into(), (if host > 0 { c.hits as f64 / host as f64 } else { 0.0 }).into());
        m.insert("cache_pointer_hits".into(), c.pointer_hits.into());
        m.insert("cache_misses_one_read".into(), c.one_read_misses.into());
        m.insert("cache_misses_two_reads".into(), c.two_read_misses.into());
        m.insert("cache_misses_unwritten".into(), c.unwritten.into());
        m.insert("gc_cache_misses".into(), c.gc_misses.into());
        m.insert("spare_reads".into(), c.spare_reads.into());
        m.insert("translation_pages_written".into(), 0u64.into());
        m.insert("pages_compressed".into(), c.compressed_pages.into());
        m.insert("pages_semi_compressed".into(), c.semi_compressed_pages.into());
        m.insert("pages_uncompressed".into(), c.uncompressed_pages.into());
        m.insert("threedftl_rehome_moves".into(), self.counts.rehome_moves.into());
        m.insert("threedftl_forgotten_subgroups".into(), self.counts.forgotten_subgroups.into());
        m.insert("gc_stale_pages_read".into(), self.counts.stale_pages_read.into());
        m.insert("gc_validation_lookups".into(), self.counts.validation_lookups.into());
        if let Some(il) = &self.ilog {
            il.put_metrics(&mut m);
        }
        let (gtd, cmt) = self.sram();
        m.insert("sram_gtd_bytes".into(), gtd.into());
        m.insert("sram_cmt_bytes".into(), cmt.into());
        let gc_bytes = match &self.ilog {
            Some(il) => il.ilog.sram_bytes(),
            None => sram::gc_metadata_bytes(
                self.tracking,
                u64::from(self.geo.blocks()),
                u64::from(self.geo.pages_per_block),
            ),
        };
        m.insert("sram_gc_metadata_bytes".into(), gc_bytes.into());
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
        self.bm.check_invariants(flash);
        let mut mapped = 0u64;
        for (lpn, &ppn) in self.map.iter().enumerate() {
            if ppn == NONE {
                continue;
            }
            mapped += 1;
            assert!(flash.is_valid(ppn), "lpn {lpn} maps to invalid page {ppn}");
            assert_eq!(flash.owner(ppn) as usize, lpn, "page {ppn} holds another lpn than {lpn}");
        }
        let ips = self.ilog.as_ref().map_or(0, |il| il.check_invariants(flash));
        let valid: u64 = (0..self.geo.blocks()).map(|b| u64::from(flash.valid_count(b))).sum();
        assert_eq!(mapped + ips, valid, "mapped pages {mapped} + IPs {ips} != valid pages {valid}");
        // Every pointer the spare areas hold leads to a written page of its group: no GC
        // erased the only copy of a sub-group's entries.
        let groups = self.map.len().div_ceil(THESIS.group as usize) as u32;
        for g in 0..groups {
            for &p in self.tr.ltd(g).iter().chain(std::iter::once(&self.tr.gtd(g))) {
                if p == NONE {
                    continue;
                }
                let oob = flash.read(p).unwrap_or_else(|e| panic!("group {g}: its pointer to page {p}: {e}"));
                assert_eq!(oob.lpn / THESIS.group, g, "group {g} points at page {p} of lpn {}", oob.lpn);
            }
        }
    }
}

impl ThreeDftl {
    /// Per block, whether its first page is an invalidation page.
    fn first_page_kinds(&self, ctx: &FlashCtx) -> Vec<bool> {
        (0..self.geo.blocks()).map(|b| IlogOnFlash::is_ip_block(ctx.flash(), b)).collect()
    }

    /// After the block rebuild of a recovery: a block left with no valid page was erased, and
    /// with it any stale page that was still a sub-group's carrier or its group's newest
    /// page. Those pointers go, and each such sub-group or group with a mapped LPN gets a new
    /// carrier (a valid page of it moved, as GC's re-home does).
    fn rehome_erased_carriers(&mut self, ctx: &mut FlashCtx) -> Result<(), SimError> {
        let groups = self.map.len().div_ceil(THESIS.group as usize) as u32;
        let per = THESIS.per_subgroup();
        for group in 0..groups {
            let gone = |p: Ppn, f: &FlashArray| p != NONE && f.read(p).is_err();
            let top_gone = gone(self.tr.gtd(group), ctx.flash());
            let lost: Vec<u32> =
                (0..THESIS.subgroups).filter(|&k| gone(self.tr.ltd(group)[k as usize], ctx.flash())).collect();
            if !top_gone && lost.is_empty() {
                continue;
            }
            let mut ltd = self.tr.ltd(group).to_vec();
            for &k in &lost {
                ltd[k as usize] = NONE;
            }
            let top = if top_gone { NONE } else { self.tr.gtd(group) };
            self.tr.restore(group, top, &ltd);
            let base = group * THESIS.group;
            let mapped = |l: Lpn, map: &[Ppn]| (l as usize) < map.len() && map[l as usize] != NONE;
            for k in lost {
                match (base + k * per..base + (k + 1) * per).find(|&l| mapped(l, &self.map)) {
                    Some(lpn) => self.rehome_move(ctx, lpn)?,
                    None => self.tr.forget_subgroup(group, k),
                }
            }
            if self.tr.gtd(group) == NONE {
                match (base..base + THESIS.group).find(|&l| mapped(l, &self.map)) {
                    Some(lpn) => self.rehome_move(ctx, lpn)?,
                    None => (0..THESIS.subgroups).for_each(|k| self.tr.forget_subgroup(group, k)),
                }
            }
        }
        Ok(())
    }

    /// SRAM of the GTD (over the chip's physical pages, as Table 6.1 sizes it) and the CMT.
    fn sram(&self) -> (u64, u64) {
        let pages = u64::from(self.geo.blocks()) * u64::from(self.geo.pages_per_block);
        (sram::gtd_bytes(pages), self.tr.sram_bytes().1)
    }
}

impl Recovery for ThreeDftl {
    /// Fig. 8.5 (L1534-1556): the first page of every block read (its BSN), then every page
    /// newest first except those a page already read points at (its LTD and PMT fields: a
    /// page of the same group an older program wrote), each read page setting its group's GTD
    /// entry if still empty. Worst case m + n/2 (L1294), m + n/c with every page valid (L1292).
    /// The CMT starts empty; the page map the simulator keeps is what those spare areas hold
    /// (the newest copy of each LPN). Trimmed pages come back (a trim writes nothing).
    fn recover(&mut self, ctx: &mut FlashCtx, cfg: &Resolved) -> Result<(), SimError> {
        let carried = std::mem::take(&mut self.carried);
        let ilog = self.ilog.take().map(IlogOnFlash::after_power_cut);
        *self = ThreeDftl::new(cfg)?;
        self.carried = carried;
        self.ilog = ilog;
        let g = self.geo.clone();
        // Lines 1-3: each block's first page (erased or not) for its sequence number.
        for b in 0..g.blocks() {
            let _ = ctx.read_spare(g.first_page(b));
        }
        let pages = self.data_pages_on_flash(ctx, &g);
        let index = PageIndex::new(&pages);
        let mut skip = ftlsim_core::bits::Bits::new(u64::from(g.blocks()) * u64::from(g.pages_per_block));
        // Fig. 8.6: every IP read first; the pages their BIFs flag are skipped.
        let ips = match &self.ilog {
            Some(il) => {
                let ips = il.read_ips(ctx);
                for ip in &ips {
                    for &b in il.blocks_of(ip) {
                        il.mark_flagged(ctx.flash(), ip, b, &mut skip);
                    }
                }
                ips
            }
            None => Vec::new(),
        };
        let gtd = self.read_newest_first(ctx, &pages, &index, &mut skip);
        // The state those spare areas give: each LPN's newest copy, each group's newest page,
        // each sub-group's newest carrier.
        for (group, &top) in gtd.iter().enumerate().filter(|(_, &top)| top != NONE) {
            let group = group as u32;
            let ltd: Vec<Ppn> = (0..THESIS.subgroups)
                .map(|k| index.older_carrier(&self.carried, group, k, u32::MAX).unwrap_or(NONE))
                .collect();
            self.tr.restore(group, top, &ltd);
        }
        for &(_, p, lpn) in pages.iter().rev() {
            let oob = ctx.flash().read(p)?;
            let slot = self.map[lpn as usize];
            if slot == NONE || ftlsim_core::recovery::newer(ctx.flash(), p, oob, slot) {
                self.map[lpn as usize] = p;
            }
        }
        ftlsim_core::recovery::revalidate_map(ctx, &self.map)?;
        if let Some(il) = self.ilog.as_mut() {
            il.restore(ctx, &ips)?;
        }
        self.rebuild_after_recovery(ctx, &g)
    }
}

/// A power cut's data pages `(program stamp, page, lpn)`, newest first, indexed per LPN and
/// per group, newest first (what a page's fields point at).
struct PageIndex {
    by_lpn: Vec<(Lpn, u32, Ppn)>,
    by_group: Vec<(u32, u32, Ppn)>,
}

impl PageIndex {
    fn new(pages: &[(u32, Ppn, Lpn)]) -> PageIndex {
        let mut by_lpn: Vec<(Lpn, u32, Ppn)> = pages.iter().map(|&(s, p, l)| (l, s, p)).collect();
        by_lpn.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        let mut by_group: Vec<(u32, u32, Ppn)> = pages.iter().map(|&(s, p, l)| (l / THESIS.group, s, p)).collect();
        by_group.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        PageIndex { by_lpn, by_group }
    }

    /// The newest copy of `lpn` programmed before `stamp`.
    fn older_of_lpn(&self, lpn: Lpn, stamp: u32) -> Option<Ppn> {
        let i = self.by_lpn.partition_point(|e| e.0 < lpn || (e.0 == lpn && e.1 >= stamp));
        self.by_lpn.get(i).filter(|e| e.0 == lpn).map(|e| e.2)
    }

    /// The newest page of `group` programmed before `stamp` that carries sub-group `k`
    /// (`carried`: the sub-groups each page carries).
    fn older_carrier(&self, carried: &[u8], group: u32, k: u32, stamp: u32) -> Option<Ppn> {
        let i = self.by_group.partition_point(|e| e.0 < group || (e.0 == group && e.1 >= stamp));
        self.by_group[i..]
            .iter()
            .take_while(|e| e.0 == group)
            .find(|e| carried[e.2 as usize] & (1 << k) != 0)
            .map(|e| e.2)
    }
}

impl ThreeDftl {
    /// What is on flash: every readable data page `(program stamp, page, lpn)`, newest
    /// program first.
    fn data_pages_on_flash(&mut self, ctx: &mut FlashCtx, g: &Geometry) -> Vec<(u32, Ppn, Lpn)> {
        let mut pages: Vec<(u32, Ppn, Lpn)> = Vec::new();
        for b in 0..g.blocks() {
            for off in 0..ctx.flash().write_pointer(b) {
                let p = g.first_page(b) + off;
                let Ok(oob) = ctx.flash().read(p) else { continue };
                if oob.kind != PageKind::Data {
                    continue;
                }
                pages.push((ctx.flash().stamp(p), p, oob.lpn));
                if self.carried[p as usize] == 0 {
                    // Programmed, its format not recorded (the cut came in between): it
                    // carries its own sub-group at least.
                    self.carried[p as usize] = 1 << THESIS.subgroup_of(oob.lpn % THESIS.group);
                }
            }
        }
        pages.sort_unstable_by_key(|e| std::cmp::Reverse(e.0));
        pages
    }

    /// Read every page newest first except those a page already read points at (`skip`),
    /// each read page setting its group's GTD entry if still empty; returns the GTD.
    fn read_newest_first(
        &self,
        ctx: &mut FlashCtx,
        pages: &[(u32, Ppn, Lpn)],
        index: &PageIndex,
        skip: &mut ftlsim_core::bits::Bits,
    ) -> Vec<Ppn> {
        let carried = &self.carried;
        let mut gtd = vec![NONE; self.map.len().div_ceil(THESIS.group as usize)];
        let per = THESIS.per_subgroup();
        for &(stamp, p, lpn) in pages {
            if skip.get(p) {
                continue;
            }
            let _ = ctx.read_spare(p);
            let group = lpn / THESIS.group;
            if gtd[group as usize] == NONE {
                gtd[group as usize] = p;
            }
            for k in 0..THESIS.subgroups {
                if carried[p as usize] & (1 << k) != 0 {
                    for x in group * THESIS.group + k * per..group * THESIS.group + (k + 1) * per {
                        if let Some(q) = index.older_of_lpn(x, stamp) {
                            skip.set(q, true);
                        }
                    }
                } else if let Some(q) = index.older_carrier(carried, group, k, stamp) {
                    skip.set(q, true);
                }
            }
        }
        gtd
    }

    /// The blocks rebuilt after recovery: ILog's pages go back to their own stream, data to
    /// the host's and GC's; pages the rebuild erased carry nothing any more.
    fn rebuild_after_recovery(&mut self, ctx: &mut FlashCtx, g: &Geometry) -> Result<(), SimError> {
        let (first_kinds, ip_stream) = (self.first_page_kinds(ctx), 1u64 << IP_STREAM);
        self.bm.rebuild(ctx, |b| if first_kinds[b as usize] { ip_stream } else { (1 << HOST) | (1 << GC_STREAM) })?;
        if let Some(il) = self.ilog.as_mut() {
            il.rebuilt(ctx.flash());
        }
        let ppb = g.pages_per_block;
        for b in 0..g.blocks() {
            let first = g.first_page(b) as usize;
            let wp = ctx.flash().write_pointer(b) as usize;
            self.carried[first + wp..first + ppb as usize].fill(0);
        }
        self.rehome_erased_carriers(ctx)
    }
}
