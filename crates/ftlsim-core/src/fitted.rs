//! Trace-shaped synthetic workloads (issue 14): [`fit`] reads a trace once and keeps what an
//! FTL responds to — the read/write/trim mix, the request sizes, where requests land (the
//! request count of every touched extent, in address order), how long sequential runs are and
//! the inter-arrival times — as a [`FittedWorkload`] (TOML, `ftlsim trace fit`). A
//! [`FittedSampler`] replays that shape at any length, drive capacity and rate
//! (`--workload file:W.toml,requests=N,rate=R`): the touched extents land side by side in
//! address order at their own size (`layout=compact`, the default: the footprint keeps its
//! size, as a trace replayed with `--overflow compact`), or extent `i` of the trace's address
//! range lands at the same relative place of the span (`layout=range`).
//!
//! Kept as summaries rather than the trace itself: sizes (the 64 most frequent), extents
//! (at most 65,536: the extent doubles until the range fits), run lengths (power-of-two
//! buckets), re-references (how many runs of reads, or of writes, ago a run of reads, or of
//! writes, last touched the page where a run starts, in power-of-two buckets up to 65,536:
//! temporal locality, rewrites included) and inter-arrival times (16 buckets
//! of equal count with the transitions between consecutive gaps' buckets: bursts). Not kept:
//! correlations between size, op and place.

use crate::bits::Bits;
use crate::error::TraceError;
use crate::host::{IoOp, MAX_REQUEST_BYTES};
use crate::scheduler::SIM_TIME_LIMIT_NS;
use crate::trace::RecordReader;
use rand::Rng;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// Where a fitted workload's touched extents land on the addressed span (`layout=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum FittedLayout {
    /// Side by side in address order, each at its own size (the footprint keeps its size, as
    /// a trace replayed with `--overflow compact`); shrunk only if they exceed the span.
    #[default]
    Compact,
    /// The trace's whole address range scaled onto the span: extent `i` at the same relative
    /// place (gaps between touched extents kept; a range larger than the span squeezes the
    /// footprint into fewer pages).
    Range,
}

/// Format version of the TOML file.
pub const FIT_VERSION: u32 = 4;
/// Most extents kept; a wider address range doubles the extent size.
const MAX_EXTENTS: u64 = 65_536;
/// Most distinct request sizes kept; the rest join the nearest kept size.
const MAX_SIZES: usize = 64;
/// Inter-arrival buckets (equal counts of the trace's gaps).
const GAP_BUCKETS: usize = 16;
/// Longest re-reference distance kept, in runs; older ones count as first references.
const MAX_REUSE: u64 = 65_536;
/// Run starts are kept as their offset within an aligned window of this many bytes: it
/// decides how many pages of any size up to it a request spans.
const ALIGN_WINDOW: u64 = 65_536;

/// A trace's shape (`ftlsim trace fit`; docs/workloads.md, "Trace-shaped workloads").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FittedWorkload {
    /// [`FIT_VERSION`].
    pub version: u32,
    /// The trace it was fitted from.
    pub source: String,
    /// Requests in the trace.
    pub requests: u64,
    /// Share of read requests.
    pub read_share: f64,
    /// Share of trim requests.
    pub trim_share: f64,
    /// Share of page writes that rewrite a page written before in the trace.
    pub update_share: f64,
    /// Share of requests that start where the previous one (same device) ended.
    pub sequential_share: f64,
    /// Request sizes.
    pub sizes: Weighted,
    /// Lengths in requests of the sequential runs that start with a read: each value is a
    /// power-of-two bucket's upper bound.
    pub read_run_lengths: Weighted,
    /// The same for runs that start with a write or a trim.
    pub write_run_lengths: Weighted,
    /// Where runs of reads start: on a 4 KiB page a recent run of reads touched, or not.
    pub read_reuse: Reuse,
    /// Where runs of writes and trims start: on a 4 KiB page a recent run of writes or trims
    /// touched (a rewrite), or not.
    pub write_reuse: Reuse,
    /// Where runs start within an aligned 64 KiB window (bytes, multiples of 512), by count:
    /// with the sizes, how many pages a request spans on a drive of any page size up to it.
    pub start_offsets_in_64k: Weighted,
    /// Where requests land.
    pub space: Space,
    /// Inter-arrival times.
    pub arrival: ArrivalShape,
}

/// Values with weights.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Weighted {
    /// Values.
    pub values: Vec<u64>,
    /// Weight of each value.
    pub weights: Vec<u64>,
}

/// Temporal locality of one kind of run (reads, or writes and trims).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reuse {
    /// Runs starting on a 4 KiB page that a run of the same kind touched before: how many
    /// runs of that kind ago, as power-of-two buckets' upper bounds (at most 65,536).
    pub distances: Weighted,
    /// Where such a run starts: bytes before the end of the run it re-references (0: at its
    /// end, or past it on its last page, as appends do), the 64 most frequent (others join
    /// the nearest).
    pub before_end: Weighted,
    /// Runs starting on a page no run of their kind touched in its last 65,536.
    pub first_references: u64,
}

/// Popularity of the trace's address range, extent by extent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Space {
    /// Extent size, bytes.
    pub extent_bytes: u64,
    /// Extents in the trace's address range (devices laid side by side).
    pub extents: u64,
    /// `[extent index, requests starting there]` for every touched extent, in address order.
    pub touched: Vec<[u64; 2]>,
    /// Share of requests to the hottest 1% of touched extents.
    pub top_1pct_share: f64,
    /// Share of requests to the hottest 10% of touched extents.
    pub top_10pct_share: f64,
}

/// Inter-arrival times in file order (out-of-order gaps count as 0).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArrivalShape {
    /// Mean, ns.
    pub mean_ns: f64,
    /// Edges of 16 buckets holding equal shares of the gaps (17 values, min to max), ns.
    pub edges_ns: Vec<u64>,
    /// `transitions[a][b]`: gaps in bucket `b` right after one in bucket `a` (bursts are
    /// short gaps following short gaps).
    pub transitions: Vec<Vec<u64>>,
}

/// Fit `reader`'s trace with popularity at `extent_bytes` (a multiple of 4 KiB; doubled until
/// the address range has at most 65,536 extents).
pub fn fit(mut reader: RecordReader, source: &str, extent_bytes: u64) -> Result<FittedWorkload, TraceError> {
    let whole = |text: &str, rule: &str| TraceError {
        file: source.into(),
        line: 0,
        field: "file".into(),
        text: text.into(),
        rule: rule.into(),
    };
    let (mut reads, mut trims, mut requests) = (0u64, 0u64, 0u64);
    let mut sizes: HashMap<u64, u64> = HashMap::new();
    let mut per_extent: HashMap<(u32, u64), u64> = HashMap::new();
    let mut device_end: BTreeMap<u32, u64> = BTreeMap::new();
    let mut last_end: HashMap<u32, u64> = HashMap::new();
    let mut written: std::collections::HashSet<(u32, u64)> = std::collections::HashSet::new();
    let (mut page_writes, mut rewrites) = (0u64, 0u64);
    let mut runs: [BTreeMap<u64, u64>; 2] = [BTreeMap::new(), BTreeMap::new()];
    let mut run_kind = 0usize;
    let (mut run, mut sequential) = (0u64, 0u64);
    let mut gaps: Vec<u64> = Vec::new();
    // Per kind of run (0 reads, 1 writes and trims): runs started, the last run that touched
    // each 4 KiB page, and the re-reference distances and first references of run starts.
    let mut kind_runs = [0u64; 2];
    let mut last_touch: [HashMap<(u32, u64), u64>; 2] = [HashMap::new(), HashMap::new()];
    let mut reuse: [BTreeMap<u64, u64>; 2] = [BTreeMap::new(), BTreeMap::new()];
    let mut first_references = [0u64; 2];
    // The first and end byte of the last runs of each kind, and how far before the end of
    // the run it re-references a run starts.
    let mut extents: [Vec<(u64, u64)>; 2] = [vec![(0, 0); MAX_REUSE as usize], vec![(0, 0); MAX_REUSE as usize]];
    let mut back: [HashMap<u64, u64>; 2] = [HashMap::new(), HashMap::new()];
    let mut start_offsets: BTreeMap<u64, u64> = BTreeMap::new();
    let mut prev_t: Option<u64> = None;
    // Popularity is counted at 4 KiB first and regrouped once the range is known.
    const UNIT: u64 = 4096;
    for rec in reader.by_ref() {
        let (_, r) = rec?;
        requests += 1;
        match r.op {
            IoOp::Read => reads += 1,
            IoOp::Trim => trims += 1,
            IoOp::Write => {}
        }
        let bytes = u64::from(r.sectors) * 512;
        *sizes.entry(bytes).or_insert(0) += 1;
        let start = r.offset_sector * 512;
        let end = start + bytes;
        let kind = usize::from(r.op != IoOp::Read);
        *per_extent.entry((r.device, start / UNIT)).or_insert(0) += 1;
        let e = device_end.entry(r.device).or_insert(0);
        *e = (*e).max(end);
        if last_end.insert(r.device, r.offset_sector + u64::from(r.sectors)) == Some(r.offset_sector) {
            sequential += 1;
            run += 1;
            if kind == run_kind {
                extents[kind][(kind_runs[kind] % MAX_REUSE) as usize].1 = end;
            }
        } else {
            if run > 0 {
                *runs[run_kind].entry(run.next_power_of_two()).or_insert(0) += 1;
            }
            run = 1;
            run_kind = kind;
            *start_offsets.entry(start % ALIGN_WINDOW).or_insert(0) += 1;
            kind_runs[kind] += 1;
            match last_touch[kind].get(&(r.device, start / UNIT)) {
                Some(&before) if kind_runs[kind] - before < MAX_REUSE => {
                    *reuse[kind].entry((kind_runs[kind] - before).next_power_of_two()).or_insert(0) += 1;
                    let old_end = extents[kind][(before % MAX_REUSE) as usize].1;
                    *back[kind].entry(old_end.saturating_sub(start)).or_insert(0) += 1;
                }
                _ => first_references[kind] += 1,
            }
            extents[kind][(kind_runs[kind] % MAX_REUSE) as usize] = (start, end);
        }
        // The request's pages belong to the latest run of its kind (a run continued by
        // another op counts for that op's latest run).
        for p in start / UNIT..end.div_ceil(UNIT) {
            last_touch[kind].insert((r.device, p), kind_runs[kind]);
        }
        if r.op == IoOp::Write {
            for p in start / UNIT..end.div_ceil(UNIT) {
                page_writes += 1;
                if !written.insert((r.device, p)) {
                    rewrites += 1;
                }
            }
        }
        if let Some(p) = prev_t {
            gaps.push(r.time_ns.saturating_sub(p));
        }
        prev_t = Some(r.time_ns);
    }
    if run > 0 {
        *runs[run_kind].entry(run.next_power_of_two()).or_insert(0) += 1;
    }
    if requests == 0 {
        return Err(whole("no request", "the trace has no request to fit"));
    }
    // Devices side by side, each from 0 to the end of its last request.
    let mut device_base: HashMap<u32, u64> = HashMap::new();
    let mut range_units = 0u64;
    for (&dev, &end) in &device_end {
        device_base.insert(dev, range_units);
        range_units += end.div_ceil(UNIT);
    }
    let mut extent = extent_bytes.max(UNIT) / UNIT * UNIT;
    while range_units.div_ceil(extent / UNIT) > MAX_EXTENTS {
        extent *= 2;
    }
    let per = extent / UNIT;
    let mut counts: BTreeMap<u64, u64> = BTreeMap::new();
    for ((dev, unit), n) in per_extent {
        *counts.entry((device_base[&dev] + unit) / per).or_insert(0) += n;
    }
    let touched: Vec<[u64; 2]> = counts.into_iter().map(|(i, n)| [i, n]).collect();
    let mut ranked: Vec<u64> = touched.iter().map(|t| t[1]).collect();
    ranked.sort_unstable_by(|a, b| b.cmp(a));
    let top = |share: f64| {
        let n = ((ranked.len() as f64 * share).ceil() as usize).max(1);
        crate::metrics::r6(ranked[..n].iter().sum::<u64>() as f64 / requests as f64)
    };
    let space = Space {
        extent_bytes: extent,
        extents: range_units.div_ceil(per).max(1),
        top_1pct_share: top(0.01),
        top_10pct_share: top(0.10),
        touched,
    };
    Ok(FittedWorkload {
        version: FIT_VERSION,
        source: source.into(),
        requests,
        read_share: crate::metrics::r6(reads as f64 / requests as f64),
        trim_share: crate::metrics::r6(trims as f64 / requests as f64),
        update_share: crate::metrics::r6(rewrites as f64 / page_writes.max(1) as f64),
        sequential_share: crate::metrics::r6(sequential as f64 / requests as f64),
        sizes: top_sizes(sizes),
        read_run_lengths: weighted(&runs[0]),
        write_run_lengths: weighted(&runs[1]),
        read_reuse: Reuse {
            distances: weighted(&reuse[0]),
            before_end: top_sizes(std::mem::take(&mut back[0])),
            first_references: first_references[0],
        },
        write_reuse: Reuse {
            distances: weighted(&reuse[1]),
            before_end: top_sizes(std::mem::take(&mut back[1])),
            first_references: first_references[1],
        },
        start_offsets_in_64k: weighted(&start_offsets),
        space,
        arrival: arrival_shape(gaps),
    })
}

fn weighted(counts: &BTreeMap<u64, u64>) -> Weighted {
    Weighted { values: counts.keys().copied().collect(), weights: counts.values().copied().collect() }
}

/// The most frequent sizes (or other values); each other joins the nearest kept one.
fn top_sizes(sizes: HashMap<u64, u64>) -> Weighted {
    let mut all: Vec<(u64, u64)> = sizes.into_iter().collect();
    all.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let (kept, rest) = all.split_at(all.len().min(MAX_SIZES));
    let mut kept: BTreeMap<u64, u64> = kept.iter().copied().collect();
    for &(s, n) in rest {
        let near = *kept.keys().min_by_key(|&&k| k.abs_diff(s)).expect("at least one value is kept");
        *kept.get_mut(&near).expect("kept") += n;
    }
    Weighted { values: kept.keys().copied().collect(), weights: kept.values().copied().collect() }
}

fn arrival_shape(gaps: Vec<u64>) -> ArrivalShape {
    if gaps.is_empty() {
        return ArrivalShape {
            mean_ns: 0.0,
            edges_ns: vec![0; GAP_BUCKETS + 1],
            transitions: vec![vec![0; GAP_BUCKETS]; GAP_BUCKETS],
        };
    }
    let mean_ns = gaps.iter().map(|&g| g as f64).sum::<f64>() / gaps.len() as f64;
    let mut sorted = gaps.clone();
    sorted.sort_unstable();
    let edges_ns: Vec<u64> = (0..=GAP_BUCKETS)
        .map(|i| sorted[((sorted.len() - 1) as f64 * i as f64 / GAP_BUCKETS as f64).round() as usize])
        .collect();
    let mut transitions = vec![vec![0u64; GAP_BUCKETS]; GAP_BUCKETS];
    let bucket = |g: u64| gap_bucket(&edges_ns, g);
    for w in gaps.windows(2) {
        transitions[bucket(w[0])][bucket(w[1])] += 1;
    }
    ArrivalShape { mean_ns, edges_ns, transitions }
}

/// The bucket of a gap: the first whose upper edge is at least the gap (ties to the lowest,
/// so a run of equal gaps, such as the zeros of a burst, shares one bucket).
fn gap_bucket(edges: &[u64], g: u64) -> usize {
    edges[1..].partition_point(|&e| e < g).min(edges.len() - 2)
}

/// Checks of a [`Weighted`] read from a file: values and weights of one length, some
/// weight when there are values (all-zero weights would draw nothing the fit saw).
fn check_weighted(name: &str, w: &Weighted, may_be_empty: bool) -> Result<(), String> {
    if w.values.len() != w.weights.len() {
        return Err(format!(
            "{name}: {} values but {} weights (one weight per value)",
            w.values.len(),
            w.weights.len()
        ));
    }
    if w.values.is_empty() && !may_be_empty {
        return Err(format!("{name}: at least one value"));
    }
    if !w.values.is_empty() && w.weights.iter().all(|&n| n == 0) {
        return Err(format!("{name}: every weight is 0 (at least one must be > 0)"));
    }
    if w.weights.iter().try_fold(0u64, |acc, &n| acc.checked_add(n)).is_none() {
        return Err(format!("{name}: the weights sum past 2^64"));
    }
    Ok(())
}

/// A share read from a file: a number in [0, 1].
fn check_share(name: &str, x: f64) -> Result<(), String> {
    if !(0.0..=1.0).contains(&x) {
        return Err(format!("{name} = {x} (a share: a number in [0, 1])"));
    }
    Ok(())
}

impl FittedWorkload {
    /// Every rule a fitted workload keeps (a file may have been edited by hand): the
    /// message names the field and the rule.
    fn check(&self) -> Result<(), String> {
        if self.requests == 0 {
            return Err("requests = 0 (the trace's request count, at least 1)".into());
        }
        for (name, x) in [
            ("read_share", self.read_share),
            ("trim_share", self.trim_share),
            ("update_share", self.update_share),
            ("sequential_share", self.sequential_share),
            ("space.top_1pct_share", self.space.top_1pct_share),
            ("space.top_10pct_share", self.space.top_10pct_share),
        ] {
            check_share(name, x)?;
        }
        if self.read_share + self.trim_share > 1.0 + 1e-9 {
            return Err(format!(
                "read_share + trim_share = {} (shares of one request mix sum to at most 1)",
                self.read_share + self.trim_share
            ));
        }
        check_weighted("sizes", &self.sizes, false)?;
        if let Some(&s) = self.sizes.values.iter().find(|&&s| s == 0 || s % 512 != 0 || s > MAX_REQUEST_BYTES) {
            return Err(format!(
                "sizes: {s} bytes (every size a positive multiple of 512 bytes, at most {MAX_REQUEST_BYTES})"
            ));
        }
        for (name, r) in [("read_run_lengths", &self.read_run_lengths), ("write_run_lengths", &self.write_run_lengths)]
        {
            check_weighted(name, r, true)?;
            if r.values.contains(&0) {
                return Err(format!("{name}: a run length of 0 (runs are at least 1 request long)"));
            }
        }
        let o = &self.start_offsets_in_64k;
        check_weighted("start_offsets_in_64k", o, false)?;
        if let Some(v) = o.values.iter().find(|&&v| v >= ALIGN_WINDOW || v % 512 != 0) {
            return Err(format!("start_offsets_in_64k: {v} (offsets below 65536, multiples of 512)"));
        }
        for (name, r) in [("read_reuse", &self.read_reuse), ("write_reuse", &self.write_reuse)] {
            check_weighted(&format!("{name}.distances"), &r.distances, true)?;
            if let Some(v) = r.distances.values.iter().find(|&&v| v == 0 || v > MAX_REUSE) {
                return Err(format!("{name}.distances: {v} (distances in [1, {MAX_REUSE}] runs)"));
            }
            check_weighted(&format!("{name}.before_end"), &r.before_end, true)?;
        }
        let sp = &self.space;
        if sp.extent_bytes == 0 || !sp.extent_bytes.is_multiple_of(4096) {
            return Err(format!("space.extent_bytes = {} (a positive multiple of 4096)", sp.extent_bytes));
        }
        if sp.extents == 0 || sp.extents > MAX_EXTENTS || sp.extent_bytes.checked_mul(sp.extents).is_none() {
            return Err(format!(
                "space.extents = {} (in [1, {MAX_EXTENTS}], extents x extent_bytes within 2^64 bytes)",
                sp.extents
            ));
        }
        if sp.touched.is_empty() {
            return Err("space.touched: at least one [extent, requests] pair".into());
        }
        for (k, t) in sp.touched.iter().enumerate() {
            if t[0] >= sp.extents || t[1] == 0 || (k > 0 && sp.touched[k - 1][0] >= t[0]) {
                return Err(format!(
                    "space.touched: [{}, {}] (pairs [extent < extents, requests > 0] in increasing extent order)",
                    t[0], t[1]
                ));
            }
        }
        let a = &self.arrival;
        if !(a.mean_ns.is_finite() && a.mean_ns >= 0.0 && a.mean_ns <= SIM_TIME_LIMIT_NS as f64) {
            return Err(format!("arrival.mean_ns = {} (a finite time in [0, 2^62] ns)", a.mean_ns));
        }
        if a.edges_ns.len() < 2
            || a.edges_ns.windows(2).any(|q| q[0] > q[1])
            || a.edges_ns.last().is_some_and(|&e| e > SIM_TIME_LIMIT_NS)
        {
            return Err("arrival.edges_ns: at least 2 edges, not decreasing, at most 2^62 ns".into());
        }
        let buckets = a.edges_ns.len() - 1;
        if a.transitions.len() != buckets || a.transitions.iter().any(|row| row.len() != buckets) {
            return Err(format!(
                "arrival.transitions: a square table of {buckets} rows of {buckets} counts (one per bucket of edges_ns)"
            ));
        }
        if a.transitions.iter().flatten().try_fold(0u64, |acc, &n| acc.checked_add(n)).is_none() {
            return Err("arrival.transitions: the counts sum past 2^64".into());
        }
        Ok(())
    }

    /// Read a fitted workload from TOML, checked.
    pub fn from_toml(text: &str, origin: &str) -> Result<FittedWorkload, String> {
        // The version first: an older file lacks newer fields, and "missing field" would not
        // say why.
        #[derive(Deserialize)]
        struct Versioned {
            version: u32,
        }
        let v: Versioned = toml::from_str(text).map_err(|e| format!("{origin}: {e}"))?;
        if v.version != FIT_VERSION {
            return Err(format!(
                "{origin}: version {} (this ftlsim reads version {FIT_VERSION}; fit the trace again)",
                v.version
            ));
        }
        let w: FittedWorkload = toml::from_str(text).map_err(|e| format!("{origin}: {e}"))?;
        w.check().map_err(|e| format!("{origin}: {e}"))?;
        Ok(w)
    }
}

/// Values drawn in proportion to their weights: cumulative weights and a binary search, so a
/// draw costs O(log n) whatever the number of values.
#[derive(Debug, Clone)]
struct Cumulative {
    values: Vec<u64>,
    cum: Vec<u64>,
}

impl Cumulative {
    fn new(pairs: impl IntoIterator<Item = (u64, u64)>) -> Cumulative {
        let (mut values, mut cum, mut acc) = (Vec::new(), Vec::new(), 0u64);
        for (v, w) in pairs {
            acc += w;
            values.push(v);
            cum.push(acc);
        }
        Cumulative { values, cum }
    }

    /// The index of a value drawn by weight (0, without a draw, when all weights are 0).
    fn index<R: Rng>(&self, rng: &mut R) -> usize {
        let total = self.cum.last().copied().unwrap_or(0);
        if total == 0 {
            return 0;
        }
        let pick = rng.gen_range(0..total);
        self.cum.partition_point(|&c| c <= pick)
    }

    fn draw<R: Rng>(&self, rng: &mut R) -> u64 {
        self.values.get(self.index(rng)).copied().unwrap_or(1)
    }
}

/// Places a first reference is redrawn at when it falls on a touched page.
const FIRST_PLACE_TRIES: usize = 8;

/// Draws requests of a fitted workload's shape on a span of `span_bytes`.
#[derive(Debug, Clone)]
pub struct FittedSampler {
    sizes: Cumulative,
    /// Run lengths of runs of reads, and of writes and trims.
    runs: [Cumulative; 2],
    /// Share of runs that are runs of reads: the request mix given the kinds' mean lengths.
    read_runs: f64,
    /// The touched extents by request count.
    extents: Cumulative,
    /// Each touched extent's first byte and length on the target span.
    place: Vec<(u64, u64)>,
    /// The trace's run starts within 64 KiB windows, used unless the spec sets `align=`.
    start_offsets: Option<Cumulative>,
    read_share: f64,
    trim_share: f64,
    edges: Vec<u64>,
    /// The next gap's bucket by the last one's (a row without any takes the overall counts).
    transitions: Vec<Cumulative>,
    /// The bucket of the last gap drawn.
    gap_state: usize,
    /// Factor that gives the drawn gaps the trace's mean (drawing uniformly inside a bucket
    /// misses most of a long tail).
    gap_correction: f64,
    /// Re-reference distances in runs of reads, and of writes and trims (bucket upper
    /// bounds), by count; distance 0 stands for first references.
    reuse: [Cumulative; 2],
    /// Where a re-referencing run starts: bytes before the end of the run it re-references.
    before_end: [Cumulative; 2],
    /// The first and end byte of the last 65,536 runs of reads, and of writes and trims.
    recent: [Vec<(u64, u64)>; 2],
    /// Runs started of each kind.
    ring_len: [u64; 2],
    /// The 4 KiB pages of the span that runs of reads, and of writes and trims, have touched.
    touched: [Bits; 2],
    span_bytes: u64,
    align: u64,
    /// The current run: requests left, next offset, its op.
    run_left: u64,
    next_offset: u64,
    op: IoOp,
}

impl FittedSampler {
    /// A sampler for `w` on a span of `span_bytes`, offsets aligned to `align` bytes, its
    /// extents placed by `layout`.
    pub fn new(
        w: &FittedWorkload,
        span_bytes: u64,
        align: u64,
        own_alignment: bool,
        layout: FittedLayout,
    ) -> FittedSampler {
        let laid_out = match layout {
            FittedLayout::Compact => w.space.touched.len() as f64,
            FittedLayout::Range => w.space.extents as f64,
        };
        let mut scale = span_bytes as f64 / (laid_out * w.space.extent_bytes as f64);
        if layout == FittedLayout::Compact {
            scale = scale.min(1.0);
        }
        let place = w
            .space
            .touched
            .iter()
            .enumerate()
            .map(|(k, &[i, _])| {
                let slot = if layout == FittedLayout::Compact { k as u64 } else { i };
                let start = ((slot as f64 * w.space.extent_bytes as f64 * scale) as u64) / align * align;
                let len = ((w.space.extent_bytes as f64 * scale) as u64 / align * align).max(align);
                (start.min(span_bytes.saturating_sub(align)), len)
            })
            .collect();
        let pairs = |v: &Weighted| v.values.iter().copied().zip(v.weights.iter().copied()).collect::<Vec<_>>();
        let runs =
            [&w.read_run_lengths, &w.write_run_lengths]
                .map(|r| if r.values.is_empty() { vec![(1, 1)] } else { pairs(r) });
        // A run is drawn uniformly inside its bucket (upper/2, upper]: its mean length.
        let mean_run = |r: &[(u64, u64)]| {
            let n = r.iter().map(|p| p.1).sum::<u64>().max(1) as f64;
            r.iter().map(|&(u, c)| c as f64 * (u / 2 + 1 + u) as f64 / 2.0).sum::<f64>() / n
        };
        let (lr, lw) = (mean_run(&runs[0]), mean_run(&runs[1]));
        let (r, wr) = (w.read_share / lr, (1.0 - w.read_share) / lw);
        let a = &w.arrival;
        // How many gaps fall in each bucket: the rows' sums column by column.
        let per_bucket: Vec<u64> =
            (0..a.edges_ns.len() - 1).map(|b| a.transitions.iter().map(|r| r[b]).sum()).collect();
        let total = per_bucket.iter().sum::<u64>() as f64;
        let drawn = per_bucket
            .iter()
            .enumerate()
            .map(|(b, &c)| c as f64 * (a.edges_ns[b] + a.edges_ns[b + 1]) as f64 / 2.0)
            .sum::<f64>()
            / total.max(1.0);
        let by_bucket = |row: &[u64]| Cumulative::new(row.iter().copied().enumerate().map(|(b, c)| (b as u64, c)));
        FittedSampler {
            sizes: Cumulative::new(pairs(&w.sizes)),
            runs: runs.map(Cumulative::new),
            read_runs: if r + wr > 0.0 { r / (r + wr) } else { 0.0 },
            extents: Cumulative::new(w.space.touched.iter().enumerate().map(|(k, t)| (k as u64, t[1]))),
            place,
            start_offsets: own_alignment.then(|| Cumulative::new(pairs(&w.start_offsets_in_64k))),
            read_share: w.read_share,
            trim_share: w.trim_share,
            edges: a.edges_ns.clone(),
            transitions: a
                .transitions
                .iter()
                .map(|row| by_bucket(if row.iter().sum::<u64>() == 0 { &per_bucket } else { row }))
                .collect(),
            gap_state: 0,
            gap_correction: if drawn > 0.0 && total > 0.0 { a.mean_ns / drawn } else { 1.0 },
            reuse: [&w.read_reuse, &w.write_reuse]
                .map(|r| Cumulative::new(pairs(&r.distances).into_iter().chain([(0, r.first_references.max(1))]))),
            before_end: [&w.read_reuse, &w.write_reuse].map(|r| Cumulative::new(pairs(&r.before_end))),
            recent: [vec![(0, 0); MAX_REUSE as usize], vec![(0, 0); MAX_REUSE as usize]],
            ring_len: [0; 2],
            touched: [Bits::new(span_bytes.div_ceil(4096)), Bits::new(span_bytes.div_ceil(4096))],
            span_bytes,
            align,
            run_left: 0,
            next_offset: 0,
            op: IoOp::Write,
        }
    }

    /// The next request's op, offset and size in bytes.
    pub fn next<R: Rng>(&mut self, rng: &mut R) -> (IoOp, u64, u64) {
        let size = self.sizes.draw(rng).min(self.span_bytes);
        if self.run_left == 0 || self.next_offset + size > self.span_bytes {
            // A new run: its op from the mix (runs of reads and of writes differ in length),
            // its length from its kind's run-length buckets (uniform within a bucket).
            self.op = if rng.gen::<f64>() < self.read_runs {
                IoOp::Read
            } else if rng.gen::<f64>() * (1.0 - self.read_share) < self.trim_share {
                IoOp::Trim
            } else {
                IoOp::Write
            };
            let upper = self.runs[usize::from(self.op != IoOp::Read)].draw(rng).max(1);
            self.run_left = rng.gen_range(upper / 2 + 1..=upper);
            // A re-reference: a page of the run of its kind that many runs ago (a run of
            // writes rewrites written data, as a trace's updates do), at the old run's offset
            // within a page; else a place by popularity.
            let ring = usize::from(self.op != IoOp::Read);
            let upper = self.reuse[ring].draw(rng);
            let len = self.ring_len[ring];
            let reused = (upper > 0 && len > 0).then(|| {
                let d = rng.gen_range(upper / 2 + 1..=upper).min(len);
                let (first, end) = self.recent[ring][((len - d) % MAX_REUSE) as usize];
                let back = if self.before_end[ring].values.is_empty() { 0 } else { self.before_end[ring].draw(rng) };
                end.saturating_sub(back).max(first)
            });
            self.next_offset = match reused {
                Some(o) => o.min(self.span_bytes - size) / 512 * 512,
                None => {
                    // A first reference lands on a page no run of its kind touched, as in the
                    // trace: its place in the extent is redrawn a few times (a hot extent may
                    // have none left).
                    let extent = self.extents.index(rng);
                    let mut offset = self.first_place(rng, extent, size);
                    for _ in 0..FIRST_PLACE_TRIES {
                        if !self.touched[ring].get(offset / 4096) {
                            break;
                        }
                        offset = self.first_place(rng, extent, size);
                    }
                    offset
                }
            };
            self.recent[ring][(len % MAX_REUSE) as usize] = (self.next_offset, self.next_offset);
            self.ring_len[ring] += 1;
        }
        let offset = self.next_offset;
        self.next_offset += size;
        // The current run's extent so far: where a later run may re-reference it.
        let ring = usize::from(self.op != IoOp::Read);
        for p in offset / 4096..self.next_offset.div_ceil(4096) {
            self.touched[ring].set(p, true);
        }
        self.recent[ring][((self.ring_len[ring] - 1) % MAX_REUSE) as usize].1 = self.next_offset;
        self.run_left -= 1;
        (self.op, offset, size)
    }

    /// A place in touched extent `extent`: a 64 KiB window and the trace's offset there (or a
    /// multiple of `align=`).
    fn first_place<R: Rng>(&self, rng: &mut R, extent: usize, size: u64) -> u64 {
        let (start, len) = self.place[extent];
        let base = start.div_ceil(ALIGN_WINDOW) * ALIGN_WINDOW;
        let windows = (start + len).saturating_sub(base) / ALIGN_WINDOW;
        let offset = match &self.start_offsets {
            Some(o) if windows > 0 => base + rng.gen_range(0..windows) * ALIGN_WINDOW + o.draw(rng),
            _ => start + rng.gen_range(0..(len / self.align).max(1)) * self.align,
        };
        offset.min(self.span_bytes - size) / 512 * 512
    }

    /// An inter-arrival time: its bucket drawn given the last gap's (the trace's transitions),
    /// uniform inside the bucket, scaled so that the gaps' mean is the trace's, ns.
    pub fn gap_ns<R: Rng>(&mut self, rng: &mut R) -> f64 {
        self.gap_state = self.transitions[self.gap_state].index(rng).min(self.edges.len() - 2);
        let (lo, hi) = (self.edges[self.gap_state] as f64, self.edges[self.gap_state + 1] as f64);
        (lo + (hi - lo) * rng.gen::<f64>()) * self.gap_correction
    }
}
