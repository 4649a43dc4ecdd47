//! Placing operations on the timed resources: a plane's array (or its die's), its channel's
//! bus, the DRAM port; one operation, a multi-plane command, a run of page copies, a barrier,
//! and the bookkeeping every placed operation adds (busy time, the plane's register, GC's
//! extent, contention).

use super::phases::Shape;
use super::{scope_planes, FlashOp, OpKind, Scheduler, SimTime, Tag, NO_DEP};
use crate::config::GcScope;
use crate::geometry::{PlaneId, Ppn, NONE};

impl Scheduler {
    /// The planes of `plane`'s die.
    pub(super) fn die_planes(&self, plane: PlaneId) -> impl Iterator<Item = PlaneId> {
        let dies = self.geo.dies();
        let first = self.map.die_of(plane);
        (0..self.geo.planes_per_die).map(move |k| first + k * dies)
    }

    /// Whether `op` occupies its whole die rather than its plane.
    #[inline]
    pub(super) fn die_wide(&self, kind: OpKind) -> bool {
        self.die_exclusive() && !(self.independent_reads && kind.is_read())
    }

    /// Earliest start of an operation of `kind` on `plane` by the array's availability.
    #[inline]
    pub(super) fn array_free(&self, plane: PlaneId, kind: OpKind) -> SimTime {
        if self.die_wide(kind) {
            self.die_planes(plane).map(|q| self.plane_free[q as usize]).max().unwrap_or(0)
        } else {
            self.plane_free[plane as usize]
        }
    }

    /// The array of `plane` (or its die) is busy until `end`.
    #[inline(always)]
    pub(super) fn occupy(&mut self, plane: PlaneId, kind: OpKind, end: SimTime) {
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

    pub(super) fn account(&mut self, plane: PlaneId, tag: Tag, bus_ns: u64, array_ns: u64) {
        let ch = self.map.channel_of(plane) as usize;
        self.busy.channel[ch][tag as usize] += bus_ns;
        self.busy.plane[plane as usize][tag as usize] += array_ns;
    }

    /// Place one operation (not deferred), after the deferred GC that must go first.
    pub(super) fn single(&mut self, op: FlashOp, plane: PlaneId, earliest: SimTime) -> SimTime {
        self.drain_before(plane, op.kind, earliest);
        self.place(op, plane, earliest)
    }

    /// Place one operation on its plane and channel.
    pub(super) fn place(&mut self, op: FlashOp, plane: PlaneId, earliest: SimTime) -> SimTime {
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
    pub(super) fn place_copy_run(
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
    pub(super) fn after_placing(&mut self, op: FlashOp, plane: PlaneId, earliest: SimTime, end: SimTime) {
        self.set_register(op, plane);
        match op.tag {
            Tag::Gc => self.gc_until[plane as usize] = self.gc_until[plane as usize].max(end),
            Tag::Host if op.kind == OpKind::Program => self.count_contention(plane, earliest),
            _ => {}
        }
    }

    /// A host program on `plane`, ready at `earliest`: count it if GC work was ahead of it,
    /// and whether another plane was idle then.
    pub(super) fn count_contention(&mut self, plane: PlaneId, earliest: SimTime) {
        // The program itself is placed already; its plane's GC extent is what it queued behind.
        if self.gc_until[plane as usize] <= earliest {
            return;
        }
        self.contention.host_programs_behind_gc += 1;
        let idle = (0..self.geo.planes())
            .any(|q| q != plane && self.plane_free[q as usize] <= earliest && !self.deferred.is_waiting(q));
        if idle {
            self.contention.host_programs_behind_gc_with_idle_plane += 1;
        }
    }

    pub(super) fn set_register(&mut self, op: FlashOp, plane: PlaneId) {
        self.register[plane as usize] = match op.kind {
            OpKind::Read | OpKind::ReadSpare | OpKind::Program => op.addr,
            OpKind::Copyback => op.addr2,
            _ => NONE,
        };
    }

    /// Place `ops` (the first on `plane`) as one multi-plane command, after the deferred GC
    /// that must go first.
    pub(super) fn multi(&mut self, ops: &[FlashOp], plane: PlaneId, earliest: SimTime) -> SimTime {
        self.drain_before(plane, ops[0].kind, earliest);
        self.place_group(ops, earliest)
    }

    /// Place `ops` (one kind, one die, distinct planes) as one multi-plane command.
    pub(super) fn place_group(&mut self, ops: &[FlashOp], earliest: SimTime) -> SimTime {
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

    pub(super) fn barrier(&mut self, addr: Ppn, scope: u32, until: SimTime) {
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
