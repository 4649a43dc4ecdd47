//! The discrete-event simulation: host interface, device queue, replay loops,
//! preconditioning, idle-time background work and the report.
//!
//! Events are request completions in a binary heap keyed by (time, sequence), so equal
//! times resolve in issue order and runs are bit-for-bit deterministic. A request is
//! dispatched when it has arrived and the device queue has room: its pages go through the
//! FTL (state changes at once), the recorded flash operations are placed on the timed
//! resources by the [`Scheduler`], and its completion is pushed as an event. Reads finish
//! with the host-link transfer; writes start after it.
//!
//! When the device goes idle and the next arrival is further away than the idle threshold,
//! background GC runs one preemptible step (one page copy or one erase) at a time until the
//! next request arrives; a step under way when it arrives delays it, as a real controller
//! would finish the page copy it started.
//!
//! With `host.write_buffer_bytes` set, host page writes go to the DRAM write buffer
//! ([`crate::write_buffer`], PCFTL Sec. 3.1) instead of the FTL: a victim it evicts is
//! written through the FTL inside the request that caused the eviction, so that request
//! waits for the program (PCFTL Fig. 9 puts it on the write's critical path). Partial pages
//! enter the buffer as whole pages (the paper zero-pads, Sec. 3.5), bypassing
//! `host.partial_write`. Preconditioning writes go straight to the FTL.

use crate::config::{Derived, DriveConfig, PartialWrite};
use crate::error::SimError;
use crate::flash::FlashArray;
use crate::ftl::{FlashCounts, FlashCtx, Ftl, GcCounts};
use crate::geometry::Lpn;
use crate::host::{check_bounds, pages, IoOp, PageSpan, Request};
use crate::metrics::{mean_std, r6, ByTag, IntervalRow, LatencyHistogram, LatencyStats, Observer, WriteBufferReport};
use crate::scheduler::{BatchEnd, FlashOp, Scheduler, SimTime, Tag};
use crate::write_buffer::{Insert, WriteBuffer};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};

/// How requests are issued.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Replay {
    /// At their arrival times (relative to the first), inter-arrival times multiplied by
    /// `time_scale`, at most `host.queue_depth` outstanding.
    Open {
        /// Multiplier of inter-arrival times (0.5 replays twice as fast).
        time_scale: f64,
    },
    /// Arrival times ignored; `queue_depth` requests kept outstanding.
    Closed {
        /// Requests outstanding.
        queue_depth: u32,
    },
}

/// Options of one measured run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Replay mode.
    pub replay: Replay,
    /// Stop issuing requests after this much simulated time.
    pub max_sim_ns: Option<u64>,
    /// Time-series interval, ns of simulated time (0 = no time series).
    pub interval_ns: u64,
    /// Check FTL and flash invariants after every this many requests (0 = never; tests).
    pub check_every: u64,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            replay: Replay::Closed { queue_depth: 32 },
            max_sim_ns: None,
            interval_ns: 100_000_000,
            check_every: 0,
        }
    }
}

/// Preconditioning: a sequential fill, then optional random overwrites until the write
/// amplification settles. Functional (no timing), through the FTL's own write path.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Precondition {
    /// Share of the logical space written sequentially, [0, 1].
    pub fill: f64,
    /// Share of the logical space, from its start, the fill leaves unwritten before it starts
    /// (`fill + fill_offset <= 1`): a workload addressing that region starts on a full drive
    /// with its own first writes new.
    pub fill_offset: f64,
    /// Overwrite the filled range uniformly at random until WAF settles.
    pub steady_state: bool,
    /// Cap on random overwrites, as a multiple of the filled pages.
    pub max_overwrite_passes: f64,
    /// Seed of the overwrite addresses.
    pub seed: u64,
}

impl Default for Precondition {
    fn default() -> Self {
        Precondition { fill: 0.0, fill_offset: 0.0, steady_state: false, max_overwrite_passes: 4.0, seed: 0 }
    }
}

/// What preconditioning did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PreconditionReport {
    /// Pages written by the sequential fill.
    pub fill_pages: u64,
    /// Pages written by random overwrites.
    pub overwrite_pages: u64,
    /// WAF of the last overwrite window.
    pub final_window_waf: f64,
    /// Whether the WAF settled (else the overwrite cap was reached).
    pub settled: bool,
}

/// Host-side counters of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct HostCounts {
    /// Requests completed.
    pub requests: u64,
    /// Read requests.
    pub reads: u64,
    /// Write requests.
    pub writes: u64,
    /// Trim requests.
    pub trims: u64,
    /// Bytes read by the host.
    pub bytes_read: u64,
    /// Bytes written by the host.
    pub bytes_written: u64,
    /// Logical pages read.
    pub pages_read: u64,
    /// Logical pages written (whole or partial): the WAF denominator.
    pub pages_written: u64,
    /// Logical pages trimmed (whole pages only).
    pub pages_trimmed: u64,
    /// Pages read that were never written (served without flash access).
    pub unmapped_page_reads: u64,
    /// Partial-page writes.
    pub partial_page_writes: u64,
    /// Flash reads done for read-modify-write.
    pub rmw_reads: u64,
    /// Sectors zero-filled by the zero-pad policy.
    pub zero_padded_sectors: u64,
    /// Partial pages completed in the merge buffer (programmed once, no read).
    pub merged_pages: u64,
    /// Reads served from the merge buffer.
    pub merge_buffer_read_hits: u64,
}

/// The full result of a run: see docs/metrics.md.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Drive and FTL.
    pub drive: DriveSummary,
    /// Host counters.
    pub host: HostCounts,
    /// Rates over the simulated time.
    pub performance: Performance,
    /// Response time = completion - arrival.
    pub response_time: ResponseTimes,
    /// Flash operations.
    pub flash: FlashSummary,
    /// Write amplification: pages programmed / host pages written.
    pub write_amplification: Waf,
    /// Garbage collection.
    pub gc: GcSummary,
    /// Block wear.
    pub wear: Wear,
    /// Plane balance.
    pub planes: Planes,
    /// Channel time split.
    pub channels: Channels,
    /// Host idle periods.
    pub idle: Idle,
    /// Controller SRAM used by the mapping, bytes.
    pub mapping_sram_bytes: u64,
    /// FTL-specific metrics.
    pub ftl_metrics: serde_json::Map<String, serde_json::Value>,
    /// Host write buffer counters (`null` without a buffer).
    pub write_buffer: Option<WriteBufferReport>,
    /// Preconditioning done before the measured run.
    pub precondition: Option<PreconditionReport>,
}

/// Drive summary.
#[derive(Debug, Clone, Serialize)]
pub struct DriveSummary {
    /// Preset or config name.
    pub name: String,
    /// FTL name.
    pub ftl: String,
    /// Host-visible bytes.
    pub logical_bytes: u64,
    /// Raw bytes.
    pub physical_bytes: u64,
    /// Planes.
    pub planes: u32,
    /// Foreground GC threshold, free blocks per plane.
    pub gc_threshold_blocks: u32,
}

/// Rates.
#[derive(Debug, Clone, Serialize)]
pub struct Performance {
    /// Simulated time from the first dispatch to the last completion, ns.
    pub simulated_time_ns: u64,
    /// Requests per simulated second.
    pub iops: f64,
    /// Host bytes (read + written) per simulated second, MB/s (10^6 B).
    pub throughput_mb_per_s: f64,
    /// Read MB/s.
    pub read_mb_per_s: f64,
    /// Write MB/s.
    pub write_mb_per_s: f64,
}

/// Response times by request type.
#[derive(Debug, Clone, Serialize)]
pub struct ResponseTimes {
    /// All requests.
    pub all: LatencyStats,
    /// Reads.
    pub read: LatencyStats,
    /// Writes.
    pub write: LatencyStats,
    /// Trims.
    pub trim: LatencyStats,
}

/// Flash operation counts by tag.
#[derive(Debug, Clone, Serialize)]
pub struct FlashSummary {
    /// Page reads to the controller.
    pub reads: ByTag,
    /// Page programs from the controller.
    pub programs: ByTag,
    /// Intra-plane copy-backs.
    pub copybacks: ByTag,
    /// Block erases.
    pub erases: ByTag,
    /// Pages skipped (wasted) in the run: copy-back parity (PCFTL), block padding.
    pub wasted_pages: u64,
    /// Wasted pages as a share of all physical pages (PCFTL Sec. 5.5, Fig. 13).
    pub wasted_pages_share: f64,
    /// Multi-plane commands formed by the scheduler.
    pub multi_plane_commands: u64,
    /// Reads served from the plane register.
    pub register_read_hits: u64,
}

/// Write amplification and its components (each = pages programmed for that purpose /
/// host pages written; copy-back destinations count as programs).
#[derive(Debug, Clone, Serialize)]
pub struct Waf {
    /// All programs / host pages written.
    pub total: f64,
    /// Host programs / host pages written.
    pub host: f64,
    /// GC programs / host pages written.
    pub gc: f64,
    /// Mapping programs / host pages written.
    pub mapping: f64,
}

/// GC summary.
#[derive(Debug, Clone, Serialize)]
pub struct GcSummary {
    /// Victims collected.
    pub collections: u64,
    /// Collected on a host request's path.
    pub foreground_collections: u64,
    /// Collected in idle time.
    pub background_collections: u64,
    /// Valid pages moved.
    pub pages_moved: u64,
    /// Valid pages moved per collection.
    pub pages_moved_per_collection: f64,
    /// Average share of a victim's pages that were valid (moved), in [0, 1] (PCFTL Sec.
    /// 5.5, Fig. 13).
    pub victim_valid_share: f64,
    /// FTL-specific fallbacks.
    pub fallbacks: u64,
    /// Block utilisation BU = host pages written / pages erased (thesis Eq. 4.4; 0 when
    /// nothing was erased).
    pub block_utilization: f64,
    /// Valid page move rate MR = pages moved / pages erased (thesis Eq. 4.5).
    pub valid_page_move_rate: f64,
}

/// Erase counts per block over the drive's life (preconditioning included).
#[derive(Debug, Clone, Serialize)]
pub struct Wear {
    /// Fewest erases of any block.
    pub erase_count_min: u32,
    /// Mean erases per block.
    pub erase_count_mean: f64,
    /// Most erases of any block.
    pub erase_count_max: u32,
    /// Standard deviation of erases per block.
    pub erase_count_std: f64,
}

/// Programs per plane in the run (host, GC and mapping).
#[derive(Debug, Clone, Serialize)]
pub struct Planes {
    /// Mean pages programmed per plane.
    pub programs_mean: f64,
    /// SDWPP: population standard deviation of pages programmed per plane, host, GC
    /// (copy-back destinations included) and mapping writes together (PCFTL Sec. 5.1).
    pub sdwpp: f64,
    /// Pages programmed by each plane.
    pub programs_per_plane: Vec<u64>,
}

/// Channel bus time split, summed over channels.
#[derive(Debug, Clone, Serialize)]
pub struct Channels {
    /// Bus time for host operations, ns.
    pub host_busy_ns: u64,
    /// Bus time for GC, ns.
    pub gc_busy_ns: u64,
    /// Bus time for mapping operations, ns.
    pub mapping_busy_ns: u64,
    /// Idle bus time, ns (channels x simulated time - busy).
    pub idle_ns: u64,
    /// Shares of channel time: host, GC, mapping, idle.
    pub host_share: f64,
    /// GC share.
    pub gc_share: f64,
    /// Mapping share.
    pub mapping_share: f64,
    /// Idle share.
    pub idle_share: f64,
    /// Plane array busy shares: host, GC, mapping (mean over planes).
    pub plane_host_share: f64,
    /// GC share of plane time.
    pub plane_gc_share: f64,
    /// Mapping share of plane time.
    pub plane_mapping_share: f64,
}

/// Periods with no request outstanding.
#[derive(Debug, Clone, Serialize)]
pub struct Idle {
    /// Number of idle periods.
    pub periods: u64,
    /// Total idle time, ns.
    pub total_ns: u64,
    /// Idle period length statistics (count, mean, quantiles, max), ns.
    pub length: LatencyStats,
}

struct Pending {
    arrival: SimTime,
    op: IoOp,
    bytes: u64,
}

/// Partial pages held by the `merge` policy. Entries carry a generation so the FIFO can
/// drop stale positions lazily; it is compacted when stale positions pile up.
struct MergeBuffer {
    cap: usize,
    map: HashMap<Lpn, (u64, u32, u64)>,
    order: VecDeque<(Lpn, u64)>,
    gen: u64,
}

impl MergeBuffer {
    fn new(cap: usize) -> Self {
        MergeBuffer { cap, map: HashMap::with_capacity(cap), order: VecDeque::new(), gen: 0 }
    }
    fn remove(&mut self, lpn: Lpn) -> Option<(u64, u32)> {
        self.map.remove(&lpn).map(|(m, v, _)| (m, v))
    }
    fn oldest(&mut self) -> Option<(Lpn, u32)> {
        while let Some((lpn, g)) = self.order.pop_front() {
            if let Some(&(_, v, eg)) = self.map.get(&lpn) {
                if eg == g {
                    self.map.remove(&lpn);
                    return Some((lpn, v));
                }
            }
        }
        None
    }
    fn insert(&mut self, lpn: Lpn, mask: u64, version: u32) {
        self.gen += 1;
        self.map.insert(lpn, (mask, version, self.gen));
        self.order.push_back((lpn, self.gen));
        if self.order.len() > 4 * self.cap + 16 {
            let map = &self.map;
            self.order.retain(|&(l, g)| map.get(&l).is_some_and(|e| e.2 == g));
        }
        assert!(self.order.len() <= 4 * self.cap + 16, "merge buffer order list unbounded");
    }
}

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

    /// Precondition functionally; counters are then reset so that the run measures only
    /// itself (erase counts stay, as wear).
    pub fn precondition(&mut self, p: &Precondition) -> Result<PreconditionReport, SimError> {
        self.precondition_observed(p, &mut crate::metrics::NoObserver)
    }

    /// [`Simulator::precondition`], reporting pages written to `obs` as it goes.
    pub fn precondition_observed(
        &mut self,
        p: &Precondition,
        obs: &mut dyn Observer,
    ) -> Result<PreconditionReport, SimError> {
        if !(0.0..=1.0).contains(&p.fill) {
            return Err(crate::error::invalid("precondition.fill", p.fill, "must be in [0, 1]").into());
        }
        if !(0.0..=1.0 - p.fill).contains(&p.fill_offset) {
            return Err(crate::error::invalid(
                "precondition.fill_offset",
                p.fill_offset,
                format!("must be in [0, 1 - fill] = [0, {}]", 1.0 - p.fill),
            )
            .into());
        }
        let logical = u64::from(self.d.logical_pages);
        let filled = (logical as f64 * p.fill) as u64;
        let start = ((logical as f64 * p.fill_offset) as u64).min(logical - filled);
        let mut rep = PreconditionReport { fill_pages: filled, ..Default::default() };
        let most = filled + if p.steady_state { (filled as f64 * p.max_overwrite_passes) as u64 } else { 0 };
        for lpn in start..start + filled {
            let v = self.version();
            self.unbuffer(lpn as Lpn);
            self.ftl_write(lpn as Lpn, v, false)?;
            if lpn % 65_536 == 0 {
                obs.precondition(lpn, most);
            }
        }
        if p.steady_state && filled > 0 {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(p.seed ^ 0x5eed_c0de);
            let window = (filled / 16).max(1024);
            let cap = (filled as f64 * p.max_overwrite_passes) as u64;
            let mut last = 0.0f64;
            let mut stable = 0;
            while rep.overwrite_pages < cap {
                let before = self.counts.pages_programmed();
                let gc_before = self.ftl.gc_counts().collections();
                for _ in 0..window {
                    let lpn = (start + rng.gen_range(0..filled)) as Lpn;
                    let v = self.version();
                    self.unbuffer(lpn);
                    self.ftl_write(lpn, v, false)?;
                }
                rep.overwrite_pages += window;
                obs.precondition(filled + rep.overwrite_pages, most);
                let waf = (self.counts.pages_programmed() - before) as f64 / window as f64;
                rep.final_window_waf = r6(waf);
                let gc_active = self.ftl.gc_counts().collections() > gc_before;
                if gc_active && rep.overwrite_pages >= filled / 2 && (waf - last).abs() <= 0.01 * waf {
                    stable += 1;
                    if stable >= 3 {
                        rep.settled = true;
                        break;
                    }
                } else {
                    stable = 0;
                }
                last = waf;
            }
        }
        self.precondition = Some(rep.clone());
        Ok(rep)
    }

    /// Drop `lpn` from the write buffer (a write that bypasses it makes the copy stale).
    fn unbuffer(&mut self, lpn: Lpn) {
        if let Some(w) = self.wbuf.as_mut() {
            w.remove(lpn);
        }
    }

    /// Put each page of a host write in the write buffer (partial pages as whole pages);
    /// a victim evicted by an insert is written through the FTL now, recorded for this
    /// request's batch so the request waits for it.
    fn write_buffered(&mut self, offset: u64, sectors: u32) -> Result<(), SimError> {
        let spp = self.cfg.geometry.sectors_per_page();
        for span in pages(offset, sectors, spp) {
            self.host.pages_written += 1;
            if !span.is_full(spp) {
                self.host.partial_page_writes += 1;
                self.host.zero_padded_sectors += u64::from(spp - span.sectors);
                self.wb.partial_pages += 1;
            }
            if let Some(m) = self.merge.as_mut() {
                m.remove(span.lpn);
            }
            let v = self.version();
            if let Some(o) = self.oracle.as_mut() {
                o[span.lpn as usize] = v;
            }
            let w = self.wbuf.as_mut().expect("write_buffered needs a write buffer");
            match w.insert(span.lpn, v) {
                Insert::Hit => self.wb.write_hits += 1,
                Insert::Added => self.wb.write_inserts += 1,
                Insert::Evicted(lpn, ev) => {
                    assert_ne!(lpn, span.lpn, "the page just written cannot be the victim");
                    self.wb.write_inserts += 1;
                    self.wb.evictions += 1;
                    // The victim's buffered version is its newest: the oracle already has it.
                    self.ftl_write(lpn, ev, true)?;
                }
            }
        }
        Ok(())
    }

    /// Schedule the recorded operations, none before `ready`.
    fn flush(&mut self, ready: SimTime) -> BatchEnd {
        let end = self.sched.schedule(&self.ops, ready);
        self.ops.clear();
        end
    }

    /// Write the page spans of a host write: each maximal run of whole pages in one
    /// [`Ftl::write_run`] call (a block-mapped FTL rewrites a block once per request), each
    /// partial page by the partial-page policy. Returns the host completion of the flash work.
    fn write_spans(&mut self, offset: u64, sectors: u32, ready: SimTime) -> Result<SimTime, SimError> {
        if self.wbuf.is_some() {
            self.write_buffered(offset, sectors)?;
            return Ok(ready);
        }
        let spp = self.cfg.geometry.sectors_per_page();
        debug_assert!(self.run.is_empty());
        let mut first = 0;
        let mut done = ready;
        for span in pages(offset, sectors, spp) {
            self.host.pages_written += 1;
            if !span.is_full(spp) {
                self.ftl_write_run(first)?;
                done = done.max(self.write_partial(span, ready)?);
                continue;
            }
            if self.run.is_empty() {
                first = span.lpn;
            }
            assert_eq!(span.lpn, first + self.run.len() as Lpn, "whole pages of a run are consecutive");
            if let Some(m) = self.merge.as_mut() {
                m.remove(span.lpn);
            }
            let v = self.version();
            self.run.push(v);
        }
        self.ftl_write_run(first)?;
        Ok(done)
    }

    /// Write a partial page span; returns the host completion of its flash work.
    fn write_partial(&mut self, span: PageSpan, ready: SimTime) -> Result<SimTime, SimError> {
        let spp = self.cfg.geometry.sectors_per_page();
        self.host.partial_page_writes += 1;
        match self.cfg.host.partial_write {
            PartialWrite::ZeroPad => {
                self.host.zero_padded_sectors += u64::from(spp - span.sectors);
                let v = self.version();
                self.ftl_write(span.lpn, v, true)?;
                Ok(ready)
            }
            PartialWrite::ReadModifyWrite => {
                let v = self.version();
                self.read_modify_write(span.lpn, v, ready)
            }
            PartialWrite::Merge => {
                let full = if spp >= 64 { u64::MAX } else { (1u64 << spp) - 1 };
                let v = self.version();
                if let Some(o) = self.oracle.as_mut() {
                    o[span.lpn as usize] = v;
                }
                let m = self.merge.as_mut().expect("merge buffer exists under the merge policy");
                let mask = m.remove(span.lpn).map_or(0, |e| e.0) | span.sector_mask();
                if mask == full {
                    self.host.merged_pages += 1;
                    self.ftl_write(span.lpn, v, true)?;
                    return Ok(ready);
                }
                let evicted = if m.map.len() >= m.cap { m.oldest() } else { None };
                m.insert(span.lpn, mask, v);
                match evicted {
                    Some((lpn, ev)) => self.read_modify_write(lpn, ev, ready),
                    None => Ok(ready),
                }
            }
        }
    }

    /// Read the old page (if any), then program the merged page; the program waits for the read.
    fn read_modify_write(&mut self, lpn: Lpn, version: u32, ready: SimTime) -> Result<SimTime, SimError> {
        let before = self.flush(ready);
        let old = self.ftl_read(lpn)?;
        let mut start = ready;
        if old.is_some() {
            self.host.rmw_reads += 1;
            start = self.flush(ready).host_end;
        }
        self.ftl_write(lpn, version, true)?;
        let written = self.flush(start);
        Ok(before.host_end.max(written.host_end))
    }

    fn read_span(&mut self, span: PageSpan) -> Result<(), SimError> {
        self.host.pages_read += 1;
        if let Some(v) = self.wbuf.as_ref().and_then(|w| w.get(span.lpn)) {
            // Served from DRAM: no flash read (PCFTL Fig. 4(3)).
            self.wb.read_hits += 1;
            return self.verify(span.lpn, Some(v));
        }
        let buffered = self.merge.as_ref().and_then(|m| m.map.get(&span.lpn).copied());
        let found = self.ftl_read(span.lpn)?;
        if found.is_none() {
            self.host.unmapped_page_reads += 1;
        }
        let found = match buffered {
            Some((_, v, _)) => {
                self.host.merge_buffer_read_hits += 1;
                Some(v)
            }
            None => found,
        };
        self.verify(span.lpn, found)
    }

    /// Dispatch one request at `t`; returns its completion time.
    fn dispatch(&mut self, req: &Request, t: SimTime) -> Result<SimTime, SimError> {
        let offset = req.offset_sector;
        self.sched.set_now(t);
        let spp = self.cfg.geometry.sectors_per_page();
        let bytes = u64::from(req.sectors) * 512;
        let mut ready = t;
        if req.op == IoOp::Write {
            ready = self.sched.host_transfer(t, bytes);
        }
        let npages = pages(offset, req.sectors, spp).count() as u64;
        // One mapping lookup per page, plus one write-buffer lookup per page when there is a
        // buffer (reads and writes probe it; trims remove from it).
        let lookups = if self.wbuf.is_some() { 2 * npages } else { npages };
        ready += lookups * self.cfg.timing.dram_access_ns;
        debug_assert!(self.ops.is_empty());
        let mut done = ready;
        match req.op {
            IoOp::Read => {
                self.host.reads += 1;
                self.host.bytes_read += bytes;
                for span in pages(offset, req.sectors, spp) {
                    self.read_span(span)?;
                }
            }
            IoOp::Write => {
                self.host.writes += 1;
                self.host.bytes_written += bytes;
                done = done.max(self.write_spans(offset, req.sectors, ready)?);
            }
            IoOp::Trim => {
                self.host.trims += 1;
                for span in pages(offset, req.sectors, spp).filter(|s| s.is_full(spp)) {
                    self.host.pages_trimmed += 1;
                    if let Some(m) = self.merge.as_mut() {
                        m.remove(span.lpn);
                    }
                    if self.wbuf.as_mut().and_then(|w| w.remove(span.lpn)).is_some() {
                        self.wb.trimmed_pages += 1;
                    }
                    let mut ctx = FlashCtx::new(&mut self.flash, &mut self.ops, &mut self.counts, true);
                    self.ftl.trim(&mut ctx, span.lpn)?;
                    if let Some(o) = self.oracle.as_mut() {
                        o[span.lpn as usize] = 0;
                    }
                }
            }
        }
        done = done.max(self.flush(ready).host_end);
        if req.op == IoOp::Read {
            done = self.sched.host_transfer(done, bytes);
        }
        Ok(done)
    }

    /// Run background steps from `from` while they start before `until`; returns when the
    /// last step ends.
    fn background(&mut self, from: SimTime, until: SimTime) -> Result<SimTime, SimError> {
        let mut t = from;
        let mut steps = 0u64;
        while t < until {
            self.sched.set_now(t);
            let mut ctx = FlashCtx::new(&mut self.flash, &mut self.ops, &mut self.counts, true);
            ctx.set_tag(Tag::Gc);
            if !self.ftl.background_step(&mut ctx)? {
                self.ops.clear();
                break;
            }
            t = t.max(self.flush(t).end);
            steps += 1;
            assert!(steps <= u64::from(self.d.physical_pages) * 4, "background work does not converge");
        }
        Ok(t)
    }

    /// Replay requests and report. `source` yields requests lazily (traces are streamed).
    pub fn run(
        &mut self,
        source: &mut dyn Iterator<Item = Result<Request, SimError>>,
        opts: &RunOptions,
        obs: &mut dyn Observer,
    ) -> Result<Report, SimError> {
        self.host = HostCounts::default();
        self.wb = WriteBufferReport::default();
        self.ftl.begin_measurement();
        let counts0 = self.counts.clone();
        let gc0 = self.ftl.gc_counts();
        let plane0 = self.flash.plane_programs().to_vec();
        let wasted0 = self.flash.wasted_pages();
        let busy0 = self.sched.busy().clone();
        let mp0 = self.sched.multi_plane_commands();
        let rh0 = self.sched.register_hits();

        let (qd, closed, scale) = match opts.replay {
            Replay::Open { time_scale } => {
                if !(time_scale > 0.0 && time_scale.is_finite()) {
                    return Err(crate::error::invalid("time_scale", time_scale, "must be > 0").into());
                }
                (self.cfg.host.queue_depth, false, time_scale)
            }
            Replay::Closed { queue_depth } => {
                if queue_depth == 0 {
                    return Err(crate::error::invalid("queue_depth", 0, "must be >= 1").into());
                }
                (queue_depth, true, 1.0)
            }
        };
        let logical_sectors = u64::from(self.d.logical_pages) * u64::from(self.cfg.geometry.sectors_per_page());
        let bg = self.cfg.ftl.background_gc;
        let idle_threshold = self.cfg.ftl.idle_threshold_ns;

        let mut lat_all = LatencyHistogram::default();
        let mut lat_read = LatencyHistogram::default();
        let mut lat_write = LatencyHistogram::default();
        let mut lat_trim = LatencyHistogram::default();
        let mut idle_len = LatencyHistogram::default();
        let mut idle_total = 0u64;

        let mut heap: BinaryHeap<Reverse<(SimTime, u64, u32)>> = BinaryHeap::with_capacity(qd as usize + 1);
        let mut slots: Vec<Pending> = Vec::with_capacity(qd as usize);
        let mut free_slots: Vec<u32> = Vec::with_capacity(qd as usize);
        let mut seq = 0u64;
        let mut now: SimTime = 0;
        let mut start: Option<SimTime> = None;
        let mut last_completion: SimTime = 0;
        let mut first_arrival: Option<u64> = None;
        let mut pending: Option<Request> = None;
        let mut source_done = false;
        let mut index = 0u64;

        // Time series accumulators.
        let interval = opts.interval_ns;
        let mut next_row = interval;
        let mut row = IntervalRow::default();
        let mut row_lat_sum = 0u128;
        let mut row_bytes = 0u64;
        let mut row_gc = gc0.clone();
        let mut row_programs = self.counts.pages_programmed();

        loop {
            while pending.is_none() && !source_done {
                match source.next() {
                    None => source_done = true,
                    Some(r) => {
                        let r = r?;
                        index += 1;
                        check_bounds(r.offset_sector, r.sectors, logical_sectors, || format!("request {index}"))?;
                        pending = Some(r);
                    }
                }
            }
            let stop_issuing = opts.max_sim_ns.is_some_and(|m| now >= m);
            let outstanding = slots.len() - free_slots.len();
            let next_completion = heap.peek().map(|e| e.0 .0);
            if let (Some(req), false) = (pending.as_ref(), stop_issuing) {
                if outstanding < qd as usize {
                    let arrival = if closed {
                        now
                    } else {
                        let first = *first_arrival.get_or_insert(req.arrival_ns);
                        let rel = req.arrival_ns.checked_sub(first).ok_or_else(|| {
                            SimError::Request(format!(
                                "request {index}: arrival {} ns before the first request's {first} ns (sort the trace)",
                                req.arrival_ns
                            ))
                        })?;
                        (rel as f64 * scale).round() as u64
                    };
                    let t = arrival.max(now);
                    if next_completion.is_none_or(|c| t < c) {
                        let req = *req;
                        pending = None;
                        if outstanding == 0 && start.is_some() && t > last_completion {
                            let gap = t - last_completion;
                            idle_len.record(gap);
                            idle_total += gap;
                            if bg && gap > idle_threshold {
                                self.background(last_completion + idle_threshold, t)?;
                            }
                        }
                        start.get_or_insert(t);
                        let t = t.max(self.sched.now());
                        now = t;
                        let done = self.dispatch(&req, t)?;
                        let slot = match free_slots.pop() {
                            Some(s) => {
                                slots[s as usize] =
                                    Pending { arrival, op: req.op, bytes: u64::from(req.sectors) * 512 };
                                s
                            }
                            None => {
                                slots.push(Pending { arrival, op: req.op, bytes: u64::from(req.sectors) * 512 });
                                (slots.len() - 1) as u32
                            }
                        };
                        assert!(slots.len() <= qd as usize, "more slots than the queue depth");
                        heap.push(Reverse((done, seq, slot)));
                        seq += 1;
                        if opts.check_every > 0 && index.is_multiple_of(opts.check_every) {
                            self.check_invariants();
                        }
                        continue;
                    }
                }
            }
            let Some(Reverse((t, _, slot))) = heap.pop() else {
                break;
            };
            now = now.max(t);
            let p = &slots[slot as usize];
            free_slots.push(slot);
            let lat = t - p.arrival;
            lat_all.record(lat);
            match p.op {
                IoOp::Read => lat_read.record(lat),
                IoOp::Write => lat_write.record(lat),
                IoOp::Trim => lat_trim.record(lat),
            }
            self.host.requests += 1;
            last_completion = last_completion.max(t);
            if interval > 0 {
                let origin = start.unwrap_or(0);
                while t - origin >= next_row {
                    row.t_end_ns = origin + next_row;
                    self.emit_row(
                        &mut row,
                        &mut row_lat_sum,
                        &mut row_bytes,
                        &mut row_gc,
                        &mut row_programs,
                        interval,
                        obs,
                    );
                    next_row += interval;
                }
                row.requests += 1;
                row_lat_sum += u128::from(lat);
                row.max_latency_us = row.max_latency_us.max(lat as f64 / 1e3);
                if p.op != IoOp::Trim {
                    row_bytes += p.bytes;
                }
            }
            if self.host.requests.is_multiple_of(65_536) {
                obs.progress(self.host.requests);
            }
        }
        obs.progress(self.host.requests);
        let origin = start.unwrap_or(0);
        let end = last_completion.max(origin);
        if interval > 0 && row.requests > 0 {
            row.t_end_ns = end;
            let partial = (end - (origin + next_row - interval)).max(1);
            self.emit_row(&mut row, &mut row_lat_sum, &mut row_bytes, &mut row_gc, &mut row_programs, partial, obs);
        }
        let sim_ns = end - origin;
        Ok(self.report(
            sim_ns,
            [lat_all, lat_read, lat_write, lat_trim],
            idle_len,
            idle_total,
            counts0,
            gc0,
            plane0,
            wasted0,
            busy0,
            mp0,
            rh0,
        ))
    }

    #[allow(clippy::too_many_arguments)]
    fn emit_row(
        &self,
        row: &mut IntervalRow,
        lat_sum: &mut u128,
        bytes: &mut u64,
        gc: &mut GcCounts,
        programs: &mut u64,
        len_ns: u64,
        obs: &mut dyn Observer,
    ) {
        let secs = len_ns as f64 / 1e9;
        row.iops = r6(row.requests as f64 / secs);
        row.throughput_mb_per_s = r6(*bytes as f64 / 1e6 / secs);
        row.mean_latency_us = if row.requests > 0 { r6(*lat_sum as f64 / row.requests as f64 / 1e3) } else { 0.0 };
        row.max_latency_us = r6(row.max_latency_us);
        row.free_blocks = self.ftl.free_blocks();
        let g = self.ftl.gc_counts();
        let d = g.since(gc);
        row.gc_collections = d.collections();
        row.gc_pages_moved = d.pages_moved;
        let p = self.counts.pages_programmed();
        row.flash_programs = p - *programs;
        obs.interval(row);
        *row = IntervalRow::default();
        *lat_sum = 0;
        *bytes = 0;
        *gc = g;
        *programs = p;
    }

    #[allow(clippy::too_many_arguments)]
    fn report(
        &self,
        sim_ns: u64,
        lat: [LatencyHistogram; 4],
        idle_len: LatencyHistogram,
        idle_total: u64,
        counts0: FlashCounts,
        gc0: GcCounts,
        plane0: Vec<u64>,
        wasted0: u64,
        busy0: crate::scheduler::BusyTime,
        mp0: u64,
        rh0: u64,
    ) -> Report {
        let c = self.counts.since(&counts0);
        let gc = self.ftl.gc_counts().since(&gc0);
        let secs = (sim_ns.max(1)) as f64 / 1e9;
        let h = &self.host;
        let hp = h.pages_written.max(1) as f64;
        let tag_programs = |i: usize| (c.programs[i] + c.copybacks[i]) as f64 / hp;
        let per_plane: Vec<u64> = self.flash.plane_programs().iter().zip(&plane0).map(|(a, b)| a - b).collect();
        let (pm, ps) = mean_std(per_plane.iter().map(|&v| v as f64));
        let ec = self.flash.erase_counts();
        let (em, es) = mean_std(ec.iter().map(|&v| f64::from(v)));
        let busy = self.sched.busy();
        let mut ch = [0u64; 3];
        for (now, before) in busy.channel.iter().zip(&busy0.channel) {
            for i in 0..3 {
                ch[i] += now[i] - before[i];
            }
        }
        let mut pl = [0u64; 3];
        for (now, before) in busy.plane.iter().zip(&busy0.plane) {
            for i in 0..3 {
                pl[i] += now[i] - before[i];
            }
        }
        let channel_total = sim_ns.max(1) * u64::from(self.cfg.geometry.channels);
        let plane_total = (sim_ns.max(1) * u64::from(self.cfg.geometry.planes())) as f64;
        let ch_busy: u64 = ch.iter().sum();
        let idle_ns = channel_total.saturating_sub(ch_busy);
        let [lat_all, lat_read, lat_write, lat_trim] = lat;
        let pages_erased = c.erases.iter().sum::<u64>() * u64::from(self.cfg.geometry.pages_per_block);
        Report {
            drive: DriveSummary {
                name: self.cfg.name.clone(),
                ftl: self.ftl.name().to_string(),
                logical_bytes: self.d.logical_bytes,
                physical_bytes: self.cfg.geometry.raw_bytes(),
                planes: self.cfg.geometry.planes(),
                gc_threshold_blocks: self.d.gc_threshold_blocks,
            },
            host: h.clone(),
            performance: Performance {
                simulated_time_ns: sim_ns,
                iops: r6(h.requests as f64 / secs),
                throughput_mb_per_s: r6((h.bytes_read + h.bytes_written) as f64 / 1e6 / secs),
                read_mb_per_s: r6(h.bytes_read as f64 / 1e6 / secs),
                write_mb_per_s: r6(h.bytes_written as f64 / 1e6 / secs),
            },
            response_time: ResponseTimes {
                all: lat_all.stats(),
                read: lat_read.stats(),
                write: lat_write.stats(),
                trim: lat_trim.stats(),
            },
            flash: FlashSummary {
                reads: ByTag::from(c.reads),
                programs: ByTag::from(c.programs),
                copybacks: ByTag::from(c.copybacks),
                erases: ByTag::from(c.erases),
                wasted_pages: self.flash.wasted_pages() - wasted0,
                wasted_pages_share: r6((self.flash.wasted_pages() - wasted0) as f64 / f64::from(self.d.physical_pages)),
                multi_plane_commands: self.sched.multi_plane_commands() - mp0,
                register_read_hits: self.sched.register_hits() - rh0,
            },
            write_amplification: Waf {
                total: r6(c.pages_programmed() as f64 / hp),
                host: r6(tag_programs(0)),
                gc: r6(tag_programs(1)),
                mapping: r6(tag_programs(2)),
            },
            gc: GcSummary {
                collections: gc.collections(),
                foreground_collections: gc.foreground_collections,
                background_collections: gc.background_collections,
                pages_moved: gc.pages_moved,
                pages_moved_per_collection: r6(gc.pages_moved as f64 / gc.collections().max(1) as f64),
                victim_valid_share: r6(gc.pages_moved as f64
                    / (gc.collections().max(1) * u64::from(self.cfg.geometry.pages_per_block)) as f64),
                fallbacks: gc.fallbacks,
                block_utilization: r6(
                    h.pages_written as f64 / pages_erased.max(1) as f64 * f64::from(u8::from(pages_erased > 0))
                ),
                valid_page_move_rate: r6(gc.pages_moved as f64 / pages_erased.max(1) as f64),
            },
            wear: Wear {
                erase_count_min: ec.iter().copied().min().unwrap_or(0),
                erase_count_mean: r6(em),
                erase_count_max: ec.iter().copied().max().unwrap_or(0),
                erase_count_std: r6(es),
            },
            planes: Planes { programs_mean: r6(pm), sdwpp: r6(ps), programs_per_plane: per_plane },
            channels: Channels {
                host_busy_ns: ch[0],
                gc_busy_ns: ch[1],
                mapping_busy_ns: ch[2],
                idle_ns,
                host_share: r6(ch[0] as f64 / channel_total as f64),
                gc_share: r6(ch[1] as f64 / channel_total as f64),
                mapping_share: r6(ch[2] as f64 / channel_total as f64),
                idle_share: r6(idle_ns as f64 / channel_total as f64),
                plane_host_share: r6(pl[0] as f64 / plane_total),
                plane_gc_share: r6(pl[1] as f64 / plane_total),
                plane_mapping_share: r6(pl[2] as f64 / plane_total),
            },
            idle: Idle { periods: idle_len.stats().count, total_ns: idle_total, length: idle_len.stats() },
            mapping_sram_bytes: self.ftl.mapping_sram_bytes(),
            ftl_metrics: self.ftl.extra_metrics(),
            write_buffer: self.wbuf.as_ref().map(|w| {
                let ratio = |hits: u64, all: u64| r6(hits as f64 / all.max(1) as f64);
                WriteBufferReport {
                    policy: self.cfg.host.write_buffer_policy,
                    capacity_pages: w.capacity_pages(),
                    pages_buffered_end: w.len(),
                    hit_ratio: ratio(self.wb.write_hits + self.wb.read_hits, h.pages_written + h.pages_read),
                    write_hit_ratio: ratio(self.wb.write_hits, h.pages_written),
                    read_hit_ratio: ratio(self.wb.read_hits, h.pages_read),
                    ..self.wb.clone()
                }
            }),
            precondition: self.precondition.clone(),
        }
    }
}
