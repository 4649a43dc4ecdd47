//! Timing of flash operations on channels, dies and planes.
//!
//! The FTL changes flash state functionally and records the operations it issued; this
//! scheduler then places each operation on the timed resources, in issue order, and returns
//! when it completes. Resources:
//! - one bus per channel, a list of reserved intervals with first-fit backfilling, so that a
//!   command for one plane can use the bus while another plane is busy with tR or tPROG;
//! - one array unit per plane (or per die when `plane_concurrency = "multi_plane_only"`),
//!   first come first served: a unit finishes its operation (including read-out of its
//!   register) before it starts the next;
//! - one host link (FIFO) for request data.
//!
//! Formulas (docs/timing.md), with C = cmd_addr_ns, X = page transfer, n = planes in a
//! multi-plane command:
//! - read:      bus C, array tR (skipped on a register hit), bus X; unit busy until X ends;
//! - program:   bus C + X, array tPROG;
//! - erase:     bus C, array tBERS;
//! - copy-back: bus 2C (read-for-copy-back and program commands), array tCB (default tR + tPROG);
//! - multi-plane read/program/erase: bus n*C (+ n*X), one array time for all n planes.
//!
//! In `serial` mode one operation runs at a time in the whole drive and takes the sum of its
//! phases. Every busy interval is tagged host, GC or mapping so that channel and plane time
//! can be split. All arithmetic is integer nanoseconds, so schedules are bit-for-bit
//! deterministic.

use crate::config::{DriveConfig, GcScope, PlaneConcurrency};
use crate::geometry::{Geometry, PlaneId, Ppn, NONE};
use std::collections::VecDeque;

/// Simulated time in nanoseconds.
pub type SimTime = u64;

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

/// One recorded flash operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlashOp {
    /// What it does.
    pub kind: OpKind,
    /// Who asked.
    pub tag: Tag,
    /// Starts only after the previous operation of the batch completed (data dependency).
    pub chain: bool,
    /// Page (or first page of the block for erases).
    pub addr: Ppn,
    /// Destination page of a copy-back, or the scope of a barrier.
    pub addr2: u32,
}

/// When a batch of operations finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BatchEnd {
    /// Last completion of any operation.
    pub end: SimTime,
    /// Last completion of a host-tagged operation (`ready` if there was none).
    pub host_end: SimTime,
}

/// Busy intervals of one bus with first-fit backfilling, as an unrolled sorted list: a
/// deque of chunks of at most `2 * BUS_CHUNK` disjoint intervals, in time order.
///
/// Why chunks: a foreground GC reserves hundreds of far-future bus slots, and overlapping
/// GCs on one channel insert between each other's. A flat sorted deque paid a memmove of
/// half the list per such insert (half the run time of the benchmark); a B-tree was slower
/// still (docs/performance.md). Here an insert shifts at most one chunk, and chunks are
/// recycled, so reservations do not allocate in steady state.
#[derive(Debug, Clone, Default)]
struct Bus {
    chunks: VecDeque<VecDeque<(SimTime, SimTime)>>,
    spare: Vec<VecDeque<(SimTime, SimTime)>>,
}

/// Target chunk size; a chunk splits when it reaches twice this.
const BUS_CHUNK: usize = 64;

impl Bus {
    /// Reserve `dur` at the first gap at or after `earliest`; returns the start.
    fn reserve(&mut self, earliest: SimTime, dur: SimTime, now: SimTime) -> SimTime {
        self.prune(now);
        if dur == 0 {
            return earliest;
        }
        // First chunk whose last interval ends after `earliest`, then the first interval in
        // it that does; scan forward for a gap of `dur`.
        let mut ci = self.chunks.partition_point(|c| c.back().is_some_and(|&(_, e)| e <= earliest));
        let mut i = match self.chunks.get(ci) {
            Some(c) => c.partition_point(|&(_, e)| e <= earliest),
            None => 0,
        };
        let mut t = earliest;
        let mut scanned = 0usize;
        while ci < self.chunks.len() {
            let c = &self.chunks[ci];
            if i >= c.len() {
                ci += 1;
                i = 0;
                continue;
            }
            let (s, e) = c[i];
            if t + dur <= s {
                break;
            }
            t = t.max(e);
            i += 1;
            scanned += 1;
            assert!(scanned <= self.chunks.len() * 2 * BUS_CHUNK + 1, "bus scan beyond its intervals");
        }
        self.insert(ci, i, t, t + dur);
        t
    }

    fn prune(&mut self, now: SimTime) {
        while let Some(c) = self.chunks.front_mut() {
            while let Some(&(_, e)) = c.front() {
                if e > now {
                    return;
                }
                c.pop_front();
            }
            let empty = self.chunks.pop_front().expect("front chunk exists");
            self.spare.push(empty);
        }
    }

    /// Insert `[t, end)` before position `i` of chunk `ci` (or at the very end when `ci` is
    /// past the last chunk), merging with touching neighbours inside the chunk.
    fn insert(&mut self, mut ci: usize, mut i: usize, t: SimTime, end: SimTime) {
        if ci == self.chunks.len() {
            match self.chunks.back() {
                Some(c) if c.len() < 2 * BUS_CHUNK => {
                    ci -= 1;
                    i = self.chunks[ci].len();
                }
                _ => {
                    let fresh = self.spare.pop().unwrap_or_else(|| VecDeque::with_capacity(2 * BUS_CHUNK));
                    self.chunks.push_back(fresh);
                    i = 0;
                }
            }
        }
        let c = &mut self.chunks[ci];
        let merge_prev = i > 0 && c[i - 1].1 == t;
        let merge_next = i < c.len() && c[i].0 == end;
        match (merge_prev, merge_next) {
            (true, true) => {
                c[i - 1].1 = c[i].1;
                c.remove(i);
            }
            (true, false) => c[i - 1].1 = end,
            (false, true) => c[i].0 = t,
            (false, false) => c.insert(i, (t, end)),
        }
        if c.len() >= 2 * BUS_CHUNK {
            let mut upper = self.spare.pop().unwrap_or_else(|| VecDeque::with_capacity(2 * BUS_CHUNK));
            upper.extend(c.drain(BUS_CHUNK..));
            self.chunks.insert(ci + 1, upper);
        }
    }
}

/// Busy time per tag of each channel bus and each plane, ns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BusyTime {
    /// `channel[c][tag]`.
    pub channel: Vec<[u64; TAGS]>,
    /// `plane[p][tag]`: array busy time (command start to completion).
    pub plane: Vec<[u64; TAGS]>,
}

/// Places flash operations on timed resources.
#[derive(Debug, Clone)]
pub struct Scheduler {
    geo: Geometry,
    cmd: u64,
    xfer: u64,
    t_r: u64,
    t_prog: u64,
    t_bers: u64,
    t_cb: u64,
    host_page_xfer: u64,
    plane_per_unit: bool,
    multi_plane: bool,
    serial: bool,
    register_hits: bool,
    buses: Vec<Bus>,
    unit_free: Vec<SimTime>,
    register: Vec<Ppn>,
    serial_free: SimTime,
    host_free: SimTime,
    now: SimTime,
    busy: BusyTime,
    multi_plane_commands: u64,
    register_hits_count: u64,
}

impl Scheduler {
    /// A scheduler for a validated drive config.
    pub fn new(cfg: &DriveConfig) -> Scheduler {
        let d = cfg.derive().expect("config validated before building a scheduler");
        let g = &cfg.geometry;
        let t = &cfg.timing;
        let plane_per_unit = t.plane_concurrency == PlaneConcurrency::Independent;
        let units = if plane_per_unit { g.planes() } else { g.dies() } as usize;
        Scheduler {
            geo: g.clone(),
            cmd: t.cmd_addr_ns,
            xfer: d.page_transfer_ns,
            t_r: t.t_r_ns,
            t_prog: t.t_prog_ns,
            t_bers: t.t_bers_ns,
            t_cb: d.t_copyback_ns,
            host_page_xfer: d.host_page_transfer_ns,
            plane_per_unit,
            multi_plane: t.multi_plane,
            serial: t.serial,
            register_hits: t.register_read_hits,
            buses: vec![Bus::default(); g.channels as usize],
            unit_free: vec![0; units],
            register: vec![NONE; g.planes() as usize],
            serial_free: 0,
            host_free: 0,
            now: 0,
            busy: BusyTime {
                channel: vec![[0; TAGS]; g.channels as usize],
                plane: vec![[0; TAGS]; g.planes() as usize],
            },
            multi_plane_commands: 0,
            register_hits_count: 0,
        }
    }

    /// Advance the clock; no later reservation may start before `now`.
    pub fn set_now(&mut self, now: SimTime) {
        assert!(now >= self.now, "time went backwards: {now} < {}", self.now);
        self.now = now;
    }

    /// Current time.
    pub fn now(&self) -> SimTime {
        self.now
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

    /// Reserve the host link for `pages` pages of data at or after `earliest`; returns the end.
    pub fn host_transfer(&mut self, earliest: SimTime, bytes: u64) -> SimTime {
        if self.host_page_xfer == 0 || bytes == 0 {
            return earliest;
        }
        let page = u64::from(self.geo.page_size_bytes);
        let dur = (bytes * self.host_page_xfer).div_ceil(page);
        let start = earliest.max(self.host_free);
        self.host_free = start + dur;
        self.host_free
    }

    #[inline]
    fn unit_of(&self, plane: PlaneId) -> usize {
        if self.plane_per_unit {
            plane as usize
        } else {
            self.geo.die_of(plane) as usize
        }
    }

    /// Schedule a batch of operations recorded by one FTL call, none starting before `ready`.
    pub fn schedule(&mut self, ops: &[FlashOp], ready: SimTime) -> BatchEnd {
        assert!(ready >= self.now, "batch ready at {ready} before now {}", self.now);
        let mut out = BatchEnd { end: ready, host_end: ready };
        let mut prev_end = ready;
        let mut gc_end = ready;
        let mut i = 0;
        while i < ops.len() {
            let op = ops[i];
            let earliest = if op.chain { prev_end } else { ready };
            let n = self.group_len(&ops[i..]);
            let end = match op.kind {
                OpKind::Barrier => {
                    self.barrier(op.addr, op.addr2, gc_end);
                    gc_end
                }
                _ if n > 1 => self.multi(&ops[i..i + n], earliest),
                _ => self.single(op, earliest),
            };
            prev_end = end;
            out.end = out.end.max(end);
            for o in &ops[i..i + n] {
                if o.tag == Tag::Host {
                    out.host_end = out.host_end.max(end);
                } else if o.kind != OpKind::Barrier {
                    gc_end = gc_end.max(end);
                }
            }
            i += n;
        }
        out
    }

    /// How many ops starting at `ops[0]` form one multi-plane command.
    fn group_len(&self, ops: &[FlashOp]) -> usize {
        let first = ops[0];
        if !self.multi_plane || self.serial || !matches!(first.kind, OpKind::Read | OpKind::Program | OpKind::Erase) {
            return 1;
        }
        let g = &self.geo;
        let die = g.die_of(g.plane_of(first.addr));
        let page = g.page_in_block(first.addr);
        let mut planes_seen: u64 = 1 << (g.plane_addr(g.plane_of(first.addr)).plane);
        let mut n = 1;
        while n < ops.len() && n < g.planes_per_die as usize {
            let o = ops[n];
            let plane = g.plane_of(o.addr);
            let bit = 1u64 << g.plane_addr(plane).plane;
            if o.kind != first.kind
                || o.chain
                || o.tag != first.tag
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
        let ch = self.geo.channel_of(plane) as usize;
        self.busy.channel[ch][tag as usize] += bus_ns;
        self.busy.plane[plane as usize][tag as usize] += array_ns;
    }

    fn single(&mut self, op: FlashOp, earliest: SimTime) -> SimTime {
        let g = &self.geo;
        let plane = g.plane_of(op.addr);
        let ch = g.channel_of(plane) as usize;
        let unit = self.unit_of(plane);
        let (cmd, xfer) = (self.cmd, self.xfer);
        let hit = op.kind == OpKind::Read && self.register_hits && self.register[plane as usize] == op.addr;
        if hit {
            self.register_hits_count += 1;
        }
        let t_r = if hit { 0 } else { self.t_r };
        if self.serial {
            let (bus, array) = match op.kind {
                OpKind::Read => (cmd + xfer, t_r),
                OpKind::Program => (cmd + xfer, self.t_prog),
                OpKind::Erase => (cmd, self.t_bers),
                OpKind::Copyback => (2 * cmd, self.t_cb),
                OpKind::Barrier => unreachable!("barriers are handled by schedule()"),
            };
            let start = earliest.max(self.serial_free);
            let end = start + bus + array;
            self.serial_free = end;
            self.account(plane, op.tag, bus, bus + array);
            self.set_register(op);
            return end;
        }
        let a0 = earliest.max(self.unit_free[unit]);
        let now = self.now;
        let (start, end) = match op.kind {
            OpKind::Read => {
                let c = self.buses[ch].reserve(a0, cmd, now);
                let x = self.buses[ch].reserve(c + cmd + t_r, xfer, now);
                (c, x + xfer)
            }
            OpKind::Program => {
                let b = self.buses[ch].reserve(a0, cmd + xfer, now);
                (b, b + cmd + xfer + self.t_prog)
            }
            OpKind::Erase => {
                let b = self.buses[ch].reserve(a0, cmd, now);
                (b, b + cmd + self.t_bers)
            }
            OpKind::Copyback => {
                let b = self.buses[ch].reserve(a0, 2 * cmd, now);
                (b, b + 2 * cmd + self.t_cb)
            }
            OpKind::Barrier => unreachable!("barriers are handled by schedule()"),
        };
        let bus_ns = match op.kind {
            OpKind::Read | OpKind::Program => cmd + xfer,
            OpKind::Erase => cmd,
            _ => 2 * cmd,
        };
        self.unit_free[unit] = end;
        self.account(plane, op.tag, bus_ns, end - start);
        self.set_register(op);
        end
    }

    fn set_register(&mut self, op: FlashOp) {
        let plane = self.geo.plane_of(op.addr) as usize;
        self.register[plane] = match op.kind {
            OpKind::Read | OpKind::Program => op.addr,
            OpKind::Copyback => op.addr2,
            _ => NONE,
        };
    }

    fn multi(&mut self, ops: &[FlashOp], earliest: SimTime) -> SimTime {
        let g = &self.geo;
        let n = ops.len() as u64;
        let first_plane = g.plane_of(ops[0].addr);
        let ch = g.channel_of(first_plane) as usize;
        let mut a0 = earliest;
        for o in ops {
            a0 = a0.max(self.unit_free[self.unit_of(g.plane_of(o.addr))]);
        }
        let (cmd, xfer, now) = (self.cmd, self.xfer, self.now);
        let (start, end, bus_each) = match ops[0].kind {
            OpKind::Read => {
                let c = self.buses[ch].reserve(a0, n * cmd, now);
                let x = self.buses[ch].reserve(c + n * cmd + self.t_r, n * xfer, now);
                (c, x + n * xfer, cmd + xfer)
            }
            OpKind::Program => {
                let b = self.buses[ch].reserve(a0, n * (cmd + xfer), now);
                (b, b + n * (cmd + xfer) + self.t_prog, cmd + xfer)
            }
            OpKind::Erase => {
                let b = self.buses[ch].reserve(a0, n * cmd, now);
                (b, b + n * cmd + self.t_bers, cmd)
            }
            _ => unreachable!("only reads, programs and erases form multi-plane commands"),
        };
        self.multi_plane_commands += 1;
        for &o in ops {
            let plane = self.geo.plane_of(o.addr);
            let unit = self.unit_of(plane);
            self.unit_free[unit] = end;
            self.account(plane, o.tag, bus_each, end - start);
            self.set_register(o);
        }
        end
    }

    fn barrier(&mut self, addr: Ppn, scope: u32, until: SimTime) {
        let plane = self.geo.plane_of(addr);
        let scope = match scope {
            0 => GcScope::Plane,
            1 => GcScope::Die,
            2 => GcScope::Chip,
            3 => GcScope::Channel,
            _ => GcScope::Device,
        };
        for q in scope_planes(&self.geo, scope, plane) {
            let u = self.unit_of(q);
            self.unit_free[u] = self.unit_free[u].max(until);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::tests::tiny_toml;

    /// PCFTL Sec. 3.2: 25 us read to register, 50 us page transfer, 200 us program.
    fn pcftl_like(extra: &str) -> Scheduler {
        let t = tiny_toml()
            .replace("channel_mb_per_s = 80.0", "channel_mb_per_s = 81.92")
            .replace("[timing]", &format!("[timing]\n{extra}"));
        let cfg = DriveConfig::from_toml(&t, "t").unwrap();
        let s = Scheduler::new(&cfg);
        assert_eq!(s.xfer, 50_000, "4096 B at 81.92 MB/s");
        s
    }
    fn op(kind: OpKind, addr: Ppn, addr2: u32, chain: bool) -> FlashOp {
        FlashOp { kind, tag: Tag::Gc, chain, addr, addr2 }
    }

    #[test]
    fn pcftl_copy_costs_325us_and_copyback_225us() {
        // Plane 0 owns pages [0, 1024) in the tiny geometry (64 blocks x 16 pages).
        let mut s = pcftl_like("");
        let copy = [op(OpKind::Read, 0, 0, false), op(OpKind::Program, 16, 0, true)];
        assert_eq!(s.schedule(&copy, 0).end, 325_000);
        let mut s = pcftl_like("");
        assert_eq!(s.schedule(&[op(OpKind::Copyback, 0, 16, false)], 0).end, 225_000);
    }

    #[test]
    fn copybacks_on_two_planes_of_one_die_overlap() {
        // PCFTL Fig. 6: planes 0 and 2 are the two planes of channel 0's die; each copy-back
        // uses the bus for its command only, so both run at once (Sec. 3.2).
        let plane2 = 2 * 64 * 16;
        let both = |s: &mut Scheduler| {
            let a = s.schedule(&[op(OpKind::Copyback, 0, 16, false)], 0).end;
            (a, s.schedule(&[op(OpKind::Copyback, plane2, plane2 + 16, false)], 0).end)
        };
        assert_eq!(both(&mut pcftl_like("")), (225_000, 225_000));
        // A die that runs one command at a time serialises them.
        assert_eq!(both(&mut pcftl_like("plane_concurrency = \"multi_plane_only\"")), (225_000, 450_000));
    }

    #[test]
    fn reads_on_two_planes_of_one_channel_overlap_tr() {
        // Planes 0 and 2 share channel 0 (channels stripe fastest). Hand schedule:
        // read A: cmd 0, tR 0-25, out 25-75. read B: tR 0-25, out 75-125 (bus busy).
        let mut s = pcftl_like("");
        let plane2 = 2 * 64 * 16;
        let a = s.schedule(&[op(OpKind::Read, 0, 0, false)], 0).end;
        let b = s.schedule(&[op(OpKind::Read, plane2, 0, false)], 0).end;
        assert_eq!((a, b), (75_000, 125_000));
        // A program on plane 0 waits for plane 0 (75) and takes the bus gap-free at 125.
        let c = s.schedule(&[op(OpKind::Program, 1, 0, false)], 0).end;
        assert_eq!(c, 125_000 + 50_000 + 200_000);
    }

    #[test]
    fn bus_backfills_gaps() {
        let mut s = pcftl_like("");
        s.cmd = 1000;
        // Read on plane 0: cmd 0-1, tR 1-26, out 26-76.
        assert_eq!(s.schedule(&[op(OpKind::Read, 0, 0, false)], 0).end, 76_000);
        // Erase on plane 2 (same channel) fits its command in the gap at 1-2.
        let plane2 = 2 * 64 * 16;
        assert_eq!(s.schedule(&[op(OpKind::Erase, plane2, 0, false)], 0).end, 1_000 + 1_000 + 1_500_000);
    }

    #[test]
    fn bus_chunks_split_and_keep_first_fit_order() {
        // Reserve slots 10 us apart, then fill every gap: all must land exactly in the gaps.
        let mut bus = Bus::default();
        for k in 0..1000u64 {
            assert_eq!(bus.reserve(k * 10_000, 5_000, 0), k * 10_000);
        }
        assert!(bus.chunks.len() > 1, "1000 intervals must span several chunks");
        for k in (0..1000u64).rev() {
            assert_eq!(bus.reserve(k * 10_000, 5_000, 0), k * 10_000 + 5_000);
        }
        // Everything merged into one busy stretch [0, 10 ms).
        let total: usize = bus.chunks.iter().map(|c| c.len()).sum();
        assert!(total <= bus.chunks.len() * 2, "touching intervals merge within chunks ({total})");
        assert_eq!(bus.reserve(0, 1_000, 0), 10_000_000);
        // Pruning drops what ended before now.
        bus.prune(20_000_000);
        assert!(bus.chunks.is_empty());
    }

    #[test]
    fn serial_mode_runs_one_op_at_a_time() {
        let mut s = pcftl_like("serial = true");
        let plane1 = 64 * 16; // channel 1
        let a = s.schedule(&[op(OpKind::Program, 0, 0, false)], 0).end;
        let b = s.schedule(&[op(OpKind::Program, plane1, 0, false)], 0).end;
        assert_eq!((a, b), (250_000, 500_000));
    }

    #[test]
    fn multi_plane_program_shares_one_tprog() {
        let mut s = pcftl_like("multi_plane = true");
        // Planes 0 and 2 are on channel 0; with 1 chip and 1 die they share die 0 (die_of = plane % 2).
        let g = s.geo.clone();
        assert_eq!(g.die_of(0), g.die_of(2));
        let plane2 = 2 * 64 * 16;
        let ops = [op(OpKind::Program, 0, 0, false), op(OpKind::Program, plane2, 0, false)];
        assert_eq!(s.schedule(&ops, 0).end, 2 * 50_000 + 200_000);
        assert_eq!(s.multi_plane_commands(), 1);
    }

    #[test]
    fn multi_plane_only_serialises_planes_of_a_die() {
        let mut s = pcftl_like("plane_concurrency = \"multi_plane_only\"");
        let plane2 = 2 * 64 * 16;
        let a = s.schedule(&[op(OpKind::Program, 0, 0, false)], 0).end;
        let b = s.schedule(&[op(OpKind::Program, plane2, 0, false)], 0).end;
        assert_eq!((a, b), (250_000, 500_000));
    }

    #[test]
    fn register_hit_skips_tr() {
        let mut s = pcftl_like("register_read_hits = true");
        let a = s.schedule(&[op(OpKind::Read, 5, 0, false)], 0).end;
        let b = s.schedule(&[op(OpKind::Read, 5, 0, false)], a).end;
        assert_eq!((a, b - a), (75_000, 50_000));
        assert_eq!(s.register_hits(), 1);
    }

    #[test]
    fn barrier_blocks_the_scope() {
        let mut s = pcftl_like("");
        let ops = [op(OpKind::Erase, 0, 0, false), op(OpKind::Barrier, 0, scope_code(GcScope::Device), false)];
        s.schedule(&ops, 0);
        let plane1 = 64 * 16;
        let host = FlashOp { tag: Tag::Host, ..op(OpKind::Program, plane1, 0, false) };
        assert_eq!(s.schedule(&[host], 0).host_end, 1_500_000 + 250_000);
        assert_eq!(s.busy().channel[1][Tag::Host as usize], 50_000);
    }

    #[test]
    fn host_link_serialises_transfers() {
        let t = tiny_toml().replace("[timing]", "[timing]\nhost_mb_per_s = 409.6");
        let mut s = Scheduler::new(&DriveConfig::from_toml(&t, "t").unwrap());
        assert_eq!(s.host_transfer(0, 4096), 10_000);
        assert_eq!(s.host_transfer(0, 8192), 30_000);
    }
}
