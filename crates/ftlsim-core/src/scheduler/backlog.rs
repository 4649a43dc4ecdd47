//! Foreground GC work that reads may overtake (`ftl.gc_preemption = "reads"`).
//!
//! The FTL runs a foreground collection at once (its state changes are done), but with
//! preemption on its flash operations are not placed on the plane in one go: they wait here,
//! per plane, in order, and are placed one page copy at a time as simulated time reaches
//! them. Programs and erases for the plane that come later (host writes that need the space
//! the collection makes, translation write-backs) queue behind them. A read that arrives
//! meanwhile is placed after the page copy under way and before the rest, as controllers that
//! suspend GC for reads do.
//!
//! An entry is one operation; a controller copy's program is marked `after_prev` so that it
//! starts when its read ends and is never separated from it (the page copy is the unit of
//! preemption).

use super::{FlashOp, SimTime};
use crate::geometry::PlaneId;
use std::collections::VecDeque;

/// One deferred GC operation.
#[derive(Debug, Clone, Copy)]
pub(super) struct Deferred {
    /// The operation.
    pub op: FlashOp,
    /// Not before this (its batch's ready time).
    pub earliest: SimTime,
    /// Starts when the entry before it on the plane ends (the program of a controller copy).
    pub after_prev: bool,
    /// Its estimated array time, for [`super::Scheduler::plane_ready`].
    pub cost_ns: u64,
    /// The request that completes with it (a host operation), or `NO_REQUEST`.
    pub request: u32,
    /// Its place in the order the backlog received work, set by [`GcBacklog::push`]: a die
    /// that serves its planes' queues oldest first compares these.
    pub seq: u64,
}

/// Deferred GC operations per plane.
#[derive(Debug, Clone, Default)]
pub(super) struct GcBacklog {
    queues: Vec<VecDeque<Deferred>>,
    queued_ns: Vec<u64>,
    /// Planes whose queue is not empty, so that advancing the clock visits only them.
    busy: Vec<PlaneId>,
    next_seq: u64,
}

impl GcBacklog {
    pub fn new(planes: u32) -> GcBacklog {
        GcBacklog {
            queues: vec![VecDeque::new(); planes as usize],
            queued_ns: vec![0; planes as usize],
            busy: Vec::new(),
            next_seq: 0,
        }
    }

    pub fn push(&mut self, plane: PlaneId, mut d: Deferred) {
        d.seq = self.next_seq;
        self.next_seq += 1;
        let q = &mut self.queues[plane as usize];
        assert!(!d.after_prev || !q.is_empty(), "plane {plane}: a dependent GC operation with nothing before it");
        if q.is_empty() {
            self.busy.push(plane);
        }
        q.push_back(d);
        self.queued_ns[plane as usize] += d.cost_ns;
    }

    pub fn front(&self, plane: PlaneId) -> Option<&Deferred> {
        self.queues[plane as usize].front()
    }

    pub fn pop(&mut self, plane: PlaneId) -> Deferred {
        let q = &mut self.queues[plane as usize];
        let d = q.pop_front().expect("pop from a plane with deferred GC");
        self.queued_ns[plane as usize] -= d.cost_ns;
        if q.is_empty() {
            let i = self.busy.iter().position(|&p| p == plane).expect("a plane with a queue is listed busy");
            self.busy.swap_remove(i);
        }
        d
    }

    /// Whether `plane` has work waiting.
    pub fn is_waiting(&self, plane: PlaneId) -> bool {
        !self.queues[plane as usize].is_empty()
    }

    /// Estimated array time of the work waiting on `plane`, ns.
    pub fn queued_ns(&self, plane: PlaneId) -> u64 {
        self.queued_ns[plane as usize]
    }

    /// The planes with work waiting, in plane order, copied into `out` (draining changes
    /// the list).
    pub fn busy_planes(&self, out: &mut Vec<PlaneId>) {
        out.clear();
        out.extend_from_slice(&self.busy);
        out.sort_unstable();
    }

    /// The planes with work waiting, in no particular order.
    pub fn waiting_planes(&self) -> impl Iterator<Item = PlaneId> + '_ {
        self.busy.iter().copied()
    }

    pub fn is_empty(&self) -> bool {
        self.busy.is_empty()
    }
}
