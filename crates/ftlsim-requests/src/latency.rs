//! Latency histograms (HDR, 3 significant digits: buckets at most 1/1024 of their value wide)
//! and their summaries: a run's response times, each tenant's, and a trace's recorded ones.

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
