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
//! programs and erases queued behind them on their plane, are deferred (`backlog.rs`) and
//! placed as simulated time reaches them, so that later reads overtake them between page
//! copies; a request whose own work was deferred completes when that work is placed
//! ([`Scheduler::take_completions`]).
//!
//! In `serial` mode one operation runs at a time in the whole drive and takes the sum of its
//! phases. Every busy interval is tagged host, GC or mapping so that channel and plane time
//! can be split. All arithmetic is integer nanoseconds, so schedules are bit-for-bit
//! deterministic.

mod backlog;
mod bus;
mod channel_bus;
mod die_starts;
mod phases;
#[cfg(test)]
mod tests;

use crate::address_map::AddressMap;
use crate::config::{GcPreemption, GcScope, PlaneConcurrency, Resolved, TransactionOrder};
use crate::geometry::{Geometry, PlaneId, Ppn, NONE};
use backlog::{Deferred, GcBacklog, Lane};
use bus::Bus;
use channel_bus::ChannelBus;
use die_starts::DieStarts;
use phases::{PhaseTable, Shape};

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
    /// A die runs one command at a time (`multi_plane_only`).
    die_exclusive: bool,
    /// Under `die_exclusive`, reads of different planes may still overlap.
    independent_reads: bool,
    multi_plane: bool,
    serial: bool,
    register_hits: bool,
    /// `ftl.gc_preemption` is on: a request's GC work waits in the backlog.
    preempt_gc: bool,
    /// `ftl.gc_preemption = "writes"`: a plane's host lane goes ahead of its GC lane while
    /// the plane keeps `floor` erased blocks.
    preempt_writes: bool,
    floor: u32,
    /// Erased blocks per plane that no FTL ever allocates (held back), left out of the count.
    held_back: u32,
    /// Erased blocks per plane as the FTL left them ([`Scheduler::note_erased_blocks`]):
    /// those whose GC erase is still queued are not erased on flash yet.
    erased: Vec<u32>,
    /// `timing.transaction_order = "read_first"`: a request's non-read operations wait in
    /// the backlog, so reads overtake them, and queued operations form multi-plane commands.
    read_first: bool,
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
    backlog: GcBacklog,
    /// End of the last operation placed from each plane's backlog (for `after_prev`).
    backlog_last_end: Vec<SimTime>,
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

/// Completion of an operation deferred to the backlog (its real end is not known yet).
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
        let read_first = t.transaction_order == TransactionOrder::ReadFirst && !t.serial;
        let preempt_writes = cfg.ftl.gc_preemption == GcPreemption::Writes && !t.serial;
        // A die's operations take turns on its array only when every kind is die-wide.
        let die_units = die_exclusive && !t.independent_plane_reads;
        let bus_units = if die_units { g.dies() } else { g.planes() } / g.channels;
        Scheduler {
            geo: g.clone(),
            map: AddressMap::new(g),
            phases: PhaseTable::new(t, d),
            host_page_xfer: d.host_page_transfer_ns,
            dram: Bus::default(),
            die_exclusive,
            independent_reads: t.independent_plane_reads,
            multi_plane: t.multi_plane,
            serial: t.serial,
            register_hits: t.register_read_hits,
            preempt_gc: cfg.ftl.gc_preemption != GcPreemption::None && !t.serial,
            preempt_writes,
            floor: cfg.ftl.gc_preemption_floor_blocks,
            held_back: d.held_back_blocks_per_plane,
            erased: vec![g.blocks_per_plane; planes],
            read_first,
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
            backlog: GcBacklog::new(g.planes(), preempt_writes.then(|| (g.blocks(), g.pages_per_block))),
            backlog_last_end: vec![0; planes],
            recorded_ns: vec![0; planes],
            ends: Vec::new(),
            planes_scratch: Vec::new(),
            group_scratch: Vec::new(),
            ops_scratch: Vec::new(),
            completions: Vec::new(),
            die_starts: (read_first && die_exclusive).then(|| DieStarts::new(g.dies())),
            dies_scratch: Vec::new(),
            copy_runs: !(t.serial || die_exclusive && t.independent_plane_reads),
        }
    }

    /// Advance the clock; no later reservation may start before `now`. Deferred work that
    /// starts at or before `now` is placed first (it is under way by then).
    pub fn set_now(&mut self, now: SimTime) {
        assert!(now >= self.now, "time went backwards: {now} < {}", self.now);
        if self.die_starts.is_some() {
            // Die by die, the earliest first, each up to `now`.
            while let Some(t) = self.refresh_die_starts().filter(|&t| t <= now) {
                if self.preempt_writes {
                    // See below: work released while the clock advances starts no earlier.
                    self.now = self.now.max(t);
                }
                let die = self.die_starts.as_ref().map_or(0, DieStarts::earliest_die);
                self.drain_die(die, Drain::UpTo(now));
            }
        } else if self.preempt_writes {
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

    /// The FTL's erased blocks per plane after its latest call (`FlashArray::erased_blocks`):
    /// with `gc_preemption = "writes"` a plane's host work goes ahead of its GC while enough of
    /// them are erased on flash too.
    pub fn note_erased_blocks(&mut self, erased: &[u32]) {
        if !self.preempt_writes {
            return;
        }
        for (p, &n) in erased.iter().enumerate() {
            if self.erased[p] != n {
                self.erased[p] = n;
                self.touch(p as PlaneId);
            }
        }
    }

    /// `gc_preemption = "writes"`: `plane` has fewer erased blocks on flash than the floor
    /// (the FTL's erased blocks less the GC erases still queued), so GC goes first on its die.
    fn gc_urgent(&self, plane: PlaneId) -> bool {
        let queued = self.held_back + self.backlog.gc_erases(plane);
        self.erased[plane as usize].saturating_sub(queued) < self.floor
    }

    /// `gc_preemption = "writes"`: GC goes first on `plane`'s die, because one of its planes
    /// is below the floor (MQSim's urgent mode is a chip's: `GC_is_in_urgent_mode`), and GC
    /// work of some plane of the die is queued.
    fn die_gc_first(&self, plane: PlaneId) -> bool {
        self.die_planes(plane).any(|q| self.gc_urgent(q))
            && self.die_planes(plane).any(|q| self.backlog.front(q, Lane::Gc).is_some())
    }

    /// The queued entry of `plane` that goes next: the oldest, or, with `gc_preemption =
    /// "writes"`, the front of the lane that has priority when no entry of the other lane
    /// touches its blocks: the host's, unless GC goes first on the die; then the plane's GC,
    /// and a plane with no GC queued waits for its die-mates' (MQSim's TSU serves a chip's
    /// GC transactions before any user transaction in urgent mode).
    #[inline]
    fn next_entry(&self, plane: PlaneId) -> Option<&Deferred> {
        if self.preempt_writes {
            if self.die_gc_first(plane) {
                let gc = self.backlog.front(plane, Lane::Gc)?;
                if self.backlog.may_pass(gc) {
                    return Some(gc);
                }
            } else if let Some(d) = self.backlog.front(plane, Lane::Host).filter(|d| self.backlog.may_pass(d)) {
                return Some(d);
            }
        }
        self.backlog.oldest(plane)
    }

    fn scan_deferred_start(&self) -> Option<SimTime> {
        self.backlog.waiting_planes().filter_map(|p| self.front_start(p)).min()
    }

    /// Recompute the marked dies' starts; the earliest of all, if any work is queued.
    fn refresh_die_starts(&mut self) -> Option<SimTime> {
        let ds = self.die_starts.as_mut()?;
        let mut dies = std::mem::take(&mut self.dies_scratch);
        ds.take_marked(&mut dies);
        let n = self.geo.dies();
        for &d in &dies {
            let start = (0..self.geo.planes_per_die).filter_map(|k| self.front_start(d + k * n)).min();
            if let Some(ds) = self.die_starts.as_mut() {
                ds.set(d, start.unwrap_or(die_starts::NONE));
            }
        }
        self.dies_scratch = dies;
        let t = self.die_starts.as_ref().map_or(die_starts::NONE, DieStarts::earliest);
        (t != die_starts::NONE).then_some(t)
    }

    /// Whatever may change when `plane`'s die can start its queued work happened (work queued
    /// or taken off, a command placed on the die, a barrier).
    #[inline(always)]
    fn touch(&mut self, plane: PlaneId) {
        if let Some(ds) = self.die_starts.as_mut() {
            ds.mark(self.map.die_of(plane));
        }
    }

    /// Deferred host operations placed since the last call: (request, completion).
    pub fn take_completions(&mut self, out: &mut Vec<(u32, SimTime)>) {
        out.clear();
        out.append(&mut self.completions);
    }

    fn drain_planes(&mut self, limit: Drain) {
        if self.backlog.is_empty() {
            return;
        }
        let mut planes = std::mem::take(&mut self.planes_scratch);
        self.backlog.busy_planes(&mut planes);
        for &p in &planes {
            if self.die_fifo() {
                self.drain_die(self.map.die_of(p), limit);
            } else {
                self.drain(p, limit);
            }
        }
        self.planes_scratch = planes;
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
        self.backlog.busy_planes(&mut planes);
        let mut dropped = 0u64;
        for &p in &planes {
            for lane in [Lane::Gc, Lane::Host] {
                while self.backlog.front(p, lane).is_some() {
                    self.backlog.pop(p, lane);
                    dropped += 1;
                }
            }
            self.touch(p);
        }
        self.planes_scratch = planes;
        assert!(self.backlog.is_empty(), "work left queued after a cut");
        self.completions.clear();
        dropped
    }

    /// Place every deferred operation (end of a run: busy time then covers all of it).
    pub fn drain_all(&mut self) {
        // A plane whose die's GC goes first may wait for a die-mate drained after it.
        while !self.backlog.is_empty() {
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

    /// Estimated array time of `op` (dynamic allocation's load estimate).
    fn cost_ns(&self, op: &FlashOp) -> u64 {
        match op.kind {
            OpKind::Barrier => 0,
            kind => self.phases.of(kind).estimate(),
        }
    }

    /// Of `planes` (tried in their order), the one where a new operation could start first
    /// ([`Scheduler::plane_ready`]), with the operations of the batch being built (recorded,
    /// not scheduled yet) counted on their planes; the first one on a tie.
    ///
    /// `recorded`: the batch's operations not given before, all of them when `restart` (a
    /// new batch). The batch is summed here, when an FTL asks (dynamic allocation), rather
    /// than noted one by one as operations are recorded (every FTL call records, few ask);
    /// and only what it gained since the last question, so that a batch of n pages asked
    /// about at each page costs O(n), not O(n^2) (a 1 MiB write's 256 pages and their GC
    /// replayed in 2.4x the time of 94463cd's count kept per operation, docs/performance.md).
    pub fn least_loaded(
        &mut self,
        recorded: &[FlashOp],
        restart: bool,
        planes: impl Iterator<Item = PlaneId>,
    ) -> Option<PlaneId> {
        if restart {
            self.recorded_ns.fill(0);
        }
        for op in recorded.iter().filter(|o| o.kind != OpKind::Barrier) {
            let cost = self.cost_ns(op);
            self.recorded_ns[self.map.plane_of(op.addr) as usize] += cost;
        }
        let mut best: Option<(SimTime, PlaneId)> = None;
        for p in planes {
            let t = self.plane_ready(p);
            if best.is_none_or(|(b, _)| t < b) {
                best = Some((t, p));
            }
        }
        best.map(|(_, p)| p)
    }

    /// Estimated time at which a new operation on `plane` could start: when its array is
    /// free, plus the deferred GC and the batch's operations there that
    /// [`Scheduler::least_loaded`] counted (for a die that runs one command at a time, those
    /// of its whole die).
    fn plane_ready(&self, plane: PlaneId) -> SimTime {
        let p = plane as usize;
        if !self.die_exclusive {
            return self.plane_free[p].max(self.now) + self.backlog.queued_ns(plane) + self.recorded_ns[p];
        }
        let (mut free, mut queued) = (self.now, 0);
        for q in self.die_planes(plane) {
            free = free.max(self.plane_free[q as usize]);
            queued += self.backlog.queued_ns(q) + self.recorded_ns[q as usize];
        }
        free + queued
    }

    /// Whether `plane` has GC work placed or deferred that ends after `t`.
    pub fn in_gc_at(&self, plane: PlaneId, t: SimTime) -> bool {
        self.backlog.is_waiting(plane) || self.gc_until[plane as usize] > t
    }

    /// The planes of `plane`'s die.
    fn die_planes(&self, plane: PlaneId) -> impl Iterator<Item = PlaneId> {
        let dies = self.geo.dies();
        let first = self.map.die_of(plane);
        (0..self.geo.planes_per_die).map(move |k| first + k * dies)
    }

    /// Whether `op` occupies its whole die rather than its plane.
    #[inline]
    fn die_wide(&self, kind: OpKind) -> bool {
        self.die_exclusive && !(self.independent_reads && kind.is_read())
    }

    /// Earliest start of an operation of `kind` on `plane` by the array's availability.
    #[inline]
    fn array_free(&self, plane: PlaneId, kind: OpKind) -> SimTime {
        if self.die_wide(kind) {
            self.die_planes(plane).map(|q| self.plane_free[q as usize]).max().unwrap_or(0)
        } else {
            self.plane_free[plane as usize]
        }
    }

    /// The array of `plane` (or its die) is busy until `end`.
    #[inline(always)]
    fn occupy(&mut self, plane: PlaneId, kind: OpKind, end: SimTime) {
        self.touch(plane);
        if self.die_wide(kind) {
            let dies = self.geo.dies();
            let first = self.map.die_of(plane);
            for k in 0..self.geo.planes_per_die {
                self.plane_free[(first + k * dies) as usize] = end;
            }
        } else {
            self.plane_free[plane as usize] = end;
        }
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
        let deferrable = request.is_some() && (self.preempt_gc || self.read_first);
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
                    ends[a] = self.backlog_last_end[q as usize];
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
                && self.backlog.is_empty()
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

    /// Whether `op` on `plane`, of a batch that may defer work, goes to the plane's queue: GC
    /// work does, and so do programs and erases that follow deferred work on their plane (a
    /// write needs the space GC makes) or wait for their die's GC, or all of them reading
    /// first; other reads never queue.
    #[inline]
    fn defers(&self, op: &FlashOp, plane: PlaneId, after_deferred: bool) -> bool {
        after_deferred
            || op.tag == Tag::Gc
            || (!op.kind.is_read()
                && (self.read_first
                    || self.backlog.is_waiting(plane)
                    || (self.preempt_writes && self.die_gc_first(plane))))
    }

    /// Queue `op` on `plane` (no earlier than `earliest`; after the entry queued before it
    /// there when `after_prev`), for `request` if it is the host's; whether it is.
    #[inline]
    fn defer(
        &mut self,
        op: FlashOp,
        plane: PlaneId,
        earliest: SimTime,
        after_prev: bool,
        request: Option<u32>,
    ) -> bool {
        let host = op.tag == Tag::Host;
        let cost_ns = self.cost_ns(&op);
        let request = if host { request.expect("deferrable batches belong to a request") } else { NO_REQUEST };
        self.backlog.push(plane, Deferred { op, earliest, after_prev, cost_ns, request, seq: 0, lane: Lane::Gc });
        self.touch(plane);
        host
    }

    /// When queued entry `d` may go: its batch's ready time, and, when lanes pass each other,
    /// not before the clock: the entry that goes next can then change after the clock passed
    /// the time it could have started (a plane falls below the floor, GC work arrives on the
    /// host front's block). Served oldest first, a front never falls behind the clock, and
    /// the ready time stays the one the contention counters measure from.
    #[inline]
    fn ready_at(&self, d: &Deferred) -> SimTime {
        if self.preempt_writes {
            d.earliest.max(self.now)
        } else {
            d.earliest
        }
    }

    /// When the front entry of `plane`'s deferred work would start.
    fn front_start(&self, plane: PlaneId) -> Option<SimTime> {
        let d = self.next_entry(plane)?;
        debug_assert!(!d.after_prev, "a page copy is never split, so its program is never in front");
        Some(self.ready_at(d).max(self.array_free(plane, d.op.kind)))
    }

    /// Place the deferred operations of `plane` that `limit` admits, in order. A page copy
    /// is never split: a program that waits for its read goes with it.
    fn drain(&mut self, plane: PlaneId, limit: Drain) {
        while let Some(&d) = self.next_entry(plane) {
            debug_assert!(!d.after_prev, "a page copy is never split, so its program is never in front");
            let start = self.ready_at(&d).max(self.array_free(plane, d.op.kind));
            if !limit.admits(start) && !self.aged(&d, limit) {
                return;
            }
            self.pop_queued(plane, d.lane);
            if !(self.read_first && self.multi_plane && self.gather(plane, &d, start)) {
                self.place_queued(plane, &d, self.ready_at(&d));
            }
            self.place_copy_program(plane, d.lane);
        }
    }

    /// Reading first on a die that runs one command at a time: its planes' queues are one
    /// queue to it, served oldest first (MQSim's TSU takes a chip queue's front), not plane by
    /// plane, which let a die's first plane keep the die while its queue refilled and left
    /// its later planes waiting (and out of step, so that their pages rarely lined up for a
    /// multi-plane command).
    fn die_fifo(&self) -> bool {
        self.read_first && self.die_exclusive
    }

    /// [`Self::drain`] for the planes of `die` together: the entry `limit` admits that starts
    /// first (and, among those, was queued first) goes next, with its page copy's program.
    fn drain_die(&mut self, die: u32, limit: Drain) {
        let dies = self.geo.dies();
        loop {
            let mut next: Option<(SimTime, u8, u64, PlaneId, Lane)> = None;
            for k in 0..self.geo.planes_per_die {
                let q = die + k * dies;
                let Some(d) = self.next_entry(q) else { continue };
                debug_assert!(!d.after_prev, "a page copy is never split, so its program is never in front");
                let start = self.ready_at(d).max(self.array_free(q, d.op.kind));
                // Lanes passing each other, a host front starting with a die-mate's GC front
                // goes first, as on its own plane; otherwise the older.
                let rank = u8::from(!(self.preempt_writes && d.lane == Lane::Host));
                if (limit.admits(start) || self.aged(d, limit))
                    && next.is_none_or(|n| (start, rank, d.seq) < (n.0, n.1, n.2))
                {
                    next = Some((start, rank, d.seq, q, d.lane));
                }
            }
            let Some((start, _, _, plane, lane)) = next else { return };
            let d = self.pop_queued(plane, lane);
            if !(self.multi_plane && self.gather(plane, &d, start)) {
                self.place_queued(plane, &d, self.ready_at(&d));
            }
            self.place_copy_program(plane, lane);
        }
    }

    /// Take the front entry of `plane`'s `lane` (its die's next start may change).
    fn pop_queued(&mut self, plane: PlaneId, lane: Lane) -> Deferred {
        let d = self.backlog.pop(plane, lane);
        self.touch(plane);
        d
    }

    /// A page copy is never split: the program waiting at the front of `plane`'s `lane` for
    /// the read just placed goes right after it.
    fn place_copy_program(&mut self, plane: PlaneId, lane: Lane) {
        while self.backlog.front(plane, lane).is_some_and(|e| e.after_prev) {
            let e = self.pop_queued(plane, lane);
            self.place_queued(plane, &e, self.backlog_last_end[plane as usize]);
        }
    }

    /// Place queued entry `d` of `plane` from `earliest`; its request (if any) completes then.
    fn place_queued(&mut self, plane: PlaneId, d: &Deferred, earliest: SimTime) {
        let end = self.place(d.op, plane, earliest);
        self.backlog_last_end[plane as usize] = end;
        if d.request != NO_REQUEST {
            self.completions.push((d.request, end));
        }
    }

    /// Reading first: has `d` waited so long (`timing.read_first_age_cap_ns`) that it goes
    /// ahead of a read ready at `limit`'s time?
    fn aged(&self, d: &Deferred, limit: Drain) -> bool {
        match limit {
            Drain::Before(t) => self.read_first && self.age_cap > 0 && d.earliest.saturating_add(self.age_cap) <= t,
            _ => false,
        }
    }

    /// Reading first: the queued operations at the front of `lead`'s die-mates that can join
    /// its front entry `d` (popped, starting at `start`) in one multi-plane command: the same
    /// kind and tag, the same page in their blocks, ready by `start`. Places the command and
    /// returns true if any joined (MQSim's TSU gathers a die's queued transactions so).
    fn gather(&mut self, lead: PlaneId, d: &Deferred, start: SimTime) -> bool {
        if !matches!(d.op.kind, OpKind::Read | OpKind::Program | OpKind::Erase) {
            return false;
        }
        let mut group = std::mem::take(&mut self.group_scratch);
        group.clear();
        group.push(*d);
        let page = self.map.page_in_block(d.op.addr);
        let dies = self.geo.dies();
        let first = self.map.die_of(lead);
        for k in 0..self.geo.planes_per_die {
            let q = first + k * dies;
            let next = if q == lead { None } else { self.next_entry(q) };
            let joining = next.filter(|e| {
                !e.after_prev
                    && e.op.kind == d.op.kind
                    && e.op.tag == d.op.tag
                    && e.earliest <= start
                    && self.map.page_in_block(e.op.addr) == page
            });
            if let Some(lane) = joining.map(|e| e.lane) {
                let e = self.pop_queued(q, lane);
                group.push(e);
            }
        }
        let joined = group.len() > 1;
        if joined {
            let mut ops = std::mem::take(&mut self.ops_scratch);
            ops.clear();
            ops.extend(group.iter().map(|g| g.op));
            let earliest = group.iter().map(|g| self.ready_at(g)).max().unwrap_or(start);
            let end = self.place_group(&ops, earliest);
            for g in &group {
                self.backlog_last_end[self.map.plane_of(g.op.addr) as usize] = end;
                if g.request != NO_REQUEST {
                    self.completions.push((g.request, end));
                }
            }
            // A page copy is never split: a joined read's program goes with it (the lead's
            // follows in `drain`).
            for g in &group[1..] {
                self.place_copy_program(self.map.plane_of(g.op.addr), g.lane);
            }
            self.ops_scratch = ops;
        }
        self.group_scratch = group;
        joined
    }

    /// Before an operation of `kind` on `plane` ready at `earliest` is placed: deferred work
    /// that starts before then goes first (on the plane, and on its die-mates when a die
    /// runs one command at a time). A program or erase placed directly (idle-time work)
    /// also waits for the rest of its own plane's deferred work.
    #[inline]
    fn drain_before(&mut self, plane: PlaneId, kind: OpKind, earliest: SimTime) {
        if !self.backlog.is_empty() {
            self.drain_backlog_before(plane, kind, earliest);
        }
    }

    fn drain_backlog_before(&mut self, plane: PlaneId, kind: OpKind, earliest: SimTime) {
        if self.die_fifo() {
            self.drain_die(self.map.die_of(plane), Drain::Before(earliest));
        } else if self.die_exclusive {
            for q in self.die_planes(plane) {
                self.drain(q, Drain::Before(earliest));
            }
        } else {
            self.drain(plane, Drain::Before(earliest));
        }
        if !kind.is_read() {
            self.drain_plane_fully(plane);
        }
    }

    /// Place all of `plane`'s queued work, and before it the GC of its die-mates when GC goes
    /// first on the die (`gc_preemption = "writes"`): the plane's host work waits for it.
    fn drain_plane_fully(&mut self, plane: PlaneId) {
        if !self.preempt_writes {
            self.drain(plane, Drain::All);
            return;
        }
        // The first pass empties the die's GC lanes (a plane with GC queued always has an
        // entry to place), so the second finds no plane waiting.
        while self.backlog.is_waiting(plane) {
            for q in self.die_planes(plane) {
                self.drain(q, Drain::All);
            }
        }
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
                || (self.preempt_gc && self.backlog.is_waiting(plane))
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

    fn account(&mut self, plane: PlaneId, tag: Tag, bus_ns: u64, array_ns: u64) {
        let ch = self.map.channel_of(plane) as usize;
        self.busy.channel[ch][tag as usize] += bus_ns;
        self.busy.plane[plane as usize][tag as usize] += array_ns;
    }

    /// Place one operation (not deferred), after the deferred GC that must go first.
    fn single(&mut self, op: FlashOp, plane: PlaneId, earliest: SimTime) -> SimTime {
        self.drain_before(plane, op.kind, earliest);
        self.place(op, plane, earliest)
    }

    /// Place one operation on its plane and channel.
    fn place(&mut self, op: FlashOp, plane: PlaneId, earliest: SimTime) -> SimTime {
        debug_assert_eq!(plane, self.map.plane_of(op.addr), "operation placed on another plane");
        let ch = self.map.channel_of(plane) as usize;
        let ph = *self.phases.of(op.kind);
        let hit = op.kind.is_read() && self.register_hits && self.register[plane as usize] == op.addr;
        if hit {
            self.register_hits_count += 1;
        }
        let array = if hit { 0 } else { ph.array };
        if self.serial {
            // The controller's part (ECC, DRAM) runs in the same single line of work.
            let start = earliest.max(self.serial_free);
            let end = start + ph.bus() + array + ph.controller();
            self.serial_free = end;
            self.account(plane, op.tag, ph.bus(), ph.bus() + array);
            self.after_placing(op, plane, earliest, end);
            return end;
        }
        let a0 = earliest.max(self.array_free(plane, op.kind));
        let now = self.now;
        let unit = self.bus_unit[plane as usize] as usize;
        let (bus, dram) = (&mut self.buses[ch], &mut self.dram);
        // `data`: when the operation's data is where it goes (a read's at the controller);
        // the plane is free at `end`.
        let (start, end, data) = match ph.shape {
            Shape::ReadOut => ph.read_out(1, bus, dram, unit, a0, array, now),
            Shape::WriteIn => {
                let (b, end) = ph.write_in(1, bus, dram, unit, earliest, a0, now);
                (b, end, end)
            }
            Shape::CommandOnly => {
                let (b, end) = ph.command_only(1, bus, unit, a0, now);
                (b, end, end)
            }
        };
        self.occupy(plane, op.kind, end);
        self.account(plane, op.tag, ph.bus(), end - start);
        self.after_placing(op, plane, earliest, end);
        data
    }

    /// Place the run of page copies that starts at `ops[first]` (on `plane`): a read ready at
    /// `ready`, then a program of the same plane waiting for it, and again, as long as each
    /// pair is one of GC's or the mapping's and no program would join the next in a
    /// multi-plane command. Each operation is placed exactly as [`Scheduler::place`] places
    /// it, one after another (property-tested against it), but what `place` settles per
    /// operation (the plane's channel, bus unit and array, its register, the busy time and GC
    /// extent it adds to) is settled once per run: GC's page copies are nine in ten of the
    /// benchmark's flash operations, and that bookkeeping was most of their cost
    /// (docs/performance.md). Returns the operations placed (0 when `ops[first]` does not start
    /// a copy) and the latest end; `ends` gets each operation's completion, as `schedule` notes it.
    fn place_copy_run(
        &mut self,
        ops: &[FlashOp],
        first: usize,
        plane: PlaneId,
        ready: SimTime,
        ends: &mut [SimTime],
    ) -> (usize, SimTime) {
        let tag = ops[first].tag;
        let p = plane as usize;
        let (lo, per_plane) = (self.geo.first_page(self.geo.first_block(plane)), self.geo.pages_per_plane());
        let on_plane = |addr: Ppn| addr.wrapping_sub(lo) < per_plane;
        let unit = self.bus_unit[p] as usize;
        let (rd, wr, now) = (*self.phases.of(OpKind::Read), *self.phases.of(OpKind::Program), self.now);
        let register_hits = self.register_hits;
        let mut free = self.array_free(plane, OpKind::Read);
        let mut register = self.register[p];
        let (mut array_ns, mut hits) = (0, 0);
        let (bus, dram) = (&mut self.buses[self.map.channel_of(plane) as usize], &mut self.dram);
        let mut k = first;
        while let [r, w, rest @ ..] = &ops[k..] {
            let copy = r.kind == OpKind::Read
                && w.kind == OpKind::Program
                && r.tag == tag
                && w.tag == tag
                && r.after == NO_DEP
                && w.after as usize == k
                && on_plane(r.addr)
                && on_plane(w.addr);
            // A second program after the same read would join this one in one command.
            let joined = rest.first().is_some_and(|o| o.kind == OpKind::Program && o.after == w.after);
            if !copy || joined {
                break;
            }
            let hit = register_hits && register == r.addr;
            hits += u64::from(hit);
            let (c, read_end, data) =
                rd.read_out(1, bus, dram, unit, ready.max(free), if hit { 0 } else { rd.array }, now);
            // The program, as `place` places it once its read's data is in DRAM.
            let (b, program_end) = wr.write_in(1, bus, dram, unit, data, data.max(read_end), now);
            array_ns += (read_end - c) + (program_end - b);
            free = program_end;
            register = w.addr;
            ends[k] = data;
            ends[k + 1] = free;
            k += 2;
        }
        if k == first {
            return (0, ready);
        }
        self.occupy(plane, OpKind::Program, free);
        self.account(plane, tag, (k - first) as u64 / 2 * (rd.bus() + wr.bus()), array_ns);
        self.register[p] = register;
        self.register_hits_count += hits;
        if tag == Tag::Gc {
            self.gc_until[p] = self.gc_until[p].max(free);
        }
        (k - first, free)
    }

    /// Bookkeeping common to every placed operation: the plane register, GC extent and the
    /// contention counters.
    fn after_placing(&mut self, op: FlashOp, plane: PlaneId, earliest: SimTime, end: SimTime) {
        self.set_register(op, plane);
        match op.tag {
            Tag::Gc => self.gc_until[plane as usize] = self.gc_until[plane as usize].max(end),
            Tag::Host if op.kind == OpKind::Program => self.count_contention(plane, earliest),
            _ => {}
        }
    }

    /// A host program on `plane`, ready at `earliest`: count it if GC work was ahead of it,
    /// and whether another plane was idle then.
    fn count_contention(&mut self, plane: PlaneId, earliest: SimTime) {
        // The program itself is placed already; its plane's GC extent is what it queued behind.
        if self.gc_until[plane as usize] <= earliest {
            return;
        }
        self.contention.host_programs_behind_gc += 1;
        let idle = (0..self.geo.planes())
            .any(|q| q != plane && self.plane_free[q as usize] <= earliest && !self.backlog.is_waiting(q));
        if idle {
            self.contention.host_programs_behind_gc_with_idle_plane += 1;
        }
    }

    fn set_register(&mut self, op: FlashOp, plane: PlaneId) {
        self.register[plane as usize] = match op.kind {
            OpKind::Read | OpKind::ReadSpare | OpKind::Program => op.addr,
            OpKind::Copyback => op.addr2,
            _ => NONE,
        };
    }

    /// Place `ops` (the first on `plane`) as one multi-plane command, after the deferred GC
    /// that must go first.
    fn multi(&mut self, ops: &[FlashOp], plane: PlaneId, earliest: SimTime) -> SimTime {
        self.drain_before(plane, ops[0].kind, earliest);
        self.place_group(ops, earliest)
    }

    /// Place `ops` (one kind, one die, distinct planes) as one multi-plane command.
    fn place_group(&mut self, ops: &[FlashOp], earliest: SimTime) -> SimTime {
        let g = &self.map;
        let n = ops.len() as u64;
        let first_plane = g.plane_of(ops[0].addr);
        let ch = g.channel_of(first_plane) as usize;
        let mut a0 = earliest;
        for o in ops {
            let plane = self.map.plane_of(o.addr);
            a0 = a0.max(self.array_free(plane, o.kind));
        }
        let ph = *self.phases.of(ops[0].kind);
        assert!(
            matches!(ops[0].kind, OpKind::Read | OpKind::Program | OpKind::Erase),
            "only reads, programs and erases form multi-plane commands"
        );
        let (now, unit) = (self.now, self.bus_unit[first_plane as usize] as usize);
        let (bus, dram) = (&mut self.buses[ch], &mut self.dram);
        let (start, end, data) = match ph.shape {
            Shape::ReadOut => ph.read_out(n, bus, dram, unit, a0, ph.array, now),
            Shape::WriteIn => {
                let (b, end) = ph.write_in(n, bus, dram, unit, earliest, a0, now);
                (b, end, end)
            }
            Shape::CommandOnly => {
                let (b, end) = ph.command_only(n, bus, unit, a0, now);
                (b, end, end)
            }
        };
        let bus_each = ph.bus();
        self.multi_plane_commands += 1;
        for &o in ops {
            let plane = self.map.plane_of(o.addr);
            self.occupy(plane, o.kind, end);
            self.account(plane, o.tag, bus_each, end - start);
            self.after_placing(o, plane, earliest, end);
        }
        data
    }

    fn barrier(&mut self, addr: Ppn, scope: u32, until: SimTime) {
        let plane = self.map.plane_of(addr);
        let scope = match scope {
            0 => GcScope::Plane,
            1 => GcScope::Die,
            2 => GcScope::Chip,
            3 => GcScope::Channel,
            _ => GcScope::Device,
        };
        for q in scope_planes(&self.geo, scope, plane) {
            self.plane_free[q as usize] = self.plane_free[q as usize].max(until);
            if let Some(ds) = self.die_starts.as_mut() {
                ds.mark(self.geo.die_of(q));
            }
        }
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
