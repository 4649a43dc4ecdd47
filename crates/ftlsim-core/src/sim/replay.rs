//! The replay loop: requests issued open loop (at their arrival times) or closed loop (a
//! fixed number outstanding), completions as events, idle periods with background GC, and
//! the time series.
//!
//! Events are request completions in a binary heap keyed by (time, sequence), so equal
//! times resolve in issue order and runs are bit-for-bit deterministic. A request is
//! dispatched when it has arrived and the device queue has room.
//!
//! When the device goes idle and the next arrival is further away than the idle threshold,
//! background GC runs one preemptible step (one page copy or one erase) at a time until the
//! next request arrives; a step under way when it arrives delays it, as a real controller
//! would finish the page copy it started.

use super::power_cut::{CutAt, InFlight};
use super::report::Measured;
use super::Simulator;
use super::{HostCounts, Report};
use crate::error::SimError;
use crate::ftl::{GcCounts, SeriesKind, SeriesValue};
use crate::host::{check_bounds, IoOp, Request};
use crate::metrics::{r6, IntervalRow, LatencyHistogram, Observer, WriteBufferReport};
use crate::scheduler::{SimTime, Tag, SIM_TIME_LIMIT_NS, SIM_TIME_LIMIT_TEXT};
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

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

/// Most time-series rows a run writes (about 2 GB of CSV): a run that would write more
/// stops with an error naming `--interval` rather than fill the disk or memory with rows
/// (an open-loop workload of very long gaps at the default 100 ms interval).
pub const MAX_INTERVAL_ROWS: u64 = 10_000_000;

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
    /// Cut the power here: the run stops issuing, the drive recovers, and the report says
    /// what the cut cost ([`Report::power_cut`]); the caller may run the rest of the source
    /// after it.
    pub power_cut: Option<CutAt>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            replay: Replay::Closed { queue_depth: 32 },
            max_sim_ns: None,
            interval_ns: 100_000_000,
            check_every: 0,
            power_cut: None,
        }
    }
}

/// The time-series row being gathered, and the counters at its start.
struct RowState {
    row: IntervalRow,
    lat_sum: u128,
    bytes: u64,
    gc: GcCounts,
    programs: u64,
    /// The FTL's series values at the row's start (counts are differenced).
    series: Vec<SeriesValue>,
}

/// A request in flight, by replay slot.
struct Pending {
    arrival: SimTime,
    op: IoOp,
    offset_sector: u64,
    sectors: u32,
    /// Its deferred operations not yet placed (GC preemption); it completes at 0.
    deferred: u32,
    /// Its completion as far as placed.
    end: SimTime,
}

impl Simulator {
    /// Run background steps from `from` while they start before `until`; returns when the
    /// last step ends.
    fn background(&mut self, from: SimTime, until: SimTime) -> Result<SimTime, SimError> {
        // The clock may be past `from` already: deferred GC placed after the last completion.
        let mut t = from.max(self.dev.sched.now());
        let mut steps = 0u64;
        while t < until {
            self.dev.sched.set_now(t);
            let mut ctx = self.dev.ctx(true);
            ctx.set_tag(Tag::Gc);
            if !self.ftl.background_step(&mut ctx)? {
                self.dev.sched.discard(&self.dev.ops);
                self.dev.ops.clear();
                break;
            }
            let end = self.dev.sched.schedule(&self.dev.ops, t, None).end;
            self.dev.ops.clear();
            t = t.max(end);
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
        let t0 = std::time::Instant::now();
        let r = self.replay(source, opts, obs);
        self.wall.replay_s += t0.elapsed().as_secs_f64();
        r
    }

    fn replay(
        &mut self,
        source: &mut dyn Iterator<Item = Result<Request, SimError>>,
        opts: &RunOptions,
        obs: &mut dyn Observer,
    ) -> Result<Report, SimError> {
        self.host = HostCounts::default();
        self.wb = WriteBufferReport::default();
        self.ftl.begin_measurement();
        let base = self.baseline();
        if let Some(b) = self.dev.behind.as_mut() {
            b.begin(self.dev.sched.now());
        }
        if opts.power_cut.is_some()
            && self.dev.behind.is_some()
            && (!self.cfg.host.buffer_power_protected || self.cfg.host.buffer_flush_budget_pages.is_some())
        {
            // Pages acknowledged from the buffer are on flash in the functional state as soon
            // as issued: only a buffer that flushes them all at the cut matches that.
            return Err(crate::error::invalid(
                "host.write_buffer_policy",
                "\"write_behind\"",
                "power cuts need host.buffer_power_protected = true and no host.buffer_flush_budget_pages with it",
            )
            .into());
        }

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
        // Time runs on from where the drive's clock is: 0 for a first run, the end of
        // recovery for the run after a power cut (the host issues again once the drive is back).
        let clock0: SimTime = self.dev.sched.now();
        let mut now: SimTime = clock0;
        let mut start: Option<SimTime> = None;
        let mut last_completion: SimTime = 0;
        let mut first_arrival: Option<u64> = None;
        // A request the last run read but did not issue (it was cut first) comes first.
        let mut pending: Option<Request> = self.held.take();
        // Closed loop: when the pending request is issued (a free slot plus its think time).
        let mut pending_at: Option<SimTime> = None;
        let mut source_done = false;
        let mut index = u64::from(pending.is_some());
        let mut completed: Vec<(u32, SimTime)> = Vec::new();
        let mut cut: Option<(SimTime, Option<Request>)> = None;

        // Time series accumulators.
        let interval = opts.interval_ns;
        let mut next_row = interval;
        let mut rows_written = 0u64;
        let mut rows = RowState {
            row: IntervalRow::default(),
            lat_sum: 0,
            bytes: 0,
            gc: base.gc.clone(),
            programs: self.dev.counts.pages_programmed(),
            series: self.ftl.series(),
        };

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
            let stop_issuing = opts.max_sim_ns.is_some_and(|m| now >= clock0 + m);
            let outstanding = slots.len() - free_slots.len();
            let next_completion = heap.peek().map(|e| e.0 .0);
            // Deferred work starting first is placed first: it may complete requests.
            let next_deferred = self.dev.sched.next_deferred_start();
            let first_event = match (next_completion, next_deferred) {
                (Some(c), Some(d)) => Some(c.min(d)),
                (c, d) => c.or(d),
            };
            if let (Some(req), false) = (pending.as_ref(), stop_issuing) {
                if outstanding < qd as usize {
                    let arrival = if closed {
                        // The think time runs from when the slot was free (fixed once, so a
                        // completion handled meanwhile does not restart it).
                        *pending_at.get_or_insert(now.saturating_add(req.think_ns))
                    } else {
                        let first = *first_arrival.get_or_insert(req.arrival_ns);
                        let rel = req.arrival_ns.checked_sub(first).ok_or_else(|| {
                            SimError::Request(format!(
                                "request {index}: arrival {} ns before the first request's {first} ns (sort the trace)",
                                req.arrival_ns
                            ))
                        })?;
                        clock0.saturating_add((rel as f64 * scale).round() as u64)
                    };
                    if arrival > SIM_TIME_LIMIT_NS {
                        return Err(beyond_time_limit(index, arrival, closed));
                    }
                    let t = arrival.max(now);
                    if first_event.is_none_or(|e| t < e) {
                        let req = *req;
                        pending = None;
                        pending_at = None;
                        let cut_time = match opts.power_cut {
                            Some(CutAt::Request(n)) if index >= n => Some(t),
                            Some(CutAt::TimeNs(x)) if t >= start.unwrap_or(t) + x => Some(start.unwrap_or(t) + x),
                            _ => None,
                        };
                        if let Some(at) = cut_time {
                            cut = Some((at, Some(req)));
                            break;
                        }
                        if outstanding == 0 && start.is_some() && t > last_completion {
                            let gap = t - last_completion;
                            idle_len.record(gap);
                            idle_total += gap;
                            if bg && gap > idle_threshold {
                                self.background(last_completion + idle_threshold, t)?;
                            }
                        }
                        start.get_or_insert(t);
                        let t = t.max(self.dev.sched.now());
                        now = t;
                        let p = Pending {
                            arrival,
                            op: req.op,
                            offset_sector: req.offset_sector,
                            sectors: req.sectors,
                            deferred: 0,
                            end: t,
                        };
                        let slot = match free_slots.pop() {
                            Some(s) => {
                                slots[s as usize] = p;
                                s
                            }
                            None => {
                                slots.push(p);
                                (slots.len() - 1) as u32
                            }
                        };
                        assert!(slots.len() <= qd as usize, "more slots than the queue depth");
                        let (done, deferred) = self.dispatch(&req, t, slot)?;
                        let p = &mut slots[slot as usize];
                        (p.end, p.deferred) = (done, deferred);
                        if deferred == 0 {
                            heap.push(Reverse((done, seq, slot)));
                            seq += 1;
                        }
                        self.complete_deferred(&mut completed, &mut slots, &mut heap, &mut seq);
                        if opts.check_every > 0 && index.is_multiple_of(opts.check_every) {
                            self.check_invariants();
                        }
                        continue;
                    }
                }
            }
            if let Some(d) = next_deferred.filter(|&d| next_completion.is_none_or(|c| d <= c)) {
                self.dev.sched.set_now(d);
                self.complete_deferred(&mut completed, &mut slots, &mut heap, &mut seq);
                continue;
            }
            if let (Some(CutAt::TimeNs(x)), Some(origin), Some(c)) = (opts.power_cut, start, next_completion) {
                if c > origin + x {
                    // The request the host issues next is the frontier the cut tears, if it
                    // has arrived (closed loop: the host keeps the queue full); one arriving
                    // later waits for the run after recovery.
                    let at = origin + x;
                    let arrived = |r: &Request| {
                        closed
                            || first_arrival.is_some_and(|f| {
                                (r.arrival_ns.saturating_sub(f) as f64 * scale).round() as u64
                                    <= at.saturating_sub(clock0)
                            })
                    };
                    cut = Some((at, pending.take_if(|r| arrived(r))));
                    break;
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
            if let Some(due_after_first) = (t - start.unwrap_or(0)).saturating_sub(next_row).checked_div(interval) {
                let origin = start.unwrap_or(0);
                // Rows this completion closes; past the limit, the run stops before writing them.
                let due = due_after_first + u64::from(t - origin >= next_row);
                if rows_written + due > MAX_INTERVAL_ROWS {
                    return Err(too_many_rows(interval, t - origin));
                }
                rows_written += due;
                while t - origin >= next_row {
                    rows.row.t_end_ns = origin + next_row;
                    self.emit_row(&mut rows, interval, obs);
                    next_row += interval;
                }
                rows.row.requests += 1;
                rows.lat_sum += u128::from(lat);
                rows.row.max_latency_us = rows.row.max_latency_us.max(lat as f64 / 1e3);
                if p.op != IoOp::Trim {
                    rows.bytes += u64::from(p.sectors) * 512;
                }
            }
            if self.host.requests.is_multiple_of(65_536) {
                obs.progress(self.host.requests);
                if obs.interrupted() {
                    return Err(SimError::Interrupted);
                }
            }
        }
        obs.progress(self.host.requests);
        let origin = start.unwrap_or(0);
        let end = match cut {
            Some((at, _)) => at.max(origin),
            None => last_completion.max(origin),
        };
        if interval > 0 && rows.row.requests > 0 {
            rows.row.t_end_ns = end;
            let partial = (end - (origin + next_row - interval)).max(1);
            self.emit_row(&mut rows, partial, obs);
        }
        // Deferred GC still waiting is placed now, so busy time covers all of it.
        self.dev.sched.drain_all();
        let measured = Measured {
            sim_ns: end - origin,
            latency: [lat_all, lat_read, lat_write, lat_trim],
            idle_len,
            idle_total_ns: idle_total,
        };
        let mut report = self.report(measured, &base);
        if let Some((at, next)) = cut {
            // Dispatched and not completed: they fail. A request read from the source that
            // had not arrived goes to the next run.
            self.held = pending.take();
            let in_flight = (0..slots.len() as u32)
                .filter(|s| !free_slots.contains(s))
                .map(|s| {
                    let p = &slots[s as usize];
                    InFlight { op: p.op, offset_sector: p.offset_sector, sectors: p.sectors }
                })
                .collect();
            report.power_cut = Some(self.power_cut(at, at - origin.min(at), next, in_flight)?);
        }
        Ok(report)
    }

    /// Requests whose deferred operations the scheduler placed: those now complete go on
    /// the completion heap.
    fn complete_deferred(
        &mut self,
        buf: &mut Vec<(u32, SimTime)>,
        slots: &mut [Pending],
        heap: &mut BinaryHeap<Reverse<(SimTime, u64, u32)>>,
        seq: &mut u64,
    ) {
        self.dev.sched.take_completions(buf);
        for &(slot, end) in buf.iter() {
            let p = &mut slots[slot as usize];
            assert!(p.deferred > 0, "slot {slot}: a completion for a request with nothing deferred");
            p.end = p.end.max(end);
            p.deferred -= 1;
            if p.deferred == 0 {
                heap.push(Reverse((p.end, *seq, slot)));
                *seq += 1;
            }
        }
    }

    /// Close the time-series row of `len_ns` and start the next.
    fn emit_row(&self, rows: &mut RowState, len_ns: u64, obs: &mut dyn Observer) {
        let row = &mut rows.row;
        let secs = len_ns as f64 / 1e9;
        row.iops = r6(row.requests as f64 / secs);
        row.throughput_mb_per_s = r6(rows.bytes as f64 / 1e6 / secs);
        row.mean_latency_us = if row.requests > 0 { r6(rows.lat_sum as f64 / row.requests as f64 / 1e3) } else { 0.0 };
        row.max_latency_us = r6(row.max_latency_us);
        row.free_blocks = self.ftl.free_blocks();
        let g = self.gc_counts();
        let d = g.since(&rows.gc);
        row.gc_collections = d.collections();
        row.gc_pages_moved = d.pages_moved;
        let p = self.dev.counts.pages_programmed();
        row.flash_programs = p - rows.programs;
        row.write_buffer_utilisation = self.dev.behind.as_ref().map(|b| r6(b.mean_utilisation()));
        let series = self.ftl.series();
        assert_eq!(series.len(), rows.series.len(), "the FTL's series columns changed during a run");
        row.ftl = series
            .iter()
            .zip(&rows.series)
            .map(|(now, before)| {
                assert_eq!(now.name, before.name, "the FTL's series columns changed order");
                let v = match now.kind {
                    SeriesKind::Level => now.value,
                    SeriesKind::Count => now.value - before.value,
                };
                (now.name, v)
            })
            .collect();
        obs.interval(row);
        *rows = RowState { row: IntervalRow::default(), lat_sum: 0, bytes: 0, gc: g, programs: p, series };
    }
}

/// The error of a request issued past [`SIM_TIME_LIMIT_NS`]: what set its time.
fn beyond_time_limit(index: u64, at: SimTime, closed: bool) -> SimError {
    let cause = if closed {
        "its think time (arrival=think:...) is too long"
    } else {
        "the arrival times are too far apart (the workload's rate, speed or arrival, or the trace's timestamps \
         and --speed)"
    };
    SimError::Request(format!(
        "request {index}: issued at {:.3e} s of simulated time, past the limit of {SIM_TIME_LIMIT_TEXT}: {cause}",
        at as f64 / 1e9
    ))
}

/// The error of a time series that would pass [`MAX_INTERVAL_ROWS`] by `at_ns` of the run.
pub fn too_many_rows(interval_ns: u64, at_ns: u64) -> SimError {
    crate::error::WorkloadError::new(
        "interval",
        format!("{interval_ns} ns"),
        format!(
            "the run spans {:.3e} s of simulated time, more than {MAX_INTERVAL_ROWS} time-series rows at this \
             interval: give a longer --interval (Python: interval=), or 0 for no time series",
            at_ns as f64 / 1e9
        ),
    )
    .into()
}
