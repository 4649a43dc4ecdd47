//! The GC driver: the loops that run collections, written once for every FTL that collects.
//!
//! An FTL says what is its own through [`Collector`] (which plane is short of space, where a
//! victim's pages go, what a collection books) and, when its collections may stop between
//! pages, [`SteppedCollector`] (the per-plane jobs of [`PlaneGc`], what runs around a step).
//! The driver owns the rest:
//! - [`collect_until`]: foreground GC on a plane until it is no longer short of space, with
//!   one progress bound for all (below);
//! - [`managed_step`], [`copy_step`], [`repick`]: one preemptible unit of a plane's
//!   collection for the channel managers of seed 004 (GCA, cycle filling) and idle time;
//! - [`idle_step`]: idle-time GC, the planes taken in turn from a cursor.
//!
//! Progress: a collection of a victim with `k` valid pages gains `pages_per_block - k` erased
//! pages (less any page wasted for copy-back parity), so a plane short of space gains at
//! least a page per collection unless FIFO moves past a fully valid block (at most once per
//! block of the plane before one gains) or parity waste eats the gain (seed 000 Sec. 3.4's
//! never-ending GC). So the loop gives up when the plane's erased pages
//! ([`Collector::room`]) have not passed their best for `blocks_per_plane` collections in a
//! row, and asks the FTL what that means ([`Collector::stalled`]).

use crate::error::SimError;
use crate::flash::FlashArray;
use crate::ftl::{FlashCtx, GcCounts};
use crate::gc::{BlockManager, CopyFrom, GcJob, GcStep, PlaneGc};
use crate::geometry::PlaneId;
use crate::scheduler::Tag;

/// What an FTL gives the driver to run its foreground GC.
pub trait Collector {
    /// The job to run next on `plane` in the foreground: the one suspended there, else one
    /// on its best victim (FIFO may return a fully valid block: `must_advance`).
    fn next_victim(&mut self, flash: &FlashArray, plane: PlaneId) -> Option<GcJob>;
    /// Step `job` up to `steps` times (a page move each, then the erase), relocating its
    /// pages and releasing its victim once erased; the last step's outcome. `urgent`:
    /// foreground GC.
    fn gc_steps(&mut self, ctx: &mut FlashCtx, job: &mut GcJob, urgent: bool, steps: u32) -> Result<GcStep, SimError>;
    /// The FTL's GC counters.
    fn gc_counts_mut(&mut self) -> &mut GcCounts;
    /// `plane` must collect before a host write lands there.
    fn short_of_space(&self, flash: &FlashArray, plane: PlaneId) -> bool;
    /// Erased pages `plane` (and whatever it collects with) can still program: the
    /// progress measure.
    fn room(&self, flash: &FlashArray, plane: PlaneId) -> u64;
    /// After one victim, `plane` may stop short of the threshold (`ftl.foreground_gc =
    /// "incremental"` once the plane keeps its minimum).
    fn one_victim_enough(&self, _plane: PlaneId) -> bool {
        false
    }
    /// The plane whose victim the next collection for `plane` takes (another of its GC unit
    /// in per-chip mode).
    fn victim_plane(&mut self, _flash: &FlashArray, plane: PlaneId) -> PlaneId {
        plane
    }
    /// A collection on `plane` is about to take its job.
    fn collection_starts(&mut self, _plane: PlaneId) {}
    /// A collection on `plane` erased its victim; `urgent`: in the foreground.
    fn collection_ends(&mut self, _plane: PlaneId, _urgent: bool) {}
    /// `plane`'s erased pages have not grown for a plane's worth of collections: `Ok` gives
    /// up (nothing worth reclaiming is left, [`Foreground::NothingToReclaim`]), an error
    /// says why the run cannot go on.
    fn stalled(&self, _flash: &FlashArray, plane: PlaneId, collections: u32) -> Result<(), SimError> {
        Err(SimError::Ftl(format!("plane {plane}: GC made no progress in {collections} collections")))
    }
}

/// What an FTL whose collections stop between pages adds: its per-plane jobs and what runs
/// around each step.
pub trait SteppedCollector: Collector {
    /// Each plane's collection under way and the block manager it draws victims from.
    fn plane_gc(&mut self) -> (&mut PlaneGc, &mut BlockManager);
    /// Where idle-time GC looks first.
    fn idle_cursor(&mut self) -> &mut u32;
    /// Idle-time GC should work on `plane` (a job suspended there, or too few free blocks).
    fn idle_wanted(&self, plane: PlaneId) -> bool;
    /// A suspended or drained victim may give way to another (the FTL does not validate one
    /// victim at a time).
    fn may_switch_victim(&self) -> bool {
        true
    }
    /// The collection on `plane` moved to another victim.
    fn victim_switched(&mut self, _plane: PlaneId) {}
    /// A step runs (`true`) or has run (`false`): the FTL's in-GC state.
    fn in_gc(&mut self, _running: bool) {}
    /// After a step: what the FTL deferred while GC ran (write-backs).
    fn after_step(&mut self, _ctx: &mut FlashCtx) -> Result<(), SimError> {
        Ok(())
    }
}

/// How a foreground GC ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Foreground {
    /// The plane is no longer short of space (or one victim was enough).
    Enough,
    /// No victim frees anything: the plane is as full of valid data as it can be.
    NothingToReclaim,
}

/// Collect on `plane` until it is no longer short of space; the outcome and the victims
/// collected. The caller sets the tag and what its scope holds.
pub fn collect_until<C: Collector + ?Sized>(
    c: &mut C,
    ctx: &mut FlashCtx,
    plane: PlaneId,
) -> Result<(Foreground, u32), SimError> {
    let bpp = ctx.flash().geometry().blocks_per_plane;
    let (mut best, mut since_best, mut victims) = (c.room(ctx.flash(), plane), 0, 0);
    while c.short_of_space(ctx.flash(), plane) {
        if victims > 0 && c.one_victim_enough(plane) {
            break;
        }
        if since_best > bpp {
            c.stalled(ctx.flash(), plane, victims)?;
            return Ok((Foreground::NothingToReclaim, victims));
        }
        let q = c.victim_plane(ctx.flash(), plane);
        if !collect_one(c, ctx, q)? {
            return Ok((Foreground::NothingToReclaim, victims));
        }
        victims += 1;
        let room = c.room(ctx.flash(), plane);
        if room > best {
            (best, since_best) = (room, 0);
        } else {
            since_best += 1;
        }
    }
    Ok((Foreground::Enough, victims))
}

/// One foreground collection on `plane`, run to its victim's erase; whether there was a
/// victim.
pub fn collect_one<C: Collector + ?Sized>(c: &mut C, ctx: &mut FlashCtx, plane: PlaneId) -> Result<bool, SimError> {
    c.collection_starts(plane);
    let Some(mut job) = c.next_victim(ctx.flash(), plane) else {
        return Ok(false);
    };
    // A victim's pages, each once, then its erase (a move may waste a page for parity or
    // carry a page home first, so twice a block bounds it).
    let budget = 2 * ctx.flash().geometry().pages_per_block + 1;
    let s = c.gc_steps(ctx, &mut job, true, budget)?;
    assert_eq!(s, GcStep::Erased, "GC of block {} does not end", job.victim);
    c.gc_counts_mut().foreground_collections += 1;
    c.collection_ends(plane, true);
    Ok(true)
}

/// One preemptible unit of `plane`'s collection ([`crate::ftl::ManagedGc::gc_step`]): a
/// parked victim's erase, else a step of the job under way or of a new one on the best
/// victim; `false` when there is nothing to collect.
pub fn managed_step<C: SteppedCollector + ?Sized>(
    c: &mut C,
    ctx: &mut FlashCtx,
    plane: PlaneId,
) -> Result<bool, SimError> {
    let Some(mut parked) = c.plane_gc().0.take_parked(plane) else {
        return job_step(c, ctx, plane);
    };
    let s = step_tagged(c, ctx, &mut parked)?;
    assert_eq!(s, GcStep::Erased, "parked victim {} held valid pages", parked.victim);
    c.gc_counts_mut().background_collections += 1;
    c.after_step(ctx)?;
    Ok(true)
}

/// A cycle-filling follower's copy on `plane` ([`crate::ftl::ManagedGc::gc_copy_step`]):
/// from the victim under way, or from the next-best one when it is drained (parked for a
/// later erase); `false` when no copy can follow.
pub fn copy_step<C: SteppedCollector + ?Sized>(
    c: &mut C,
    ctx: &mut FlashCtx,
    plane: PlaneId,
) -> Result<bool, SimError> {
    let may_switch = c.may_switch_victim();
    let (pgc, bm) = c.plane_gc();
    match pgc.prepare_copy(bm, ctx.flash(), plane, may_switch) {
        CopyFrom::Nothing => return Ok(false),
        CopyFrom::Next => c.victim_switched(plane),
        CopyFrom::Current => {}
    }
    job_step(c, ctx, plane)
}

/// Drop the job suspended on `plane` for a better victim (seed 004 Sec. 3.2.2,
/// [`crate::ftl::ManagedGc::gc_repick`]); whether it switched.
pub fn repick<C: SteppedCollector + ?Sized>(c: &mut C, flash: &FlashArray, plane: PlaneId) -> bool {
    if !c.may_switch_victim() {
        return false;
    }
    let (pgc, bm) = c.plane_gc();
    if !pgc.repick(bm, flash, plane) {
        return false;
    }
    c.victim_switched(plane);
    true
}

/// One unit of idle-time GC ([`crate::ftl::Ftl::background_step`]): a step on the first
/// plane from the cursor that wants one; `false` when none does or none can.
pub fn idle_step<C: SteppedCollector + ?Sized>(c: &mut C, ctx: &mut FlashCtx) -> Result<bool, SimError> {
    let planes = ctx.flash().geometry().planes();
    let cursor = *c.idle_cursor();
    for i in 0..planes {
        let q = (cursor + i) % planes;
        if c.idle_wanted(q) && managed_step(c, ctx, q)? {
            *c.idle_cursor() = q;
            return Ok(true);
        }
    }
    Ok(false)
}

/// A step of the job under way on `plane`, or of a new one on its best victim, suspended
/// again if it moved a page.
fn job_step<C: SteppedCollector + ?Sized>(c: &mut C, ctx: &mut FlashCtx, plane: PlaneId) -> Result<bool, SimError> {
    c.collection_starts(plane);
    let (pgc, bm) = c.plane_gc();
    let Some(mut job) = pgc.next_job(bm, ctx.flash(), plane, false) else {
        return Ok(false);
    };
    match step_tagged(c, ctx, &mut job)? {
        GcStep::Moved => c.plane_gc().0.suspend(plane, job),
        GcStep::Erased => {
            c.gc_counts_mut().background_collections += 1;
            c.collection_ends(plane, false);
        }
    }
    c.after_step(ctx)?;
    Ok(true)
}

/// One step of `job`, its flash operations tagged as GC's and the FTL in its GC state.
fn step_tagged<C: SteppedCollector + ?Sized>(
    c: &mut C,
    ctx: &mut FlashCtx,
    job: &mut GcJob,
) -> Result<GcStep, SimError> {
    let prev = ctx.set_tag(Tag::Gc);
    c.in_gc(true);
    let r = c.gc_steps(ctx, job, false, 1);
    c.in_gc(false);
    ctx.set_tag(prev);
    r
}
