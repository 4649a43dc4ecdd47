//! Tenants: several request sources replayed at once, each behind its own submission queue
//! and in its own namespace, sharing the drive (issue 39, docs/tenants.md).
//!
//! Each tenant has a submission queue (SQ) of its own depth and arrival model: closed loop
//! (its workload's `qd` requests outstanding) or open loop (its arrival times, at most
//! `host.queue_depth` outstanding). The device holds at most `host.queue_depth` requests of
//! all tenants together; when several SQs have a request ready as a slot frees, the
//! [`Arbiter`] picks one, as the NVMe controller's command arbitration does (round robin, or
//! weighted round robin with an urgent class; NVMe Base Specification 2.1 Sec. 3.4.4).
//!
//! A tenant's source addresses its namespace from 0; the replay loop places its requests at
//! the namespace's first sector. A run without tenants is one queue over the whole drive
//! whose depth is the device's (the replay every earlier run used).

use super::placement::{PlacementRule, Placer};
use super::report::{performance, Performance, ResponseTimes};
use super::HostCounts;
use crate::arbiter::{Arbiter, Arbitration, PriorityClass};
use crate::error::SimError;
use crate::host::{check_bounds, IoOp, Request};
use crate::metrics::{r6, LatencyByOp};
use crate::scheduler::SimTime;
use serde::Serialize;

/// Most tenants in one run.
pub const MAX_TENANTS: usize = 256;

/// A namespace: the logical sectors `[first_sector, first_sector + sectors)` a tenant
/// addresses from 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Namespace {
    /// First logical sector on the drive.
    pub first_sector: u64,
    /// Length in sectors.
    pub sectors: u64,
}

/// How a submission queue issues its source's requests (a run's one source, or a tenant's).
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

/// One tenant of a run, as the replay loop needs it (its source is passed beside it).
#[derive(Debug, Clone, PartialEq)]
pub struct Tenant {
    /// Name (fio's job name), unique in the run.
    pub name: String,
    /// Closed loop with its queue depth, or open loop at its arrival times.
    pub replay: Replay,
    /// Its submission queue's priority class (weighted round robin).
    pub class: PriorityClass,
    /// Where its addresses lie on the drive.
    pub namespace: Namespace,
    /// Stop issuing its requests this long after the run's start (a closed-loop workload's
    /// `duration`).
    pub stop_after_ns: Option<u64>,
    /// How its writes pick their FDP placement handle (fio's `plids` and `plid_select`;
    /// docs/fdp.md).
    pub placement: PlacementRule,
}

/// How the controller picks among the tenants' queues.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueArbitration {
    /// Round robin or weighted round robin.
    pub mechanism: Arbitration,
    /// Commands a queue launches per turn at most (the Arbitration Burst).
    pub burst: u32,
}

/// One submission queue in the replay loop: its source's next request, when that request
/// arrives, what the tenant has outstanding and, with tenants, what it measured.
pub(super) struct Submission {
    /// The tenant's name (a run without tenants: none).
    name: Option<String>,
    closed: bool,
    /// Open loop: the multiplier of inter-arrival times.
    scale: f64,
    /// Its requests issue until this time (a tenant's `duration`).
    stop_at: Option<SimTime>,
    /// The SQ's depth: the tenant's requests outstanding at most.
    depth: usize,
    outstanding: usize,
    namespace: Namespace,
    /// How its writes pick their FDP placement handle.
    placer: Placer,
    /// The request read from the source and not yet issued.
    pending: Option<Request>,
    /// When the pending request arrives, once known (closed loop: a free slot plus its think
    /// time, fixed once so a completion handled meanwhile does not restart it).
    pending_at: Option<SimTime>,
    /// A tenant's closed loop submits a request whenever its queue has room, so requests
    /// wait in it for a device slot: those behind the pending one, with their arrivals (a
    /// free slot plus their think time). A run without tenants reads one request at a time.
    read_ahead: bool,
    behind: std::collections::VecDeque<(Request, SimTime)>,
    source_done: bool,
    /// When its pending request issues, if it has room: scratch of the dispatch step.
    issue_at: Option<SimTime>,
    /// Requests read from this source (1-based number of the last), for messages.
    index: u64,
    /// With tenants: what this queue's requests did.
    measured: Option<Box<TenantMeasured>>,
}

fn what(name: Option<&str>, index: u64) -> String {
    match name {
        Some(name) => format!("tenant {name}: request {index}"),
        None => format!("request {index}"),
    }
}

/// A tenant's counters and response times.
#[derive(Default)]
pub(super) struct TenantMeasured {
    pub host: HostCounts,
    pub latency: LatencyByOp,
}

impl TenantMeasured {
    #[inline]
    pub fn record(&mut self, op: IoOp, lat: u64) {
        self.host.requests += 1;
        self.latency.record(op, lat);
    }
}

impl Submission {
    /// The queue of a tenant (`name`; measured) or of a run's one source, whose open-loop
    /// depth is the device's.
    pub fn new(replay: Replay, device_depth: u32, namespace: Namespace, name: Option<String>) -> Submission {
        let measured = name.is_some();
        let (closed, scale, depth) = match replay {
            Replay::Closed { queue_depth } => (true, 1.0, queue_depth),
            Replay::Open { time_scale } => (false, time_scale, device_depth),
        };
        Submission {
            name,
            stop_at: None,
            closed,
            scale,
            depth: depth as usize,
            outstanding: 0,
            namespace,
            placer: Placer::new(PlacementRule::Default, None),
            pending: None,
            pending_at: None,
            read_ahead: measured && closed,
            behind: std::collections::VecDeque::new(),
            source_done: false,
            issue_at: None,
            index: 0,
            measured: measured.then(Default::default),
        }
    }

    /// Does the queue want another request from its source: none pending, or (reading
    /// ahead) room in it for one more?
    #[inline]
    pub fn wants_request(&self) -> bool {
        if self.read_ahead {
            self.outstanding + usize::from(self.pending.is_some()) + self.behind.len() < self.depth
        } else {
            self.pending.is_none()
        }
    }

    /// Admit `r`, read from the source at `now`: placed in the queue's namespace and checked
    /// against it, then submitted. A zone command names one zone by its first sector (its
    /// length goes to the drive, which refuses one that is neither 0 nor the zone's); Reset
    /// Zone with Select All spans the whole namespace.
    pub fn admit(&mut self, mut r: Request, now: SimTime) -> Result<(), SimError> {
        self.index += 1;
        let ns = self.namespace;
        match r.op {
            IoOp::ZoneResetAll => {
                r.offset_sector = 0;
                r.sectors = u32::try_from(ns.sectors).map_err(|_| {
                    SimError::Request(format!(
                        "{}: a zone reset of all zones over a namespace of {} sectors (2^32 at most are modelled)",
                        self.what(),
                        ns.sectors
                    ))
                })?;
                check_bounds(r.offset_sector, r.sectors, ns.sectors, || self.what())?;
            }
            op if op.is_zone_management() => check_bounds(r.offset_sector, 1, ns.sectors, || self.what())?,
            _ => check_bounds(r.offset_sector, r.sectors, ns.sectors, || self.what())?,
        }
        r.offset_sector += ns.first_sector;
        self.submit(r, now);
        Ok(())
    }

    /// Take `r` from the source at `now`: pending if none is, else behind it; a tenant's
    /// closed-loop request arrives now, plus its think time.
    #[inline]
    pub fn submit(&mut self, r: Request, now: SimTime) {
        let at = self.read_ahead.then(|| now.saturating_add(r.think_ns));
        if self.pending.is_none() {
            self.pending = Some(r);
            self.pending_at = at;
        } else {
            self.behind.push_back((r, at.expect("only a queue reading ahead holds requests behind")));
        }
    }

    /// The pending request issues: the next behind it, if any, is pending now.
    #[inline]
    pub fn take_pending(&mut self) -> (Request, SimTime) {
        let at = self.pending_at.take().expect("the queue that issues has its arrival");
        let req = self.pending.take().expect("the queue that issues has a request");
        if let Some((r, a)) = self.behind.pop_front() {
            self.pending = Some(r);
            self.pending_at = Some(a);
        }
        (req, at)
    }

    /// A tenant's queue stops issuing `stop_after_ns` after `now` (its `duration`), and its
    /// writes pick their placement handles by `placer`.
    pub fn for_tenant(mut self, stop_after_ns: Option<u64>, now: SimTime, placer: Placer) -> Submission {
        self.stop_at = stop_after_ns.map(|d| now.saturating_add(d));
        self.placer = placer;
        self
    }

    /// A request the last run read but did not issue (a power cut came first) is pending,
    /// as the first read.
    pub fn hold_over(&mut self, held: Request) {
        assert!(self.pending.is_none() && self.index == 0, "a held-over request comes first");
        self.pending = Some(held);
        self.index = 1;
    }

    /// Its request waiting to issue, if any.
    #[inline]
    pub fn pending(&self) -> Option<&Request> {
        self.pending.as_ref()
    }

    /// Its request read and not issued, taken to be held over to the next run (a power cut).
    pub fn take_unissued(&mut self) -> Option<Request> {
        self.pending.take()
    }

    /// Requests read from its source so far.
    #[inline]
    pub fn read_count(&self) -> u64 {
        self.index
    }

    /// The trace arrival time of its pending request, if any.
    #[inline]
    pub fn pending_arrival_ns(&self) -> Option<u64> {
        self.pending.map(|r| r.arrival_ns)
    }

    /// Should the replay read another request from this queue's source?
    #[inline]
    pub fn reads_more(&self) -> bool {
        self.wants_request() && !self.source_done
    }

    /// The source has no request left.
    pub fn source_ended(&mut self) {
        self.source_done = true;
    }

    /// A closed loop (think times), not arrival times.
    #[inline]
    pub fn closed(&self) -> bool {
        self.closed
    }

    /// When its pending request issues, if it has room (scratch of the dispatch step).
    #[inline]
    pub fn issue_at(&self) -> Option<SimTime> {
        self.issue_at
    }

    /// Note when its pending request issues (`None`: not in this step).
    #[inline]
    pub fn set_issue_at(&mut self, at: Option<SimTime>) {
        self.issue_at = at;
    }

    /// Whether it measures its requests apart (a tenant's queue).
    #[inline]
    pub fn measured(&self) -> bool {
        self.measured.is_some()
    }

    /// A request of this queue was dispatched; `host` the drive's counters now, `before`
    /// them before it (measured queues).
    #[inline]
    pub fn issued(&mut self, host: &HostCounts, before: Option<HostCounts>) {
        self.outstanding += 1;
        if let (Some(m), Some(before)) = (self.measured.as_mut(), before) {
            m.host.add_since(host, &before);
        }
    }

    /// A request of this queue completed, after `latency` (`None`: refused, no response
    /// time).
    #[inline]
    pub fn completed(&mut self, op: IoOp, latency: Option<u64>) {
        self.outstanding -= 1;
        if let (Some(m), Some(lat)) = (self.measured.as_mut(), latency) {
            m.record(op, lat);
        }
    }

    /// When its pending request arrives: closed loop, `now` plus its think time (the slot
    /// was free then); open loop, its arrival relative to the run's first (`first_arrival`),
    /// scaled, from `clock0`. Fixed once known.
    #[inline]
    pub fn arrival(&mut self, now: SimTime, first_arrival: Option<u64>, clock0: SimTime) -> Result<SimTime, SimError> {
        if let Some(at) = self.pending_at {
            return Ok(at);
        }
        let req = self.pending.as_ref().expect("a queue with room has a request");
        let at = if self.closed {
            now.saturating_add(req.think_ns)
        } else {
            let first = first_arrival.expect("an open-loop queue with a request sets the first arrival");
            let rel = req.arrival_ns.checked_sub(first).ok_or_else(|| {
                SimError::Request(format!(
                    "{}: arrival {} ns before the first request's {first} ns (sort the trace)",
                    self.what(),
                    req.arrival_ns
                ))
            })?;
            clock0.saturating_add((rel as f64 * self.scale).round() as u64)
        };
        self.pending_at = Some(at);
        Ok(at)
    }

    /// Its pending request, taken if it has arrived by `at` (a power cut's frontier): in a
    /// closed loop it has (the host keeps the queue full); in an open loop if its scaled
    /// arrival is.
    pub fn take_arrived_by(&mut self, at: SimTime, first_arrival: Option<u64>, clock0: SimTime) -> Option<Request> {
        let (closed, scale) = (self.closed, self.scale);
        let arrived = |r: &Request| {
            closed
                || first_arrival.is_some_and(|f| {
                    (r.arrival_ns.saturating_sub(f) as f64 * scale).round() as u64 <= at.saturating_sub(clock0)
                })
        };
        self.pending.take_if(|r| arrived(r))
    }

    /// Does the SQ have room for its pending request?
    #[inline]
    pub fn has_room(&self) -> bool {
        self.pending.is_some() && self.outstanding < self.depth
    }

    /// The placement handle of its request `req` (placed on the drive): its rule's for
    /// writes, 0 otherwise.
    #[inline]
    pub fn placement(&mut self, req: &Request) -> Result<u16, SimError> {
        if !req.op.writes_data() {
            return Ok(0);
        }
        let offset_bytes = (req.offset_sector - self.namespace.first_sector) * 512;
        let (name, index) = (&self.name, self.index);
        self.placer.place(req, offset_bytes, || what(name.as_deref(), index))
    }

    /// The last request read from its source, for messages: `request 12`, with tenants
    /// `tenant db: request 12`.
    pub fn what(&self) -> String {
        what(self.name.as_deref(), self.index)
    }

    /// Has the queue stopped issuing at `now`?
    #[inline]
    pub fn stopped(&self, now: SimTime) -> bool {
        self.stop_at.is_some_and(|s| now >= s)
    }
}

/// The arbiter of a run's queues: one queue of a run without tenants is always its own
/// choice, so only runs with tenants build one.
pub(super) fn arbiter(tenants: &[Tenant], arb: QueueArbitration) -> Option<Arbiter> {
    (!tenants.is_empty()).then(|| Arbiter::new(arb.mechanism, tenants.iter().map(|t| t.class).collect(), arb.burst))
}

/// What one tenant did in a run (`tenants` in results.json; docs/metrics.md). Its counters
/// and rates add up over the tenants to the drive's.
#[derive(Debug, Clone, Serialize)]
pub struct TenantReport {
    /// Name.
    pub name: String,
    /// Priority class of its submission queue.
    pub class: &'static str,
    /// Its namespace on the drive.
    pub namespace: Namespace,
    /// Its host counters (as the drive's `host`).
    pub host: HostCounts,
    /// Its rates over the run's simulated time (all tenants', so they add up).
    pub performance: Performance,
    /// Its response times.
    pub response_time: ResponseTimes,
    /// Its share of the logical pages the host wrote, [0, 1]: its share of the drive's
    /// write amplification when GC costs every page alike.
    pub host_write_share: f64,
}

/// The tenants' reports of a run `sim_ns` long whose host wrote `pages_written` pages.
pub(super) fn tenant_reports(
    tenants: &[Tenant],
    queues: Vec<Submission>,
    sim_ns: u64,
    pages_written: u64,
) -> Vec<TenantReport> {
    tenants
        .iter()
        .zip(queues)
        .map(|(t, q)| {
            let m = q.measured.expect("tenants measure their queues");
            let [all, read, write, trim] = &m.latency.0;
            TenantReport {
                name: t.name.clone(),
                class: t.class.name(),
                namespace: t.namespace,
                performance: performance(&m.host, sim_ns),
                response_time: ResponseTimes {
                    all: all.stats(),
                    read: read.stats(),
                    write: write.stats(),
                    trim: trim.stats(),
                },
                host_write_share: if pages_written == 0 {
                    0.0
                } else {
                    r6(m.host.pages_written as f64 / pages_written as f64)
                },
                host: m.host,
            }
        })
        .collect()
}
