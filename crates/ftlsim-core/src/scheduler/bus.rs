//! A first-fit timeline of busy intervals: one per direction of the host link, and the DRAM
//! port. (A channel bus, whose users each book in time order, is a
//! [`super::channel_bus::ChannelBus`].)
//!
//! A reservation of length d requested at or after time e takes the first gap at or after e
//! that is at least d long (backfilling), so a transfer ready early is never delayed by one
//! booked far ahead of it. Intervals that ended before the scheduler's clock are pruned.

use super::SimTime;

/// Busy intervals of one bus with first-fit backfilling, as an unrolled sorted list: chunks
/// of at most `2 * BUS_CHUNK` disjoint intervals, in time order, with the end of each
/// chunk's last interval kept in one contiguous array.
///
/// Why chunks: a foreground GC reserves hundreds of far-future slots (on the DRAM port, its
/// pages' transfers; a channel's bus was this list too until its per-unit lists), and
/// overlapping GCs insert between each other's. A flat sorted deque paid a memmove of
/// half the list per such insert (half the run time of the benchmark); a B-tree was slower
/// still (docs/performance.md). Here an insert shifts at most one chunk, and chunks are
/// recycled, so reservations do not allocate in steady state. Why the separate array of
/// chunk ends: the search for the chunk then reads one cache line or two instead of
/// following a pointer into every chunk it probes (a quarter of the benchmark's time when
/// the chunks were searched in place).
#[derive(Debug, Clone, Default)]
pub(super) struct Bus {
    /// Live chunks are `chunks[head..]`; each holds its intervals in `iv[lo..]`.
    chunks: Vec<Chunk>,
    /// `last_end[k]`: end of the last interval of `chunks[k]` (valid for live chunks).
    last_end: Vec<SimTime>,
    /// First live chunk; the ones before it are empty and wait to be recycled.
    head: usize,
    spare: Vec<Vec<(SimTime, SimTime)>>,
}

#[derive(Debug, Clone, Default)]
struct Chunk {
    iv: Vec<(SimTime, SimTime)>,
    /// Intervals before `lo` were pruned (only the first live chunk is ever pruned).
    lo: usize,
}

impl Chunk {
    fn live(&self) -> &[(SimTime, SimTime)] {
        &self.iv[self.lo..]
    }
}

/// Target chunk size; a chunk splits when it reaches twice this.
const BUS_CHUNK: usize = 32;

/// Dead chunks kept at the front before the chunk arrays are compacted.
const DEAD_CHUNKS: usize = 16;

impl Bus {
    /// Reserve `dur` at the first gap at or after `earliest`; returns the start.
    pub(super) fn reserve(&mut self, earliest: SimTime, dur: SimTime, now: SimTime) -> SimTime {
        self.prune(now);
        if dur == 0 {
            return earliest;
        }
        let n = self.chunks.len();
        // After everything booked (about half the reservations: the next page copy of a
        // GC, or a write queued behind one): append without searching.
        if self.last_end.last().is_none_or(|&e| e <= earliest) {
            self.insert(n, 0, earliest, earliest + dur);
            return earliest;
        }
        // First chunk whose last interval ends after `earliest`, then the first interval in
        // it that does; scan forward for a gap of `dur`.
        let mut ci = self.head + self.last_end[self.head..].partition_point(|&e| e <= earliest);
        let mut i = match self.chunks.get(ci) {
            Some(c) => c.lo + c.live().partition_point(|&(_, e)| e <= earliest),
            None => 0,
        };
        let mut t = earliest;
        let mut scanned = 0usize;
        while ci < n {
            let c = &self.chunks[ci];
            if i >= c.iv.len() {
                ci += 1;
                i = if ci < n { self.chunks[ci].lo } else { 0 };
                continue;
            }
            let (s, e) = c.iv[i];
            if t + dur <= s {
                break;
            }
            t = t.max(e);
            i += 1;
            scanned += 1;
            assert!(scanned <= (n - self.head) * 2 * BUS_CHUNK + 1, "bus scan beyond its intervals");
        }
        self.insert(ci, i, t, t + dur);
        t
    }

    /// Drop intervals that ended at or before `now`.
    pub(super) fn prune(&mut self, now: SimTime) {
        while self.head < self.chunks.len() {
            if self.last_end[self.head] <= now {
                // The whole chunk ended: recycle it.
                let c = &mut self.chunks[self.head];
                let mut iv = std::mem::take(&mut c.iv);
                iv.clear();
                c.lo = 0;
                self.spare.push(iv);
                self.head += 1;
                continue;
            }
            let c = &mut self.chunks[self.head];
            while c.iv[c.lo].1 <= now {
                c.lo += 1;
            }
            break;
        }
        if self.head >= DEAD_CHUNKS || (self.head > 0 && self.head == self.chunks.len()) {
            self.chunks.drain(..self.head);
            self.last_end.drain(..self.head);
            self.head = 0;
        }
    }

    fn fresh_chunk(&mut self) -> Chunk {
        Chunk { iv: self.spare.pop().unwrap_or_else(|| Vec::with_capacity(2 * BUS_CHUNK)), lo: 0 }
    }

    /// Insert `[t, end)` before position `i` of chunk `ci` (or at the very end when `ci` is
    /// past the last chunk), merging with touching neighbours inside the chunk.
    fn insert(&mut self, mut ci: usize, mut i: usize, t: SimTime, end: SimTime) {
        if ci == self.chunks.len() {
            match self.chunks.last() {
                Some(c) if self.head < self.chunks.len() && c.iv.len() < 2 * BUS_CHUNK => {
                    ci -= 1;
                    i = self.chunks[ci].iv.len();
                }
                _ => {
                    let fresh = self.fresh_chunk();
                    self.chunks.push(fresh);
                    self.last_end.push(end);
                    i = 0;
                }
            }
        }
        let c = &mut self.chunks[ci];
        let merge_prev = i > c.lo && c.iv[i - 1].1 == t;
        let merge_next = i < c.iv.len() && c.iv[i].0 == end;
        match (merge_prev, merge_next) {
            (true, true) => {
                c.iv[i - 1].1 = c.iv[i].1;
                c.iv.remove(i);
            }
            (true, false) => c.iv[i - 1].1 = end,
            (false, true) => c.iv[i].0 = t,
            (false, false) => c.iv.insert(i, (t, end)),
        }
        self.last_end[ci] = c.iv.last().expect("chunk just written").1;
        if c.iv.len() - c.lo >= 2 * BUS_CHUNK {
            let mut upper = self.fresh_chunk();
            let c = &mut self.chunks[ci];
            let cut = c.lo + BUS_CHUNK;
            upper.iv.extend(c.iv.drain(cut..));
            self.last_end[ci] = c.iv[cut - 1].1;
            let upper_end = upper.iv.last().expect("upper half is not empty").1;
            self.chunks.insert(ci + 1, upper);
            self.last_end.insert(ci + 1, upper_end);
        } else if c.iv.len() >= 3 * BUS_CHUNK && c.lo > 0 {
            // A pruned front chunk that keeps growing at its end: drop its dead prefix.
            let lo = c.lo;
            c.iv.drain(..lo);
            c.lo = 0;
        }
    }

    /// Live intervals, for tests.
    #[cfg(test)]
    fn intervals(&self) -> Vec<(SimTime, SimTime)> {
        self.chunks[self.head..].iter().flat_map(|c| c.live().iter().copied()).collect()
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use proptest::prelude::*;

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
        // Everything merged into one busy stretch [0, 10 ms) but for chunk boundaries.
        let total = bus.intervals().len();
        assert!(total <= bus.chunks.len() * 2, "touching intervals merge within chunks ({total})");
        assert_eq!(bus.reserve(0, 1_000, 0), 10_000_000);
        // Pruning drops what ended before now.
        bus.prune(20_000_000);
        assert!(bus.chunks.is_empty());
    }

    /// First fit over a plain sorted list: the reference the chunked list (and a channel's
    /// lists per unit) must agree with.
    pub(in crate::scheduler) fn reference(
        list: &mut Vec<(SimTime, SimTime)>,
        earliest: SimTime,
        dur: SimTime,
        now: SimTime,
    ) -> SimTime {
        list.retain(|&(_, e)| e > now);
        if dur == 0 {
            return earliest;
        }
        let mut t = earliest;
        for &(s, e) in list.iter() {
            if e <= t {
                continue;
            }
            if t + dur <= s {
                break;
            }
            t = t.max(e);
        }
        let at = list.partition_point(|&(s, _)| s < t);
        list.insert(at, (t, t + dur));
        t
    }

    proptest! {
        /// Random reservations (near the clock and far ahead of it, as host I/O and
        /// foreground GC make them) with a clock that advances: every start agrees with the
        /// plain first-fit list, and the live intervals cover the same time after the clock.
        #[test]
        fn chunked_bus_agrees_with_plain_first_fit(
            ops in proptest::collection::vec((0u64..2_000_000, 0u64..12_000, 0u64..3_000, any::<bool>()), 1..3000)
        ) {
            let (mut bus, mut list, mut now) = (Bus::default(), Vec::new(), 0u64);
            for (ahead, dur, step, far) in ops {
                now += step;
                let earliest = now + if far { ahead * 50 } else { ahead % 20_000 };
                let got = bus.reserve(earliest, dur, now);
                prop_assert_eq!(got, reference(&mut list, earliest, dur, now));
                prop_assert!(got >= earliest);
            }
            // Merged intervals may reach back before the clock; compare what lies after it.
            let busy = |v: &[(SimTime, SimTime)]| v.iter().map(|&(s, e)| e.saturating_sub(s.max(now))).sum::<u64>();
            prop_assert_eq!(busy(&bus.intervals()), busy(&list));
        }
    }
}
