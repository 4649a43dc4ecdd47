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
//!
//! Same config, requests and seed give bit-for-bit identical reports: time is integer
//! nanoseconds and every tie resolves in issue order.

mod merge_buffer;
mod pipeline;
mod precondition;
mod replay;
mod report;

pub use precondition::{Precondition, PreconditionReport};
pub use replay::{Replay, RunOptions};
pub use report::{
    Channels, DriveSummary, FlashSummary, GcSummary, HostCounts, Idle, Performance, Planes, Report, ResponseTimes, Waf,
    Wear,
};

use crate::config::{Derived, DriveConfig, PartialWrite};
use crate::error::SimError;
use crate::flash::FlashArray;
use crate::ftl::{FlashCounts, FlashCtx, Ftl};
use crate::geometry::Lpn;
use crate::metrics::WriteBufferReport;
use crate::scheduler::{FlashOp, Scheduler};
use crate::write_buffer::WriteBuffer;
use merge_buffer::MergeBuffer;

/// A drive with its FTL, ready to precondition and run.
pub struct Simulator {
    cfg: DriveConfig,
    d: Derived,
    flash: FlashArray,
    sched: Scheduler,
    ftl: Box<dyn Ftl>,
    ops: Vec<FlashOp>,
    counts: FlashCounts,
    oracle: Option<Vec<u32>>,
    /// Versions of the run of whole pages being gathered (reused, no allocation per request).
    run: Vec<u32>,
    next_version: u32,
    merge: Option<MergeBuffer>,
    /// The DRAM write buffer, when `host.write_buffer_bytes` (or the FTL's default) > 0.
    wbuf: Option<WriteBuffer>,
    /// Its counters in the measured run (policy, capacity, end state and ratios are filled in
    /// by the report).
    wb: WriteBufferReport,
    host: HostCounts,
    precondition: Option<PreconditionReport>,
}

impl Simulator {
    /// A fresh (erased) drive. `verify` turns on the data oracle: every read is checked
    /// against the newest version written.
    pub fn new(cfg: DriveConfig, ftl: Box<dyn Ftl>, verify: bool) -> Result<Simulator, SimError> {
        let d = cfg.derive()?;
        let flash = FlashArray::new(&cfg.geometry, cfg.nand.copyback_same_parity);
        let sched = Scheduler::new(&cfg);
        let merge = (cfg.host.partial_write == PartialWrite::Merge)
            .then(|| MergeBuffer::new(cfg.host.merge_buffer_pages as usize));
        let buffer_pages = d
            .write_buffer_pages
            .unwrap_or_else(|| (ftl.default_write_buffer_bytes() / u64::from(cfg.geometry.page_size_bytes)) as u32);
        let wbuf = (buffer_pages > 0).then(|| WriteBuffer::new(buffer_pages, cfg.host.write_buffer_policy));
        Ok(Simulator {
            oracle: verify.then(|| vec![0; d.logical_pages as usize]),
            cfg,
            d,
            flash,
            sched,
            ftl,
            ops: Vec::with_capacity(1024),
            counts: FlashCounts::default(),
            run: Vec::new(),
            next_version: 1,
            merge,
            wbuf,
            wb: WriteBufferReport::default(),
            host: HostCounts::default(),
            precondition: None,
        })
    }

    /// The flash array.
    pub fn flash(&self) -> &FlashArray {
        &self.flash
    }
    /// The FTL.
    pub fn ftl(&self) -> &dyn Ftl {
        self.ftl.as_ref()
    }
    /// Derived config quantities.
    pub fn derived(&self) -> &Derived {
        &self.d
    }
    /// Flash operation counts since creation.
    pub fn flash_counts(&self) -> &FlashCounts {
        &self.counts
    }

    /// The host write buffer, if configured.
    pub fn write_buffer(&self) -> Option<&WriteBuffer> {
        self.wbuf.as_ref()
    }

    /// Check the FTL's, the flash array's and the write buffer's invariants (expensive).
    pub fn check_invariants(&self) {
        self.flash.check_invariants();
        self.ftl.check_invariants(&self.flash);
        if let Some(w) = &self.wbuf {
            w.check_invariants();
        }
    }

    fn version(&mut self) -> u32 {
        let v = self.next_version;
        self.next_version = self.next_version.wrapping_add(1).max(1);
        v
    }

    fn ftl_write(&mut self, lpn: Lpn, version: u32, record: bool) -> Result<(), SimError> {
        let mut ctx = FlashCtx::new(&mut self.flash, &mut self.ops, &mut self.counts, record);
        self.ftl.write(&mut ctx, lpn, version)?;
        if let Some(o) = self.oracle.as_mut() {
            o[lpn as usize] = version;
        }
        Ok(())
    }

    /// Hand the gathered run of whole pages starting at `first` to the FTL in one call.
    fn ftl_write_run(&mut self, first: Lpn) -> Result<(), SimError> {
        if self.run.is_empty() {
            return Ok(());
        }
        let mut ctx = FlashCtx::new(&mut self.flash, &mut self.ops, &mut self.counts, true);
        self.ftl.write_run(&mut ctx, first, &self.run)?;
        if let Some(o) = self.oracle.as_mut() {
            o[first as usize..][..self.run.len()].copy_from_slice(&self.run);
        }
        self.run.clear();
        Ok(())
    }

    fn ftl_read(&mut self, lpn: Lpn) -> Result<Option<u32>, SimError> {
        let mut ctx = FlashCtx::new(&mut self.flash, &mut self.ops, &mut self.counts, true);
        self.ftl.read(&mut ctx, lpn)
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
