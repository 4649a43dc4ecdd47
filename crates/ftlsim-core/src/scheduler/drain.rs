//! Deferred work (`deferred.rs`): which operations wait, and placing them as simulated time
//! reaches them or as later work must go after them (GC preemption, reading first, a die
//! serving its planes' queues as one).

use super::deferred::{Deferred, Lane};
use super::die_starts::DieStarts;
use super::{Drain, FlashOp, OpKind, Scheduler, SimTime, Tag, NO_REQUEST};
use crate::geometry::PlaneId;

impl Scheduler {
    /// The FTL's erased blocks per plane after its latest call (`FlashArray::erased_blocks`):
    /// with `gc_preemption = "writes"` a plane's host work goes ahead of its GC while enough of
    /// them are erased on flash too.
    pub fn note_erased_blocks(&mut self, erased: &[u32]) {
        if !self.preempt_writes() {
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
    pub(super) fn gc_urgent(&self, plane: PlaneId) -> bool {
        let queued = self.held_back + self.deferred.gc_erases(plane);
        self.erased[plane as usize].saturating_sub(queued) < self.floor
    }

    /// `gc_preemption = "writes"`: GC goes first on `plane`'s die, because one of its planes
    /// is below the floor (MQSim's urgent mode is a chip's: `GC_is_in_urgent_mode`), and GC
    /// work of some plane of the die is queued.
    pub(super) fn die_gc_first(&self, plane: PlaneId) -> bool {
        self.die_planes(plane).any(|q| self.gc_urgent(q))
            && self.die_planes(plane).any(|q| self.deferred.front(q, Lane::Gc).is_some())
    }

    /// The queued entry of `plane` that goes next: the oldest, or, with `gc_preemption =
    /// "writes"`, the front of the lane that has priority when no entry of the other lane
    /// touches its blocks: the host's, unless GC goes first on the die; then the plane's GC,
    /// and a plane with no GC queued waits for its die-mates' (MQSim's TSU serves a chip's
    /// GC transactions before any user transaction in urgent mode).
    #[inline]
    pub(super) fn next_entry(&self, plane: PlaneId) -> Option<&Deferred> {
        if self.preempt_writes() {
            if self.die_gc_first(plane) {
                let gc = self.deferred.front(plane, Lane::Gc)?;
                if self.deferred.may_pass(gc) {
                    return Some(gc);
                }
            } else if let Some(d) = self.deferred.front(plane, Lane::Host).filter(|d| self.deferred.may_pass(d)) {
                return Some(d);
            }
        }
        self.deferred.oldest(plane)
    }

    pub(super) fn scan_deferred_start(&self) -> Option<SimTime> {
        self.deferred.waiting_planes().filter_map(|p| self.front_start(p)).min()
    }

    /// Recompute the marked dies' starts; the earliest of all, if any work is queued.
    pub(super) fn refresh_die_starts(&mut self) -> Option<SimTime> {
        let ds = self.die_starts.as_mut()?;
        let mut dies = std::mem::take(&mut self.dies_scratch);
        ds.take_marked(&mut dies);
        let n = self.geo.dies();
        for &d in &dies {
            let start = (0..self.geo.planes_per_die).filter_map(|k| self.front_start(d + k * n)).min();
            if let Some(ds) = self.die_starts.as_mut() {
                ds.set(d, start.unwrap_or(super::die_starts::NONE));
            }
        }
        self.dies_scratch = dies;
        let t = self.die_starts.as_ref().map_or(super::die_starts::NONE, DieStarts::earliest);
        (t != super::die_starts::NONE).then_some(t)
    }

    /// Whatever may change when `plane`'s die can start its queued work happened (work queued
    /// or taken off, a command placed on the die, a barrier).
    #[inline(always)]
    pub(super) fn touch(&mut self, plane: PlaneId) {
        if let Some(ds) = self.die_starts.as_mut() {
            ds.mark(self.map.die_of(plane));
        }
    }

    pub(super) fn drain_planes(&mut self, limit: Drain) {
        if self.deferred.is_empty() {
            return;
        }
        let mut planes = std::mem::take(&mut self.planes_scratch);
        self.deferred.busy_planes(&mut planes);
        for &p in &planes {
            if self.die_fifo() {
                self.drain_die(self.map.die_of(p), limit);
            } else {
                self.drain(p, limit);
            }
        }
        self.planes_scratch = planes;
    }

    /// Whether `op` on `plane`, of a batch that may defer work, goes to the plane's queue: GC
    /// work does, and so do programs and erases that follow deferred work on their plane (a
    /// write needs the space GC makes) or wait for their die's GC, or all of them reading
    /// first; other reads never queue.
    #[inline]
    pub(super) fn defers(&self, op: &FlashOp, plane: PlaneId, after_deferred: bool) -> bool {
        after_deferred
            || op.tag == Tag::Gc
            || (!op.kind.is_read()
                && (self.read_first()
                    || self.deferred.is_waiting(plane)
                    || (self.preempt_writes() && self.die_gc_first(plane))))
    }

    /// Queue `op` on `plane` (no earlier than `earliest`; after the entry queued before it
    /// there when `after_prev`), for `request` if it is the host's; whether it is.
    #[inline]
    pub(super) fn defer(
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
        self.deferred.push(plane, Deferred { op, earliest, after_prev, cost_ns, request, seq: 0, lane: Lane::Gc });
        self.touch(plane);
        host
    }

    /// When queued entry `d` may go: its batch's ready time, and, when lanes pass each other,
    /// not before the clock: the entry that goes next can then change after the clock passed
    /// the time it could have started (a plane falls below the floor, GC work arrives on the
    /// host front's block). Served oldest first, a front never falls behind the clock, and
    /// the ready time stays the one the contention counters measure from.
    #[inline]
    pub(super) fn ready_at(&self, d: &Deferred) -> SimTime {
        if self.preempt_writes() {
            d.earliest.max(self.now)
        } else {
            d.earliest
        }
    }

    /// When the front entry of `plane`'s deferred work would start.
    pub(super) fn front_start(&self, plane: PlaneId) -> Option<SimTime> {
        let d = self.next_entry(plane)?;
        debug_assert!(!d.after_prev, "a page copy is never split, so its program is never in front");
        Some(self.ready_at(d).max(self.array_free(plane, d.op.kind)))
    }

    /// Place the deferred operations of `plane` that `limit` admits, in order. A page copy
    /// is never split: a program that waits for its read goes with it.
    pub(super) fn drain(&mut self, plane: PlaneId, limit: Drain) {
        while let Some(&d) = self.next_entry(plane) {
            debug_assert!(!d.after_prev, "a page copy is never split, so its program is never in front");
            let start = self.ready_at(&d).max(self.array_free(plane, d.op.kind));
            if !limit.admits(start) && !self.aged(&d, limit) {
                return;
            }
            self.pop_queued(plane, d.lane);
            if !(self.read_first() && self.multi_plane && self.gather(plane, &d, start)) {
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
    pub(super) fn die_fifo(&self) -> bool {
        self.read_first() && self.die_exclusive()
    }

    /// [`Self::drain`] for the planes of `die` together: the entry `limit` admits that starts
    /// first (and, among those, was queued first) goes next, with its page copy's program.
    pub(super) fn drain_die(&mut self, die: u32, limit: Drain) {
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
                let rank = u8::from(!(self.preempt_writes() && d.lane == Lane::Host));
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
    pub(super) fn pop_queued(&mut self, plane: PlaneId, lane: Lane) -> Deferred {
        let d = self.deferred.pop(plane, lane);
        self.touch(plane);
        d
    }

    /// A page copy is never split: the program waiting at the front of `plane`'s `lane` for
    /// the read just placed goes right after it.
    pub(super) fn place_copy_program(&mut self, plane: PlaneId, lane: Lane) {
        while self.deferred.front(plane, lane).is_some_and(|e| e.after_prev) {
            let e = self.pop_queued(plane, lane);
            self.place_queued(plane, &e, self.deferred_last_end[plane as usize]);
        }
    }

    /// Place queued entry `d` of `plane` from `earliest`; its request (if any) completes then.
    pub(super) fn place_queued(&mut self, plane: PlaneId, d: &Deferred, earliest: SimTime) {
        let end = self.place(d.op, plane, earliest);
        self.deferred_last_end[plane as usize] = end;
        if d.request != NO_REQUEST {
            self.completions.push((d.request, end));
        }
    }

    /// Reading first: has `d` waited so long (`timing.read_first_age_cap_ns`) that it goes
    /// ahead of a read ready at `limit`'s time?
    pub(super) fn aged(&self, d: &Deferred, limit: Drain) -> bool {
        match limit {
            Drain::Before(t) => self.read_first() && self.age_cap > 0 && d.earliest.saturating_add(self.age_cap) <= t,
            _ => false,
        }
    }

    /// Reading first: the queued operations at the front of `lead`'s die-mates that can join
    /// its front entry `d` (popped, starting at `start`) in one multi-plane command: the same
    /// kind and tag, the same page in their blocks, ready by `start`. Places the command and
    /// returns true if any joined (MQSim's TSU gathers a die's queued transactions so).
    pub(super) fn gather(&mut self, lead: PlaneId, d: &Deferred, start: SimTime) -> bool {
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
                self.deferred_last_end[self.map.plane_of(g.op.addr) as usize] = end;
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
    pub(super) fn drain_before(&mut self, plane: PlaneId, kind: OpKind, earliest: SimTime) {
        if !self.deferred.is_empty() {
            self.drain_deferred_before(plane, kind, earliest);
        }
    }

    pub(super) fn drain_deferred_before(&mut self, plane: PlaneId, kind: OpKind, earliest: SimTime) {
        if self.die_fifo() {
            self.drain_die(self.map.die_of(plane), Drain::Before(earliest));
        } else if self.die_exclusive() {
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
    pub(super) fn drain_plane_fully(&mut self, plane: PlaneId) {
        if !self.preempt_writes() {
            self.drain(plane, Drain::All);
            return;
        }
        // The first pass empties the die's GC lanes (a plane with GC queued always has an
        // entry to place), so the second finds no plane waiting.
        while self.deferred.is_waiting(plane) {
            for q in self.die_planes(plane) {
                self.drain(q, Drain::All);
            }
        }
    }
}
