//! A first-fit timeline of busy intervals: one per channel bus, and one per direction of
//! the host link.
//!
//! A reservation of length d requested at or after time e takes the first gap at or after e
//! that is at least d long (backfilling), so a transfer ready early is never delayed by one
//! booked far ahead of it. Intervals that ended before the scheduler's clock are pruned.

use super::SimTime;
use std::collections::VecDeque;

/// Busy intervals of one bus with first-fit backfilling, as an unrolled sorted list: a
/// deque of chunks of at most `2 * BUS_CHUNK` disjoint intervals, in time order.
///
/// Why chunks: a foreground GC reserves hundreds of far-future bus slots, and overlapping
/// GCs on one channel insert between each other's. A flat sorted deque paid a memmove of
/// half the list per such insert (half the run time of the benchmark); a B-tree was slower
/// still (docs/performance.md). Here an insert shifts at most one chunk, and chunks are
/// recycled, so reservations do not allocate in steady state.
#[derive(Debug, Clone, Default)]
pub(super) struct Bus {
    chunks: VecDeque<VecDeque<(SimTime, SimTime)>>,
    spare: Vec<VecDeque<(SimTime, SimTime)>>,
}

/// Target chunk size; a chunk splits when it reaches twice this.
const BUS_CHUNK: usize = 64;

impl Bus {
    /// Reserve `dur` at the first gap at or after `earliest`; returns the start.
    pub(super) fn reserve(&mut self, earliest: SimTime, dur: SimTime, now: SimTime) -> SimTime {
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

    pub(super) fn prune(&mut self, now: SimTime) {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
