//! Timing of flash operations on channels, dies and planes, and of the host link.
//!
//! The FTL changes flash state functionally and records the operations it issued; this
//! scheduler then places each operation on the timed resources, in issue order, and returns
//! when it completes. Resources:
//! - one bus per channel, a first-fit timeline (`bus.rs`), so that a command for one plane
//!   can use the bus while another plane is busy with tR or tPROG;
//! - one array per plane. Under `plane_concurrency = "independent"` planes run different
//!   operations at once; under `"multi_plane_only"` a die runs one command at a time (planes
//!   overlap only inside a multi-plane command), except that reads of different planes may
//!   overlap when `independent_plane_reads` is on. First come first served: a plane finishes
//!   its operation (including the read-out of its register) before it starts the next;
//! - the host link, full duplex as on NVMe/PCIe: one first-fit timeline per direction, so a
//!   read's data transfer booked at its (perhaps distant) flash end never holds up a write's
//!   data that is ready earlier.
//!
//! Formulas (docs/timing.md), with C = cmd_addr_ns, X = page transfer, n = planes in a
//! multi-plane command:
//! - read:      bus C, array tR (skipped on a register hit), bus X; plane busy until X ends;
//! - program:   bus C + X, array tPROG;
//! - erase:     bus C, array tBERS;
//! - copy-back: bus 2C (read-for-copy-back and program commands), array tCB (default tR + tPROG);
//! - the controller side of a read: ECC decode (`timing.ecc_decode_ns`) after the transfer,
//!   then the shared DRAM port (`timing.dram_mb_per_s`, one page-time per page); of a
//!   program: the DRAM port before the transfer. The plane does not wait for either; the
//!   read's data (and so a program that copies it) does. A copy-back uses neither;
//! - multi-plane read/program/erase: bus n*C (+ n*X), one array time for all n planes.
//!
//! An operation may wait for an earlier one of its batch (`FlashOp::after`: a program for
//! the read that fetched its data, a data read for the translation read that located it).
//! With `ftl.gc_preemption = "reads"` a request's foreground GC operations, and the
//! programs and erases queued behind them on their plane, are deferred (`deferred.rs`) and
//! placed as simulated time reaches them, so that later reads overtake them between page
//! copies; a request whose own work was deferred completes when that work is placed
//! ([`Scheduler::take_completions`]).
//!
//! In `serial` mode one operation runs at a time in the whole drive and takes the sum of its
//! phases. Every busy interval is tagged host, GC or mapping so that channel and plane time
//! can be split. All arithmetic is integer nanoseconds, so schedules are bit-for-bit
//! deterministic.

mod bus;
mod channel_bus;
mod deferred;
mod die_starts;
mod drain;
mod estimate;
mod phases;
mod place;
#[cfg(test)]
mod tests;

use crate::address_map::AddressMap;
use crate::config::{GcPreemption, GcScope, PlaneConcurrency, Resolved, TransactionOrder};
use crate::geometry::{Geometry, PlaneId, Ppn, NONE};
use bus::Bus;
use channel_bus::ChannelBus;
use deferred::{Deferred, DeferredQueues, Lane};
use die_starts::DieStarts;
use phases::PhaseTable;

pub use ftlsim_requests::time::{SimTime, SIM_TIME_LIMIT_NS, SIM_TIME_LIMIT_TEXT};

/// Who asked for an operation; busy time is accounted per tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Tag {
    /// Host reads and writes.
    Host = 0,
    /// Garbage collection.
    Gc = 1,
    /// Mapping-table reads and writes (translation pages).
    Mapping = 2,
}

/// Number of tags.
pub const TAGS: usize = 3;

/// The kind of a flash operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    /// Page read to the controller.
    Read,
    /// Read of a page's spare area alone: the array read (tR) of a page, then only its spare
    /// bytes on the bus (a column address past the data; 3DFTL's lookups, `[ftl.threedftl]
    /// lookup_transfer = "spare"`).
    ReadSpare,
    /// Page program from the controller.
    Program,
    /// Block erase (`addr` is the block's first page).
    Erase,
    /// Intra-plane copy-back from `addr` to `addr2`.
    Copyback,
    /// Hold host I/O of a scope until the GC operations of this batch end
    /// (`addr` is a page of the triggering plane, `addr2` the scope as `GcScope as u32`).
    Barrier,
}

impl OpKind {
    /// A read of the array (the whole page or its spare area alone).
    #[inline]
    pub fn is_read(self) -> bool {
        matches!(self, OpKind::Read | OpKind::ReadSpare)
    }
}

/// [`FlashOp::after`] of an operation that waits for nothing but its batch's ready time.
pub const NO_DEP: u32 = u32::MAX;

/// One recorded flash operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlashOp {
    /// What it does.
    pub kind: OpKind,
    /// Who asked.
    pub tag: Tag,
    /// Index in its batch of the operation it waits for (data dependency), or [`NO_DEP`].
    pub after: u32,
    /// Page (or first page of the block for erases).
    pub addr: Ppn,
    /// Destination page of a copy-back, or the scope of a barrier.
    pub addr2: u32,
}

/// When a batch of operations finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BatchEnd {
    /// Last completion of any operation placed (deferred ones not included).
    pub end: SimTime,
    /// Last completion of a host-tagged operation placed (`ready` if there was none).
    pub host_end: SimTime,
    /// Host-tagged operations deferred: their request completes when the last of them is
    /// placed ([`Scheduler::take_completions`]).
    pub deferred_host_ops: u32,
}

/// Direction of a host-link transfer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Host to drive (write data).
    ToDrive = 0,
    /// Drive to host (read data).
    ToHost = 1,
}

/// Busy time per tag of each channel bus and each plane, ns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BusyTime {
    /// `channel[c][tag]`.
    pub channel: Vec<[u64; TAGS]>,
    /// `plane[p][tag]`: array busy time (command start to completion).
    pub plane: Vec<[u64; TAGS]>,
}

/// Counters of how host writes met GC (docs/metrics.md, `planes`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GcContention {
    /// Host programs placed on a plane that still had GC work ahead of them.
    pub host_programs_behind_gc: u64,
    /// Of those, the ones placed while some other plane was idle.
    pub host_programs_behind_gc_with_idle_plane: u64,
}

/// Places flash operations on timed resources.
#[derive(Debug, Clone)]
pub struct Scheduler {
    geo: Geometry,
    /// The geometry's address arithmetic without divisions (several per operation otherwise).
    map: AddressMap,
    /// Each kind of operation's phases: placement, the serial mode and estimates read them.
    phases: PhaseTable,
    host_page_xfer: u64,
    /// The DRAM port shared by all channels' DMA.
    dram: Bus,
    /// Whether a die runs one command at a time (`multi_plane_only`).
    concurrency: PlaneConcurrency,
    /// Under `die_exclusive`, reads of different planes may still overlap.
    independent_reads: bool,
    multi_plane: bool,
    serial: bool,
    register_hits: bool,
    /// `ftl.gc_preemption` (none in serial mode): what may go ahead of a request's GC work
    /// waiting in the deferred queues.
    preemption: GcPreemption,
    floor: u32,
    /// Erased blocks per plane that no FTL ever allocates (held back), left out of the count.
    held_back: u32,
    /// Erased blocks per plane as the FTL left them ([`Scheduler::note_erased_blocks`]):
    /// those whose GC erase is still queued are not erased on flash yet.
    erased: Vec<u32>,
    /// `timing.transaction_order` (first come, first served in serial mode).
    order: TransactionOrder,
    /// Reading first: queued work this old goes ahead of a read (0: no bound).
    age_cap: SimTime,
    buses: Vec<ChannelBus>,
    /// Each plane's array unit on its channel's bus (its die's index on the channel where a
    /// die runs one command at a time, else its own).
    bus_unit: Vec<u32>,
    host_link: [Bus; 2],
    /// When each plane's array is free.
    plane_free: Vec<SimTime>,
    /// End of the latest GC operation placed on each plane.
    gc_until: Vec<SimTime>,
    register: Vec<Ppn>,
    serial_free: SimTime,
    now: SimTime,
    busy: BusyTime,
    multi_plane_commands: u64,
    register_hits_count: u64,
    contention: GcContention,
    deferred: DeferredQueues,
    /// End of the last operation placed from each plane's deferred queue (for `after_prev`).
    deferred_last_end: Vec<SimTime>,
    /// Scratch of [`Scheduler::least_loaded`]: the array time of the batch's operations per plane.
    recorded_ns: Vec<u64>,
    /// Scratch: completion of each operation of the batch being scheduled.
    ends: Vec<SimTime>,
    /// Scratch: planes to drain.
    planes_scratch: Vec<PlaneId>,
    /// Scratch: queued entries gathered into one multi-plane command, and their operations.
    group_scratch: Vec<Deferred>,
    ops_scratch: Vec<FlashOp>,
    /// Deferred host operations placed: (request, completion), for the replay loop.
    completions: Vec<(u32, SimTime)>,
    /// When each die's queued work starts, where a die serves its planes' queues as one
    /// ([`Scheduler::die_fifo`]); `None` otherwise.
    die_starts: Option<DieStarts>,
    dies_scratch: Vec<u32>,
    /// Runs of page copies go through [`Scheduler::place_copy_run`]: not in serial mode,
    /// nor where a read and a program occupy different units (independent plane reads).
    copy_runs: bool,
}

/// How far to drain a plane's deferred work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Drain {
    /// Entries that start before this time (they go ahead of an operation ready then).
    Before(SimTime),
    /// Entries that start at or before this time (simulated time reached them).
    UpTo(SimTime),
    /// Everything.
    All,
}

impl Drain {
    fn admits(self, start: SimTime) -> bool {
        match self {
            Drain::Before(t) => start < t,
            Drain::UpTo(t) => start <= t,
            Drain::All => true,
        }
    }
}

/// Completion of an operation deferred to a queue (its real end is not known yet).
const DEFERRED: SimTime = SimTime::MAX;

/// [`Deferred::request`] of work no request waits for (GC, mapping write-backs).
const NO_REQUEST: u32 = u32::MAX;

impl Scheduler {
    /// A scheduler for a checked drive config.
    pub fn new(cfg: &Resolved) -> Scheduler {
        let d = cfg.derived();
        let g = &cfg.geometry;
        let t = &cfg.timing;
        let planes = g.planes() as usize;
        let die_exclusive = t.plane_concurrency == PlaneConcurrency::MultiPlaneOnly;
        // The serial mode runs one operation at a time: nothing overtakes anything.
        let order = if t.serial { TransactionOrder::Fcfs } else { t.transaction_order };
        let preemption = if t.serial { GcPreemption::None } else { cfg.ftl.gc_preemption };
        let preempt_writes = preemption == GcPreemption::Writes;
        // A die's operations take turns on its array only when every kind is die-wide.
        let die_units = die_exclusive && !t.independent_plane_reads;
        let bus_units = if die_units { g.dies() } else { g.planes() } / g.channels;
        Scheduler {
            geo: g.clone(),
            map: AddressMap::new(g),
            phases: PhaseTable::new(t, d),
            host_page_xfer: d.host_page_transfer_ns,
            dram: Bus::default(),
            concurrency: t.plane_concurrency,
            independent_reads: t.independent_plane_reads,
            multi_plane: t.multi_plane,
            serial: t.serial,
            register_hits: t.register_read_hits,
            preemption,
            floor: cfg.ftl.gc_preemption_floor_blocks,
            held_back: d.held_back_blocks_per_plane,
            erased: vec![g.blocks_per_plane; planes],
            order,
            age_cap: t.read_first_age_cap_ns,
            buses: vec![ChannelBus::new(bus_units as usize); g.channels as usize],
            bus_unit: (0..g.planes()).map(|p| (if die_units { g.die_of(p) } else { p }) / g.channels).collect(),
            host_link: [Bus::default(), Bus::default()],
            plane_free: vec![0; planes],
            gc_until: vec![0; planes],
            register: vec![NONE; planes],
            serial_free: 0,
            now: 0,
            busy: BusyTime { channel: vec![[0; TAGS]; g.channels as usize], plane: vec![[0; TAGS]; planes] },
            multi_plane_commands: 0,
            register_hits_count: 0,
            contention: GcContention::default(),
            deferred: DeferredQueues::new(g.planes(), preempt_writes.then(|| (g.blocks(), g.pages_per_block))),
            deferred_last_end: vec![0; planes],
            recorded_ns: vec![0; planes],
            ends: Vec::new(),
            planes_scratch: Vec::new(),
            group_scratch: Vec::new(),
            ops_scratch: Vec::new(),
            completions: Vec::new(),
            die_starts: (order == TransactionOrder::ReadFirst && die_exclusive).then(|| DieStarts::new(g.dies())),
            dies_scratch: Vec::new(),
            copy_runs: !(t.serial || die_exclusive && t.independent_plane_reads),
        }
    }

    /// A die runs one command at a time (`timing.plane_concurrency = "multi_plane_only"`).
    #[inline(always)]
    fn die_exclusive(&self) -> bool {
        self.concurrency == PlaneConcurrency::MultiPlaneOnly
    }

    /// A request's GC work waits in the deferred queues (`ftl.gc_preemption`).
    #[inline(always)]
    fn preempt_gc(&self) -> bool {
        self.preemption != GcPreemption::None
    }

    /// A plane's host lane goes ahead of its GC lane while the plane keeps `floor` erased
    /// blocks (`ftl.gc_preemption = "writes"`).
    #[inline(always)]
    fn preempt_writes(&self) -> bool {
        self.preemption == GcPreemption::Writes
    }

    /// A request's non-read operations wait in the deferred queues, so reads overtake them,
    /// and queued operations form multi-plane commands (`timing.transaction_order =
    /// "read_first"`).
    #[inline(always)]
    fn read_first(&self) -> bool {
        self.order == TransactionOrder::ReadFirst
    }

    /// Advance the clock; no later reservation may start before `now`. Deferred work that
    /// starts at or before `now` is placed first (it is under way by then).
    pub fn set_now(&mut self, now: SimTime) {
        assert!(now >= self.now, "time went backwards: {now} < {}", self.now);
        if self.die_starts.is_some() {
            // Die by die, the earliest first, each up to `now`.
            while let Some(t) = self.refresh_die_starts().filter(|&t| t <= now) {
                if self.preempt_writes() {
                    // See below: work released while the clock advances starts no earlier.
                    self.now = self.now.max(t);
                }
                let die = self.die_starts.as_ref().map_or(0, DieStarts::earliest_die);
                self.drain_die(die, Drain::UpTo(now));
            }
        } else if self.preempt_writes() {
            // Start by start, the clock following the work placed (`ready_at` holds an entry
            // whose turn came late to the clock): work its die's GC held back may go when that
            // GC is placed, not before.
            while let Some(t) = self.scan_deferred_start().filter(|&t| t <= now) {
                self.now = self.now.max(t);
                self.drain_planes(Drain::UpTo(t));
            }
        } else {
            self.drain_planes(Drain::UpTo(now));
        }
        self.now = now;
    }

    /// When the earliest deferred operation starts, if any is waiting: the replay loop
    /// advances the clock to it so that the requests it completes finish on time.
    pub fn next_deferred_start(&mut self) -> Option<SimTime> {
        // A die's start kept from an earlier clock may have fallen behind it (`ready_at`).
        let now = self.now;
        if self.die_starts.is_some() {
            let fast = self.refresh_die_starts().map(|t| t.max(now));
            debug_assert_eq!(fast, self.scan_deferred_start(), "a die's queued work changed unmarked");
            return fast;
        }
        self.scan_deferred_start()
    }

    /// Deferred host operations placed since the last call: (request, completion).
    pub fn take_completions(&mut self, out: &mut Vec<(u32, SimTime)>) {
        out.clear();
        out.append(&mut self.completions);
    }

    /// Current time.
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// The power goes at `at`: deferred work that starts by then is placed (it is under way),
    /// the rest never runs and is dropped, with the completions of the requests it would have
    /// completed (they fail at the cut). Returns how many operations were dropped. The
    /// functional state holds them all the same, as it holds operations placed past the cut
    /// (docs/power-loss.md, "What a cut finds").
    pub fn cut_power(&mut self, at: SimTime) -> u64 {
        if at > self.now {
            self.set_now(at);
        }
        let mut planes = std::mem::take(&mut self.planes_scratch);
        self.deferred.busy_planes(&mut planes);
        let mut dropped = 0u64;
        for &p in &planes {
            for lane in [Lane::Gc, Lane::Host] {
                while self.deferred.front(p, lane).is_some() {
                    self.deferred.pop(p, lane);
                    dropped += 1;
                }
            }
            self.touch(p);
        }
        self.planes_scratch = planes;
        assert!(self.deferred.is_empty(), "work left queued after a cut");
        self.completions.clear();
        dropped
    }

    /// Place every deferred operation (end of a run: busy time then covers all of it).
    pub fn drain_all(&mut self) {
        // A plane whose die's GC goes first may wait for a die-mate drained after it.
        while !self.deferred.is_empty() {
            self.drain_planes(Drain::All);
        }
    }

    /// Busy time so far.
    pub fn busy(&self) -> &BusyTime {
        &self.busy
    }

    /// Multi-plane commands issued so far.
    pub fn multi_plane_commands(&self) -> u64 {
        self.multi_plane_commands
    }

    /// Reads served from the plane register so far.
    pub fn register_hits(&self) -> u64 {
        self.register_hits_count
    }

    /// How host programs met GC so far.
    pub fn gc_contention(&self) -> GcContention {
        self.contention
    }

    /// Reserve the host link in `dir` for `bytes` of data at the first gap at or after
    /// `earliest`; returns the end of the transfer.
    pub fn host_transfer(&mut self, earliest: SimTime, bytes: u64, dir: Direction) -> SimTime {
        if self.host_page_xfer == 0 || bytes == 0 {
            return earliest;
        }
        let page = u64::from(self.geo.page_size_bytes);
        let dur = (bytes * self.host_page_xfer).div_ceil(page);
        let now = self.now;
        self.host_link[dir as usize].reserve(earliest, dur, now) + dur
    }

    /// Schedule a batch of operations recorded by one FTL call, none starting before `ready`.
    /// `request`: the replay slot of the host request the batch belongs to, or `None` for
    /// idle-time work. With GC preemption a request's GC operations, and programs and
    /// erases behind them on their plane, are deferred; idle-time GC is placed at once (it
    /// runs one step at a time).
    pub fn schedule(&mut self, ops: &[FlashOp], ready: SimTime, request: Option<u32>) -> BatchEnd {
        assert!(ready >= self.now, "batch ready at {ready} before now {}", self.now);
        let mut ends = std::mem::take(&mut self.ends);
        ends.clear();
        ends.resize(ops.len(), ready);
        let mut out = BatchEnd { end: ready, host_end: ready, deferred_host_ops: 0 };
        let mut gc_end = ready;
        let deferrable = request.is_some() && (self.preempt_gc() || self.read_first());
        // The operation deferred last in this batch and its plane.
        let mut last_deferred: Option<(usize, PlaneId)> = None;
        let mut i = 0;
        while i < ops.len() {
            let op = ops[i];
            if op.kind == OpKind::Barrier {
                assert!(
                    !deferrable,
                    "GC preemption with a GC scope wider than a plane (config validation allows neither)"
                );
                self.barrier(op.addr, op.addr2, gc_end);
                ends[i] = gc_end;
                i += 1;
                continue;
            }
            let plane = self.map.plane_of(op.addr);
            let after = (op.after != NO_DEP).then_some(op.after as usize);
            if let Some(a) = after {
                assert!(a < i, "operation {i} waits for a later one ({a})");
            }
            let mut after_deferred = after.is_some_and(|a| ends[a] == DEFERRED);
            if let (true, Some(a)) = (after_deferred, after) {
                // An operation may wait for deferred work that is not just before it on its
                // plane (reading first, a translation write after a data program; with GC
                // preempted, a copy to another plane, as FAST's merges make): that work's plane
                // goes first, up to its end.
                if last_deferred != Some((a, plane)) {
                    let q = self.map.plane_of(ops[a].addr);
                    self.drain_plane_fully(q);
                    ends[a] = self.deferred_last_end[q as usize];
                    after_deferred = false;
                    // What was deferred last on that plane is placed now.
                    if last_deferred.is_some_and(|(_, p)| p == q) {
                        last_deferred = None;
                    }
                }
            }
            let earliest = match after {
                Some(a) if !after_deferred => ends[a],
                _ => ready,
            };
            if deferrable && self.defers(&op, plane, after_deferred) {
                if after_deferred {
                    assert_eq!(
                        last_deferred,
                        Some((op.after as usize, plane)),
                        "deferred operation {i} waits for one that is not just before it on its plane"
                    );
                }
                out.deferred_host_ops += u32::from(self.defer(op, plane, earliest, after_deferred, request));
                ends[i] = DEFERRED;
                last_deferred = Some((i, plane));
                i += 1;
                continue;
            }
            assert!(!after_deferred, "operation {i} waits for deferred work but is not deferred");
            if self.copy_runs
                && !deferrable
                && op.kind == OpKind::Read
                && op.tag != Tag::Host
                && after.is_none()
                && self.deferred.is_empty()
            {
                let (placed, end) = self.place_copy_run(ops, i, plane, ready, &mut ends);
                if placed > 0 {
                    out.end = out.end.max(end);
                    gc_end = gc_end.max(end);
                    i += placed;
                    continue;
                }
            }
            let n = self.group_len(&ops[i..], plane);
            let end =
                if n > 1 { self.multi(&ops[i..i + n], plane, earliest) } else { self.single(op, plane, earliest) };
            out.end = out.end.max(end);
            for (k, o) in ops[i..i + n].iter().enumerate() {
                ends[i + k] = end;
                match o.tag {
                    Tag::Host => out.host_end = out.host_end.max(end),
                    _ => gc_end = gc_end.max(end),
                }
            }
            i += n;
        }
        self.ends = ends;
        out
    }

    /// How many ops starting at `ops[0]` (on `plane`) form one multi-plane command.
    fn group_len(&self, ops: &[FlashOp], plane: PlaneId) -> usize {
        let first = ops[0];
        if !self.multi_plane || self.serial || !matches!(first.kind, OpKind::Read | OpKind::Program | OpKind::Erase) {
            return 1;
        }
        // Most operations are followed by one of another kind (a GC copy's read by its
        // program) or none: settled before any address is divided.
        let joins = |o: &FlashOp| o.kind == first.kind && o.after == first.after && o.tag == first.tag;
        if !ops.get(1).is_some_and(joins) {
            return 1;
        }
        let (g, per_die) = (&self.map, self.geo.planes_per_die as usize);
        let die = g.die_of(plane);
        let page = g.page_in_block(first.addr);
        let mut planes_seen: u64 = 1 << g.plane_in_die(plane);
        let mut n = 1;
        while n < ops.len() && n < per_die {
            let o = ops[n];
            let plane = g.plane_of(o.addr);
            let bit = 1u64 << g.plane_in_die(plane);
            if !joins(&o)
                || (self.preempt_gc() && self.deferred.is_waiting(plane))
                || g.die_of(plane) != die
                || g.page_in_block(o.addr) != page
                || planes_seen & bit != 0
            {
                break;
            }
            planes_seen |= bit;
            n += 1;
        }
        n
    }
}

/// Planes of the scope that contains `plane`, in ascending order.
pub fn scope_planes(g: &Geometry, scope: GcScope, plane: PlaneId) -> impl Iterator<Item = PlaneId> + '_ {
    let total = g.planes();
    (0..total).filter(move |&q| match scope {
        GcScope::Plane => q == plane,
        GcScope::Die => g.die_of(q) == g.die_of(plane),
        GcScope::Chip => g.chip_of(q) == g.chip_of(plane),
        GcScope::Channel => g.channel_of(q) == g.channel_of(plane),
        GcScope::Device => true,
    })
}

/// Encoding of a scope in [`FlashOp::addr2`] for barriers.
pub fn scope_code(scope: GcScope) -> u32 {
    match scope {
        GcScope::Plane => 0,
        GcScope::Die => 1,
        GcScope::Chip => 2,
        GcScope::Channel => 3,
        GcScope::Device => 4,
    }
}
