//! `ftlsim trace stats`: what a trace contains, computed in one streaming pass. Memory is
//! proportional to the footprint (one counter per distinct page touched), not to the
//! number of requests.

use super::{RecordReader, TraceFormat, TraceRecord};
use crate::error::TraceError;
use crate::host::IoOp;
use crate::metrics::{r6, LatencyHistogram, LatencyStats};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

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
    let spp = u64::from(page_size_bytes / 512).max(1);
    let mut s = TraceStats {
        requests: 0,
        reads: 0,
        writes: 0,
        trims: 0,
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
    };
    let records_latency =
        matches!(reader.format(), TraceFormat::Msr | TraceFormat::Systor17 | TraceFormat::FlashnetReplayed);
    let mut lat = [LatencyHistogram::default(), LatencyHistogram::default(), LatencyHistogram::default()];
    let (mut with_latency, mut incomplete) = (0u64, 0u64);
    let mut pages: HashMap<(u32, u64), u32> = HashMap::new();
    let mut last_end: HashMap<u32, u64> = HashMap::new();
    let mut sequential = 0u64;
    let mut gaps = LatencyHistogram::default();
    let (mut first, mut min_t, mut max_t, mut prev_t) = (None, u64::MAX, 0u64, 0u64);
    let (mut ms_bucket, mut ms_count) = (u64::MAX, 0u64);
    while let Some(rec) = reader.next() {
        let (_, r): (u64, TraceRecord) = rec?;
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
        }
        if records_latency {
            match reader.recorded_latency_ns() {
                Some(ns) => {
                    with_latency += 1;
                    lat[0].record(ns);
                    match r.op {
                        IoOp::Read => lat[1].record(ns),
                        IoOp::Write => lat[2].record(ns),
                        IoOp::Trim => {}
                    }
                }
                None => incomplete += 1,
            }
        }
        *s.requests_per_device.entry(r.device).or_insert(0) += 1;
        *s.size_histogram_bytes.entry(bytes.next_power_of_two()).or_insert(0) += 1;
        let end = r.offset_sector + u64::from(r.sectors);
        if last_end.insert(r.device, end) == Some(r.offset_sector) {
            sequential += 1;
        }
        for p in r.offset_sector / spp..end.div_ceil(spp) {
            *pages.entry((r.device, p)).or_insert(0) += 1;
        }
        let t = r.time_ns;
        if first.is_some() {
            if t < prev_t {
                s.out_of_order_requests += 1;
            }
            gaps.record(t.saturating_sub(prev_t));
        }
        first.get_or_insert(t);
        min_t = min_t.min(t);
        max_t = max_t.max(t);
        prev_t = t;
        if t / 1_000_000 == ms_bucket {
            ms_count += 1;
        } else {
            ms_bucket = t / 1_000_000;
            ms_count = 1;
        }
        s.max_requests_per_ms = s.max_requests_per_ms.max(ms_count);
    }
    if records_latency {
        s.recorded_latency = Some(RecordedLatency {
            requests: with_latency,
            incomplete,
            all: lat[0].stats(),
            read: lat[1].stats(),
            write: lat[2].stats(),
        });
    }
    s.bad_lines_skipped = reader.bad_lines();
    s.untyped_records_skipped = reader.untyped_records();
    s.footprint_pages = pages.len() as u64;
    s.footprint_bytes = s.footprint_pages * spp * 512;
    if s.requests > 0 {
        s.sequential_share = r6(sequential as f64 / s.requests as f64);
        s.duration_ns = max_t - min_t;
        s.mean_iops = if s.duration_ns > 0 { r6(s.requests as f64 / (s.duration_ns as f64 / 1e9)) } else { 0.0 };
        s.inter_arrival = gaps.stats();
        let mut counts: Vec<u32> = pages.into_values().collect();
        counts.sort_unstable_by(|a, b| b.cmp(a));
        let total: u64 = counts.iter().map(|&c| u64::from(c)).sum();
        let top = |share: f64| {
            let n = ((counts.len() as f64 * share).ceil() as usize).max(1);
            r6(counts[..n].iter().map(|&c| u64::from(c)).sum::<u64>() as f64 / total as f64)
        };
        s.top_1pct_pages_access_share = top(0.01);
        s.top_10pct_pages_access_share = top(0.10);
    }
    Ok(s)
}
