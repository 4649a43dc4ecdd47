//! `ftlsim trace stats`: what a trace contains, computed in one streaming pass. Memory is
//! proportional to the footprint (one counter per distinct page touched), not to the
//! number of requests.

use super::{PageRuns, RecordReader, TraceFormat, TraceRecord};
use crate::error::TraceError;
use crate::host::IoOp;
use crate::latency::{LatencyHistogram, LatencyStats};
use crate::round::r6;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Statistics of one trace.
#[derive(Debug, Clone, Serialize)]
pub struct TraceStats {
    /// Requests.
    pub requests: u64,
    /// Read requests.
    pub reads: u64,
    /// Write requests.
    pub writes: u64,
    /// Trim requests.
    pub trims: u64,
    /// Zone Append requests (their bytes count in `bytes_written`; only blkparse records them).
    #[serde(skip_serializing_if = "is_zero")]
    pub zone_appends: u64,
    /// Zone management requests (open, close, finish, reset).
    #[serde(skip_serializing_if = "is_zero")]
    pub zone_management: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Bytes trimmed.
    pub bytes_trimmed: u64,
    /// Requests per device.
    pub requests_per_device: BTreeMap<u32, u64>,
    /// Request sizes: count per power-of-two bucket, keyed by the bucket's upper bound in bytes.
    pub size_histogram_bytes: BTreeMap<u64, u64>,
    /// Distinct pages touched (of `page_size_bytes`).
    pub footprint_pages: u64,
    /// Footprint in bytes.
    pub footprint_bytes: u64,
    /// Page size used for the footprint, bytes.
    pub page_size_bytes: u32,
    /// Share of requests that start where the previous one (same device) ended.
    pub sequential_share: f64,
    /// Trace duration, first to last timestamp, ns.
    pub duration_ns: u64,
    /// Requests per second over the duration.
    pub mean_iops: f64,
    /// Inter-arrival times (in file order; negative gaps, from out-of-order lines, count as 0), ns.
    pub inter_arrival: LatencyStats,
    /// Requests whose timestamp is earlier than the line before.
    pub out_of_order_requests: u64,
    /// Most requests arriving within any 1 ms bucket.
    pub max_requests_per_ms: u64,
    /// Share of page accesses that go to the hottest 1% of touched pages.
    pub top_1pct_pages_access_share: f64,
    /// Share of page accesses that go to the hottest 10% of touched pages.
    pub top_10pct_pages_access_share: f64,
    /// Malformed lines skipped (with `--skip-bad-lines`).
    pub bad_lines_skipped: u64,
    /// Records of unknown type (a blank SYSTOR'17 IOType), not counted as requests.
    pub untyped_records_skipped: u64,
    /// The latencies the trace recorded (MSR's ResponseTime, SYSTOR'17's Response,
    /// FlashNet's latency), ns; `None` for a format that records none.
    pub recorded_latency: Option<RecordedLatency>,
}

/// Latencies a trace recorded, by request type (docs/traces.md).
#[derive(Debug, Clone, Serialize)]
pub struct RecordedLatency {
    /// Requests with a recorded latency.
    pub requests: u64,
    /// Requests the trace recorded as not completed (FlashNet: fewer bytes replayed than
    /// asked), without a latency.
    pub incomplete: u64,
    /// All requests.
    pub all: LatencyStats,
    /// Reads.
    pub read: LatencyStats,
    /// Writes.
    pub write: LatencyStats,
}

/// Read every record of `reader` and summarise.
pub fn stats(mut reader: RecordReader, page_size_bytes: u32) -> Result<TraceStats, TraceError> {
    let records_latency =
        matches!(reader.format(), TraceFormat::Msr | TraceFormat::Systor17 | TraceFormat::FlashnetReplayed);
    let mut acc = Summary::new(page_size_bytes, records_latency);
    while let Some(rec) = reader.next() {
        let (_, r): (u64, TraceRecord) = rec?;
        acc.count(&r);
        if records_latency {
            acc.record_latency(r.op, reader.recorded_latency_ns());
        }
        // A zoned command's address is its zone's start, not where an append lands.
        if !r.op.is_zoned() {
            acc.record_place(&r);
        }
        acc.record_time(r.time_ns);
    }
    acc.s.bad_lines_skipped = reader.bad_lines();
    acc.s.untyped_records_skipped = reader.untyped_records();
    Ok(acc.finish())
}

/// The summary being gathered, record by record.
struct Summary {
    s: TraceStats,
    /// Sectors per page.
    spp: u64,
    records_latency: bool,
    /// Recorded latencies: all, reads, writes.
    lat: [LatencyHistogram; 3],
    with_latency: u64,
    incomplete: u64,
    /// Accesses per (device, page), as runs: memory follows the requests, not their sizes.
    pages: PageRuns,
    /// Per device, the sector after its last request.
    last_end: HashMap<u32, u64>,
    sequential: u64,
    gaps: LatencyHistogram,
    first: Option<u64>,
    min_t: u64,
    max_t: u64,
    prev_t: u64,
    /// The millisecond being counted and its requests so far.
    ms_bucket: u64,
    ms_count: u64,
}

impl Summary {
    fn new(page_size_bytes: u32, records_latency: bool) -> Summary {
        Summary {
            s: TraceStats {
                requests: 0,
                reads: 0,
                writes: 0,
                trims: 0,
                zone_appends: 0,
                zone_management: 0,
                bytes_read: 0,
                bytes_written: 0,
                bytes_trimmed: 0,
                requests_per_device: BTreeMap::new(),
                size_histogram_bytes: BTreeMap::new(),
                footprint_pages: 0,
                footprint_bytes: 0,
                page_size_bytes,
                sequential_share: 0.0,
                duration_ns: 0,
                mean_iops: 0.0,
                inter_arrival: LatencyStats::default(),
                out_of_order_requests: 0,
                max_requests_per_ms: 0,
                top_1pct_pages_access_share: 0.0,
                top_10pct_pages_access_share: 0.0,
                bad_lines_skipped: 0,
                untyped_records_skipped: 0,
                recorded_latency: None,
            },
            spp: u64::from(page_size_bytes / 512).max(1),
            records_latency,
            lat: [LatencyHistogram::default(), LatencyHistogram::default(), LatencyHistogram::default()],
            with_latency: 0,
            incomplete: 0,
            pages: PageRuns::new(),
            last_end: HashMap::new(),
            sequential: 0,
            gaps: LatencyHistogram::default(),
            first: None,
            min_t: u64::MAX,
            max_t: 0,
            prev_t: 0,
            ms_bucket: u64::MAX,
            ms_count: 0,
        }
    }

    /// Requests and bytes by operation, per device and by size.
    fn count(&mut self, r: &TraceRecord) {
        let s = &mut self.s;
        s.requests += 1;
        let bytes = u64::from(r.sectors) * 512;
        match r.op {
            IoOp::Read => {
                s.reads += 1;
                s.bytes_read += bytes;
            }
            IoOp::Write => {
                s.writes += 1;
                s.bytes_written += bytes;
            }
            IoOp::Trim => {
                s.trims += 1;
                s.bytes_trimmed += bytes;
            }
            IoOp::ZoneAppend => {
                s.zone_appends += 1;
                s.bytes_written += bytes;
            }
            _ => s.zone_management += 1,
        }
        *s.requests_per_device.entry(r.device).or_insert(0) += 1;
        if bytes > 0 {
            *s.size_histogram_bytes.entry(bytes.next_power_of_two()).or_insert(0) += 1;
        }
    }

    /// The latency the trace recorded for a request, if it did.
    fn record_latency(&mut self, op: IoOp, ns: Option<u64>) {
        let Some(ns) = ns else {
            self.incomplete += 1;
            return;
        };
        self.with_latency += 1;
        self.lat[0].record(ns);
        if let Some(c @ (1 | 2)) = op.latency_class() {
            self.lat[c].record(ns);
        }
    }

    /// Where a request lands: sequential after its device's last, and the pages it touches.
    fn record_place(&mut self, r: &TraceRecord) {
        let end = r.offset_sector + u64::from(r.sectors);
        if self.last_end.insert(r.device, end) == Some(r.offset_sector) {
            self.sequential += 1;
        }
        self.pages.add(r.device, r.offset_sector / self.spp, end.div_ceil(self.spp));
    }

    /// A request's time `t`: the gap from the last, the order and the busiest millisecond.
    fn record_time(&mut self, t: u64) {
        if self.first.is_some() {
            if t < self.prev_t {
                self.s.out_of_order_requests += 1;
            }
            self.gaps.record(t.saturating_sub(self.prev_t));
        }
        self.first.get_or_insert(t);
        self.min_t = self.min_t.min(t);
        self.max_t = self.max_t.max(t);
        self.prev_t = t;
        if t / 1_000_000 == self.ms_bucket {
            self.ms_count += 1;
        } else {
            self.ms_bucket = t / 1_000_000;
            self.ms_count = 1;
        }
        self.s.max_requests_per_ms = self.s.max_requests_per_ms.max(self.ms_count);
    }

    /// The shares and footprint of the records seen.
    fn finish(mut self) -> TraceStats {
        let s = &mut self.s;
        if self.records_latency {
            s.recorded_latency = Some(RecordedLatency {
                requests: self.with_latency,
                incomplete: self.incomplete,
                all: self.lat[0].stats(),
                read: self.lat[1].stats(),
                write: self.lat[2].stats(),
            });
        }
        s.footprint_pages = self.pages.pages();
        s.footprint_bytes = s.footprint_pages.saturating_mul(self.spp * 512);
        if s.requests > 0 {
            s.sequential_share = r6(self.sequential as f64 / s.requests as f64);
            s.duration_ns = self.max_t - self.min_t;
            s.mean_iops = if s.duration_ns > 0 { r6(s.requests as f64 / (s.duration_ns as f64 / 1e9)) } else { 0.0 };
            s.inter_arrival = self.gaps.stats();
            s.top_1pct_pages_access_share = r6(self.pages.top_access_share(0.01));
            s.top_10pct_pages_access_share = r6(self.pages.top_access_share(0.10));
        }
        self.s
    }
}
