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

use super::placement::Placer;
use super::power_cut::{CutAt, InFlight};
use super::report::{Baseline, Measured};
use super::tenants::{self, Namespace, QueueArbitration, Replay, Submission, Tenant};
use super::FlashTime;
use super::Simulator;
use super::{HostCounts, Report};
use crate::arbiter::{Arbiter, Arbitration};
use crate::error::{RequestError, SimError};
use crate::ftl::{GcCounts, PrefetchStage, SeriesKind, SeriesValue};
use crate::geometry::Lpn;
use crate::host::{IoOp, Request};
use crate::metrics::{r6, IntervalRow, LatencyByOp, LatencyHistogram, Observer, TenantInterval, WriteBufferReport};
use crate::scheduler::{Scheduler, SimTime, Tag, SIM_TIME_LIMIT_NS, SIM_TIME_LIMIT_TEXT};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

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
    /// The tenants, one per source of [`Simulator::run_tenants`] (each with its own replay
    /// mode); empty: one source replayed by `replay`, without tenant reports.
    pub tenants: Vec<Tenant>,
    /// How the controller picks among the tenants' queues.
    pub arbitration: QueueArbitration,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            replay: Replay::Closed { queue_depth: 32 },
            max_sim_ns: None,
            interval_ns: 100_000_000,
            check_every: 0,
            power_cut: None,
            tenants: Vec::new(),
            arbitration: QueueArbitration { mechanism: Arbitration::RoundRobin, burst: 1 },
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
    /// Each tenant's name, requests and summed response time in the row (runs with tenants).
    tenants: Vec<(std::sync::Arc<str>, u64, u128)>,
}

/// A request in flight, by replay slot.
#[derive(Clone, Copy)]
struct Pending {
    arrival: SimTime,
    /// Its submission queue.
    queue: u16,
    op: IoOp,
    offset_sector: u64,
    sectors: u32,
    /// Its deferred operations not yet placed (GC preemption); it completes at 0.
    deferred: u32,
    /// The drive refused it: it completes, but not as a request (no latency, not counted).
    refused: bool,
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
            let mut ctx = self.dev.ctx(FlashTime::Timed);
            ctx.set_tag(Tag::Gc);
            if !self.ftl.background_step(&mut ctx)? {
                self.dev.ops.clear();
                break;
            }
            let end = self.dev.schedule(t, None).end;
            t = t.max(end);
            steps += 1;
            assert!(steps <= u64::from(self.cfg.derived().physical_pages) * 4, "background work does not converge");
        }
        Ok(t)
    }

    /// Replay requests and report. `source` yields requests lazily (traces are streamed).
    pub fn run(
        &mut self,
        source: &mut dyn Iterator<Item = Result<Request, RequestError>>,
        opts: &RunOptions,
        obs: &mut dyn Observer,
    ) -> Result<Report, SimError> {
        self.run_tenants(&mut [source], opts, obs)
    }

    /// Replay several sources at once, `sources[i]` the requests of `opts.tenants[i]` (one
    /// source and no tenants: [`Simulator::run`]); the report has each tenant's part.
    pub fn run_tenants(
        &mut self,
        sources: &mut [&mut dyn Iterator<Item = Result<Request, RequestError>>],
        opts: &RunOptions,
        obs: &mut dyn Observer,
    ) -> Result<Report, SimError> {
        let t0 = std::time::Instant::now();
        let r = self.replay(sources, opts, obs);
        self.wall.replay_s += t0.elapsed().as_secs_f64();
        r
    }

    fn replay(
        &mut self,
        sources: &mut [&mut dyn Iterator<Item = Result<Request, RequestError>>],
        opts: &RunOptions,
        obs: &mut dyn Observer,
    ) -> Result<Report, SimError> {
        assert_eq!(sources.len(), opts.tenants.len().max(1), "one source per tenant, or one source without tenants");
        self.host = HostCounts::default();
        self.wb = WriteBufferReport::default();
        self.ftl.begin_measurement();
        let base = self.baseline();
        if let Some(b) = self.dev.behind.as_mut() {
            b.begin(self.dev.sched.now());
        }
        self.check_cut_with_write_behind(opts)?;
        let mut run = ReplayLoop::new(self, opts, &base)?;
        loop {
            if run.read_next(sources)? {
                run.announce_pending(self);
            }
            let next_completion = run.queue.next_completion();
            // Deferred work starting first is placed first: it may complete requests.
            let next_deferred = self.dev.sched.next_deferred_start();
            let first_event = match (next_completion, next_deferred) {
                (Some(c), Some(d)) => Some(c.min(d)),
                (c, d) => c.or(d),
            };
            match run.issue(self, opts, first_event)? {
                Issue::Dispatched => continue,
                Issue::Cut => break,
                Issue::Waiting => {}
            }
            if let Some(d) = next_deferred.filter(|&d| next_completion.is_none_or(|c| d <= c)) {
                self.dev.sched.set_now(d);
                run.queue.place_deferred(&mut self.dev.sched);
                continue;
            }
            if run.time_cut_due(opts, next_completion) {
                break;
            }
            let Some((t, p)) = run.queue.pop() else {
                break;
            };
            run.complete(self, t, &p, obs)?;
        }
        run.finish(self, opts, &base, obs)
    }

    /// A write-behind buffer's pages are on flash in the functional state as soon as
    /// issued: a power cut matches that only with a buffer that flushes them all at the cut.
    fn check_cut_with_write_behind(&self, opts: &RunOptions) -> Result<(), SimError> {
        if opts.power_cut.is_some()
            && self.dev.behind.is_some()
            && (!self.cfg.host.buffer_power_protected || self.cfg.host.buffer_flush_budget_pages.is_some())
        {
            return Err(crate::error::invalid(
                "host.write_buffer_policy",
                "\"write_behind\"",
                "power cuts need host.buffer_power_protected = true and no host.buffer_flush_budget_pages with it",
            )
            .into());
        }
        Ok(())
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
        row.tenants = rows
            .tenants
            .iter_mut()
            .map(|(name, requests, lat_sum)| {
                let t = TenantInterval {
                    name: name.clone(),
                    requests: *requests,
                    iops: r6(*requests as f64 / secs),
                    mean_latency_us: if *requests > 0 { r6(*lat_sum as f64 / *requests as f64 / 1e3) } else { 0.0 },
                };
                (*requests, *lat_sum) = (0, 0);
                t
            })
            .collect();
        obs.interval(row);
        let tenants = std::mem::take(&mut rows.tenants);
        *rows = RowState { row: IntervalRow::default(), lat_sum: 0, bytes: 0, gc: g, programs: p, series, tenants };
    }
}

/// What the dispatch step did.
enum Issue {
    /// A request went to the drive.
    Dispatched,
    /// The power cut is due: the run stops.
    Cut,
    /// No request can go now (none, the queue is full, or an event comes first).
    Waiting,
}

/// The requests in flight: their replay slots and the completion heap, keyed by (time,
/// issue sequence) so equal times complete in issue order.
struct Queue {
    /// Most requests outstanding.
    depth: usize,
    heap: BinaryHeap<Reverse<(SimTime, u64, u32)>>,
    slots: Vec<Pending>,
    free_slots: Vec<u32>,
    seq: u64,
    /// The scheduler's deferred completions, kept to reuse its allocation.
    completed: Vec<(u32, SimTime)>,
}

impl Queue {
    fn new(depth: u32) -> Queue {
        let depth = depth as usize;
        Queue {
            depth,
            heap: BinaryHeap::with_capacity(depth + 1),
            slots: Vec::with_capacity(depth),
            free_slots: Vec::with_capacity(depth),
            seq: 0,
            completed: Vec::new(),
        }
    }

    #[inline]
    fn outstanding(&self) -> usize {
        self.slots.len() - self.free_slots.len()
    }

    #[inline]
    fn next_completion(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| e.0 .0)
    }

    /// A free slot for `p`.
    #[inline]
    fn occupy(&mut self, p: Pending) -> u32 {
        let slot = match self.free_slots.pop() {
            Some(s) => {
                self.slots[s as usize] = p;
                s
            }
            None => {
                self.slots.push(p);
                (self.slots.len() - 1) as u32
            }
        };
        assert!(self.slots.len() <= self.depth, "more slots than the queue depth");
        slot
    }

    /// The request in `slot` was dispatched: it completes at `done` unless `deferred`
    /// operations of it wait for the scheduler.
    #[inline]
    fn dispatched(&mut self, slot: u32, done: SimTime, deferred: u32) {
        let p = &mut self.slots[slot as usize];
        (p.end, p.deferred) = (done, deferred);
        if deferred == 0 {
            self.push(done, slot);
        }
    }

    #[inline]
    fn push(&mut self, end: SimTime, slot: u32) {
        self.heap.push(Reverse((end, self.seq, slot)));
        self.seq += 1;
    }

    /// Requests whose deferred operations the scheduler placed: those now complete go on
    /// the completion heap.
    fn place_deferred(&mut self, sched: &mut Scheduler) {
        sched.take_completions(&mut self.completed);
        for i in 0..self.completed.len() {
            let (slot, end) = self.completed[i];
            let p = &mut self.slots[slot as usize];
            assert!(p.deferred > 0, "slot {slot}: a completion for a request with nothing deferred");
            p.end = p.end.max(end);
            p.deferred -= 1;
            if p.deferred == 0 {
                let end = p.end;
                self.push(end, slot);
            }
        }
    }

    /// The next completion: its time and request, whose slot is free again.
    #[inline]
    fn pop(&mut self) -> Option<(SimTime, Pending)> {
        let Reverse((t, _, slot)) = self.heap.pop()?;
        self.free_slots.push(slot);
        Some((t, self.slots[slot as usize]))
    }

    /// The requests dispatched and not completed, for a power cut.
    fn in_flight(&self) -> Vec<InFlight> {
        (0..self.slots.len() as u32)
            .filter(|s| !self.free_slots.contains(s))
            .map(|s| {
                let p = &self.slots[s as usize];
                InFlight { op: p.op, offset_sector: p.offset_sector, sectors: p.sectors }
            })
            .collect()
    }
}

/// Response times by operation and the idle periods between them.
#[derive(Default)]
struct Latencies {
    by_op: LatencyByOp,
    idle_len: LatencyHistogram,
    idle_total_ns: u64,
}

impl Latencies {
    #[inline]
    fn record(&mut self, op: IoOp, lat: u64) {
        self.by_op.record(op, lat);
    }

    fn measured(self, sim_ns: u64) -> Measured {
        Measured { sim_ns, latency: self.by_op.0, idle_len: self.idle_len, idle_total_ns: self.idle_total_ns }
    }
}

/// The time series: the row being gathered and where the next one starts.
struct Series {
    /// Row length, ns of simulated time (0 = no time series).
    interval: u64,
    /// The end of the current row, ns after the first request.
    next_row: u64,
    rows_written: u64,
    rows: RowState,
}

impl Series {
    /// Count a completion at `t` (`origin`: the first request's dispatch) in its row,
    /// closing the rows it passes.
    #[inline]
    fn record(
        &mut self,
        sim: &Simulator,
        (t, origin): (SimTime, SimTime),
        lat: u64,
        p: &Pending,
        obs: &mut dyn Observer,
    ) -> Result<(), SimError> {
        let Some(due_after_first) = (t - origin).saturating_sub(self.next_row).checked_div(self.interval) else {
            return Ok(());
        };
        // Rows this completion closes; past the limit, the run stops before writing them.
        let due = due_after_first + u64::from(t - origin >= self.next_row);
        if self.rows_written + due > MAX_INTERVAL_ROWS {
            return Err(too_many_rows(self.interval, t - origin));
        }
        self.rows_written += due;
        while t - origin >= self.next_row {
            self.rows.row.t_end_ns = origin + self.next_row;
            sim.emit_row(&mut self.rows, self.interval, obs);
            self.next_row += self.interval;
        }
        let rows = &mut self.rows;
        rows.row.requests += 1;
        rows.lat_sum += u128::from(lat);
        if let Some(t) = rows.tenants.get_mut(usize::from(p.queue)) {
            t.1 += 1;
            t.2 += u128::from(lat);
        }
        rows.row.max_latency_us = rows.row.max_latency_us.max(lat as f64 / 1e3);
        if p.op == IoOp::Read || p.op.writes_data() {
            rows.bytes += u64::from(p.sectors) * 512;
        }
        Ok(())
    }

    /// Close the last row, partial, at the run's `end`.
    fn finish(&mut self, sim: &Simulator, origin: SimTime, end: SimTime, obs: &mut dyn Observer) {
        if self.interval > 0 && self.rows.row.requests > 0 {
            self.rows.row.t_end_ns = end;
            let partial = (end - (origin + self.next_row - self.interval)).max(1);
            sim.emit_row(&mut self.rows, partial, obs);
        }
    }
}

/// The replay loop's state between steps: the clock, the submission queues with the request
/// each waits to issue, the requests in flight and what the run measures.
struct ReplayLoop {
    background_gc: bool,
    idle_threshold_ns: u64,
    /// The drive's clock when the run began: 0 for a first run, the end of recovery for
    /// the run after a power cut (the host issues again once the drive is back).
    clock0: SimTime,
    now: SimTime,
    /// When the first request was dispatched.
    start: Option<SimTime>,
    last_completion: SimTime,
    /// Open loop: the earliest first arrival of the queues, which all arrivals are relative to
    /// (a trace's devices as tenants keep their timing relative to each other).
    first_arrival: Option<u64>,
    /// The submission queues: one per tenant, or the run's one source.
    sqs: Vec<Submission>,
    /// Picks among the queues (runs with tenants).
    arbiter: Option<Arbiter>,
    /// The number of requests read from all sources (the last one's, 1-based), for cuts
    /// and invariant checks.
    index: u64,
    /// The power cut once due: its time and the request it tears, if any.
    cut: Option<(SimTime, Option<Request>)>,
    queue: Queue,
    latency: Latencies,
    series: Series,
}

impl ReplayLoop {
    fn new(sim: &mut Simulator, opts: &RunOptions, base: &Baseline) -> Result<ReplayLoop, SimError> {
        let logical_sectors =
            u64::from(sim.cfg.derived().logical_pages) * u64::from(sim.cfg.geometry.sectors_per_page());
        let (device_depth, sqs) = submission_queues(sim, opts, logical_sectors)?;
        let clock0 = sim.dev.sched.now();
        // A request the last run read but did not issue (it was cut first) comes first.
        let mut sqs = sqs;
        if let Some(held) = sim.held.take() {
            sqs[0].hold_over(held);
        }
        let rows = RowState {
            row: IntervalRow::default(),
            lat_sum: 0,
            bytes: 0,
            gc: base.gc.clone(),
            programs: sim.dev.counts.pages_programmed(),
            series: sim.ftl.series(),
            tenants: opts.tenants.iter().map(|t| (std::sync::Arc::from(t.name.as_str()), 0, 0)).collect(),
        };
        Ok(ReplayLoop {
            background_gc: sim.cfg.ftl.background_gc,
            idle_threshold_ns: sim.cfg.ftl.idle_threshold_ns,
            clock0,
            now: clock0,
            start: None,
            last_completion: 0,
            first_arrival: None,
            index: sqs[0].read_count(),
            sqs,
            arbiter: tenants::arbiter(&opts.tenants, opts.arbitration),
            cut: None,
            queue: Queue::new(device_depth),
            latency: Latencies::default(),
            series: Series { interval: opts.interval_ns, next_row: opts.interval_ns, rows_written: 0, rows },
        })
    }

    /// Source step: read the next request of every queue that has none waiting, checking
    /// its bounds in the queue's namespace and placing it there. Returns whether it read any.
    #[inline]
    fn read_next(
        &mut self,
        sources: &mut [&mut dyn Iterator<Item = Result<Request, RequestError>>],
    ) -> Result<bool, SimError> {
        let before = self.index;
        for (q, source) in sources.iter_mut().enumerate() {
            while self.sqs[q].reads_more() {
                match source.next() {
                    None => self.sqs[q].source_ended(),
                    Some(r) => {
                        self.index += 1;
                        self.sqs[q].admit(r?, self.now)?;
                    }
                }
            }
        }
        if self.first_arrival.is_none() {
            self.first_arrival = self.sqs.iter().filter(|s| !s.closed()).filter_map(|s| s.pending_arrival_ns()).min();
        }
        Ok(self.index != before)
    }

    /// Ask the FTL to fetch the mapping entry of each queue's request waiting to issue: in
    /// a closed loop the next request is read a completion before it issues, and its entry's
    /// cache miss was most of the host write's time (docs/performance.md). A hint only.
    #[inline]
    fn announce_pending(&self, sim: &Simulator) {
        let spp = u64::from(sim.cfg.geometry.sectors_per_page());
        for r in self.sqs.iter().filter_map(Submission::pending) {
            if let Ok(lpn) = Lpn::try_from(r.offset_sector / spp) {
                sim.ftl.prefetch_write(&sim.dev.flash, lpn, PrefetchStage::Map);
            }
        }
    }

    /// The last request read from queue `q`, for messages: `request 12`, with tenants
    /// `tenant db: request 12`.
    fn what(&self, q: usize) -> String {
        self.sqs[q].what()
    }

    /// Dispatch step: issue the next request if the device queue has room and it is issued
    /// before `first_event` (the arbiter picks among the queues whose requests issue first);
    /// a power cut due at it stops the run instead.
    fn issue(
        &mut self,
        sim: &mut Simulator,
        opts: &RunOptions,
        first_event: Option<SimTime>,
    ) -> Result<Issue, SimError> {
        let stop_issuing = opts.max_sim_ns.is_some_and(|m| self.now >= self.clock0 + m);
        if stop_issuing || self.queue.outstanding() >= self.queue.depth {
            return Ok(Issue::Waiting);
        }
        let Some(t) = self.first_issue()? else {
            return Ok(Issue::Waiting);
        };
        if first_event.is_some_and(|e| t >= e) {
            return Ok(Issue::Waiting);
        }
        let q = match self.arbiter.as_mut() {
            None => 0,
            Some(a) => {
                let sqs = &self.sqs;
                a.next(|i| sqs[i].issue_at() == Some(t)).expect("a queue issues first")
            }
        };
        let (req, arrival) = self.sqs[q].take_pending();
        if let Some(at) = self.request_cut(opts, t) {
            self.cut = Some((at, Some(req)));
            return Ok(Issue::Cut);
        }
        self.idle_before(sim, t)?;
        self.start.get_or_insert(t);
        let t = t.max(sim.dev.sched.now());
        self.now = t;
        let p = Pending {
            arrival,
            queue: q as u16,
            op: req.op,
            offset_sector: req.offset_sector,
            sectors: req.sectors,
            deferred: 0,
            refused: false,
            end: t,
        };
        let slot = self.queue.occupy(p);
        let before = self.sqs[q].measured().then(|| sim.host.clone());
        sim.dev.placement = self.sqs[q].placement(&req)?;
        let dispatched = sim.dispatch(&req, t, slot);
        sim.dev.placement = 0;
        // A command the drive cannot take (a zoned command on a drive without zones, a zone
        // rule under `on_refused = "stop"`) names its request.
        let dispatched = dispatched.map_err(|e| match e {
            SimError::Request(m) => SimError::Request(format!("{} ({}): {m}", self.what(q), req.op.name())),
            e => e,
        })?;
        let (done, deferred) = (dispatched.done, dispatched.deferred);
        self.queue.slots[slot as usize].refused = dispatched.refused;
        self.sqs[q].issued(&sim.host, before);
        self.queue.dispatched(slot, done, deferred);
        self.queue.place_deferred(&mut sim.dev.sched);
        if opts.check_every > 0 && self.index.is_multiple_of(opts.check_every) {
            sim.check_invariants();
        }
        Ok(Issue::Dispatched)
    }

    /// When the first of the queues with a request and room issues it (its arrival, or now
    /// if that has passed); each such queue's issue time is left in its `issue_at`.
    #[inline]
    fn first_issue(&mut self) -> Result<Option<SimTime>, SimError> {
        let mut first: Option<SimTime> = None;
        for q in 0..self.sqs.len() {
            if !self.sqs[q].has_room() || self.sqs[q].stopped(self.now) {
                self.sqs[q].set_issue_at(None);
                continue;
            }
            let arrival = self.arrival(q)?;
            if arrival > SIM_TIME_LIMIT_NS {
                return Err(beyond_time_limit(&self.what(q), arrival, self.sqs[q].closed()));
            }
            let t = arrival.max(self.now);
            self.sqs[q].set_issue_at(Some(t));
            first = Some(first.map_or(t, |f| f.min(t)));
        }
        Ok(first)
    }

    /// When queue `q`'s pending request arrives: closed loop, a free slot plus its think
    /// time; open loop, its arrival relative to the first request's, scaled.
    #[inline]
    fn arrival(&mut self, q: usize) -> Result<SimTime, SimError> {
        self.sqs[q].arrival(self.now, self.first_arrival, self.clock0)
    }

    /// Power-cut step at a request: the cut time if the request issued at `t` is cut.
    #[inline]
    fn request_cut(&self, opts: &RunOptions, t: SimTime) -> Option<SimTime> {
        match opts.power_cut {
            Some(CutAt::Request(n)) if self.index >= n => Some(t),
            Some(CutAt::TimeNs(x)) if t >= self.start.unwrap_or(t) + x => Some(self.start.unwrap_or(t) + x),
            _ => None,
        }
    }

    /// Idle-GC step: a gap before a request issued at `t` with nothing outstanding is an
    /// idle period; background GC runs in it once the idle threshold has passed.
    #[inline]
    fn idle_before(&mut self, sim: &mut Simulator, t: SimTime) -> Result<(), SimError> {
        if self.queue.outstanding() == 0 && self.start.is_some() && t > self.last_completion {
            let gap = t - self.last_completion;
            self.latency.idle_len.record(gap);
            self.latency.idle_total_ns += gap;
            if self.background_gc && gap > self.idle_threshold_ns {
                sim.background(self.last_completion + self.idle_threshold_ns, t)?;
            }
        }
        Ok(())
    }

    /// Power-cut step at a time: due once the next completion is past it. The request the
    /// host issues next is the frontier the cut tears, if it has arrived (closed loop: the
    /// host keeps the queue full); one arriving later waits for the run after recovery.
    /// Runs with tenants refuse cuts, so the one queue is the host's.
    fn time_cut_due(&mut self, opts: &RunOptions, next_completion: Option<SimTime>) -> bool {
        let (Some(CutAt::TimeNs(x)), Some(origin), Some(c)) = (opts.power_cut, self.start, next_completion) else {
            return false;
        };
        if c <= origin + x {
            return false;
        }
        let at = origin + x;
        self.cut = Some((at, self.sqs[0].take_arrived_by(at, self.first_arrival, self.clock0)));
        true
    }

    /// Completion step: the request `p` completes at `t`.
    #[inline]
    fn complete(
        &mut self,
        sim: &mut Simulator,
        t: SimTime,
        p: &Pending,
        obs: &mut dyn Observer,
    ) -> Result<(), SimError> {
        self.now = self.now.max(t);
        // A refused command was counted apart when dispatched (`host.refused`): no response
        // time, no request.
        let latency = (!p.refused).then(|| t - p.arrival);
        self.sqs[usize::from(p.queue)].completed(p.op, latency);
        self.last_completion = self.last_completion.max(t);
        if let Some(lat) = latency {
            self.latency.record(p.op, lat);
            sim.host.requests += 1;
            self.series.record(sim, (t, self.start.unwrap_or(0)), lat, p, obs)?;
        }
        let answered = sim.host.requests + sim.host.refused;
        if answered.is_multiple_of(65_536) {
            obs.progress(answered);
            if obs.interrupted() {
                return Err(SimError::Interrupted);
            }
        }
        Ok(())
    }

    /// The report, after the last row and the deferred GC still waiting; at a power cut,
    /// the drive recovers and the report says what the cut cost.
    fn finish(
        mut self,
        sim: &mut Simulator,
        opts: &RunOptions,
        base: &Baseline,
        obs: &mut dyn Observer,
    ) -> Result<Report, SimError> {
        obs.progress(sim.host.requests + sim.host.refused);
        let origin = self.start.unwrap_or(0);
        let end = match self.cut {
            Some((at, _)) => at.max(origin),
            None => self.last_completion.max(origin),
        };
        self.series.finish(sim, origin, end, obs);
        // Deferred work still waiting is placed now, so busy time covers all of it; at a cut,
        // what had not started never runs.
        let dropped = match self.cut {
            Some((at, _)) => sim.dev.sched.cut_power(at),
            None => {
                sim.dev.sched.drain_all();
                0
            }
        };
        let mut report = sim.report(self.latency.measured(end - origin), base);
        if let Some((at, next)) = self.cut {
            // Dispatched and not completed: they fail. A request read from the source that
            // had not arrived goes to the next run.
            sim.held = self.sqs[0].take_unissued();
            let in_flight = self.queue.in_flight();
            let mut cut = sim.power_cut(at, at - origin.min(at), next, in_flight)?;
            cut.queued_operations_dropped += dropped;
            report.power_cut = Some(cut);
        }
        if !opts.tenants.is_empty() {
            report.tenants =
                Some(tenants::tenant_reports(&opts.tenants, self.sqs, end - origin, sim.host.pages_written));
        }
        Ok(report)
    }
}

/// The device queue's depth and the submission queues of a run: its tenants' (the device
/// holds `host.queue_depth` of them), or its one source's, whose depth is the device's.
fn submission_queues(
    sim: &Simulator,
    opts: &RunOptions,
    logical_sectors: u64,
) -> Result<(u32, Vec<Submission>), SimError> {
    let whole = Namespace { first_sector: 0, sectors: logical_sectors };
    let host_depth = sim.cfg.host.queue_depth;
    if opts.tenants.is_empty() {
        check_replay(&opts.replay, "")?;
        let depth = match opts.replay {
            Replay::Open { .. } => host_depth,
            Replay::Closed { queue_depth } => queue_depth,
        };
        return Ok((depth, vec![Submission::new(opts.replay, depth, whole, None)]));
    }
    if opts.power_cut.is_some() || sim.held.is_some() {
        // A request held over from a cut run belongs to that run's one source.
        return Err(SimError::Input(
            "power cuts with tenants are not supported yet: cut a run of one source, and replay the rest of it from \
             one source"
                .into(),
        ));
    }
    let mut sqs = Vec::with_capacity(opts.tenants.len());
    for t in &opts.tenants {
        check_replay(&t.replay, &format!("tenant {}: ", t.name))?;
        let ns = t.namespace;
        assert!(
            ns.sectors > 0 && ns.first_sector + ns.sectors <= logical_sectors,
            "tenant {}: namespace checked when planned",
            t.name
        );
        let placer = Placer::new(t.placement.clone(), sim.cfg.fdp.as_ref().map(|f| f.handles));
        let sq = Submission::new(t.replay, host_depth, ns, Some(t.name.clone()));
        sqs.push(sq.for_tenant(t.stop_after_ns, sim.dev.sched.now(), placer));
    }
    Ok((host_depth, sqs))
}

/// A replay mode's settings, `prefix` naming the tenant.
fn check_replay(replay: &Replay, prefix: &str) -> Result<(), SimError> {
    match *replay {
        Replay::Open { time_scale } if !(time_scale > 0.0 && time_scale.is_finite()) => {
            Err(crate::error::invalid(&format!("{prefix}time_scale"), time_scale, "must be > 0").into())
        }
        Replay::Closed { queue_depth: 0 } => {
            Err(crate::error::invalid(&format!("{prefix}queue_depth"), 0, "must be >= 1").into())
        }
        _ => Ok(()),
    }
}

/// The error of a request issued past [`SIM_TIME_LIMIT_NS`] (`what`: the request): what
/// set its time.
fn beyond_time_limit(what: &str, at: SimTime, closed: bool) -> SimError {
    let cause = if closed {
        "its think time (arrival=think:...) is too long"
    } else {
        "the arrival times are too far apart (the workload's rate, speed or arrival, or the trace's timestamps \
         and --speed)"
    };
    SimError::Request(format!(
        "{what}: issued at {:.3e} s of simulated time, past the limit of {SIM_TIME_LIMIT_TEXT}: {cause}",
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
