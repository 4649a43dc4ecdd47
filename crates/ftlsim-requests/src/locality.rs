//! Temporal locality of a request stream at 4 KiB pages (issue 36): how often a page write
//! rewrites a page written before (the update share of Table 2 in seed 000, L259), how many
//! distinct pages, and how many requests, pass between two touches of a page (reuse
//! distances), and from the first of these the hit ratio of an LRU cache of any size (the
//! miss-ratio curve, Mattson et al.'s stack algorithm). The same [`LocalityMeter`] reads a
//! trace and a synthetic workload, so a fit is judged against its trace by the
//! Kolmogorov-Smirnov distance between their distributions ([`Locality::distance`]).
//!
//! Stack distances use a Fenwick tree over touch times in which only each page's latest touch
//! is marked: the marks after a page's last touch are the distinct pages touched since. The
//! times are renumbered when the tree fills, so memory follows the distinct pages touched, not
//! the stream's length.

use crate::error::TraceError;
use crate::host::IoOp;
use crate::trace::{RecordReader, TraceRecord};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// The page size locality is measured at, bytes (the fit's unit).
pub const PAGE_BYTES: u64 = 4096;

/// Sub-buckets per power of two of a distance histogram.
const SUB_BUCKETS_LOG2: u32 = 2;

/// The lower bound of the histogram bucket holding distance `d`: exact below 4, then four
/// buckets per power of two (so every power of two is a bucket boundary and a cache size of
/// 2^k pages reads the curve exactly).
pub fn bucket(d: u64) -> u64 {
    if d < 1 << SUB_BUCKETS_LOG2 {
        return d;
    }
    let shift = 63 - d.leading_zeros() - SUB_BUCKETS_LOG2;
    (d >> shift) << shift
}

/// A distance distribution: counts by bucket lower bound ([`bucket`]) and the accesses with no
/// earlier touch (an infinite distance: a miss in any cache).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Distances {
    /// Bucket lower bounds, increasing.
    pub lower_bounds: Vec<u64>,
    /// Accesses in each bucket.
    pub counts: Vec<u64>,
    /// Accesses to a page not touched before.
    pub first: u64,
}

impl Distances {
    fn from_counts(counts: &HashMap<u64, u64>, first: u64) -> Distances {
        let mut pairs: Vec<(u64, u64)> = counts.iter().map(|(&b, &n)| (b, n)).collect();
        pairs.sort_unstable();
        Distances {
            lower_bounds: pairs.iter().map(|p| p.0).collect(),
            counts: pairs.iter().map(|p| p.1).collect(),
            first,
        }
    }

    /// Accesses counted, first touches included.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum::<u64>() + self.first
    }

    /// Share of accesses at a distance below `x` (exact when `x` is a bucket boundary: 0-4
    /// and every power of two among them). For stack distances this is the hit ratio of an
    /// LRU cache of `x` pages.
    pub fn share_below(&self, x: u64) -> f64 {
        let total = self.total();
        if total == 0 {
            return 0.0;
        }
        let below: u64 = self.lower_bounds.iter().zip(&self.counts).filter(|(&b, _)| b < x).map(|(_, &n)| n).sum();
        below as f64 / total as f64
    }

    /// Kolmogorov-Smirnov distance to `other`: the largest difference between the two
    /// cumulative shares at any bucket boundary, first touches counted as an infinite
    /// distance (so a stream with more of them differs at the top of the curve).
    pub fn ks_distance(&self, other: &Distances) -> f64 {
        let mut bounds: Vec<u64> = self.lower_bounds.iter().chain(&other.lower_bounds).copied().collect();
        bounds.sort_unstable();
        bounds.dedup();
        // The boundaries are each bucket's lower bound and, past the last, "every finite
        // distance"; a cumulative share only changes there.
        bounds.push(u64::MAX);
        bounds.iter().map(|&x| (self.share_below(x) - other.share_below(x)).abs()).fold(0.0, f64::max)
    }
}

/// A stream's temporal locality at 4 KiB pages ([`LocalityMeter`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Locality {
    /// Requests read (trims included).
    pub requests: u64,
    /// 4 KiB pages read or written (a request touches every page it overlaps).
    pub page_accesses: u64,
    /// 4 KiB pages written.
    pub page_writes: u64,
    /// Share of page writes to a page written before in the stream (Table 2's "Update").
    pub update_share: f64,
    /// Every page access (read or write): distinct pages touched since the page's last touch.
    /// An LRU cache of C pages holding what was read or written hits where it is below C.
    pub stack_distance: Distances,
    /// Every page write: distinct pages written since the page was last written. An LRU
    /// write buffer of C pages absorbs the rewrites below C.
    pub write_stack_distance: Distances,
    /// Every page access: requests since the page's last touch.
    pub request_distance: Distances,
}

/// How far apart two streams' locality is: each a number in [0, 1].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LocalityDistance {
    /// Difference of the update shares (other minus this).
    pub update_share: f64,
    /// Kolmogorov-Smirnov distance of the stack distances (pages).
    pub stack_distance_ks: f64,
    /// The same for the write stack distances.
    pub write_stack_distance_ks: f64,
    /// The same for the request distances.
    pub request_distance_ks: f64,
    /// Largest difference of the LRU hit ratios at the cache sizes of [`MRC_PAGES`]: for an
    /// LRU curve this is the stack distances' KS distance read at those sizes only.
    pub miss_ratio_curve_max: f64,
    /// The same for the write buffer's curve.
    pub write_miss_ratio_curve_max: f64,
}

/// Cache sizes at which miss-ratio curves are reported, 4 KiB pages (1 MiB to 4 GiB).
pub const MRC_PAGES: [u64; 13] =
    [256, 512, 1 << 10, 1 << 11, 1 << 12, 1 << 13, 1 << 14, 1 << 15, 1 << 16, 1 << 17, 1 << 18, 1 << 19, 1 << 20];

/// One point of a miss-ratio curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CurvePoint {
    /// Cache size, 4 KiB pages.
    pub cache_pages: u64,
    /// Cache size, bytes.
    pub cache_bytes: u64,
    /// Hit ratio of an LRU cache of that size holding what was read or written.
    pub hit_ratio: f64,
    /// Share of page writes an LRU write buffer of that size absorbs.
    pub write_hit_ratio: f64,
}

/// A [`Locality`] with its miss-ratio curve, as `trace locality --json` prints it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LocalityReport {
    /// The measured distributions.
    #[serde(flatten)]
    pub locality: Locality,
    /// LRU hit ratios at [`MRC_PAGES`].
    pub miss_ratio_curve: Vec<CurvePoint>,
}

impl Locality {
    /// LRU hit ratios at [`MRC_PAGES`]: every access, and page writes into a write buffer.
    pub fn curve(&self) -> Vec<CurvePoint> {
        MRC_PAGES
            .iter()
            .map(|&c| CurvePoint {
                cache_pages: c,
                cache_bytes: c * PAGE_BYTES,
                hit_ratio: crate::round::r6(self.stack_distance.share_below(c)),
                write_hit_ratio: crate::round::r6(self.write_stack_distance.share_below(c)),
            })
            .collect()
    }

    /// With its miss-ratio curve.
    pub fn report(&self) -> LocalityReport {
        LocalityReport { locality: self.clone(), miss_ratio_curve: self.curve() }
    }

    /// The rules a locality read from a file keeps (the message names the field).
    pub fn check(&self, name: &str) -> Result<(), String> {
        if !(0.0..=1.0).contains(&self.update_share) {
            return Err(format!("{name}.update_share = {} (a share: a number in [0, 1])", self.update_share));
        }
        for (field, d) in [
            ("stack_distance", &self.stack_distance),
            ("write_stack_distance", &self.write_stack_distance),
            ("request_distance", &self.request_distance),
        ] {
            if d.lower_bounds.len() != d.counts.len() {
                return Err(format!(
                    "{name}.{field}: {} lower_bounds but {} counts (one count per bucket)",
                    d.lower_bounds.len(),
                    d.counts.len()
                ));
            }
            if d.lower_bounds.windows(2).any(|w| w[0] >= w[1]) || d.lower_bounds.iter().any(|&b| bucket(b) != b) {
                return Err(format!(
                    "{name}.{field}.lower_bounds: increasing bucket bounds (0-4, then 4 per power of two)"
                ));
            }
            if d.counts.iter().chain([&d.first]).try_fold(0u64, |a, &n| a.checked_add(n)).is_none() {
                return Err(format!("{name}.{field}: the counts sum past 2^64"));
            }
        }
        Ok(())
    }

    /// How far `other`'s locality is from this one's.
    pub fn distance(&self, other: &Locality) -> LocalityDistance {
        let curve = |a: &Distances, b: &Distances| {
            MRC_PAGES.iter().map(|&c| (a.share_below(c) - b.share_below(c)).abs()).fold(0.0, f64::max)
        };
        LocalityDistance {
            update_share: other.update_share - self.update_share,
            stack_distance_ks: self.stack_distance.ks_distance(&other.stack_distance),
            write_stack_distance_ks: self.write_stack_distance.ks_distance(&other.write_stack_distance),
            request_distance_ks: self.request_distance.ks_distance(&other.request_distance),
            miss_ratio_curve_max: curve(&self.stack_distance, &other.stack_distance),
            write_miss_ratio_curve_max: curve(&self.write_stack_distance, &other.write_stack_distance),
        }
    }
}

/// An LRU stack of pages: each touch returns how many distinct pages were touched since the
/// page's previous touch (its stack distance), or `None` for a first touch.
#[derive(Debug, Clone, Default)]
pub struct LruStack {
    /// The slot of each page's latest touch.
    last: HashMap<(u32, u64), u32>,
    /// Fenwick tree over slots: 1 at each page's latest touch.
    tree: Vec<u32>,
    /// The page each slot was touched for (stale where a later touch moved it).
    page_at: Vec<(u32, u64)>,
    /// The next slot to use.
    next: u32,
}

impl LruStack {
    /// Pages touched so far.
    pub fn pages(&self) -> usize {
        self.last.len()
    }

    /// Whether `page` was touched.
    pub fn contains(&self, page: (u32, u64)) -> bool {
        self.last.contains_key(&page)
    }

    /// The page at stack distance `d` (0: the latest touched), or the oldest if fewer than
    /// `d + 1` pages were touched; `None` before any touch.
    pub fn page_at_depth(&self, d: u64) -> Option<(u32, u64)> {
        let live = self.last.len() as u64;
        if live == 0 {
            return None;
        }
        // The slot with exactly `live - d` marks up to and including it: a Fenwick descent
        // finds the largest prefix with fewer marks, the slot is the next.
        let mut want = live - d.min(live - 1);
        let (mut pos, mut step) = (0usize, self.tree.len().next_power_of_two());
        while step > 0 {
            if pos + step <= self.tree.len() && u64::from(self.tree[pos + step - 1]) < want {
                pos += step;
                want -= u64::from(self.tree[pos - 1]);
            }
            step >>= 1;
        }
        Some(self.page_at[pos])
    }

    /// Touch `page`; its stack distance before this touch.
    pub fn touch(&mut self, page: (u32, u64)) -> Option<u64> {
        if self.next as usize == self.tree.len() {
            self.renumber();
        }
        let slot = self.next;
        self.next += 1;
        self.page_at[slot as usize] = page;
        let distance = self.last.insert(page, slot).map(|before| {
            // The old mark is still set: the marks after it are the pages touched since.
            let after = self.last.len() as u64 - self.marks_through(before);
            self.add(before, -1);
            after
        });
        self.add(slot, 1);
        distance
    }

    /// Touch `page` and keep at most `limit` pages (>= 1): the least recently touched one is
    /// forgotten, and returned, when there are more. A sampler that draws distances below a
    /// known bound needs no deeper page, so its memory follows the bound, not the span.
    pub fn touch_within(&mut self, page: (u32, u64), limit: usize) -> Option<(u32, u64)> {
        self.touch(page);
        if self.last.len() <= limit.max(1) {
            return None;
        }
        let oldest = self.page_at_depth(self.last.len() as u64 - 1).expect("more than one page");
        let slot = self.last.remove(&oldest).expect("the oldest page is held");
        self.add(slot, -1);
        Some(oldest)
    }

    /// Marks at slots `0..=slot`.
    fn marks_through(&self, slot: u32) -> u64 {
        let mut i = slot as usize + 1;
        let mut sum = 0u64;
        while i > 0 {
            sum += u64::from(self.tree[i - 1]);
            i &= i - 1;
        }
        sum
    }

    fn add(&mut self, slot: u32, delta: i32) {
        let mut i = slot as usize + 1;
        while i <= self.tree.len() {
            self.tree[i - 1] = self.tree[i - 1].wrapping_add_signed(delta);
            i += i & i.wrapping_neg();
        }
    }

    /// Number the latest touches 0.. in order and size the tree to twice the pages touched,
    /// so renumbering happens once per as many touches as there are pages.
    fn renumber(&mut self) {
        let mut order: Vec<(u32, (u32, u64))> = self.last.iter().map(|(&p, &s)| (s, p)).collect();
        order.sort_unstable_by_key(|e| e.0);
        let capacity = (2 * order.len()).max(1024);
        assert!(capacity < u32::MAX as usize, "more than 2^31 distinct pages in one LRU stack");
        self.tree = vec![0; capacity];
        self.page_at = vec![(0, 0); capacity];
        for (k, &(_, page)) in order.iter().enumerate() {
            self.last.insert(page, k as u32);
            self.page_at[k] = page;
            self.add(k as u32, 1);
        }
        self.next = order.len() as u32;
    }
}

/// The stack distances of a request's first page before the request touched it (`None`: not
/// touched before).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FirstPage {
    /// Among every page access.
    pub every: Option<u64>,
    /// Among page writes (`None` also for a read).
    pub written: Option<u64>,
}

/// The width of the histogram bucket whose lower bound is `lower` ([`bucket`]).
pub fn bucket_width(lower: u64) -> u64 {
    if lower < 1 << SUB_BUCKETS_LOG2 {
        1
    } else {
        1 << (63 - lower.leading_zeros() - SUB_BUCKETS_LOG2)
    }
}

/// Reads a request stream and measures its [`Locality`]; memory follows the distinct pages
/// touched.
#[derive(Debug, Default)]
pub struct LocalityMeter {
    every: LruStack,
    writes: LruStack,
    /// The request that last touched each page.
    last_request: HashMap<(u32, u64), u64>,
    requests: u64,
    page_accesses: u64,
    page_writes: u64,
    rewrites: u64,
    stack: HashMap<u64, u64>,
    write_stack: HashMap<u64, u64>,
    request: HashMap<u64, u64>,
    first: [u64; 3],
}

impl LocalityMeter {
    /// A meter with nothing read.
    pub fn new() -> LocalityMeter {
        LocalityMeter::default()
    }

    /// Read one request of `bytes` from byte `offset` of `device`: the stack distances of its
    /// first page (`None` for a trim: trims count as requests but touch no page, as no cache
    /// holds what a trim names).
    pub fn observe(&mut self, device: u32, op: IoOp, offset: u64, bytes: u64) -> Option<FirstPage> {
        // In 128 bits: a request ending at 2^64 bytes has its end page all the same.
        let end = (u128::from(offset) + u128::from(bytes)).div_ceil(u128::from(PAGE_BYTES));
        self.observe_pages(device, op, offset / PAGE_BYTES, end as u64)
    }

    /// [`LocalityMeter::observe`] of a request of `sectors` 512-byte sectors from sector
    /// `offset_sector` (a trace's record, which ends within 2^64 sectors).
    pub fn observe_sectors(&mut self, device: u32, op: IoOp, offset_sector: u64, sectors: u32) -> Option<FirstPage> {
        let per_page = PAGE_BYTES / 512;
        let end = offset_sector.checked_add(u64::from(sectors)).expect("a trace record ends within 2^64 sectors");
        self.observe_pages(device, op, offset_sector / per_page, end.div_ceil(per_page))
    }

    /// [`LocalityMeter::observe`] of the pages `[first, end)`.
    fn observe_pages(&mut self, device: u32, op: IoOp, first: u64, end: u64) -> Option<FirstPage> {
        self.requests += 1;
        if op == IoOp::Trim || first >= end {
            return None;
        }
        let mut first_page = None;
        for p in first..end {
            let page = (device, p);
            self.page_accesses += 1;
            let every = self.every.touch(page);
            match every {
                Some(d) => *self.stack.entry(bucket(d)).or_insert(0) += 1,
                None => self.first[0] += 1,
            }
            match self.last_request.insert(page, self.requests) {
                Some(r) => *self.request.entry(bucket(self.requests - r)).or_insert(0) += 1,
                None => self.first[2] += 1,
            }
            let mut written = None;
            if op.writes_data() {
                self.page_writes += 1;
                written = self.writes.touch(page);
                match written {
                    Some(d) => {
                        self.rewrites += 1;
                        *self.write_stack.entry(bucket(d)).or_insert(0) += 1;
                    }
                    None => self.first[1] += 1,
                }
            }
            first_page.get_or_insert(FirstPage { every, written });
        }
        first_page
    }

    /// What was read so far.
    pub fn locality(&self) -> Locality {
        Locality {
            requests: self.requests,
            page_accesses: self.page_accesses,
            page_writes: self.page_writes,
            update_share: crate::round::r6(self.rewrites as f64 / self.page_writes.max(1) as f64),
            stack_distance: Distances::from_counts(&self.stack, self.first[0]),
            write_stack_distance: Distances::from_counts(&self.write_stack, self.first[1]),
            request_distance: Distances::from_counts(&self.request, self.first[2]),
        }
    }
}

/// The largest read or write the page-by-page measures take (`trace locality`, `trace fit`):
/// 1 GiB. They remember every page a request touches, so memory would follow one request's
/// size rather than the trace's requests (a 2 TiB write is half a billion pages); real
/// traces' requests are a few MiB at most. Trims touch no page and take any size.
pub const MAX_MEASURED_REQUEST_BYTES: u64 = 1 << 30;

/// Refuse `r`, the record `reader` returned last, if it reads or writes more than
/// [`MAX_MEASURED_REQUEST_BYTES`].
pub fn check_request_size(reader: &RecordReader, r: &TraceRecord) -> Result<(), TraceError> {
    let bytes = u64::from(r.sectors) * 512;
    if r.op == IoOp::Trim || bytes <= MAX_MEASURED_REQUEST_BYTES {
        return Ok(());
    }
    Err(reader.refuse(
        "size",
        &format!("{bytes} bytes"),
        &format!(
            "a {} of more than {} MiB: locality is measured page by page and would need memory in proportion to \
             the request (run and trace stats take it; to measure locality, split the request or leave it out)",
            r.op.name(),
            MAX_MEASURED_REQUEST_BYTES >> 20
        ),
    ))
}

/// The locality of a whole trace (devices kept apart).
pub fn of_trace(mut reader: RecordReader) -> Result<Locality, TraceError> {
    let mut meter = LocalityMeter::new();
    while let Some(rec) = reader.next() {
        let (_, r) = rec?;
        check_request_size(&reader, &r)?;
        meter.observe_sectors(r.device, r.op, r.offset_sector, r.sectors);
    }
    Ok(meter.locality())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Stack distances by brute force: a vector in recency order.
    fn naive(stream: &[u64]) -> Vec<Option<u64>> {
        let mut stack: Vec<u64> = Vec::new();
        stream
            .iter()
            .map(|&p| {
                let d = stack.iter().rev().position(|&q| q == p).map(|d| d as u64);
                stack.retain(|&q| q != p);
                stack.push(p);
                d
            })
            .collect()
    }

    #[test]
    fn stack_distances_match_brute_force_across_renumbering() {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
        // 3,000 touches over 300 pages renumber the 1,024-slot tree several times.
        let stream: Vec<u64> = (0..3000).map(|_| rng.gen_range(0..300u64)).collect();
        let mut s = LruStack::default();
        let got: Vec<Option<u64>> = stream.iter().map(|&p| s.touch((0, p))).collect();
        assert_eq!(got, naive(&stream));
        assert_eq!(s.pages(), 300);
        // Every depth names the page a recency-ordered vector has there.
        let mut order: Vec<u64> = Vec::new();
        for &p in &stream {
            order.retain(|&q| q != p);
            order.push(p);
        }
        for d in 0..300u64 {
            assert_eq!(s.page_at_depth(d), Some((0, order[order.len() - 1 - d as usize])), "depth {d}");
        }
        assert_eq!(s.page_at_depth(1000), Some((0, order[0])), "past the bottom: the oldest");
        // Bounded: the 50 most recent stay, in order, and the others are returned as they go.
        let mut b = LruStack::default();
        let mut gone = 0;
        for &p in &stream {
            gone += usize::from(b.touch_within((0, p), 50).is_some());
        }
        assert_eq!(b.pages(), 50);
        assert!(gone > 0);
        for d in 0..50u64 {
            assert_eq!(b.page_at_depth(d), Some((0, order[order.len() - 1 - d as usize])), "bounded, depth {d}");
        }
    }

    #[test]
    fn buckets_are_exact_below_four_then_four_per_octave() {
        assert_eq!((0..=8).map(bucket).collect::<Vec<_>>(), [0, 1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!([9, 10, 11, 12, 15, 16, 1023, 1024].map(bucket), [8, 10, 10, 12, 14, 16, 896, 1024]);
        // Each bucket ends where the next begins.
        for d in 0..5000u64 {
            let b = bucket(d);
            assert!(d < b + bucket_width(b) && bucket(b + bucket_width(b)) == b + bucket_width(b), "{d}");
        }
    }

    #[test]
    fn a_loop_hits_only_a_cache_as_large_as_the_loop() {
        // 64 pages written in a loop 10 times: every rewrite has stack distance 63.
        let mut m = LocalityMeter::new();
        for _ in 0..10 {
            for p in 0..64 {
                m.observe(0, IoOp::Write, p * PAGE_BYTES, PAGE_BYTES);
            }
        }
        let l = m.locality();
        assert_eq!((l.page_writes, l.update_share), (640, 0.9));
        assert_eq!(l.write_stack_distance.share_below(32), 0.0);
        assert!((l.write_stack_distance.share_below(64) - 0.9).abs() < 1e-12);
        assert!((l.request_distance.share_below(64) - 0.0).abs() < 1e-12);
        assert!((l.request_distance.share_below(128) - 0.9).abs() < 1e-12);
    }

    #[test]
    fn ks_distance_is_zero_for_the_same_stream_and_one_for_disjoint_ones() {
        let mut a = LocalityMeter::new();
        let mut b = LocalityMeter::new();
        for k in 0..100u64 {
            a.observe(0, IoOp::Read, (k % 4) * PAGE_BYTES, PAGE_BYTES);
            b.observe(0, IoOp::Read, k * PAGE_BYTES, PAGE_BYTES);
        }
        let (la, lb) = (a.locality(), b.locality());
        assert_eq!(la.distance(&la).stack_distance_ks, 0.0);
        // a: 96% at distance 3; b: every access a first touch.
        assert!((la.distance(&lb).stack_distance_ks - 0.96).abs() < 1e-12);
        assert!((la.distance(&lb).miss_ratio_curve_max - 0.96).abs() < 1e-12);
    }

    #[test]
    fn multi_page_requests_touch_each_page_and_trims_none() {
        let mut m = LocalityMeter::new();
        m.observe(0, IoOp::Write, 1000, 8192); // pages 0, 1, 2
        m.observe(0, IoOp::Trim, 0, 8192);
        m.observe(1, IoOp::Write, 0, 4096); // another device's page 0
        m.observe(0, IoOp::Read, 4096, 4096);
        let l = m.locality();
        assert_eq!((l.requests, l.page_accesses, l.page_writes, l.update_share), (4, 5, 4, 0.0));
        // The read of page 1: page 2 and device 1's page 0 were touched since; 3 requests ago.
        assert_eq!(l.stack_distance.lower_bounds, [2]);
        assert_eq!(l.request_distance.lower_bounds, [3]);
    }
}
