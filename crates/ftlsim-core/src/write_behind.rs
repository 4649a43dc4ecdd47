//! A write-behind DRAM buffer and the moving average of its utilisation (rcFTL's 10 MB
//! write buffer, seed 003 Sec. V-A, read by its mode selector, Sec. IV-B L122).
//!
//! Unlike the caching [`crate::write_buffer::WriteBuffer`], nothing waits in this buffer for
//! eviction: a page goes to flash as soon as it is written, and holds its slot from the
//! moment its write is acknowledged until the write's flash work ends (all of its pages at
//! once: the simulator knows a request's completion, not each page's). So the buffer fills only
//! when the host writes faster than the flash programs (and GC steals program time), and
//! drains in idle time: its occupancy is the write pressure the mode selector reads.
//!
//! Admission is first come first served: a write finding the buffer full waits until
//! enough earlier pages have reached flash, and a later write never overtakes a waiting
//! one; the buffer's clock only moves forward.
//!
//! The utilisation average is over a sliding window of `window_ns`, kept as 16 buckets of
//! page-nanoseconds (integer arithmetic: bit-for-bit deterministic). It covers less than
//! the window at the start of a run.
//!
//! Invariants (checked by [`WriteBehind::check_invariants`]): `held` is the sum of the
//! pages of the pending releases and at most the capacity.

use crate::scheduler::SimTime;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

const BUCKETS: usize = 16;

/// Occupancy integrated over a sliding window of [`BUCKETS`] buckets.
#[derive(Debug, Clone)]
struct LoadWindow {
    bucket_ns: u64,
    /// Page-nanoseconds per bucket, indexed by absolute bucket number mod BUCKETS.
    sums: [u128; BUCKETS],
    /// Absolute bucket number of `clock`.
    current: u64,
    /// When integration started.
    origin: SimTime,
}

impl LoadWindow {
    fn new(window_ns: u64) -> LoadWindow {
        LoadWindow { bucket_ns: (window_ns / BUCKETS as u64).max(1), sums: [0; BUCKETS], current: 0, origin: 0 }
    }

    /// Move the current bucket to `index`, clearing the buckets passed over.
    fn roll(&mut self, index: u64) {
        if index <= self.current {
            return;
        }
        if index - self.current >= BUCKETS as u64 {
            self.sums = [0; BUCKETS];
        } else {
            for k in self.current + 1..=index {
                self.sums[(k % BUCKETS as u64) as usize] = 0;
            }
        }
        self.current = index;
    }

    /// Add occupancy `pages` held over `[from, to)`.
    fn add(&mut self, mut from: SimTime, to: SimTime, pages: u32) {
        let b = self.bucket_ns;
        if to / b >= from / b + BUCKETS as u64 {
            // Longer than the window: only its last BUCKETS buckets count.
            self.roll(to / b);
            self.sums = [u128::from(pages) * u128::from(b); BUCKETS];
            self.sums[(self.current % BUCKETS as u64) as usize] = u128::from(pages) * u128::from(to % b);
            return;
        }
        while from < to {
            let index = from / b;
            let end = to.min((index + 1) * b);
            self.roll(index);
            self.sums[(index % BUCKETS as u64) as usize] += u128::from(pages) * u128::from(end - from);
            from = end;
        }
        self.roll(to / b);
    }

    /// Mean occupancy in pages over the window ending at `clock` (`now` if nothing elapsed).
    fn mean(&self, clock: SimTime, now: u32) -> f64 {
        let b = self.bucket_ns;
        let span = (BUCKETS as u64 - 1) * b + clock % b;
        let covered = span.min(clock - self.origin);
        if covered == 0 {
            return f64::from(now);
        }
        self.sums.iter().sum::<u128>() as f64 / covered as f64
    }
}

/// The write-behind buffer: pages in flight to flash and when each group leaves.
#[derive(Debug, Clone)]
pub struct WriteBehind {
    capacity: u32,
    held: u32,
    /// (program completion, pages) of the writes still in the buffer.
    releases: BinaryHeap<Reverse<(SimTime, u32)>>,
    clock: SimTime,
    /// Acknowledgement of the last write that waited for room: later writes queue behind it.
    last_stalled_ack: SimTime,
    window: LoadWindow,
    /// Pages admitted.
    pub pages_admitted: u64,
    /// Writes that found the buffer full.
    pub writes_stalled: u64,
    /// Total time writes waited for room, ns.
    pub stall_ns: u64,
}

impl WriteBehind {
    /// An empty buffer of `capacity_pages` (>= 1) whose utilisation is averaged over
    /// `window_ns` (>= 1).
    pub fn new(capacity_pages: u32, window_ns: u64) -> WriteBehind {
        assert!(capacity_pages >= 1, "write-behind capacity must be >= 1 page");
        assert!(window_ns >= 1, "utilisation window must be >= 1 ns");
        WriteBehind {
            capacity: capacity_pages,
            held: 0,
            releases: BinaryHeap::with_capacity(capacity_pages as usize),
            clock: 0,
            last_stalled_ack: 0,
            window: LoadWindow::new(window_ns),
            pages_admitted: 0,
            writes_stalled: 0,
            stall_ns: 0,
        }
    }

    /// Capacity in pages.
    pub fn capacity_pages(&self) -> u32 {
        self.capacity
    }

    /// Pages in the buffer at the buffer's clock.
    pub fn held(&self) -> u32 {
        self.held
    }

    /// Start measuring from `t` (a run's first request): the average restarts.
    pub fn begin(&mut self, t: SimTime) {
        self.advance(t);
        // A later run may start before the buffer's clock (admissions ran ahead): the
        // average covers only time integrated from here on.
        let origin = t.max(self.clock);
        self.window = LoadWindow::new(self.window.bucket_ns * BUCKETS as u64);
        self.window.current = origin / self.window.bucket_ns;
        self.window.origin = origin;
        self.pages_admitted = 0;
        self.writes_stalled = 0;
        self.stall_ns = 0;
    }

    /// Let simulated time reach `t`: pages whose programs completed by then leave.
    pub fn advance(&mut self, t: SimTime) {
        while let Some(&Reverse((r, n))) = self.releases.peek() {
            if r > t {
                break;
            }
            self.releases.pop();
            self.pass(r);
            self.held -= n;
        }
        self.pass(t);
    }

    /// Integrate the occupancy up to `t` (no earlier than the clock).
    fn pass(&mut self, t: SimTime) {
        if t > self.clock {
            self.window.add(self.clock, t, self.held);
            self.clock = t;
        }
    }

    /// When a write of `pages` pages arriving at `t` is in the buffer (its acknowledgement):
    /// `t`, or later if it must wait for room. A write larger than the buffer waits for an
    /// empty one. Call [`WriteBehind::hold`] with its program completion next.
    pub fn admit(&mut self, t: SimTime, pages: u32) -> SimTime {
        self.advance(t);
        let need = pages.min(self.capacity);
        let mut waited = false;
        while self.held + need > self.capacity {
            let Reverse((r, n)) = self.releases.pop().expect("a full buffer has pending releases");
            self.pass(r);
            self.held -= n;
            waited = true;
        }
        // A write waits for room, or behind a write that did (first come first served); the
        // clock alone may be past `t` without the buffer having been full (an earlier write
        // with a later ready time), which is no stall.
        let mut ack = if waited { t.max(self.clock) } else { t };
        ack = ack.max(self.last_stalled_ack);
        if waited {
            self.last_stalled_ack = ack;
        }
        if ack > t {
            self.writes_stalled += 1;
            self.stall_ns += ack - t;
        }
        ack
    }

    /// The write just admitted holds `pages` slots until `until` (its last program's end).
    pub fn hold(&mut self, pages: u32, until: SimTime) {
        let n = pages.min(self.capacity);
        self.pages_admitted += u64::from(pages);
        if until <= self.clock {
            return;
        }
        self.held += n;
        self.releases.push(Reverse((until, n)));
    }

    /// Utilisation (0-1) averaged over the window ending at the buffer's clock.
    pub fn mean_utilisation(&self) -> f64 {
        self.window.mean(self.clock, self.held) / f64::from(self.capacity)
    }

    /// Check the invariants (tests, `check_every`).
    pub fn check_invariants(&self) {
        let sum: u32 = self.releases.iter().map(|r| r.0 .1).sum();
        assert_eq!(sum, self.held, "held pages disagree with pending releases");
        assert!(self.held <= self.capacity, "{} pages held in a buffer of {}", self.held, self.capacity);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_buffer_stalls_until_the_earliest_programs_end() {
        let mut b = WriteBehind::new(4, 1600);
        assert_eq!(b.admit(0, 2), 0);
        b.hold(2, 500);
        assert_eq!(b.admit(10, 2), 10);
        b.hold(2, 300);
        // Full: the next page waits for the release at 300.
        assert_eq!(b.admit(20, 1), 300);
        b.hold(1, 900);
        assert_eq!((b.writes_stalled, b.stall_ns), (1, 280));
        assert_eq!(b.held(), 3);
        // Acknowledgements never go back in time: a write at 100 finds the clock at 300.
        assert_eq!(b.admit(100, 1), 300);
        b.hold(1, 1000);
        b.check_invariants();
        // With room and nobody waiting, a write whose ready time is behind the clock (an
        // earlier write had a later one) is acknowledged at once: no stall.
        b.advance(2000);
        b.admit(2500, 1);
        b.hold(1, 2600);
        assert_eq!(b.admit(2400, 1), 2400);
        b.hold(1, 2700);
        assert_eq!(b.writes_stalled, 2);
        b.advance(3000);
        assert_eq!(b.held(), 0);
        b.check_invariants();
    }

    #[test]
    fn the_average_follows_the_occupancy_over_the_window() {
        // Window 1,600 ns in 16 buckets of 100.
        let mut b = WriteBehind::new(10, 1600);
        b.begin(0);
        b.admit(0, 10);
        b.hold(10, 800);
        b.advance(800);
        assert!((b.mean_utilisation() - 1.0).abs() < 1e-9, "full all the time so far");
        b.advance(1600);
        assert!((b.mean_utilisation() - 0.5).abs() < 0.07, "{}", b.mean_utilisation());
        b.advance(5000);
        assert_eq!(b.mean_utilisation(), 0.0, "the full period left the window");
        // A long busy stretch fills the window whatever came before.
        b.admit(5000, 5);
        b.hold(5, 1_000_000);
        b.advance(900_000);
        assert!((b.mean_utilisation() - 0.5).abs() < 1e-9);
    }

    #[test]
    fn larger_than_the_buffer_waits_for_an_empty_one() {
        let mut b = WriteBehind::new(3, 100);
        b.admit(0, 2);
        b.hold(2, 50);
        assert_eq!(b.admit(1, 10), 50);
        b.hold(10, 60);
        assert_eq!(b.held(), 3);
        b.check_invariants();
    }
}
