//! Queued flash work that later operations may overtake (`ftl.gc_preemption`,
//! `timing.transaction_order = "read_first"`).
//!
//! The FTL runs a foreground collection at once (its state changes are done), but with
//! preemption on its flash operations are not placed on the plane in one go: they wait here,
//! per plane, and are placed one page copy at a time as simulated time reaches them. Programs
//! and erases for the plane that come later (host writes that need the space the collection
//! makes, translation write-backs) queue behind them. A read that arrives meanwhile is placed
//! after the page copy under way and before the rest, as controllers that suspend GC for reads
//! do.
//!
//! When host writes may go ahead of GC (`gc_preemption = "writes"`), a plane's queue has two
//! lanes, GC work and the rest (host and mapping work), each in the order it came; the
//! scheduler takes the host lane's front while its die's planes keep enough erased blocks
//! (below that, the die's GC lanes first, and a plane with none waits for them), unless
//! the other lane holds work on one of its blocks (a program never passes the erase or the
//! earlier programs of its block), and otherwise the oldest front of the two. For that the
//! queues count, per block, the entries of each lane that touch it. Otherwise all work
//! waits in the host lane, one queue in the order it came (the cheapest to serve).
//!
//! An entry is one operation; a controller copy's program is marked `after_prev` so that it
//! starts when its read ends and is never separated from it (the page copy is the unit of
//! preemption): it joins its read's lane.

use super::{FlashOp, OpKind, SimTime, Tag};
use crate::geometry::{BlockId, PlaneId};
use std::collections::VecDeque;

/// The lane of a plane's queue an entry waits in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Lane {
    /// GC's reads, programs, copy-backs and erases.
    Gc = 0,
    /// Host and mapping work.
    Host = 1,
}

impl Lane {
    fn other(self) -> Lane {
        match self {
            Lane::Gc => Lane::Host,
            Lane::Host => Lane::Gc,
        }
    }
}

/// One queued operation.
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
    /// Its place in the order the queues received work, set by [`DeferredQueues::push`]: a die
    /// that serves its planes' queues oldest first compares these.
    pub seq: u64,
    /// Its lane, set by [`DeferredQueues::push`].
    pub lane: Lane,
}

/// Per block, how many queued entries of each lane touch it (kept only when lanes may pass
/// each other).
#[derive(Debug, Clone)]
struct BlockRefs {
    pages_per_block: u32,
    refs: [Vec<u16>; 2],
}

impl BlockRefs {
    /// The blocks `op` reads, programs or erases (a copy-back: its source's and its
    /// destination's).
    fn blocks(&self, op: &FlashOp) -> [Option<BlockId>; 2] {
        let first = Some(op.addr / self.pages_per_block);
        match op.kind {
            OpKind::Copyback => [first, Some(op.addr2 / self.pages_per_block)],
            _ => [first, None],
        }
    }

    fn add(&mut self, d: &Deferred, delta: i32) {
        for b in self.blocks(&d.op).into_iter().flatten() {
            let r = &mut self.refs[d.lane as usize][b as usize];
            *r = u16::try_from(i32::from(*r) + delta).expect("a block's queued entries fit in u16");
        }
    }
}

/// Queued operations per plane.
#[derive(Debug, Clone)]
pub(super) struct DeferredQueues {
    queues: Vec<[VecDeque<Deferred>; 2]>,
    queued_ns: Vec<u64>,
    /// Planes whose queue is not empty, so that advancing the clock visits only them.
    busy: Vec<PlaneId>,
    next_seq: u64,
    /// Per plane, the lane of the entry queued last (a dependent entry joins it).
    last_lane: Vec<Lane>,
    /// Per plane, the GC erases queued (counted when lanes pass each other): their blocks are
    /// erased to the FTL, not yet on flash.
    gc_erases: Vec<u32>,
    /// Per block, the entries of each lane touching it; `Some` exactly when GC work has a
    /// lane of its own.
    block_refs: Option<BlockRefs>,
}

impl DeferredQueues {
    /// Queues for `planes` planes; `blocks` = (blocks, pages per block) when lanes may
    /// pass each other, so that it counts the entries touching each block.
    pub fn new(planes: u32, blocks: Option<(u32, u32)>) -> DeferredQueues {
        DeferredQueues {
            queues: vec![[VecDeque::new(), VecDeque::new()]; planes as usize],
            queued_ns: vec![0; planes as usize],
            busy: Vec::new(),
            next_seq: 0,
            last_lane: vec![Lane::Gc; planes as usize],
            gc_erases: vec![0; planes as usize],
            block_refs: blocks
                .map(|(n, ppb)| BlockRefs { pages_per_block: ppb, refs: [vec![0; n as usize], vec![0; n as usize]] }),
        }
    }

    #[inline]
    pub fn push(&mut self, plane: PlaneId, mut d: Deferred) {
        let p = plane as usize;
        d.seq = self.next_seq;
        self.next_seq += 1;
        d.lane = if d.after_prev {
            self.last_lane[p]
        } else if d.op.tag == Tag::Gc && self.block_refs.is_some() {
            Lane::Gc
        } else {
            Lane::Host
        };
        let was_empty = !self.is_waiting(plane);
        let q = &mut self.queues[p][d.lane as usize];
        assert!(!d.after_prev || !q.is_empty(), "plane {plane}: a dependent operation with nothing before it");
        if was_empty {
            self.busy.push(plane);
        }
        q.push_back(d);
        self.last_lane[p] = d.lane;
        self.queued_ns[p] += d.cost_ns;
        // Only lanes that pass each other need the counts (`gc_preemption = "writes"`).
        if let Some(r) = self.block_refs.as_mut() {
            r.add(&d, 1);
            if d.op.tag == Tag::Gc && d.op.kind == OpKind::Erase {
                self.gc_erases[p] += 1;
            }
        }
    }

    /// The front entry of `plane`'s `lane`.
    #[inline]
    pub fn front(&self, plane: PlaneId, lane: Lane) -> Option<&Deferred> {
        self.queues[plane as usize][lane as usize].front()
    }

    /// The front entry of `plane` queued first (first come, first served across the lanes).
    #[inline]
    pub fn oldest(&self, plane: PlaneId) -> Option<&Deferred> {
        let [gc, host] = &self.queues[plane as usize];
        if self.block_refs.is_none() {
            return host.front();
        }
        match (gc.front(), host.front()) {
            (Some(g), Some(h)) => Some(if g.seq < h.seq { g } else { h }),
            (g, h) => g.or(h),
        }
    }

    /// Whether `d` (a front entry) may go ahead of the other lane: no entry there touches
    /// one of its blocks. Always false when the queues do not count them.
    pub fn may_pass(&self, d: &Deferred) -> bool {
        let Some(r) = &self.block_refs else { return false };
        let other = &r.refs[d.lane.other() as usize];
        r.blocks(&d.op).into_iter().flatten().all(|b| other[b as usize] == 0)
    }

    #[inline]
    pub fn pop(&mut self, plane: PlaneId, lane: Lane) -> Deferred {
        let p = plane as usize;
        let d = self.queues[p][lane as usize].pop_front().expect("pop from a lane with queued work");
        self.queued_ns[p] -= d.cost_ns;
        // Only lanes that pass each other need the counts (`gc_preemption = "writes"`).
        if let Some(r) = self.block_refs.as_mut() {
            r.add(&d, -1);
            if d.op.tag == Tag::Gc && d.op.kind == OpKind::Erase {
                self.gc_erases[p] -= 1;
            }
        }
        if !self.is_waiting(plane) {
            let i = self.busy.iter().position(|&q| q == plane).expect("a plane with a queue is listed busy");
            self.busy.swap_remove(i);
        }
        d
    }

    /// Whether `plane` has work waiting.
    #[inline]
    pub fn is_waiting(&self, plane: PlaneId) -> bool {
        let [gc, host] = &self.queues[plane as usize];
        !gc.is_empty() || !host.is_empty()
    }

    /// GC erases queued on `plane`.
    pub fn gc_erases(&self, plane: PlaneId) -> u32 {
        self.gc_erases[plane as usize]
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
