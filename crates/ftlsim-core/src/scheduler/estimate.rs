//! Load estimates: where a new operation could start first (dynamic allocation), and
//! whether a plane is collecting.

use super::{FlashOp, OpKind, Scheduler, SimTime};
use crate::geometry::PlaneId;

impl Scheduler {
    /// Estimated array time of `op` (dynamic allocation's load estimate).
    pub(super) fn cost_ns(&self, op: &FlashOp) -> u64 {
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
    pub(super) fn plane_ready(&self, plane: PlaneId) -> SimTime {
        let p = plane as usize;
        if !self.die_exclusive() {
            return self.plane_free[p].max(self.now) + self.deferred.queued_ns(plane) + self.recorded_ns[p];
        }
        let (mut free, mut queued) = (self.now, 0);
        for q in self.die_planes(plane) {
            free = free.max(self.plane_free[q as usize]);
            queued += self.deferred.queued_ns(q) + self.recorded_ns[q as usize];
        }
        free + queued
    }

    /// Whether `plane` has GC work placed or deferred that ends after `t`.
    pub fn in_gc_at(&self, plane: PlaneId, t: SimTime) -> bool {
        self.deferred.is_waiting(plane) || self.gc_until[plane as usize] > t
    }
}
