//! Metrics: latency histograms (HDR, 3 significant digits: buckets at most 1/1024 of their
//! value wide), counters and the JSON report.
//! Every field name carries its unit; docs/metrics.md defines each one.

use serde::Serialize;

pub use ftlsim_requests::latency::{LatencyByOp, LatencyHistogram, LatencyStats, BUCKETS_PER_DECADE};
pub use ftlsim_requests::round::r6;

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
