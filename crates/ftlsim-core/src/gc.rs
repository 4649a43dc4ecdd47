//! Garbage-collection and allocation pieces shared by every FTL.
//!
//! - [`VictimIndex`]: victim selection per plane. Greedy is O(1): closed blocks sit in
//!   doubly-linked buckets by valid count, with the lowest non-empty bucket tracked per
//!   plane. FIFO takes the oldest closed block. Cost-benefit (Kawaguchi et al.) scans the
//!   plane's closed blocks, O(blocks per plane), and is documented as such.
//! - [`BlockManager`]: per-plane free-block pools (FIFO, so wear spreads), open (active)
//!   blocks per named write stream, and the victim index, kept consistent.
//! - [`GcJob`]: a resumable collection of one victim, one page copy per step, so that GC
//!   can be run to completion in the foreground or advanced between host requests and
//!   suspended at any page boundary (a preemption point).
//!
//! Invariants: a block is in exactly one of {free pool, open as some stream's active block,
//! closed in the victim index, being collected}; a closed block's bucket equals its valid
//! count.

use crate::address_map::FastDiv;
use crate::config::VictimPolicy;
use crate::error::SimError;
use crate::flash::{FlashArray, Oob};
use crate::ftl::FlashCtx;
use crate::geometry::{BlockId, Geometry, Lpn, PlaneId, Ppn, NONE};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Where a block is in its life cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[repr(u8)]
pub enum BlockState {
    /// Erased, in its plane's free pool.
    Free,
    /// Open as a stream's active block.
    Open,
    /// Full (or closed early), a GC candidate.
    Closed,
    /// Chosen as a victim and being collected.
    Victim,
    /// Held back, never allocated (bad-block spares).
    Reserved,
    /// Lent whole to an FTL that manages it itself (WAFTL's Buffer Zone and block-mapped
    /// blocks): no stream writes it and GC never chooses it until it is given back erased.
    Lent,
}

/// Victim selection per plane.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VictimIndex {
    policy: VictimPolicy,
    ppb: u32,
    blocks_per_plane: u32,
    head: Vec<u32>,
    next: Vec<u32>,
    prev: Vec<u32>,
    bucket: Vec<u16>,
    min_bucket: Vec<u32>,
    fifo: Vec<VecDeque<BlockId>>,
    closed_at: Vec<u64>,
    in_index: Vec<bool>,
}

impl VictimIndex {
    /// An empty index.
    pub fn new(g: &Geometry, policy: VictimPolicy) -> VictimIndex {
        let planes = g.planes() as usize;
        let buckets = (g.pages_per_block + 1) as usize;
        let blocks = g.blocks() as usize;
        VictimIndex {
            policy,
            ppb: g.pages_per_block,
            blocks_per_plane: g.blocks_per_plane,
            head: vec![NONE; planes * buckets],
            next: vec![NONE; blocks],
            prev: vec![NONE; blocks],
            bucket: vec![0; blocks],
            min_bucket: vec![g.pages_per_block + 1; planes],
            fifo: if policy == VictimPolicy::Fifo { vec![VecDeque::new(); planes] } else { Vec::new() },
            closed_at: vec![0; blocks],
            in_index: vec![false; blocks],
        }
    }

    #[inline]
    fn head_idx(&self, plane: PlaneId, v: u32) -> usize {
        plane as usize * (self.ppb as usize + 1) + v as usize
    }

    fn link(&mut self, block: BlockId, v: u32) {
        let plane = block / self.blocks_per_plane;
        let h = self.head_idx(plane, v);
        let old = self.head[h];
        self.next[block as usize] = old;
        self.prev[block as usize] = NONE;
        if old != NONE {
            self.prev[old as usize] = block;
        }
        self.head[h] = block;
        self.bucket[block as usize] = v as u16;
        let m = &mut self.min_bucket[plane as usize];
        *m = (*m).min(v);
    }

    fn unlink(&mut self, block: BlockId) {
        let plane = block / self.blocks_per_plane;
        let v = u32::from(self.bucket[block as usize]);
        let (n, p) = (self.next[block as usize], self.prev[block as usize]);
        if p != NONE {
            self.next[p as usize] = n;
        } else {
            let h = self.head_idx(plane, v);
            self.head[h] = n;
        }
        if n != NONE {
            self.prev[n as usize] = p;
        }
    }

    /// Add a closed block with `valid` pages; `clock` orders blocks for FIFO and ages them
    /// for cost-benefit.
    pub fn insert(&mut self, block: BlockId, valid: u32, clock: u64) {
        assert!(!self.in_index[block as usize], "block {block} inserted twice");
        assert!(valid <= self.ppb, "block {block}: valid {valid} > pages per block");
        self.in_index[block as usize] = true;
        self.closed_at[block as usize] = clock;
        match self.policy {
            VictimPolicy::Greedy => self.link(block, valid),
            VictimPolicy::Fifo => self.fifo[(block / self.blocks_per_plane) as usize].push_back(block),
            VictimPolicy::CostBenefit => {}
        }
    }

    /// A page of a closed block was invalidated; `valid` is the block's new count.
    #[inline]
    pub fn on_invalidate(&mut self, block: BlockId, valid: u32) {
        if self.policy == VictimPolicy::Greedy && self.in_index[block as usize] {
            debug_assert_eq!(u32::from(self.bucket[block as usize]), valid + 1);
            self.unlink(block);
            self.link(block, valid);
        }
    }

    /// Is the block a closed GC candidate?
    pub fn contains(&self, block: BlockId) -> bool {
        self.in_index[block as usize]
    }

    /// Best victim of a plane without removing it; `flash` gives valid counts, `clock`
    /// the current age clock.
    pub fn peek(&mut self, plane: PlaneId, flash: &FlashArray, clock: u64) -> Option<BlockId> {
        match self.policy {
            VictimPolicy::Greedy => {
                let mut v = self.min_bucket[plane as usize];
                while v <= self.ppb {
                    let b = self.head[self.head_idx(plane, v)];
                    if b != NONE {
                        self.min_bucket[plane as usize] = v;
                        return Some(b);
                    }
                    v += 1;
                }
                self.min_bucket[plane as usize] = self.ppb + 1;
                None
            }
            VictimPolicy::Fifo => self.fifo[plane as usize].front().copied(),
            VictimPolicy::CostBenefit => {
                let first = plane * self.blocks_per_plane;
                let mut best: Option<(f64, BlockId)> = None;
                for b in first..first + self.blocks_per_plane {
                    if !self.in_index[b as usize] {
                        continue;
                    }
                    let u = f64::from(flash.valid_count(b)) / f64::from(self.ppb);
                    let age = (clock.saturating_sub(self.closed_at[b as usize]) + 1) as f64;
                    let score = if u == 0.0 { f64::INFINITY } else { (1.0 - u) * age / (2.0 * u) };
                    if best.is_none_or(|(s, _)| score > s) {
                        best = Some((score, b));
                    }
                }
                best.map(|(_, b)| b)
            }
        }
    }

    /// Remove a block from the index (it becomes a victim).
    pub fn remove(&mut self, block: BlockId) {
        assert!(self.in_index[block as usize], "block {block} is not in the victim index");
        self.in_index[block as usize] = false;
        match self.policy {
            VictimPolicy::Greedy => self.unlink(block),
            VictimPolicy::Fifo => {
                let q = &mut self.fifo[(block / self.blocks_per_plane) as usize];
                let pos = q.iter().position(|&b| b == block).expect("fifo holds every indexed block");
                q.remove(pos);
            }
            VictimPolicy::CostBenefit => {}
        }
    }
}

/// Free pools, open blocks per stream and the victim index of every plane.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BlockManager {
    geo: Geometry,
    /// Pages per block as a divider (one division per invalidated page otherwise).
    per_block: FastDiv,
    streams: u32,
    free: Vec<VecDeque<BlockId>>,
    active: Vec<BlockId>,
    state: Vec<BlockState>,
    victims: VictimIndex,
    clock: u64,
    /// Pages at the end of every block that never hold data (a per-block metadata table,
    /// written stale): a block with all its other pages valid has nothing to reclaim.
    tail_pages: u32,
}

impl BlockManager {
    /// All blocks free except `held_back` per plane (the last blocks of each plane), with
    /// `streams` write streams per plane.
    pub fn new(g: &Geometry, streams: u32, held_back: u32, policy: VictimPolicy) -> BlockManager {
        let mut free = Vec::with_capacity(g.planes() as usize);
        let mut state = vec![BlockState::Free; g.blocks() as usize];
        for p in 0..g.planes() {
            let first = g.first_block(p);
            let usable = g.blocks_per_plane - held_back;
            free.push((first..first + usable).collect::<VecDeque<_>>());
            for b in first + usable..first + g.blocks_per_plane {
                state[b as usize] = BlockState::Reserved;
            }
        }
        BlockManager {
            geo: g.clone(),
            per_block: FastDiv::new(g.pages_per_block),
            streams,
            free,
            active: vec![NONE; (g.planes() * streams) as usize],
            state,
            victims: VictimIndex::new(g, policy),
            clock: 0,
            tail_pages: 0,
        }
    }

    /// Every block ends with `pages` pages that never hold data (FastGC's and the per-page
    /// quota's counter table): victims must have invalid pages besides them.
    pub fn with_tail_pages(mut self, pages: u32) -> BlockManager {
        assert!(pages < self.geo.pages_per_block, "{pages} tail pages of {}-page blocks", self.geo.pages_per_block);
        self.tail_pages = pages;
        self
    }

    /// Pages of a block that can hold data.
    pub fn data_pages_per_block(&self) -> u32 {
        self.geo.pages_per_block - self.tail_pages
    }

    /// Free blocks of a plane (open blocks not counted).
    #[inline]
    pub fn free_blocks(&self, plane: PlaneId) -> u32 {
        self.free[plane as usize].len() as u32
    }

    /// Free blocks of the whole drive.
    pub fn free_blocks_total(&self) -> u64 {
        self.free.iter().map(|f| f.len() as u64).sum()
    }

    /// State of a block.
    pub fn state(&self, block: BlockId) -> BlockState {
        self.state[block as usize]
    }

    /// The open block of a stream on a plane, if any.
    pub fn active(&self, plane: PlaneId, stream: u32) -> Option<BlockId> {
        let b = self.active[(plane * self.streams + stream) as usize];
        (b != NONE).then_some(b)
    }

    /// Next page to program for `stream` on `plane`, opening a free block when the current
    /// one is full. Errors when the plane has no free block left.
    pub fn allocate(&mut self, flash: &FlashArray, plane: PlaneId, stream: u32) -> Result<Ppn, SimError> {
        assert!(stream < self.streams, "stream {stream} >= {}", self.streams);
        let slot = (plane * self.streams + stream) as usize;
        let mut b = self.active[slot];
        if b != NONE && flash.write_pointer(b) >= self.geo.pages_per_block {
            self.close(flash, b);
            b = NONE;
        }
        if b == NONE {
            b = self.free[plane as usize]
                .pop_front()
                .ok_or_else(|| SimError::Ftl(format!("plane {plane} has no free block left (GC could not keep up)")))?;
            assert_eq!(self.state[b as usize], BlockState::Free, "block {b} in the free pool is not free");
            assert_eq!(flash.write_pointer(b), 0, "free block {b} is not erased");
            self.state[b as usize] = BlockState::Open;
            self.active[slot] = b;
        }
        Ok(self.geo.first_page(b) + flash.write_pointer(b))
    }

    /// Erased pages a plane can still program: its free blocks and the unwritten tail of
    /// each open block. A collection that does not raise it made no progress.
    pub fn free_pages(&self, flash: &FlashArray, plane: PlaneId) -> u64 {
        let ppb = self.geo.pages_per_block;
        let open: u64 = (0..self.streams)
            .filter_map(|s| self.active(plane, s))
            .map(|b| u64::from(ppb - flash.write_pointer(b)))
            .sum();
        u64::from(self.free_blocks(plane)) * u64::from(ppb) + open
    }

    /// Close the open block of `stream` on `plane` if it is full, so that GC can choose it
    /// before the stream allocates on that plane again.
    pub fn close_if_full(&mut self, flash: &FlashArray, plane: PlaneId, stream: u32) {
        let slot = (plane * self.streams + stream) as usize;
        let b = self.active[slot];
        if b != NONE && flash.write_pointer(b) >= self.geo.pages_per_block {
            self.close(flash, b);
            self.active[slot] = NONE;
        }
    }

    fn close(&mut self, flash: &FlashArray, block: BlockId) {
        assert_eq!(self.state[block as usize], BlockState::Open);
        self.clock += 1;
        self.state[block as usize] = BlockState::Closed;
        self.victims.insert(block, flash.valid_count(block), self.clock);
    }

    /// Prefetch the state [`BlockManager::on_invalidate`] of a page in `block` touches.
    #[inline]
    pub fn prefetch_block(&self, block: BlockId) {
        crate::big_array::prefetch(&self.state, block as usize);
        crate::big_array::prefetch(&self.victims.bucket, block as usize);
        crate::big_array::prefetch(&self.victims.next, block as usize);
        crate::big_array::prefetch(&self.victims.prev, block as usize);
    }

    /// Record that `ppn` was invalidated in the flash array.
    #[inline]
    pub fn on_invalidate(&mut self, flash: &FlashArray, ppn: Ppn) {
        let b = self.per_block.quotient(ppn);
        if self.state[b as usize] == BlockState::Closed {
            self.victims.on_invalidate(b, flash.valid_count(b));
        }
    }

    /// Best victim on a plane. A victim with no invalid page frees nothing, so it is only
    /// returned under FIFO with `must_advance` (a circular log has to move past it, as in
    /// Desnoyers' FIFO model); otherwise such a block means there is nothing to collect.
    pub fn peek_victim(&mut self, flash: &FlashArray, plane: PlaneId, must_advance: bool) -> Option<BlockId> {
        let clock = self.clock;
        let fifo = self.victims.policy == VictimPolicy::Fifo;
        self.victims
            .peek(plane, flash, clock)
            .filter(|&b| flash.valid_count(b) < self.data_pages_per_block() || (fifo && must_advance))
    }

    /// The GC job to run next on `plane`: the suspended one in `suspended` if any, else a
    /// new job on the best victim ([`BlockManager::peek_victim`]), else `None`.
    pub fn next_job(
        &mut self,
        suspended: &mut Option<GcJob>,
        flash: &FlashArray,
        plane: PlaneId,
        must_advance: bool,
    ) -> Option<GcJob> {
        suspended.take().or_else(|| self.peek_victim(flash, plane, must_advance).map(|v| self.take_victim(v)))
    }

    /// What the next GC step on `plane` does, given the job suspended there (channel
    /// managers, [`crate::ftl::Ftl::gc_next`]): erase a victim with no valid page left,
    /// move a page, or nothing when no block has an invalid page.
    pub fn gc_next(&mut self, suspended: &Option<GcJob>, flash: &FlashArray, plane: PlaneId) -> crate::ftl::GcNext {
        let victim = match suspended {
            Some(job) => Some(job.victim),
            None => self.peek_victim(flash, plane, false),
        };
        match victim {
            None => crate::ftl::GcNext::Nothing,
            Some(b) if flash.valid_count(b) == 0 => crate::ftl::GcNext::Erase,
            Some(_) => crate::ftl::GcNext::Copy,
        }
    }

    /// Seed 004 Sec. 3.2.2: a page-mapped collection suspended at a preemption point may
    /// resume on a better victim than its own, which the writes since have made. If the best
    /// victim of `plane` has fewer valid pages than `suspended`'s, the suspended victim goes
    /// back to the index as a closed block (its moved pages stay invalid) and `suspended` is
    /// cleared, so the next step takes the best one. Returns whether it switched.
    pub fn repick(&mut self, suspended: &mut Option<GcJob>, flash: &FlashArray, plane: PlaneId) -> bool {
        let Some(job) = suspended.as_ref() else { return false };
        let mine = flash.valid_count(job.victim);
        match self.peek_victim(flash, plane, false) {
            Some(best) if flash.valid_count(best) < mine => {
                let b = job.victim;
                assert_eq!(self.state[b as usize], BlockState::Victim, "suspended victim {b} is not a victim");
                self.state[b as usize] = BlockState::Closed;
                let at = self.victims.closed_at[b as usize];
                self.victims.insert(b, mine, at);
                *suspended = None;
                true
            }
            _ => false,
        }
    }

    /// Take a victim out of the index: a [`GcJob`] will collect it.
    pub fn take_victim(&mut self, block: BlockId) -> GcJob {
        self.victims.remove(block);
        self.state[block as usize] = BlockState::Victim;
        GcJob::new(block)
    }

    /// Lend the free block of `plane` with the fewest erases (ties: the first in the pool),
    /// if the plane has one ([`BlockState::Lent`]).
    pub fn lend_youngest(&mut self, flash: &FlashArray, plane: PlaneId) -> Option<BlockId> {
        let pool = &mut self.free[plane as usize];
        let (i, _) = pool.iter().enumerate().min_by_key(|&(i, &b)| (flash.erase_count(b), i))?;
        let b = pool.remove(i).expect("index from the pool");
        self.state[b as usize] = BlockState::Lent;
        Some(b)
    }

    /// Lend the free block `plane` would allocate next (its pool's front), if it has one.
    pub fn lend_next(&mut self, plane: PlaneId) -> Option<BlockId> {
        let b = self.free[plane as usize].pop_front()?;
        self.state[b as usize] = BlockState::Lent;
        Some(b)
    }

    /// A lent block comes back erased to its plane's free pool.
    pub fn give_back(&mut self, flash: &FlashArray, block: BlockId) {
        assert_eq!(self.state[block as usize], BlockState::Lent, "block {block} given back was not lent");
        assert_eq!(flash.write_pointer(block), 0, "block {block} given back is not erased");
        self.state[block as usize] = BlockState::Free;
        self.free[self.geo.plane_of_block(block) as usize].push_back(block);
    }

    /// An erased victim returns to its plane's free pool.
    pub fn release(&mut self, flash: &FlashArray, block: BlockId) {
        assert_eq!(self.state[block as usize], BlockState::Victim, "released block {block} was not a victim");
        assert_eq!(flash.write_pointer(block), 0, "released block {block} is not erased");
        self.state[block as usize] = BlockState::Free;
        self.free[self.geo.plane_of_block(block) as usize].push_back(block);
    }

    /// After a power cut, on a manager built anew (every usable block free): take each
    /// block's state from the flash once recovery has re-validated its pages. A written
    /// block holding no live page is erased (as GC would; this includes a block whose erase
    /// was cut, every page torn, and a block opened by a program the cut tore, whose torn
    /// page would otherwise cost a page of room); a full block is closed (a GC
    /// candidate, aged by its sequence number). Partly written blocks become open blocks of
    /// their plane's streams, the one with the most erased pages for the last stream (GC's,
    /// in every FTL here: a collection cut part-way needs at least the room its destination
    /// had), the next for the stream before it; any left over are closed (their erased
    /// tails never written). `streams_of` gives the streams (a bit mask) a partly written
    /// block may go to (an FTL whose recovery reads blocks by what their first page holds
    /// keeps translation pages and data apart); it is closed when none of them has a free
    /// slot. Returns the blocks erased.
    pub fn rebuild(&mut self, ctx: &mut FlashCtx, streams_of: impl Fn(BlockId) -> u64) -> Result<u64, SimError> {
        self.rebuild_lending(ctx, streams_of, |_| false)
    }

    /// [`BlockManager::rebuild`], the blocks for which `lent` holds lent out as they are
    /// ([`BlockState::Lent`]: neither erased, streamed nor collected): an FTL that keeps
    /// whole blocks apart from the manager's streams (WAFTL's zone and block-mapped blocks)
    /// says which after its scan.
    pub fn rebuild_lending(
        &mut self,
        ctx: &mut FlashCtx,
        streams_of: impl Fn(BlockId) -> u64,
        lent: impl Fn(BlockId) -> bool,
    ) -> Result<u64, SimError> {
        let g = self.geo.clone();
        let ppb = g.pages_per_block;
        let mut erased = 0;
        let mut written: Vec<BlockId> = Vec::new();
        for b in 0..g.blocks() {
            if self.state[b as usize] == BlockState::Reserved {
                continue;
            }
            assert_eq!(self.state[b as usize], BlockState::Free, "rebuild needs a manager built anew");
            let wp = ctx.flash().write_pointer(b);
            if lent(b) {
                self.state[b as usize] = BlockState::Lent;
            } else if wp > 0 && ctx.flash().valid_count(b) == 0 {
                ctx.erase(b)?;
                erased += 1;
            } else if wp > 0 {
                written.push(b);
            }
        }
        // Most erased pages first, then by age: the order streams take partly written blocks.
        written.sort_by_key(|&b| (ctx.flash().write_pointer(b), ctx.flash().open_seq(b)));
        let mut to_close = Vec::new();
        for &b in &written {
            let plane = g.plane_of_block(b);
            self.state[b as usize] = BlockState::Open;
            let allowed = streams_of(b);
            let slot = (0..self.streams)
                .rev()
                .filter(|&s| allowed & (1 << s) != 0)
                .map(|s| (plane * self.streams + s) as usize)
                .find(|&i| self.active[i] == NONE);
            match slot {
                Some(i) if ctx.flash().write_pointer(b) < ppb => self.active[i] = b,
                _ => to_close.push(b),
            }
        }
        to_close.sort_by_key(|&b| ctx.flash().open_seq(b));
        for b in to_close {
            self.close(ctx.flash(), b);
        }
        for pool in &mut self.free {
            pool.retain(|&b| self.state[b as usize] == BlockState::Free);
        }
        Ok(erased)
    }

    /// Consistency of pools, states and the index with the flash.
    pub fn check_invariants(&self, flash: &FlashArray) {
        assert_eq!(u32::from(self.per_block), self.geo.pages_per_block, "block divider disagrees with the geometry");
        for (p, pool) in self.free.iter().enumerate() {
            for &b in pool {
                assert_eq!(self.geo.plane_of_block(b) as usize, p, "block {b} in the wrong plane's pool");
                assert_eq!(self.state[b as usize], BlockState::Free, "pooled block {b} not free");
                assert_eq!(flash.write_pointer(b), 0, "pooled block {b} not erased");
            }
        }
        for b in 0..self.geo.blocks() {
            let s = self.state[b as usize];
            assert_eq!(self.victims.contains(b), s == BlockState::Closed, "block {b}: state {s:?} vs index");
            if s == BlockState::Closed && self.victims.policy == VictimPolicy::Greedy {
                assert_eq!(u32::from(self.victims.bucket[b as usize]), flash.valid_count(b), "block {b}: bucket");
            }
            if matches!(s, BlockState::Free | BlockState::Reserved) {
                assert_eq!(flash.valid_count(b), 0, "block {b}: {s:?} with valid pages");
            }
        }
    }
}

/// A plane takes host pages without GC (dynamic allocation), and an incremental foreground
/// trigger stops collecting, while it has at least this many free blocks: one for GC to
/// relocate into, one for the host stream.
pub const MIN_FREE_BLOCKS: u32 = 2;

/// Where each plane's collection stands, for FTLs whose GC moves a page at a time and may
/// stop between pages (idle-time GC, GC driven from outside through
/// [`crate::ftl::ManagedGc`]): the job suspended on each plane, and a drained victim a
/// cycle-filling follower left for a later erase while it copies from the next-best victim
/// (seed 004 Sec. 3.3.2). The page and demand-based FTLs share it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PlaneGc {
    jobs: Vec<Option<GcJob>>,
    parked: Vec<Option<GcJob>>,
}

/// Where a cycle-filling follower's copy comes from ([`PlaneGc::prepare_copy`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyFrom {
    /// No copy can follow: no victim with data, or a drained victim that cannot be parked.
    Nothing,
    /// The victim under way, which has pages left.
    Current,
    /// The next-best victim, taken now; the drained one is parked for a later erase.
    Next,
}

impl PlaneGc {
    /// No collection under way on any of `planes` planes.
    pub fn new(planes: u32) -> PlaneGc {
        PlaneGc { jobs: vec![None; planes as usize], parked: vec![None; planes as usize] }
    }

    /// The collection to step on `plane`: the one suspended there, else a new one on its best
    /// victim ([`BlockManager::next_job`]).
    pub fn next_job(
        &mut self,
        bm: &mut BlockManager,
        flash: &FlashArray,
        plane: PlaneId,
        must_advance: bool,
    ) -> Option<GcJob> {
        bm.next_job(&mut self.jobs[plane as usize], flash, plane, must_advance)
    }

    /// Suspend `job` on `plane` until its next step.
    pub fn suspend(&mut self, plane: PlaneId, job: GcJob) {
        let slot = &mut self.jobs[plane as usize];
        assert!(slot.is_none(), "plane {plane} has a job suspended already");
        *slot = Some(job);
    }

    /// A job is suspended on `plane`.
    pub fn suspended(&self, plane: PlaneId) -> bool {
        self.jobs[plane as usize].is_some()
    }

    /// A collection is part-way on `plane`: a job suspended or a victim parked.
    pub fn active(&self, plane: PlaneId) -> bool {
        self.jobs[plane as usize].is_some() || self.parked[plane as usize].is_some()
    }

    /// The victim parked on `plane`, taken for its erase.
    pub fn take_parked(&mut self, plane: PlaneId) -> Option<GcJob> {
        self.parked[plane as usize].take()
    }

    /// What the next step on `plane` does: a parked victim's erase first, then the suspended
    /// job's or the best victim's ([`BlockManager::gc_next`]).
    pub fn next_step(&mut self, bm: &mut BlockManager, flash: &FlashArray, plane: PlaneId) -> crate::ftl::GcNext {
        if self.parked[plane as usize].is_some() {
            return crate::ftl::GcNext::Erase;
        }
        bm.gc_next(&self.jobs[plane as usize], flash, plane)
    }

    /// Drop the job suspended on `plane` for a better victim (seed 004 Sec. 3.2.2,
    /// [`BlockManager::repick`]); whether it switched.
    pub fn repick(&mut self, bm: &mut BlockManager, flash: &FlashArray, plane: PlaneId) -> bool {
        bm.repick(&mut self.jobs[plane as usize], flash, plane)
    }

    /// Ready a cycle-filling follower's copy on `plane` (seed 004 Sec. 3.3.2): the victim
    /// under way if it has pages left; if it is drained, park it and take the next-best
    /// victim that has data to copy, when `may_switch` (an FTL that validates one victim at
    /// a time cannot) and no victim is parked already.
    pub fn prepare_copy(
        &mut self,
        bm: &mut BlockManager,
        flash: &FlashArray,
        plane: PlaneId,
        may_switch: bool,
    ) -> CopyFrom {
        let p = plane as usize;
        let drained = self.jobs[p].as_ref().is_some_and(|j| flash.valid_count(j.victim) == 0);
        if !drained {
            return match bm.gc_next(&self.jobs[p], flash, plane) {
                crate::ftl::GcNext::Copy => CopyFrom::Current,
                _ => CopyFrom::Nothing,
            };
        }
        if !may_switch || self.parked[p].is_some() {
            return CopyFrom::Nothing;
        }
        match bm.peek_victim(flash, plane, false) {
            Some(next) if flash.valid_count(next) > 0 => {
                self.parked[p] = self.jobs[p].take();
                self.jobs[p] = Some(bm.take_victim(next));
                CopyFrom::Next
            }
            _ => CopyFrom::Nothing,
        }
    }
}

/// What one GC step did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GcStep {
    /// Moved one valid page.
    Moved,
    /// Erased the victim: the job is done and the block must be released.
    Erased,
}

/// Moves a valid page during GC; implemented by each FTL (it chooses the destination and
/// updates its mapping, then invalidates the source).
pub trait Relocate {
    /// Move the valid page `src` holding `oob`.
    fn relocate(&mut self, ctx: &mut FlashCtx, src: Ppn, oob: Oob) -> Result<(), SimError>;
    /// A hint that `lpn` will be relocated soon: GC's mapping updates hit random entries,
    /// and fetching them ahead hides most of the cache misses.
    fn prefetch(&self, _lpn: Lpn) {}
    /// The page parity (0 even, 1 odd) the next move out of `victim` should have, when its
    /// destination is a copy-back target under the same-parity rule; `None` moves pages in
    /// order.
    fn wanted_parity(&self, _flash: &FlashArray, _victim: BlockId) -> Option<u32> {
        None
    }
}

/// How many pages ahead of the current one GC announces the next relocations. Replay rate of
/// the benchmark's workload against 8 (four pairs each): 24 about +3%, 48 -6%, a whole block
/// at a victim's first page -12%.
const PREFETCH_DISTANCE: u32 = 24;

/// The collection of one victim block, resumable at page boundaries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GcJob {
    /// The block being collected.
    pub victim: BlockId,
    next_page: u32,
    /// Next page offset to look at of each parity, for parity-matched moves.
    next_of_parity: [u32; 2],
    /// Pages moved so far.
    pub moved: u32,
}

impl GcJob {
    /// A job on `victim`, nothing moved yet.
    pub fn new(victim: BlockId) -> GcJob {
        GcJob { victim, next_page: 0, next_of_parity: [0, 1], moved: 0 }
    }

    /// Move the next valid page, or erase the victim when none is left. Pages go in order,
    /// unless the relocation asks for a parity: then the next valid page of that parity goes
    /// first, and one of the other parity only when none is left (copy-back wastes a
    /// destination page only then, PCFTL Sec. 3.3).
    pub fn step<R: Relocate + ?Sized>(&mut self, ctx: &mut FlashCtx, r: &mut R) -> Result<GcStep, SimError> {
        let src = match r.wanted_parity(ctx.flash(), self.victim) {
            None => self.next_in_order(ctx, r),
            Some(parity) => self.next_of(ctx.flash(), parity).or_else(|| self.next_of(ctx.flash(), 1 - parity)),
        };
        if let Some(src) = src {
            let oob = ctx.flash().read(src)?;
            r.relocate(ctx, src, oob)?;
            assert!(!ctx.flash().is_valid(src), "relocate left source page {src} valid");
            self.moved += 1;
            return Ok(GcStep::Moved);
        }
        assert_eq!(ctx.flash().valid_count(self.victim), 0, "victim {} erased with valid pages", self.victim);
        ctx.erase(self.victim)?;
        Ok(GcStep::Erased)
    }

    /// The next valid page in order, announcing the valid pages up to [`PREFETCH_DISTANCE`]
    /// pages after it that the last call did not: each page once, those at the start of the
    /// victim with its first (a page announced only when the one a fixed distance before it
    /// was valid left a victim's first pages, and one in eight after an invalid page, to miss
    /// the cache: 5% of the benchmark's time stalled on them, docs/performance.md).
    fn next_in_order<R: Relocate + ?Sized>(&mut self, ctx: &FlashCtx, r: &R) -> Option<Ppn> {
        let flash = ctx.flash();
        let first = flash.geometry().first_page(self.victim);
        let wp = flash.write_pointer(self.victim);
        let announced = if self.next_page == 0 {
            flash.prefetch_oob(self.victim, wp);
            0
        } else {
            (self.next_page + PREFETCH_DISTANCE).min(wp)
        };
        while self.next_page < wp {
            let src = first + self.next_page;
            self.next_page += 1;
            if flash.is_valid(src) {
                for ahead in first + announced.max(self.next_page)..first + (self.next_page + PREFETCH_DISTANCE).min(wp)
                {
                    if flash.is_valid(ahead) {
                        r.prefetch(flash.owner(ahead));
                    }
                }
                return Some(src);
            }
        }
        // Both cursors only pass pages that are invalid or were moved, so mixing them in
        // one job skips no valid page.
        None
    }

    /// The next valid page of `parity`.
    fn next_of(&mut self, flash: &FlashArray, parity: u32) -> Option<Ppn> {
        let first = flash.geometry().first_page(self.victim);
        let wp = flash.write_pointer(self.victim);
        let cursor = &mut self.next_of_parity[parity as usize];
        while *cursor < wp {
            let src = first + *cursor;
            *cursor += 2;
            if flash.is_valid(src) {
                return Some(src);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flash::PageKind;

    fn geo() -> Geometry {
        Geometry {
            channels: 1,
            chips_per_channel: 1,
            dies_per_chip: 1,
            planes_per_die: 2,
            blocks_per_plane: 8,
            pages_per_block: 4,
            page_size_bytes: 4096,
            spare_bytes_per_page: 64,
            spare_usable_bytes: 16,
        }
    }

    fn fill_block(f: &mut FlashArray, block: BlockId, valid: u32) {
        let first = f.geometry().first_page(block);
        for i in 0..4 {
            f.program(first + i, Oob { lpn: i, version: 1, kind: PageKind::Data }).unwrap();
            if i >= valid {
                f.invalidate(first + i).unwrap();
            }
        }
    }

    #[test]
    fn greedy_picks_fewest_valid_and_tracks_invalidations() {
        let g = geo();
        let mut f = FlashArray::new(&g, false);
        let mut vi = VictimIndex::new(&g, VictimPolicy::Greedy);
        for (b, v) in [(0, 3), (1, 2), (2, 4)] {
            fill_block(&mut f, b, v);
            vi.insert(b, v, b as u64);
        }
        assert_eq!(vi.peek(0, &f, 9), Some(1));
        // Block 2 drops to 1 valid page.
        for p in 8..11 {
            f.invalidate(p).unwrap();
            vi.on_invalidate(2, f.valid_count(2));
        }
        assert_eq!(vi.peek(0, &f, 9), Some(2));
        vi.remove(2);
        assert_eq!(vi.peek(0, &f, 9), Some(1));
        vi.remove(1);
        vi.remove(0);
        assert_eq!(vi.peek(0, &f, 9), None);
        assert_eq!(vi.peek(1, &f, 9), None);
    }

    #[test]
    fn fifo_and_cost_benefit() {
        let g = geo();
        let mut f = FlashArray::new(&g, false);
        let mut fifo = VictimIndex::new(&g, VictimPolicy::Fifo);
        let mut cb = VictimIndex::new(&g, VictimPolicy::CostBenefit);
        for (b, v, t) in [(3, 1, 1), (1, 2, 2), (2, 1, 50)] {
            fill_block(&mut f, b, v);
            fifo.insert(b, v, t);
            cb.insert(b, v, t);
        }
        assert_eq!(fifo.peek(0, &f, 60), Some(3));
        fifo.remove(1);
        fifo.remove(3);
        assert_eq!(fifo.peek(0, &f, 60), Some(2));
        // Same utilisation: the older block wins; block 1 at u=0.5 and age 59 scores 29.5
        // against block 3 at u=0.25, age 60: 0.75*60/0.5 = 90.
        assert_eq!(cb.peek(0, &f, 60), Some(3));
    }

    struct MoveWithin {
        dst: Ppn,
    }
    impl Relocate for MoveWithin {
        fn relocate(&mut self, ctx: &mut FlashCtx, src: Ppn, _oob: Oob) -> Result<(), SimError> {
            ctx.copy(src, self.dst, true)?;
            self.dst += 1;
            ctx.invalidate(src)?;
            Ok(())
        }
    }

    #[test]
    fn gc_job_is_resumable_and_erases_at_the_end() {
        let g = geo();
        let mut f = FlashArray::new(&g, false);
        fill_block(&mut f, 0, 2);
        let mut bm = BlockManager::new(&g, 1, 0, VictimPolicy::Greedy);
        let mut ops = Vec::new();
        let mut counts = Default::default();
        let mut ctx = FlashCtx::new(&mut f, &mut ops, &mut counts, crate::ftl::FlashTime::Timed);
        let mut job = GcJob::new(0);
        let mut r = MoveWithin { dst: 4 };
        assert_eq!(job.step(&mut ctx, &mut r).unwrap(), GcStep::Moved);
        // Suspended here; resumed later.
        assert_eq!(job.step(&mut ctx, &mut r).unwrap(), GcStep::Moved);
        assert_eq!(job.step(&mut ctx, &mut r).unwrap(), GcStep::Erased);
        assert_eq!(job.moved, 2);
        assert_eq!(ops.len(), 3);
        assert_eq!(f.write_pointer(0), 0);
        assert_eq!(f.read(4).unwrap().lpn, 0);
        assert_eq!(f.read(5).unwrap().lpn, 1);
        bm.free[0].retain(|&b| b != 0);
        bm.state[0] = BlockState::Victim;
        bm.release(&f, 0);
        assert_eq!(bm.free_blocks(0), 8);
    }

    #[test]
    fn a_suspended_victim_gives_way_to_a_better_one_and_goes_back_to_the_index() {
        let g = geo();
        let mut f = FlashArray::new(&g, false);
        let mut bm = BlockManager::new(&g, 1, 0, VictimPolicy::Greedy);
        for (b, v) in [(0, 3), (1, 4)] {
            fill_block(&mut f, b, v);
            bm.free[0].retain(|&x| x != b);
            bm.state[b as usize] = BlockState::Closed;
            bm.victims.insert(b, v, u64::from(b));
        }
        let best = bm.peek_victim(&f, 0, false).unwrap();
        let mut suspended = Some(bm.take_victim(best));
        assert_eq!(suspended.as_ref().unwrap().victim, 0);
        assert!(!bm.repick(&mut suspended, &f, 0), "block 1 (4 valid) is no better");
        // Writes invalidate three pages of block 1: it now beats the suspended victim.
        for p in 4..7 {
            f.invalidate(p).unwrap();
            bm.on_invalidate(&f, p);
        }
        assert!(bm.repick(&mut suspended, &f, 0));
        assert!(suspended.is_none());
        assert_eq!(bm.state[0], BlockState::Closed);
        assert_eq!(bm.peek_victim(&f, 0, false), Some(1));
        assert_eq!(bm.take_victim(1).victim, 1);
        assert_eq!(bm.peek_victim(&f, 0, false), Some(0), "block 0 is a candidate again");
    }
}
