//! The discrete-event simulation of one drive: a [`Simulator`] holds the flash array, the
//! timing scheduler, the FTL and the host-side buffers, and is driven in stages, one file
//! each:
//!
//! - `pipeline.rs`: the request pipeline. A request's pages go through the write buffer, the
//!   partial-page policy and the FTL (state changes at once); the flash operations the FTL
//!   recorded are placed on the timed resources by the [`Scheduler`].
//! - `replay.rs`: the replay loop (open or closed), idle periods with background GC, and the
//!   time series.
//! - `precondition.rs`: functional fill and steady-state overwrites before a measured run.
//! - `report.rs`: the report of a run (docs/metrics.md).
//! - `merge_buffer.rs`: the partial-page merge buffer of `host.partial_write = "merge"`.
//! - `power_cut.rs`: a power cut in a measured run, and the recovery after it.
//! - `tenants.rs`: several sources at once, each a tenant with its submission queue.
//!
//! Same config, requests and seed give bit-for-bit identical reports: time is integer
//! nanoseconds and every tie resolves in issue order.

mod flash_oracle;
mod merge_buffer;
mod pipeline;
mod placement;
pub(crate) mod power_cut;
mod precondition;
mod replay;
mod report;
pub(crate) mod snapshot;
mod tenants;

pub use placement::{PlacementRule, SchemeEntry};
pub use power_cut::{CutAt, LostPages, PowerCutReport};
pub use precondition::{precondition_target, Precondition, PreconditionReport, PreconditionWall, Preconditioned};
pub use replay::{too_many_rows, RunOptions, MAX_INTERVAL_ROWS};
pub use report::{
    Channels, DriveSummary, FlashSummary, GcSummary, Histograms, HostCounts, Idle, Performance, Planes, Report,
    ResponseTimes, Waf, Wear,
};
pub use snapshot::{state_shaping, SnapshotHeader, FORMAT_VERSION};
pub use tenants::Replay;
pub use tenants::{Namespace, QueueArbitration, Tenant, TenantReport, MAX_TENANTS};

use crate::config::{Derived, PartialWrite, Resolved, WriteBufferPolicy};
use crate::error::SimError;
use crate::flash::FlashArray;
use crate::ftl::{FlashCounts, FlashCtx, FlashTime, Ftl, GcCounts};
use crate::geometry::Lpn;
use crate::metrics::WriteBufferReport;
use crate::scheduler::{BatchEnd, FlashOp, Scheduler, SimTime};
use crate::write_behind::WriteBehind;
use crate::write_buffer::WriteBuffer;
use merge_buffer::MergeBuffer;
use serde::Serialize;

/// Wall-clock seconds the simulator spent, by stage. Not part of the [`Report`]: it is the
/// one thing that differs between identical runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct WallTimes {
    /// Building the drive (allocating its state).
    pub build_s: f64,
    /// The sequential fill of preconditioning.
    pub fill_s: f64,
    /// The random overwrites of preconditioning (steady state).
    pub steady_state_s: f64,
    /// Loading a drive snapshot (instead of preconditioning).
    pub load_state_s: f64,
    /// Saving a drive snapshot.
    pub save_state_s: f64,
    /// Replaying requests (the measured runs).
    pub replay_s: f64,
}

/// The flash array with its timing, and the batch of operations the FTL is recording.
struct Device {
    flash: FlashArray,
    sched: Scheduler,
    ops: Vec<FlashOp>,
    counts: FlashCounts,
    /// The write-behind buffer (`host.write_buffer_policy = "write_behind"`), whose load
    /// every timed context carries to the FTL.
    behind: Option<WriteBehind>,
    /// The FDP placement handle of the request being dispatched (0 otherwise), which every
    /// context carries to the FTL.
    placement: u16,
}

impl Device {
    /// A context for one FTL call, timed or functional (`time`).
    fn ctx(&mut self, time: FlashTime) -> FlashCtx<'_> {
        let now = self.sched.now();
        let load = self.behind.as_mut().map(|b| {
            b.advance(now);
            b.mean_utilisation()
        });
        let ctx = FlashCtx::new(&mut self.flash, &mut self.ops, &mut self.counts, time)
            .with_buffer_load(load)
            .with_placement(self.placement);
        if time == FlashTime::Timed {
            ctx.with_scheduler(&mut self.sched)
        } else {
            ctx
        }
    }

    /// Schedule the operations the FTL recorded, none before `ready` (`request`: the replay
    /// slot of the request they serve, `None` for idle-time and recovery work), and forget them.
    fn schedule(&mut self, ready: SimTime, request: Option<u32>) -> BatchEnd {
        self.sched.note_erased_blocks(self.flash.erased_blocks());
        let end = self.sched.schedule(&self.ops, ready, request);
        self.ops.clear();
        end
    }
}

/// What making never-written pages readable cost (`host.unmapped_read = "flash"`): the
/// drive would have done this work before the run, so the report leaves it out.
#[derive(Default)]
struct Materialized {
    /// Flash operations of the untimed writes (counted here, not in the run's counts).
    flash: FlashCounts,
    /// GC the writes triggered.
    gc: GcCounts,
    /// Pages they programmed per plane.
    plane_programs: Vec<u64>,
}

/// A drive with its FTL, ready to precondition and run.
pub struct Simulator {
    cfg: Resolved,
    dev: Device,
    ftl: Box<dyn Ftl>,
    oracle: Option<Vec<u32>>,
    /// Versions of the run of whole pages being gathered (reused, no allocation per request).
    run: Vec<u32>,
    /// A BPLRU block being padded (reused).
    padded_block: Vec<(Lpn, u32)>,
    next_version: u32,
    merge: Option<MergeBuffer>,
    /// The DRAM write buffer, when `host.write_buffer_bytes` (or the FTL's default) > 0.
    wbuf: Option<WriteBuffer>,
    /// Its counters in the measured run (policy, capacity, end state and ratios are filled in
    /// by the report).
    wb: WriteBufferReport,
    host: HostCounts,
    precondition: Option<PreconditionReport>,
    /// One bit per logical page: trimmed at some point. An unmapped page with its bit set was
    /// trimmed last (a write maps it again), so it reads as zeros; one without was never
    /// written.
    trimmed: Vec<u64>,
    materialized: Materialized,
    /// The replay slot of the request being dispatched (its batches may be deferred).
    request: Option<u32>,
    /// Host operations of that request deferred so far.
    deferred_ops: u32,
    /// A request read from the source and not issued when a power cut ended the run: the
    /// next run issues it first.
    held: Option<crate::host::Request>,
    wall: WallTimes,
}

impl Simulator {
    /// A fresh (erased) drive. `verify` turns on the data oracle: every read is checked
    /// against the newest version written.
    pub fn new(cfg: Resolved, ftl: Box<dyn Ftl>, verify: bool) -> Result<Simulator, SimError> {
        let t0 = std::time::Instant::now();
        let flash = FlashArray::for_config(&cfg)?;
        let sched = Scheduler::new(&cfg);
        let d = cfg.derived();
        let merge = (cfg.host.partial_write == PartialWrite::Merge)
            .then(|| MergeBuffer::new(cfg.host.merge_buffer_pages as usize));
        let buffer_pages = d.write_buffer_pages.unwrap_or(0);
        let behind_policy = cfg.host.write_buffer_policy == WriteBufferPolicy::WriteBehind;
        let block_pages = cfg.host.bplru_block_pages.unwrap_or(cfg.geometry.pages_per_block);
        let wbuf = (buffer_pages > 0 && !behind_policy)
            .then(|| WriteBuffer::with_blocks(buffer_pages, cfg.host.write_buffer_policy, block_pages));
        let behind =
            (buffer_pages > 0 && behind_policy).then(|| WriteBehind::new(buffer_pages, d.write_buffer_load_window_ns));
        Ok(Simulator {
            oracle: verify.then(|| vec![0; d.logical_pages as usize]),
            trimmed: vec![0; (d.logical_pages as usize).div_ceil(64)],
            materialized: Materialized {
                plane_programs: vec![0; cfg.geometry.planes() as usize],
                ..Materialized::default()
            },
            cfg,
            dev: Device {
                flash,
                sched,
                ops: Vec::with_capacity(1024),
                counts: FlashCounts::default(),
                behind,
                placement: 0,
            },
            ftl,
            request: None,
            deferred_ops: 0,
            held: None,
            wall: WallTimes { build_s: t0.elapsed().as_secs_f64(), ..WallTimes::default() },
            run: Vec::new(),
            padded_block: Vec::new(),
            next_version: 1,
            merge,
            wbuf,
            wb: WriteBufferReport::default(),
            host: HostCounts::default(),
            precondition: None,
        })
    }

    /// Wall-clock time spent so far, by stage.
    pub fn wall_times(&self) -> &WallTimes {
        &self.wall
    }

    /// Add the time the caller spent building the FTL to [`WallTimes::build_s`].
    pub fn add_build_time(&mut self, secs: f64) {
        self.wall.build_s += secs;
    }

    /// The flash array.
    pub fn flash(&self) -> &FlashArray {
        &self.dev.flash
    }
    /// The FTL.
    pub fn ftl(&self) -> &dyn Ftl {
        self.ftl.as_ref()
    }
    /// Derived config quantities.
    pub fn derived(&self) -> &Derived {
        self.cfg.derived()
    }
    /// Flash operation counts since creation.
    pub fn flash_counts(&self) -> &FlashCounts {
        &self.dev.counts
    }

    /// Stamp every page programmed from now on, so the FTL can recover from a power cut
    /// (call before preconditioning; 4 bytes per physical page).
    pub fn keep_program_stamps(&mut self) {
        self.dev.flash.keep_program_stamps();
    }

    /// A clean shutdown and power-up: the FTL writes what it holds only in controller memory
    /// to flash ([`crate::ftl::Recovery::checkpoint`]; nothing for an FTL without
    /// recovery), untimed and outside any measured run, and the write
    /// and merge buffers are written through. A power-cut run starts from here, as the
    /// thesis's recovery experiments start from a drive whose mapping is all on flash.
    pub fn clean_shutdown(&mut self) -> Result<(), SimError> {
        self.flush_buffers(u32::MAX)?;
        let ctx = &mut self.dev.ctx(FlashTime::Functional);
        if let Some(r) = self.ftl.recovery() {
            r.checkpoint(ctx)?;
        }
        self.dev.ops.clear();
        Ok(())
    }

    /// The host write buffer, if configured.
    pub fn write_buffer(&self) -> Option<&WriteBuffer> {
        self.wbuf.as_ref()
    }

    /// The write-behind buffer, if configured.
    pub fn write_behind(&self) -> Option<&WriteBehind> {
        self.dev.behind.as_ref()
    }

    /// Check the FTL's, the flash array's and the write buffers' invariants (expensive).
    pub fn check_invariants(&self) {
        self.dev.flash.check_invariants();
        self.ftl.check_invariants(&self.dev.flash);
        if let Some(w) = &self.wbuf {
            w.check_invariants();
        }
        if let Some(b) = &self.dev.behind {
            b.check_invariants();
        }
    }

    fn version(&mut self) -> u32 {
        let v = self.next_version;
        self.next_version = self.next_version.wrapping_add(1).max(1);
        v
    }

    fn ftl_write(&mut self, lpn: Lpn, version: u32, time: FlashTime) -> Result<(), SimError> {
        self.ftl.write(&mut self.dev.ctx(time), lpn, version)?;
        if let Some(o) = self.oracle.as_mut() {
            o[lpn as usize] = version;
        }
        Ok(())
    }

    /// Trim `lpn` through the FTL: it reads as never written from now on.
    fn ftl_trim(&mut self, lpn: Lpn, time: FlashTime) -> Result<(), SimError> {
        self.ftl.trim(&mut self.dev.ctx(time), lpn)?;
        self.mark_trimmed(lpn);
        if let Some(o) = self.oracle.as_mut() {
            o[lpn as usize] = 0;
        }
        Ok(())
    }

    /// Hand the gathered run of whole pages starting at `first` to the FTL in one call.
    fn ftl_write_run(&mut self, first: Lpn) -> Result<(), SimError> {
        if self.run.is_empty() {
            return Ok(());
        }
        self.ftl.write_run(&mut self.dev.ctx(FlashTime::Timed), first, &self.run)?;
        if let Some(o) = self.oracle.as_mut() {
            o[first as usize..][..self.run.len()].copy_from_slice(&self.run);
        }
        self.run.clear();
        Ok(())
    }

    fn ftl_read(&mut self, lpn: Lpn) -> Result<Option<u32>, SimError> {
        self.ftl.read(&mut self.dev.ctx(FlashTime::Timed), lpn)
    }

    /// Make the never-written page `lpn` readable: write it through the FTL functionally,
    /// untimed, as if it had been written before the run (`host.unmapped_read = "flash"`).
    /// Its flash work, GC and per-plane programs are kept apart from the run's counters.
    fn materialize(&mut self, lpn: Lpn) -> Result<(), SimError> {
        let version = self.version();
        let gc0 = self.ftl.gc_counts();
        let m = &mut self.materialized;
        for (acc, &now) in m.plane_programs.iter_mut().zip(self.dev.flash.plane_programs()) {
            *acc = acc.wrapping_sub(now);
        }
        let mut ctx = FlashCtx::new(&mut self.dev.flash, &mut self.dev.ops, &mut m.flash, FlashTime::Functional);
        let written = self.ftl.prewrite(&mut ctx, lpn, version);
        // Kept apart even when the write failed part way (a power cut tears it): the
        // subtraction above is completed either way.
        for (acc, &now) in m.plane_programs.iter_mut().zip(self.dev.flash.plane_programs()) {
            *acc = acc.wrapping_add(now);
        }
        m.gc.add(&self.ftl.gc_counts().since(&gc0));
        written?;
        if let Some(o) = self.oracle.as_mut() {
            o[lpn as usize] = version;
        }
        Ok(())
    }

    fn mark_trimmed(&mut self, lpn: Lpn) {
        self.trimmed[lpn as usize / 64] |= 1 << (lpn % 64);
    }

    fn was_trimmed(&self, lpn: Lpn) -> bool {
        self.trimmed[lpn as usize / 64] & (1 << (lpn % 64)) != 0
    }

    /// Pages programmed per plane so far, without those of materialized pages.
    fn plane_programs(&self) -> Vec<u64> {
        let m = &self.materialized.plane_programs;
        self.dev.flash.plane_programs().iter().zip(m).map(|(a, b)| a - b).collect()
    }

    /// GC counters of the FTL without the GC that materializing pages triggered.
    fn gc_counts(&self) -> GcCounts {
        self.ftl.gc_counts().since(&self.materialized.gc)
    }

    fn verify(&self, lpn: Lpn, found: Option<u32>) -> Result<(), SimError> {
        if let Some(o) = &self.oracle {
            let want = o[lpn as usize];
            let expected = (want != 0).then_some(want);
            if found != expected {
                return Err(SimError::DataMismatch { lpn, expected, found });
            }
        }
        Ok(())
    }
}
