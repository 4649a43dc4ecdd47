//! Ideal page-level FTL ("page"): the whole logical-to-physical map in SRAM.
//!
//! The reference point of every source paper (e.g. seed 001 Ch. 4 normalises response times
//! to it; seed 002 Sec. V compares against "pure page FTL"). Built only from the shared core
//! pieces so that later FTLs reuse the same allocation and GC:
//! - plane choice by [`Allocation`]: static by LPN, strict round-robin over planes in
//!   channel-first order, or round-robin for new pages with updates kept in their plane. Round-robin is stable: a plane's valid pages drift back to the
//!   mean because invalidations hit it in proportion to its valid pages (stationary spread
//!   about sqrt(mean / 2) pages). Only a plane with no free block and nothing to reclaim
//!   (possible on tiny drives with little slack) hands the write to the next plane.
//!   One open block per plane for host writes, one for GC;
//! - foreground GC when a plane's free blocks fall below `ftl.gc_threshold_blocks` (rcFTL's
//!   several GC streams pace it by erased pages instead: [`PageFtl::short_of_space`]),
//!   collecting whole victims ([`GcJob`] run to completion) on every plane of the GC scope
//!   that is below the threshold, and holding the scope's host I/O until it ends;
//! - background GC in host idle time, one page copy per step, on planes below the
//!   background threshold; a suspended job is finished first by foreground GC;
//! - valid pages move inside their plane, by controller copy or copy-back (`ftl.gc_copy`);
//!   with the same-parity rule on, a move whose destination has the other parity is done
//!   off-chip instead, so no page is wasted (PCFTL's waste-to-keep-parity policy, which can
//!   cost as much as GC reclaims, PCFTL Sec. 3.4, belongs to the PCFTL module);
//! - TRIM unmaps and invalidates;
//! - where GC puts a victim's pages and how it copies them is a [`GcDestination`] the FTL
//!   calls at every step: the plain FTL's one GC stream and `ftl.gc_copy` ([`PlainGc`]);
//!   FastGC's and the per-page quota's copy-back limits (modules `fastgc`,
//!   `rcftl_per_page`); rcFTL's per-block quotas with one GC stream per quota level
//!   (module `rcftl`). Which host stream a page goes to is a [`HostStreams`]: one stream
//!   ([`OneStream`]) or the hot/cold FTL's update counters (module `hotcold`). Those modules
//!   build this FTL with their policy; this one knows none of them;
//! - the collections themselves (foreground, idle-time, channel-managed steps) are run by the
//!   core's GC driver ([`ftlsim_core::gc_driver`]), this FTL its [`Collector`].
//!
//! Departures: none known; mapping lookups are free unless `timing.dram_access_ns` is set.

use crate::fdp::Fdp;
use ftlsim_core::big_array;
use ftlsim_core::config::{Allocation, ForegroundGc, GcCopy, GcScope, Resolved};
use ftlsim_core::error::{ConfigError, SimError};
use ftlsim_core::flash::{FlashArray, Oob, PageKind};
use ftlsim_core::ftl::{FlashCtx, Ftl, GcCounts, GcNext, ManagedGc, PrefetchStage, Recovery, SeriesValue};
use ftlsim_core::gc::{BlockManager, GcJob, GcStep, PlaneGc, Relocate, MIN_FREE_BLOCKS};
use ftlsim_core::gc_driver::{self, Collector, Foreground, SteppedCollector};
use ftlsim_core::geometry::{BlockId, Geometry, Lpn, PlaneId, Ppn, NONE};
use ftlsim_core::recovery;
use ftlsim_core::scheduler::{scope_planes, Tag};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// How the next page of a victim moves ([`GcDestination::plan`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MovePlan {
    /// The GC stream it goes to, among the policy's ([`GcDestination::gc_streams`]).
    pub gc_stream: u32,
    /// A copy-back is wanted (the parity rule and [`GcDestination::allows_copyback`] may
    /// still send it off-chip).
    pub copyback: bool,
    /// A copy-back was wanted but a quota does not cover it: the page goes off-chip and is
    /// counted as a refused copy-back.
    pub refused: bool,
}

/// Where the page FTL's GC puts a victim's valid pages and how it copies them, asked at every
/// step of a collection. The policies: [`PlainGc`] (one GC stream, `ftl.gc_copy`), FastGC's and
/// the per-page quota's copy-back limits (`fastgc::PerPageLimit`), rcFTL's per-block quotas
/// (`rcftl::BlockQuotas`, one GC stream per quota level).
pub trait GcDestination: Clone + Serialize + DeserializeOwned {
    /// GC streams (open blocks per plane) beside the host's.
    fn gc_streams(&self) -> u32 {
        1
    }
    /// Pages closing every block with the per-page copy-back table (0: none).
    fn table_pages(&self) -> u32 {
        0
    }
    /// How the next page of `victim` moves. `urgent`: foreground GC; `load`: the write
    /// buffer's mean utilisation; `first`: the victim's first page (a decision per victim is
    /// made and counted then).
    fn plan(&mut self, flash: &FlashArray, victim: BlockId, urgent: bool, load: Option<f64>, first: bool) -> MovePlan;
    /// Whether GC may copy `src` back (a per-page limit); by default whatever the plan says
    /// (the flash refuses what the reliability model forbids).
    fn allows_copyback(&self, _flash: &FlashArray, _src: Ppn) -> bool {
        true
    }
    /// A block was opened for host data (`None`) or in GC stream `Some(i)`.
    fn opened(&mut self, _block: BlockId, _gc_stream: Option<u32>) {}
    /// `block` was erased.
    fn erased(&mut self, _block: BlockId) {}
    /// The measured run starts: zero the policy's counters.
    fn begin_measurement(&mut self) {}
    /// The policy's metrics by name (docs/metrics.md).
    fn put_metrics(&self, _m: &mut serde_json::Map<String, serde_json::Value>) {}
    /// The policy's time-series columns.
    fn series(&self) -> Vec<SeriesValue> {
        Vec::new()
    }
    /// Whole-state check against the flash.
    fn check(&self, _flash: &FlashArray) {}
    /// Recovery rebuilt the blocks after a power cut: what the policy kept only in DRAM is lost.
    fn recovered(&mut self, _flash: &FlashArray) {}
    /// A snapshot was loaded into this policy: take back the loading config's settings from
    /// `configured`, the policy built for it.
    fn take_settings(&mut self, _configured: &Self) {}
    /// Foreground GC paced by erased pages rather than free blocks (several GC streams;
    /// [`PageFtl::short_of_space`]).
    fn paces_by_erased_pages(&self) -> bool {
        false
    }
}

/// The plain page FTL's GC: one GC stream per plane, pages moved as `ftl.gc_copy` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlainGc {
    /// Intra-plane copy-back (`ftl.gc_copy = "copyback"`).
    pub copyback: bool,
}

impl GcDestination for PlainGc {
    fn plan(&mut self, _: &FlashArray, _: BlockId, _: bool, _: Option<f64>, _: bool) -> MovePlan {
        MovePlan { gc_stream: 0, copyback: self.copyback, refused: false }
    }
}

/// Which open block a host page goes to, asked at every host write: the page FTL's host
/// policy. [`OneStream`] writes every page to one stream; the hot/cold FTL
/// (`hotcold::HotColdStreams`) separates pages by update frequency. A policy with more than
/// one stream cannot share the drive with FDP's placement handles, which choose the stream
/// themselves.
pub trait HostStreams: Clone + Serialize + DeserializeOwned {
    /// Host streams (open blocks per plane) it writes into, GC's besides.
    fn streams(&self) -> u32 {
        1
    }
    /// The stream of a host write of `lpn`, in `0..streams()`; called once per page written.
    fn stream(&mut self, _lpn: Lpn) -> u32 {
        0
    }
    /// SRAM it keeps per logical page, bytes.
    fn sram_bytes_per_page(&self) -> u64 {
        0
    }
    /// The measured run starts: zero the policy's counters.
    fn begin_measurement(&mut self) {}
    /// The policy's metrics by name (docs/metrics.md).
    fn put_metrics(&self, _m: &mut serde_json::Map<String, serde_json::Value>) {}
    /// The policy's time-series columns.
    fn series(&self) -> Vec<SeriesValue> {
        Vec::new()
    }
    /// A power cut took what the policy kept in DRAM.
    fn recovered(&mut self) {}
    /// A snapshot was loaded into this policy: take back the loading config's settings from
    /// `configured`, the policy built for it.
    fn take_settings(&mut self, _configured: &Self) {}
}

/// Every host page to one stream.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OneStream;

impl HostStreams for OneStream {}

/// GC copies by kind (`gc_copybacks`, `gc_offchip_copies`, `gc_copybacks_refused`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct CopyCounts {
    pub copybacks: u64,
    pub offchip: u64,
    /// Off-chip copies made because the limit refused a copy-back.
    pub refused: u64,
}

/// Foreground GC bursts: how many victims one trigger collects on a plane before it is back
/// at the threshold (`gc_burst_*` metrics). Host I/O of the plane waits behind a burst, so
/// its length, not only GC's total, shapes response times.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct GcBursts {
    pub triggers: u64,
    pub victims: u64,
    pub longest: u32,
}

/// The ideal page-level FTL, its GC's destinations and copies decided by `D`.
#[derive(Serialize, Deserialize)]
#[serde(bound = "D: GcDestination, H: HostStreams")]
pub struct PageFtl<D: GcDestination = PlainGc, H: HostStreams = OneStream> {
    geo: Geometry,
    #[serde(deserialize_with = "ftlsim_core::big_array::deserialize")]
    map: Vec<Ppn>,
    bm: BlockManager,
    allocation: Allocation,
    next_plane: u32,
    threshold: u32,
    bg_threshold: u32,
    scope: GcScope,
    /// Each plane's collection under way (a suspended job, a parked victim).
    plane_gc: PlaneGc,
    bg_cursor: u32,
    gc: GcCounts,
    gc_stream: u32,
    /// One victim per foreground trigger (`ftl.foreground_gc = "incremental"`).
    incremental: bool,
    /// The registered name (not in snapshots: the FTL being loaded has it).
    #[serde(skip)]
    name: &'static str,
    copies: CopyCounts,
    bursts: GcBursts,
    /// Where GC pages go and how they are copied.
    dest: D,
    /// Which host stream a page goes to.
    host: H,
    /// Flexible Data Placement (`[fdp]`): each handle its host stream and, persistently
    /// isolated, its GC stream.
    fdp: Option<Fdp>,
}

/// GC relocation inside the victim's plane into the GC stream the plan names.
struct PlaneMover<'a, D: GcDestination> {
    map: &'a mut [Ppn],
    bm: &'a mut BlockManager,
    /// The block manager's stream of the plan's GC stream.
    stream: u32,
    plan: MovePlan,
    dest: &'a mut D,
    copies: &'a mut CopyCounts,
    moved: &'a mut u64,
    fdp: Option<&'a mut Fdp>,
}

/// The per-page copy-back table (FastGC, rcftl-per-page; docs/reliability.md): once `dst`
/// is the last data page of its block, `pages` metadata pages close the block with the
/// counters of its pages. They are stale for GC at once: a victim's table is not moved,
/// each destination block writes its own.
fn write_copyback_table(ctx: &mut FlashCtx, bm: &mut BlockManager, dst: Ppn, pages: u32) -> Result<(), SimError> {
    let g = ctx.flash().geometry();
    if pages == 0 || g.page_in_block(dst) + 1 + pages != g.pages_per_block {
        return Ok(());
    }
    let block = g.block_of(dst);
    let prev = ctx.set_tag(Tag::Mapping);
    for p in dst + 1..=dst + pages {
        ctx.program(p, Oob { lpn: block, version: 0, kind: PageKind::Meta })?;
        ctx.invalidate(p)?;
        bm.on_invalidate(ctx.flash(), p);
    }
    ctx.set_tag(prev);
    Ok(())
}

impl<D: GcDestination> Relocate for PlaneMover<'_, D> {
    fn relocate(&mut self, ctx: &mut FlashCtx, src: Ppn, oob: Oob) -> Result<(), SimError> {
        assert_eq!(oob.kind, PageKind::Data, "page FTL relocates only data pages");
        let (f, g) = (ctx.flash(), ctx.flash().geometry());
        let dst = self.bm.allocate(f, g.plane_of(src), self.stream)?;
        if g.page_in_block(dst) == 0 {
            self.dest.opened(g.block_of(dst), Some(self.plan.gc_stream));
        }
        // A copy-back wanted and refused by a limit (or by a quota) is counted.
        let wanted = (self.plan.copyback || self.plan.refused)
            && (!f.copyback_same_parity() || g.page_in_block(dst) % 2 == g.page_in_block(src) % 2);
        let allowed = wanted && !self.plan.refused && self.dest.allows_copyback(f, src);
        ctx.copy_read(src, oob, dst, allowed)?;
        write_copyback_table(ctx, self.bm, dst, self.dest.table_pages())?;
        if allowed {
            self.copies.copybacks += 1;
        } else {
            self.copies.offchip += 1;
            self.copies.refused += u64::from(wanted);
        }
        let slot = &mut self.map[oob.lpn as usize];
        assert_eq!(*slot, src, "lpn {} maps elsewhere than its valid page {src}", oob.lpn);
        *slot = dst;
        if let Some(f) = self.fdp.as_deref_mut() {
            f.gc_move(oob.lpn, ctx.flash().geometry().block_of(dst), ctx.time());
        }
        ctx.invalidate(src)?;
        self.bm.on_invalidate(ctx.flash(), src);
        *self.moved += 1;
        Ok(())
    }

    fn prefetch(&self, lpn: Lpn) {
        big_array::prefetch(self.map, lpn as usize);
    }
}

impl PageFtl {
    /// Build for a validated config: the plain page FTL (`page`).
    pub fn new(cfg: &Resolved) -> Result<PageFtl, ConfigError> {
        PageFtl::with_destination(cfg, "page", PlainGc { copyback: cfg.ftl.gc_copy == Some(GcCopy::Copyback) })
    }
}

impl<D: GcDestination> PageFtl<D> {
    /// The page FTL registered as `name`, its GC's destinations and copies decided by `dest`.
    pub fn with_destination(cfg: &Resolved, name: &'static str, dest: D) -> Result<PageFtl<D>, ConfigError> {
        PageFtl::with_policies(cfg, name, dest, OneStream)
    }
}

impl<D: GcDestination, H: HostStreams> PageFtl<D, H> {
    /// The page FTL registered as `name`, its GC's destinations and copies decided by `dest`,
    /// its host pages' streams by `host`.
    pub fn with_policies(cfg: &Resolved, name: &'static str, dest: D, host: H) -> Result<PageFtl<D, H>, ConfigError> {
        let d = cfg.derived();
        let g = &cfg.geometry;
        let fdp = cfg.fdp.as_ref().map(|f| Fdp::new(f.handles, f.handle_type, g.blocks(), d.logical_pages));
        if fdp.is_some() && (dest.gc_streams() > 1 || host.streams() > 1) {
            return Err(ConfigError::Invalid {
                key: "fdp".into(),
                value: "[fdp]".into(),
                rule: format!("{name} keeps streams of its own; placement handles go with the plain page FTL"),
            });
        }
        let streams = fdp.as_ref().map_or(cfg.ftl.write_streams.max(host.streams()), Fdp::handles);
        let gc_streams = fdp.as_ref().map_or(dest.gc_streams(), Fdp::gc_streams);
        if gc_streams > 1 || fdp.is_some() || host.streams() > 1 {
            // One open block per GC stream and plane (rcFTL, Fig. 5): the over-provisioning
            // must hold them beside the GC reserve.
            cfg.gc_room(d).check(name, streams + gc_streams, 0)?;
        }
        let table_pages = dest.table_pages();
        if table_pages > 0 {
            if table_pages >= g.pages_per_block {
                return Err(ConfigError::Invalid {
                    key: "ftl.copyback_table.pages".into(),
                    value: table_pages.to_string(),
                    rule: format!("must be below geometry.pages_per_block = {}", g.pages_per_block),
                });
            }
            let table = u64::from(g.blocks_per_plane) * u64::from(table_pages);
            cfg.gc_room(d).check(name, streams + gc_streams, table)?;
        }
        Ok(PageFtl {
            geo: g.clone(),
            map: ftlsim_core::big_array::filled(d.logical_pages as usize, NONE),
            bm: BlockManager::new(g, streams + gc_streams, d.held_back_blocks_per_plane, cfg.ftl.gc_victim)
                .with_tail_pages(table_pages),
            allocation: cfg.ftl.allocation.unwrap_or_default(),
            next_plane: 0,
            threshold: d.gc_threshold_blocks,
            bg_threshold: if cfg.ftl.background_gc { d.background_gc_threshold_blocks } else { 0 },
            scope: cfg.ftl.gc_scope.unwrap_or_default(),
            plane_gc: PlaneGc::new(g.planes()),
            bg_cursor: 0,
            gc: GcCounts::default(),
            gc_stream: streams,
            incremental: cfg.ftl.foreground_gc == ForegroundGc::Incremental,
            name,
            copies: CopyCounts::default(),
            bursts: GcBursts::default(),
            dest,
            host,
            fdp,
        })
    }

    /// The plane for a write of `lpn` whose current copy is `old`: the LPN's plane under
    /// static allocation, the old copy's plane for an update in plane, the least loaded
    /// plane under dynamic allocation (when timed), else the token's.
    fn choose_plane(&mut self, ctx: &mut FlashCtx, lpn: Lpn, old: Ppn) -> PlaneId {
        let planes = self.geo.planes();
        let p = match self.allocation {
            Allocation::StaticLpn => return lpn % planes,
            Allocation::UpdateInPlane if old != NONE => return self.geo.plane_of(old),
            Allocation::Dynamic => {
                let from = self.next_plane;
                ctx.least_loaded_plane((0..planes).map(|i| (from + i) % planes)).unwrap_or(from)
            }
            Allocation::RoundRobin | Allocation::UpdateInPlane => self.next_plane,
        };
        self.next_plane = (p + 1) % planes;
        p
    }

    /// The plane for a write of `lpn` (current copy `old`) by the allocation policy, after
    /// foreground GC made room there; another plane when the policy allows and this one
    /// has nothing to reclaim.
    fn place(&mut self, ctx: &mut FlashCtx, lpn: Lpn, old: Ppn) -> Result<PlaneId, SimError> {
        let mut plane = self.choose_plane(ctx, lpn, old);
        let pinned =
            self.allocation == Allocation::StaticLpn || (self.allocation == Allocation::UpdateInPlane && old != NONE);
        let planes = self.geo.planes();
        let mut tries = 0;
        while !self.ensure_space(ctx, plane)? {
            tries += 1;
            if pinned || tries >= planes {
                return Err(SimError::Ftl(format!(
                    "lpn {lpn}: plane {plane} is full of valid data and nothing can be reclaimed \
                     (raise the over-provisioning or use round-robin allocation)"
                )));
            }
            plane = (plane + 1) % planes;
        }
        Ok(plane)
    }

    /// Dynamic allocation (when timed): the least loaded plane; if it is below the GC
    /// threshold, foreground GC starts there and the page goes to the least loaded plane
    /// that can take it without GC (it keeps two free blocks) or to the collected plane,
    /// whichever frees first, so a page does not queue behind a collection when another
    /// plane is idle. `None` when the policy is another or untimed, or no plane qualifies.
    fn place_dynamic(&mut self, ctx: &mut FlashCtx, lpn: Lpn) -> Result<Option<PlaneId>, SimError> {
        if self.allocation != Allocation::Dynamic || !ctx.is_timed() {
            return Ok(None);
        }
        let p = self.choose_plane(ctx, lpn, NONE);
        if self.bm.free_blocks(p) >= self.threshold {
            return Ok(Some(p));
        }
        let made_room = self.ensure_space(ctx, p)?;
        let planes = self.geo.planes();
        let candidates = (1..planes)
            .map(|i| (p + i) % planes)
            .filter(|&q| self.bm.free_blocks(q) >= MIN_FREE_BLOCKS)
            .chain(made_room.then_some(p));
        Ok(ctx.least_loaded_plane(candidates))
    }

    /// Fetch what invalidating the mapped page `ppn` touches (nothing for [`NONE`]): a hint.
    fn prefetch_page(&self, flash: &FlashArray, ppn: Ppn) {
        if ppn != NONE {
            flash.prefetch_page_state(ppn);
            self.bm.prefetch_block(self.geo.block_of(ppn));
        }
    }

    /// Step `job` up to `steps` times, until it erases its victim, relocating within its
    /// plane; returns the last step's outcome. `urgent`: foreground GC (rcFTL's mode
    /// selector always copies back then). The policy plans each page as with single steps,
    /// but a foreground collection's steps share one call (a call per page was a tenth of GC's
    /// instructions, docs/performance.md).
    fn steps(&mut self, ctx: &mut FlashCtx, job: &mut GcJob, urgent: bool, steps: u32) -> Result<GcStep, SimError> {
        let load = ctx.write_buffer_load();
        let plan = |dest: &mut D, fdp: Option<&Fdp>, flash: &FlashArray, job: &GcJob| {
            let plan = dest.plan(flash, job.victim, urgent, load, job.moved == 0);
            assert!(plan.gc_stream < dest.gc_streams(), "GC stream {} of {}", plan.gc_stream, dest.gc_streams());
            (plan, fdp.map_or(plan.gc_stream, |f| f.gc_stream(job.victim)))
        };
        let (first, stream) = plan(&mut self.dest, self.fdp.as_ref(), ctx.flash(), job);
        let mut mover = PlaneMover {
            map: &mut self.map,
            bm: &mut self.bm,
            stream: self.gc_stream + stream,
            plan: first,
            dest: &mut self.dest,
            copies: &mut self.copies,
            moved: &mut self.gc.pages_moved,
            fdp: self.fdp.as_mut(),
        };
        let mut s = job.step(ctx, &mut mover)?;
        for _ in 1..steps {
            if s == GcStep::Erased {
                break;
            }
            let (next, stream) = plan(mover.dest, mover.fdp.as_deref(), ctx.flash(), job);
            (mover.plan, mover.stream) = (next, self.gc_stream + stream);
            s = job.step(ctx, &mut mover)?;
        }
        if s == GcStep::Erased {
            self.bm.release(ctx.flash(), job.victim);
            self.dest.erased(job.victim);
            if let Some(f) = self.fdp.as_mut() {
                f.erased(job.victim, self.geo.pages_per_block, ctx.time());
            }
        }
        Ok(s)
    }

    /// Whether `plane` must collect before a host write.
    ///
    /// One GC stream: below `ftl.gc_threshold_blocks` free blocks. Each collection then gains
    /// free blocks at a steady rate (the stream opens a block every `pages_per_block` moved
    /// pages), and planes striped round-robin reach the threshold together: their GC runs in
    /// step, and no plane idles while pages striped to a collecting one fill the buffer.
    ///
    /// Several GC streams (rcFTL's quota levels): a victim opens a new block whenever its own
    /// stream's block is full, so a collection gains a free block or none by luck, and
    /// free-block counts wander apart between planes. Counted in free blocks, GC then runs out
    /// of step (issue 33: NTRX at 0K, planes busy 71% against the one-stream quota's 90%). So
    /// a destination that asks for it ([`GcDestination::paces_by_erased_pages`]) counts what it can program, its free blocks and the room of its GC streams'
    /// open blocks ([`Self::erased_pages`]), and collects only when its host block is full (when
    /// one-stream planes reach their threshold), until that reaches the threshold plus the room
    /// its open GC blocks are likely to hold, and at least the threshold in free blocks. A
    /// collection's gain in erased pages does not depend on where its pages go, so planes stay
    /// in step. Between host blocks a plane collects only once it has no free block left.
    /// `ftl.foreground_gc = "incremental"` still collects one victim per boundary; idle-time
    /// GC, dynamic placement and channel systems (`gc_due`) keep counting free blocks.
    fn short_of_space(&self, flash: &FlashArray, plane: PlaneId) -> bool {
        let free = self.bm.free_blocks(plane);
        if !self.dest.paces_by_erased_pages() {
            return free < self.threshold;
        }
        let ppb = self.geo.pages_per_block;
        let host_full =
            (0..self.gc_stream).all(|s| self.bm.active(plane, s).is_none_or(|b| flash.write_pointer(b) >= ppb));
        if !host_full {
            return free < 1;
        }
        let (pages, open) = self.erased_pages(flash, plane);
        // The open blocks' room, each uniform on [0, ppb], sums to n/2 blocks on average with
        // a standard deviation of sqrt(n/12): two of them over the mean leave the threshold's
        // free blocks in all but a few per cent of the collections, so few run on by luck.
        // Capped at the threshold plus the open GC blocks, which the config's room check
        // (`with_destination`) guarantees a plane can hold erased beside its data.
        let n = f64::from(open);
        let goal = (f64::from(self.threshold) + (n / 2.0 + (n / 3.0).sqrt()).min(n)) * f64::from(ppb);
        free < self.threshold || (pages as f64) < goal
    }

    /// Pages `plane` can program into GC's streams and its free blocks, and its open GC blocks.
    fn erased_pages(&self, flash: &FlashArray, plane: PlaneId) -> (u64, u32) {
        let ppb = self.geo.pages_per_block;
        let mut room = u64::from(self.bm.free_blocks(plane)) * u64::from(ppb);
        let mut open = 0;
        for s in self.gc_stream..self.gc_stream + self.dest.gc_streams() {
            // A stream keeps its block once it had one (full until its next page), so the
            // count only grows: the goal does not jump as blocks fill and open.
            if let Some(b) = self.bm.active(plane, s) {
                room += u64::from(ppb - flash.write_pointer(b));
                open += 1;
            }
        }
        (room, open)
    }

    /// Foreground GC for a write about to land on `plane`, on every plane of the GC scope
    /// short of space. `Ok(false)` when the plane has no free block left and nothing to
    /// reclaim (every closed block fully valid).
    fn ensure_space(&mut self, ctx: &mut FlashCtx, plane: PlaneId) -> Result<bool, SimError> {
        if !self.short_of_space(ctx.flash(), plane) {
            return Ok(true);
        }
        let prev = ctx.set_tag(Tag::Gc);
        let scope: Vec<PlaneId> = if self.scope == GcScope::Plane {
            vec![plane]
        } else {
            scope_planes(&self.geo, self.scope, plane).collect()
        };
        for q in scope {
            let (outcome, victims) = match gc_driver::collect_until(self, ctx, q) {
                Ok(r) => r,
                Err(e) => {
                    ctx.set_tag(prev);
                    return Err(e);
                }
            };
            // Nothing to reclaim: the write goes elsewhere unless this plane keeps a block
            // for GC beyond the host's (taking the last one would leave GC, once victims
            // appear, nowhere to relocate into).
            if outcome == Foreground::NothingToReclaim && q == plane && self.bm.free_blocks(q) < MIN_FREE_BLOCKS {
                ctx.set_tag(prev);
                return Ok(false);
            }
            if victims > 0 {
                self.bursts.triggers += 1;
                self.bursts.victims += u64::from(victims);
                self.bursts.longest = self.bursts.longest.max(victims);
            }
        }
        ctx.block_scope(plane, self.scope);
        ctx.set_tag(prev);
        Ok(true)
    }

    fn unmap(&mut self, ctx: &mut FlashCtx, lpn: Lpn) -> Result<(), SimError> {
        let old = self.map[lpn as usize];
        if old != NONE {
            ctx.invalidate(old)?;
            self.bm.on_invalidate(ctx.flash(), old);
            self.map[lpn as usize] = NONE;
        }
        Ok(())
    }
}

impl<D: GcDestination, H: HostStreams> Ftl for PageFtl<D, H> {
    fn name(&self) -> &'static str {
        self.name
    }

    fn begin_measurement(&mut self) {
        self.copies = CopyCounts::default();
        self.bursts = GcBursts::default();
        self.dest.begin_measurement();
        self.host.begin_measurement();
        if let Some(f) = self.fdp.as_mut() {
            f.begin_measurement();
        }
    }

    fn series(&self) -> Vec<SeriesValue> {
        let mut columns = self.dest.series();
        columns.extend(self.host.series());
        columns
    }

    fn extra_metrics(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m = serde_json::Map::new();
        m.insert("gc_copybacks".into(), self.copies.copybacks.into());
        m.insert("gc_offchip_copies".into(), self.copies.offchip.into());
        m.insert("gc_copybacks_refused".into(), self.copies.refused.into());
        let b = &self.bursts;
        m.insert("gc_bursts".into(), b.triggers.into());
        m.insert(
            "gc_burst_mean_victims".into(),
            ftlsim_core::metrics::r6(b.victims as f64 / b.triggers.max(1) as f64).into(),
        );
        m.insert("gc_burst_max_victims".into(), b.longest.into());
        if self.dest.gc_streams() > 1 {
            let open = (0..self.geo.planes()).map(|p| {
                (self.gc_stream..self.gc_stream + self.dest.gc_streams())
                    .filter(|&s| self.bm.active(p, s).is_some())
                    .count()
            });
            m.insert("gc_open_blocks_max".into(), open.max().unwrap_or(0).into());
        }
        self.dest.put_metrics(&mut m);
        self.host.put_metrics(&mut m);
        if let Some(f) = &self.fdp {
            m.insert("fdp".into(), f.metrics(u64::from(self.geo.page_size_bytes)));
        }
        m
    }

    fn read(&mut self, ctx: &mut FlashCtx, lpn: Lpn) -> Result<Option<u32>, SimError> {
        let ppn = self.map[lpn as usize];
        if ppn == NONE {
            return Ok(None);
        }
        Ok(Some(ctx.read_mapped(ppn, lpn, None)?))
    }

    fn write(&mut self, ctx: &mut FlashCtx, lpn: Lpn, version: u32) -> Result<(), SimError> {
        let old = self.map[lpn as usize];
        // The superseded page's validity and its block's GC state are updated last: fetched
        // now, they arrive while the page is placed and programmed (and GC runs).
        self.prefetch_page(ctx.flash(), old);
        let plane = match self.place_dynamic(ctx, lpn)? {
            Some(p) => p,
            None => self.place(ctx, lpn, old)?,
        };
        let handle = match &self.fdp {
            Some(f) => f.handle(ctx.placement()),
            None => self.host.stream(lpn),
        };
        let ppn = self.bm.allocate(ctx.flash(), plane, handle)?;
        if self.geo.page_in_block(ppn) == 0 {
            self.dest.opened(self.geo.block_of(ppn), None);
        }
        ctx.program(ppn, Oob { lpn, version, kind: PageKind::Data })?;
        if let Some(f) = self.fdp.as_mut() {
            f.host_write(lpn, handle, self.geo.block_of(ppn), self.geo.page_in_block(ppn), ctx.time());
        }
        write_copyback_table(ctx, &mut self.bm, ppn, self.dest.table_pages())?;
        // The superseded copy is invalidated only now that the new one is on flash: GC on
        // the way (which may have moved it) must not erase the last durable copy of an
        // acknowledged write before its successor is programmed (a power cut in between
        // would lose both).
        self.unmap(ctx, lpn)?;
        self.map[lpn as usize] = ppn;
        Ok(())
    }

    fn trim(&mut self, ctx: &mut FlashCtx, lpn: Lpn) -> Result<(), SimError> {
        self.unmap(ctx, lpn)
    }

    fn prefetch_write(&self, flash: &FlashArray, lpn: Lpn, stage: PrefetchStage) {
        match stage {
            PrefetchStage::Map => big_array::prefetch(&self.map, lpn as usize),
            PrefetchStage::OldPage => {
                if let Some(&old) = self.map.get(lpn as usize) {
                    self.prefetch_page(flash, old);
                }
            }
        }
    }

    fn background_step(&mut self, ctx: &mut FlashCtx) -> Result<bool, SimError> {
        gc_driver::idle_step(self, ctx)
    }

    fn gc_counts(&self) -> GcCounts {
        self.gc.clone()
    }

    fn free_blocks(&self) -> u64 {
        self.bm.free_blocks_total()
    }

    fn mapping_sram_bytes(&self) -> u64 {
        // One 4-byte physical page number per logical page, and the host policy's.
        self.map.len() as u64 * (4 + self.host.sram_bytes_per_page())
    }

    fn save_state(&self) -> Vec<u8> {
        ftlsim_core::state::encode(self)
    }

    fn load_state(&mut self, bytes: &[u8]) -> Result<(), String> {
        let mut loaded: PageFtl<D, H> = ftlsim_core::state::decode(bytes)?;
        loaded.name = self.name;
        loaded.dest.take_settings(&self.dest);
        loaded.host.take_settings(&self.host);
        *self = loaded;
        Ok(())
    }

    fn managed_gc(&mut self) -> Option<&mut dyn ManagedGc> {
        Some(self)
    }

    fn recovery(&mut self) -> Option<&mut dyn Recovery> {
        Some(self)
    }

    fn check_invariants(&self, flash: &FlashArray) {
        self.bm.check_invariants(flash);
        self.dest.check(flash);
        if let Some(f) = &self.fdp {
            f.check(flash, self.geo.blocks());
        }
        // Every valid page is mapped by the LPN its OOB names, so distinct valid pages are
        // mapped by distinct LPNs; with as many mapped LPNs as valid pages, every mapped LPN
        // is one of them. Walked in flash order, the flash's page arrays are read in
        // sequence and only the map at random, its entries asked for a few pages ahead so
        // that their misses overlap (a snapshot's load spent a third of its time in this
        // check: docs/performance.md).
        const AHEAD: u32 = 16;
        let pages = self.geo.pages();
        let mut valid = 0u64;
        for b in 0..self.geo.blocks() {
            for ppn in flash.valid_pages(b) {
                if ppn + AHEAD < pages {
                    big_array::prefetch(&self.map, flash.owner(ppn + AHEAD) as usize);
                }
                valid += 1;
                let oob = flash.read(ppn).expect("valid page is readable");
                let mapped_to = self.map.get(oob.lpn as usize).copied();
                assert_eq!(mapped_to, Some(ppn), "valid page {ppn} holds lpn {}, which maps to {mapped_to:?}", oob.lpn);
            }
        }
        let mapped = self.map.iter().filter(|&&ppn| ppn != NONE).count() as u64;
        assert_eq!(mapped, valid, "mapped pages {mapped} != valid pages {valid}: an lpn maps to an invalid page");
    }
}

impl<D: GcDestination, H: HostStreams> Collector for PageFtl<D, H> {
    fn next_victim(&mut self, flash: &FlashArray, plane: PlaneId) -> Option<GcJob> {
        self.plane_gc.next_job(&mut self.bm, flash, plane, true)
    }

    fn gc_steps(&mut self, ctx: &mut FlashCtx, job: &mut GcJob, urgent: bool, steps: u32) -> Result<GcStep, SimError> {
        self.steps(ctx, job, urgent, steps)
    }

    fn gc_counts_mut(&mut self) -> &mut GcCounts {
        &mut self.gc
    }

    fn short_of_space(&self, flash: &FlashArray, plane: PlaneId) -> bool {
        PageFtl::short_of_space(self, flash, plane)
    }

    fn room(&self, flash: &FlashArray, plane: PlaneId) -> u64 {
        self.bm.free_pages(flash, plane)
    }

    fn one_victim_enough(&self, plane: PlaneId) -> bool {
        self.incremental && self.bm.free_blocks(plane) >= MIN_FREE_BLOCKS
    }

    /// If the invalid pages of the plane's full blocks do not add up to a block, it is full
    /// of valid data (placement can load one plane beyond the drive's average): nothing to
    /// reclaim.
    fn stalled(&self, flash: &FlashArray, plane: PlaneId, collections: u32) -> Result<(), SimError> {
        let (ppb, data) = (self.geo.pages_per_block, self.bm.data_pages_per_block());
        let garbage: u64 = flash
            .blocks_of(plane)
            .filter(|&b| flash.write_pointer(b) == ppb)
            .map(|b| u64::from(data - flash.valid_count(b)))
            .sum();
        if garbage < u64::from(data) {
            return Ok(());
        }
        Err(SimError::Ftl(format!("plane {plane}: GC made no progress in {collections} collections")))
    }
}

impl<D: GcDestination, H: HostStreams> SteppedCollector for PageFtl<D, H> {
    fn plane_gc(&mut self) -> (&mut PlaneGc, &mut BlockManager) {
        (&mut self.plane_gc, &mut self.bm)
    }

    fn idle_cursor(&mut self) -> &mut u32 {
        &mut self.bg_cursor
    }

    fn idle_wanted(&self, plane: PlaneId) -> bool {
        self.plane_gc.suspended(plane) || self.bm.free_blocks(plane) < self.bg_threshold
    }
}

impl<D: GcDestination, H: HostStreams> ManagedGc for PageFtl<D, H> {
    fn gc_step(&mut self, ctx: &mut FlashCtx, plane: PlaneId) -> Result<bool, SimError> {
        gc_driver::managed_step(self, ctx, plane)
    }

    fn gc_due(&self) -> bool {
        (0..self.geo.planes()).any(|p| self.bm.free_blocks(p) < self.threshold)
    }

    fn spare_blocks(&self, _flash: &FlashArray) -> u64 {
        Ftl::free_blocks(self)
    }

    fn gc_next(&mut self, flash: &FlashArray, plane: PlaneId) -> GcNext {
        self.plane_gc.next_step(&mut self.bm, flash, plane)
    }

    fn gc_copy_step(&mut self, ctx: &mut FlashCtx, plane: PlaneId) -> Result<bool, SimError> {
        gc_driver::copy_step(self, ctx, plane)
    }

    fn gc_job_active(&self, plane: PlaneId) -> bool {
        self.plane_gc.active(plane)
    }

    fn gc_repick(&mut self, flash: &FlashArray, plane: PlaneId) -> bool {
        gc_driver::repick(self, flash, plane)
    }
}

impl<D: GcDestination, H: HostStreams> Recovery for PageFtl<D, H> {
    /// Full scan (seed 001 Ch. 8, opening, before Fig. 8.1: a page-level FTL without a
    /// backup "requires to find and read all valid pages"): every written page's spare area,
    /// the newest copy of each logical page kept, then the blocks' states. Worst case: the
    /// thesis's m + n, every page of the drive plus one per block (the erased page that ends a
    /// block that is not full).
    fn recover(&mut self, ctx: &mut FlashCtx, cfg: &Resolved) -> Result<(), SimError> {
        if self.fdp.is_some() {
            // Which handle a page belongs to is controller memory the cut takes.
            return Err(SimError::Input("power-loss recovery under [fdp] is not supported".into()));
        }
        // The policy's state the power took is forgotten below (`recovered`); its settings stay.
        *self = PageFtl::with_policies(cfg, self.name, self.dest.clone(), self.host.clone())?;
        self.host.recovered();
        let blocks = 0..self.geo.blocks();
        let map = &mut self.map;
        recovery::scan_blocks(ctx, blocks, |flash, ppn, oob| recovery::keep_newest(map, flash, ppn, oob));
        // Trimmed pages come back: a trim is not written to flash (docs/power-loss.md).
        recovery::revalidate_map(ctx, &self.map)?;
        self.bm.rebuild(ctx, |_| u64::MAX)?;
        self.dest.recovered(ctx.flash());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ftlsim_core::ftl::{FlashCounts, FlashTime};

    /// A small page-FTL drive with LPNs 0..8 written twice (so stale pages exist), and a
    /// mapping corruption applied before the whole-state check.
    fn check_after(corrupt: impl FnOnce(&mut PageFtl, &FlashArray)) {
        let cfg = crate::unit_drive(r#"name = "page""#);
        let mut flash = FlashArray::for_config(&cfg).unwrap();
        let mut ftl = PageFtl::new(&cfg).unwrap();
        let (mut ops, mut counts) = (Vec::new(), FlashCounts::default());
        let mut ctx = FlashCtx::new(&mut flash, &mut ops, &mut counts, FlashTime::Timed);
        for version in 1..=2 {
            for lpn in 0..8 {
                ftl.write(&mut ctx, lpn, version).unwrap();
            }
        }
        ftl.check_invariants(&flash);
        corrupt(&mut ftl, &flash);
        ftl.check_invariants(&flash);
    }

    #[test]
    fn the_intact_map_passes_the_check() {
        check_after(|_, _| {});
    }

    #[test]
    #[should_panic(expected = "an lpn maps to an invalid page")]
    fn an_lpn_mapped_to_a_stale_page_fails_the_check() {
        check_after(|ftl, flash| {
            let stale = (0..flash.geometry().pages()).find(|&p| flash.read(p).is_ok() && !flash.is_valid(p)).unwrap();
            ftl.map[20] = stale;
        });
    }

    #[test]
    #[should_panic(expected = "which maps to")]
    fn two_lpns_swapped_fail_the_check() {
        check_after(|ftl, _| ftl.map.swap(1, 2));
    }

    #[test]
    #[should_panic(expected = "which maps to")]
    fn an_unmapped_valid_page_fails_the_check() {
        check_after(|ftl, _| ftl.map[3] = NONE);
    }
}
