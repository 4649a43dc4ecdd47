//! Metrics: latency histograms (HDR, 3 significant digits: buckets at most 1/1024 of their
//! value wide), counters and the JSON report.
//! Every field name carries its unit; docs/metrics.md defines each one.

use crate::host::IoOp;
use hdrhistogram::Histogram;
use serde::Serialize;

/// Highest latency the histograms record exactly: one hour in ns; longer ones saturate.
const MAX_LATENCY_NS: u64 = 3_600_000_000_000;

/// Response times of every request and of each operation's: indexed by
/// [`IoOp::latency_class`] (0: every request, 1: reads, 2: writes, 3: trims). A run's and
/// each tenant's are one of these.
#[derive(Debug, Clone, Default)]
pub struct LatencyByOp(pub [LatencyHistogram; 4]);

impl LatencyByOp {
    /// Record response time `lat` of an `op`: in every request's figure and in its
    /// operation's.
    #[inline]
    pub fn record(&mut self, op: IoOp, lat: u64) {
        self.0[0].record(lat);
        if let Some(c) = op.latency_class() {
            self.0[c].record(lat);
        }
    }
}

/// A latency histogram in ns.
#[derive(Debug, Clone)]
pub struct LatencyHistogram {
    h: Histogram<u64>,
    sum_ns: u128,
    max_ns: u64,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        LatencyHistogram {
            h: Histogram::new_with_bounds(1, MAX_LATENCY_NS, 3).expect("static histogram bounds are valid"),
            sum_ns: 0,
            max_ns: 0,
        }
    }
}

impl LatencyHistogram {
    /// Record one latency.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.h.saturating_record(ns.max(1));
        self.sum_ns += u128::from(ns);
        self.max_ns = self.max_ns.max(ns);
    }
    /// Summary statistics: exact count, mean and max; each quantile is the order statistic
    /// of rank ceil(q n), reported as the top of its histogram bucket (at most 1/1024, under
    /// 0.1%, above the exact value) and never above the recorded maximum.
    pub fn stats(&self) -> LatencyStats {
        let n = self.h.len();
        if n == 0 {
            return LatencyStats::default();
        }
        // The top of the last bucket can lie above the largest value recorded in it, and
        // above the histogram's range (values beyond it saturate into its top bucket).
        let q = |q: f64| self.h.value_at_quantile(q).min(self.max_ns.max(1)).min(MAX_LATENCY_NS);
        LatencyStats {
            count: n,
            mean_ns: (self.sum_ns / u128::from(n)) as u64,
            p50_ns: q(0.50),
            p90_ns: q(0.90),
            p99_ns: q(0.99),
            p999_ns: q(0.999),
            max_ns: self.max_ns,
        }
    }
}

/// Log-spaced buckets of [`LatencyHistogram::log_buckets`] per decade.
pub const BUCKETS_PER_DECADE: u32 = 20;

impl LatencyHistogram {
    /// The distribution as `[upper_ns, count]` pairs of log-spaced buckets
    /// ([`BUCKETS_PER_DECADE`] per decade from 1 us; the first also holds everything below
    /// 1 us), empty buckets left out, in increasing order. Enough to draw a CDF at a glance
    /// (a bucket is 12% wide) while keeping results.json small whatever the run's length.
    pub fn log_buckets(&self) -> Vec<[u64; 2]> {
        let mut out: Vec<[u64; 2]> = Vec::new();
        for v in self.h.iter_recorded() {
            let x = v.value_iterated_to().min(self.max_ns.max(1));
            let k = (f64::from(BUCKETS_PER_DECADE) * (x as f64 / 1e3).log10()).ceil().max(0.0) as i32;
            let mut upper = (1e3 * 10f64.powf(f64::from(k) / f64::from(BUCKETS_PER_DECADE))).round() as u64;
            // Rounding of the power must not leave the value above its bucket.
            if upper < x {
                upper = x;
            }
            match out.last_mut() {
                Some(last) if last[0] >= upper => last[1] += v.count_at_value(),
                _ => out.push([upper, v.count_at_value()]),
            }
        }
        out
    }
}

/// Latency summary (exact mean and max; quantiles within 0.1%).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LatencyStats {
    /// Samples.
    pub count: u64,
    /// Mean, ns.
    pub mean_ns: u64,
    /// Median, ns.
    pub p50_ns: u64,
    /// 90th percentile, ns.
    pub p90_ns: u64,
    /// 99th percentile, ns.
    pub p99_ns: u64,
    /// 99.9th percentile, ns.
    pub p999_ns: u64,
    /// Maximum, ns.
    pub max_ns: u64,
}

/// Mean and population standard deviation.
pub fn mean_std(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (mut n, mut sum, mut sq) = (0u64, 0.0, 0.0);
    for v in values {
        n += 1;
        sum += v;
        sq += v * v;
    }
    if n == 0 {
        return (0.0, 0.0);
    }
    let mean = sum / n as f64;
    (mean, (sq / n as f64 - mean * mean).max(0.0).sqrt())
}

/// Round to 6 significant decimals so that JSON output is stable and readable.
pub fn r6(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return if x.is_finite() { 0.0 } else { x };
    }
    let scale = 10f64.powi(5 - x.abs().log10().floor() as i32);
    (x * scale).round() / scale
}

/// Counts by tag as a JSON object.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ByTag {
    /// Host-issued.
    pub host: u64,
    /// GC-issued.
    pub gc: u64,
    /// Mapping-issued.
    pub mapping: u64,
    /// Sum.
    pub total: u64,
}

impl ByTag {
    /// From a `[host, gc, mapping]` array.
    pub fn from(a: [u64; 3]) -> ByTag {
        ByTag { host: a[0], gc: a[1], mapping: a[2], total: a.iter().sum() }
    }
}

/// One row of the time series: the drive's columns ([`IntervalRow::COLUMNS`]), then the
/// FTL's own ([`crate::ftl::Ftl::series`]), the same for every row of a run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IntervalRow {
    /// Interval end, ns of simulated time.
    pub t_end_ns: u64,
    /// Requests completed in the interval.
    pub requests: u64,
    /// Requests per simulated second.
    pub iops: f64,
    /// Host MB/s (10^6 bytes) completed.
    pub throughput_mb_per_s: f64,
    /// Mean response time of the interval's completions, us.
    pub mean_latency_us: f64,
    /// Max response time, us.
    pub max_latency_us: f64,
    /// Free blocks in the drive at the interval end.
    pub free_blocks: u64,
    /// Victims collected in the interval.
    pub gc_collections: u64,
    /// Pages moved by GC in the interval.
    pub gc_pages_moved: u64,
    /// Flash pages programmed in the interval (all tags).
    pub flash_programs: u64,
    /// The write-behind buffer's utilisation averaged over its window at the interval end,
    /// 0-1; empty without one.
    pub write_buffer_utilisation: Option<f64>,
    /// The FTL's columns by name: a level at the interval end, or a count's increase over
    /// the interval ([`crate::ftl::SeriesKind`]).
    pub ftl: Vec<(&'static str, u64)>,
    /// Each tenant's part of the interval (runs with tenants; docs/tenants.md).
    pub tenants: Vec<TenantInterval>,
}

/// A tenant's part of a time-series interval: columns `tenant.<name>.requests`,
/// `tenant.<name>.iops`, `tenant.<name>.mean_latency_us`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TenantInterval {
    /// The tenant's name.
    pub name: std::sync::Arc<str>,
    /// Its requests completed in the interval.
    pub requests: u64,
    /// Its requests per simulated second.
    pub iops: f64,
    /// Mean response time of its completions in the interval, us.
    pub mean_latency_us: f64,
}

impl TenantInterval {
    /// Its columns' names after the name, in [`TenantInterval::cells`] order.
    pub const COLUMNS: [&'static str; 3] = ["requests", "iops", "mean_latency_us"];

    fn cells(&self) -> [String; 3] {
        [self.requests.to_string(), self.iops.to_string(), self.mean_latency_us.to_string()]
    }
}

impl IntervalRow {
    /// The drive's fields by name, in order: every consumer of the time series gives each a
    /// column, then one per FTL column (the Python front checks it has them all).
    pub const COLUMNS: [&'static str; 11] = [
        "t_end_ns",
        "requests",
        "iops",
        "throughput_mb_per_s",
        "mean_latency_us",
        "max_latency_us",
        "free_blocks",
        "gc_collections",
        "gc_pages_moved",
        "flash_programs",
        "write_buffer_utilisation",
    ];

    /// The drive's fields as CSV cells, in [`IntervalRow::COLUMNS`] order, then the FTL's.
    pub fn cells(&self) -> Vec<String> {
        let mut out = vec![
            self.t_end_ns.to_string(),
            self.requests.to_string(),
            self.iops.to_string(),
            self.throughput_mb_per_s.to_string(),
            self.mean_latency_us.to_string(),
            self.max_latency_us.to_string(),
            self.free_blocks.to_string(),
            self.gc_collections.to_string(),
            self.gc_pages_moved.to_string(),
            self.flash_programs.to_string(),
            self.write_buffer_utilisation.map_or(String::new(), |u| u.to_string()),
        ];
        debug_assert_eq!(out.len(), Self::COLUMNS.len(), "a column of IntervalRow is missing in cells()");
        out.extend(self.ftl.iter().map(|(_, v)| v.to_string()));
        out.extend(self.tenants.iter().flat_map(TenantInterval::cells));
        out
    }

    /// The column names of this row: the drive's, the FTL's, then each tenant's.
    pub fn header(&self) -> Vec<String> {
        let tenants = self
            .tenants
            .iter()
            .flat_map(|t| TenantInterval::COLUMNS.iter().map(move |c| format!("tenant.{}.{c}", t.name)));
        Self::COLUMNS.iter().chain(self.ftl.iter().map(|(n, _)| n)).map(|s| s.to_string()).chain(tenants).collect()
    }
}

/// The write-behind buffer in a run (`report.write_behind`, docs/metrics.md).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct WriteBehindReport {
    /// Capacity, pages.
    pub capacity_pages: u32,
    /// Window of the utilisation average, ns.
    pub load_window_ns: u64,
    /// Pages written through it.
    pub pages_admitted: u64,
    /// Host writes that found it full and waited for room.
    pub writes_stalled: u64,
    /// Mean wait for room over all host writes, us.
    pub mean_stall_us: f64,
    /// Pages in it at the end of the run (their programs still running).
    pub pages_held_end: u32,
    /// Its utilisation averaged over the window at the end of the run, 0-1.
    pub mean_utilisation_end: f64,
}

/// Receives progress and time-series rows during a run.
pub trait Observer {
    /// A completed time-series interval.
    fn interval(&mut self, _row: &IntervalRow) {}
    /// `done` requests have completed.
    fn progress(&mut self, _done: u64) {}
    /// Preconditioning has written `written` pages of at most `most`.
    fn precondition(&mut self, _written: u64, _most: u64) {}
    /// Asked after each `progress` and `precondition` call: true stops the run with
    /// [`crate::error::SimError::Interrupted`] (a user's Ctrl-C in Python, for example).
    fn interrupted(&mut self) -> bool {
        false
    }
}

/// An observer that ignores everything.
pub struct NoObserver;
impl Observer for NoObserver {}

/// An observer that keeps the rows (tests, Python).
#[derive(Debug, Default)]
pub struct RowCollector {
    /// Rows so far.
    pub rows: Vec<IntervalRow>,
}
impl Observer for RowCollector {
    fn interval(&mut self, row: &IntervalRow) {
        self.rows.push(row.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_cells_follow_the_header() {
        let tenant = TenantInterval { name: "db".into(), requests: 4, iops: 40.0, mean_latency_us: 2.5 };
        let row = IntervalRow {
            t_end_ns: 7,
            ftl: vec![("victims_copyback", 3)],
            tenants: vec![tenant],
            ..IntervalRow::default()
        };
        let (header, cells) = (row.header(), row.cells());
        assert_eq!(header.len(), cells.len());
        assert_eq!(header.len(), IntervalRow::COLUMNS.len() + 1 + 3);
        assert_eq!((header[0].as_str(), cells[0].as_str()), ("t_end_ns", "7"));
        let ftl = IntervalRow::COLUMNS.len();
        assert_eq!((header[ftl].as_str(), cells[ftl].as_str()), ("victims_copyback", "3"));
        assert_eq!((header[ftl + 3].as_str(), cells[ftl + 3].as_str()), ("tenant.db.mean_latency_us", "2.5"));
        let utilisation = header.iter().position(|h| h == "write_buffer_utilisation").unwrap();
        assert_eq!(cells[utilisation], "", "an empty column without a write-behind buffer");
    }

    #[test]
    fn histogram_stats() {
        let mut h = LatencyHistogram::default();
        for v in 1..=1000u64 {
            h.record(v * 1000);
        }
        let s = h.stats();
        assert_eq!(s.count, 1000);
        assert_eq!(s.mean_ns, 500_500);
        assert_eq!(s.max_ns, 1_000_000);
        assert!((s.p50_ns as f64 - 500_000.0).abs() < 1000.0);
        assert!((s.p99_ns as f64 - 990_000.0).abs() < 1000.0);
    }

    proptest::proptest! {
        #[test]
        fn quantiles_are_within_a_tenth_of_a_percent_and_never_above_max(
            values in proptest::collection::vec(
                proptest::prop_oneof![0u64..2_000, 0u64..5_000_000, 0u64..3_000_000_000, 0u64..u64::MAX / 2],
                1..400,
            ),
        ) {
            let mut h = LatencyHistogram::default();
            for &v in &values {
                h.record(v);
            }
            let s = h.stats();
            let mut sorted: Vec<u64> = values.iter().map(|&v| v.clamp(1, MAX_LATENCY_NS)).collect();
            sorted.sort_unstable();
            let max = *values.iter().max().unwrap();
            proptest::prop_assert_eq!(s.max_ns, max);
            for (q, got) in [(0.5, s.p50_ns), (0.9, s.p90_ns), (0.99, s.p99_ns), (0.999, s.p999_ns)] {
                let rank = ((q * values.len() as f64).ceil() as usize).max(1);
                let exact = sorted[rank - 1];
                proptest::prop_assert!(got <= max.max(1), "q {} = {} above max {}", q, got, max);
                proptest::prop_assert!(got >= exact, "q {} = {} below the exact {}", q, got, exact);
                proptest::prop_assert!(
                    got as f64 <= exact as f64 * 1.001 + 1.0,
                    "q {} = {} more than 0.1% above the exact {}", q, got, exact
                );
            }
        }
    }

    #[test]
    fn log_buckets_hold_every_sample_in_order() {
        let mut h = LatencyHistogram::default();
        for v in [10u64, 999, 1000, 1001, 1_120, 50_000, 50_000, 7_000_000_000] {
            h.record(v);
        }
        let b = h.log_buckets();
        assert_eq!(b.iter().map(|x| x[1]).sum::<u64>(), 8);
        assert!(b.windows(2).all(|w| w[0][0] < w[1][0]), "{b:?}");
        assert_eq!(b[0], [1000, 3], "everything up to 1 us in the first bucket");
        assert!(b.iter().any(|x| x[1] == 2 && (50_000..=56_300).contains(&x[0])), "{b:?}");
        assert!(b.last().unwrap()[0] >= 7_000_000_000);
    }

    #[test]
    fn mean_std_and_rounding() {
        let (m, s) = mean_std([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0].into_iter());
        assert_eq!((m, s), (5.0, 2.0));
        assert_eq!(r6(1.23456789), 1.23457);
        assert_eq!(r6(123456789.0), 123457000.0);
    }
}

/// The host write buffer's counters of a run (`report.write_buffer`; docs/metrics.md).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct WriteBufferReport {
    /// Replacement policy (`lru`).
    pub policy: crate::config::WriteBufferPolicy,
    /// Capacity, pages.
    pub capacity_pages: u32,
    /// Page writes that found their page buffered (absorbed updates, no flash work).
    pub write_hits: u64,
    /// Page writes that entered the buffer as a new page.
    pub write_inserts: u64,
    /// Partial-page writes that entered the buffer as whole (zero-padded) pages.
    pub partial_pages: u64,
    /// Page reads served from the buffer (no flash read).
    pub read_hits: u64,
    /// Pages evicted and written to flash through the FTL.
    pub evictions: u64,
    /// BPLRU: blocks evicted whole.
    pub blocks_evicted: u64,
    /// BPLRU: pages read from flash and written again to complete an evicted block (block
    /// padding).
    pub padded_pages: u64,
    /// Pages trimmed while buffered (dropped without flash work).
    pub trimmed_pages: u64,
    /// Pages in the buffer at the end of the run (not flushed).
    pub pages_buffered_end: u32,
    /// (write hits + read hits) / (pages written + pages read) in the run, in [0, 1].
    pub hit_ratio: f64,
    /// Write hits / pages written.
    pub write_hit_ratio: f64,
    /// Read hits / pages read.
    pub read_hit_ratio: f64,
}
