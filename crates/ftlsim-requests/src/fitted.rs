//! Trace-shaped synthetic workloads (issues 14 and 36): [`fit`] reads a trace once and keeps
//! what an FTL responds to — the read/write/trim mix, the request sizes, where requests land
//! (the requests and fresh runs of every touched extent, in address order), how long
//! sequential runs are, where runs start (on a page touched before, by its LRU stack distance,
//! or on a fresh one), the inter-arrival times and the trace's temporal locality
//! (crate::locality) — as a [`FittedWorkload`] (TOML, `ftlsim trace fit`). A [`FittedSampler`]
//! replays that shape at any length, drive capacity and rate (`--workload
//! file:W.toml,requests=N,rate=R`): the touched extents land side by side in address order at
//! their own size (`layout=compact`, the default: the footprint keeps its size, as a trace
//! replayed with `--overflow compact`), or extent `i` of the trace's address range lands at the
//! same relative place of the span (`layout=range`).
//!
//! Kept as summaries rather than the trace itself: sizes of reads, of writes and of the
//! requests that start re-referencing runs (the 64 most frequent of each), extents (at most
//! 65,536: the extent doubles until the range fits), run lengths (power-of-two buckets), the
//! stack distances of run starts (four buckets per power of two) and inter-arrival times (16
//! buckets of equal count with the transitions between consecutive gaps' buckets: bursts). Not
//! kept: other correlations between size, op and place. `workload::impose_update_share`
//! reweighs a shape's fresh runs of writes so that a given replay rewrites a
//! paper's stated share of its page writes.

use crate::error::TraceError;
use crate::host::{IoOp, MAX_REQUEST_BYTES};
use crate::locality::{bucket, bucket_width, Locality, LocalityMeter, LruStack};
use crate::time::SIM_TIME_LIMIT_NS;
use crate::trace::{PageRuns, RecordReader, TraceRecord};
use rand::Rng;
use roaring::RoaringTreemap;
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
pub const FIT_VERSION: u32 = 5;
/// Most extents kept; a wider address range doubles the extent size.
const MAX_EXTENTS: u64 = 65_536;
/// Most distinct request sizes kept; the rest join the nearest kept size.
const MAX_SIZES: usize = 64;
/// Inter-arrival buckets (equal counts of the trace's gaps).
const GAP_BUCKETS: usize = 16;
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
    /// Share of requests that start where the previous one (same device) ended.
    pub sequential_share: f64,
    /// Sizes of reads (the 64 most frequent; the others join the nearest), but for those
    /// that start a re-referencing run (`read_reuse.sizes`).
    pub read_sizes: Weighted,
    /// Sizes of writes and trims, the same way (reads and writes of a trace often differ:
    /// a file system reads 128 KiB and writes 2 MiB segments).
    pub write_sizes: Weighted,
    /// Lengths in requests of the sequential runs that start with a read: each value is a
    /// power-of-two bucket's upper bound.
    pub read_run_lengths: Weighted,
    /// The same for runs that start with a write or a trim.
    pub write_run_lengths: Weighted,
    /// Where runs of reads start: on a 4 KiB page touched before, how recently, or not.
    pub read_reuse: Reuse,
    /// Where runs of writes start: on a 4 KiB page written before (a rewrite), how recently,
    /// or not. Runs of trims start as runs of writes do.
    pub write_reuse: Reuse,
    /// Where runs start within an aligned 64 KiB window (bytes, multiples of 512), by count:
    /// with the sizes, how many pages a request spans on a drive of any page size up to it.
    pub start_offsets_in_64k: Weighted,
    /// Where requests land.
    pub space: Space,
    /// Inter-arrival times.
    pub arrival: ArrivalShape,
    /// The trace's temporal locality at 4 KiB pages: update share, reuse distances in pages
    /// and in requests (what a replay of the fit is judged against:
    /// [`FittedWorkload::replay_locality`], [`Locality::distance`]).
    pub locality: Locality,
    /// Set when an update share was imposed on the shape (`trace fit --update-share`): the
    /// runs of writes that start on fresh pages were reweighted so that a replay of that
    /// length on that span rewrites that share of its page writes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imposed: Option<ImposedUpdateShare>,
}

/// An update share imposed on a fitted shape (a paper's stated share, e.g. Table 2 of seed
/// 000), and what the replay it was calibrated on reached.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImposedUpdateShare {
    /// The share asked for.
    pub update_share: f64,
    /// The share the calibration replay reached (the nearest the shape allows).
    pub reached: f64,
    /// The trace's own share, before.
    pub trace: f64,
    /// Factor on the weight of fresh runs of writes against rewriting ones.
    pub factor: f64,
    /// The replay it holds for: the workload spec after `file:`, the span in bytes, the seed.
    pub replay: String,
    /// Bytes of the drive the replay addressed.
    pub capacity_bytes: u64,
    /// Seed of the calibration replay.
    pub seed: u64,
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

/// Temporal locality of one kind of run: where runs of reads start among the pages any
/// request touched, and runs of writes among the pages written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reuse {
    /// Runs starting on a 4 KiB page touched before: its LRU stack distance (distinct pages
    /// touched, or written, since), as bucket lower bounds (crate::locality::bucket: exact
    /// below 4, then four buckets per power of two).
    pub distances: Weighted,
    /// Sizes of the requests that start those runs (a file system rewrites 4 KiB of
    /// metadata but writes fresh data in 2 MiB segments).
    pub sizes: Weighted,
    /// Runs starting on a page not touched (or not written) before.
    pub first_references: u64,
    /// Of those, runs of writes starting on a page read before (0 for runs of reads).
    pub first_writes_of_read_pages: u64,
}

/// Popularity of the trace's address range, extent by extent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Space {
    /// Extent size, bytes.
    pub extent_bytes: u64,
    /// Extents in the trace's address range (devices laid side by side).
    pub extents: u64,
    /// `[extent index, requests starting there, runs starting there on pages not touched
    /// before]` for every extent a request covers, in address order: the requests give the skew, the
    /// fresh runs where a first reference lands (runs continue into the next extents, and
    /// re-references land where earlier runs went).
    pub touched: Vec<[u64; 3]>,
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

/// Popularity is counted at 4 KiB first and regrouped once the range is known.
const UNIT: u64 = 4096;

/// 512-byte sectors in a [`UNIT`].
const UNIT_SECTORS: u64 = UNIT / 512;

/// Fit `reader`'s trace with popularity at `extent_bytes` (a multiple of 4 KiB; doubled until
/// the address range has at most 65,536 extents).
pub fn fit(mut reader: RecordReader, source: &str, extent_bytes: u64) -> Result<FittedWorkload, TraceError> {
    let mut f = Fitting::default();
    while let Some(rec) = reader.next() {
        let (_, r) = rec?;
        crate::locality::check_request_size(&reader, &r)?;
        f.observe(&r);
    }
    if f.run > 0 {
        *f.runs[f.run_kind].entry(f.run.next_power_of_two()).or_insert(0) += 1;
    }
    if f.requests == 0 {
        return Err(TraceError {
            file: source.into(),
            line: 0,
            field: "file".into(),
            text: "no request".into(),
            rule: "the trace has no request to fit".into(),
        });
    }
    f.finish(source, extent_bytes)
}

/// What a fit has counted so far, request by request.
#[derive(Default)]
struct Fitting {
    reads: u64,
    trims: u64,
    requests: u64,
    /// Request sizes not starting a re-referencing run, by kind (0 reads, 1 writes).
    sizes: [HashMap<u64, u64>; 2],
    /// Per (device, 4 KiB unit): the requests starting there and the first references.
    per_extent: HashMap<(u32, u64), [u64; 2]>,
    /// The 4 KiB units requests covered, as runs (memory follows the requests).
    covered: PageRuns,
    /// Per device, the end of its furthest request, 4 KiB units.
    device_end: BTreeMap<u32, u64>,
    /// Per device, the sector after its last request.
    last_end: HashMap<u32, u64>,
    meter: LocalityMeter,
    /// Sequential run lengths (rounded up to powers of two), by kind.
    runs: [BTreeMap<u64, u64>; 2],
    run_kind: usize,
    run: u64,
    sequential: u64,
    gaps: Vec<u64>,
    /// Per kind of run (0 reads, 1 writes): the stack distances and first references of the
    /// pages runs start on.
    reuse: [BTreeMap<u64, u64>; 2],
    reuse_sizes: [HashMap<u64, u64>; 2],
    first_references: [u64; 2],
    first_writes_of_read_pages: u64,
    start_offsets: BTreeMap<u64, u64>,
    prev_t: Option<u64>,
}

impl Fitting {
    /// Count request `r`.
    fn observe(&mut self, r: &TraceRecord) {
        // A zoned command's address is its zone's start, not where an append's data lands:
        // nothing a workload model of addresses can draw.
        if r.op.is_zoned() {
            return;
        }
        self.requests += 1;
        match r.op {
            IoOp::Read => self.reads += 1,
            IoOp::Trim => self.trims += 1,
            _ => {}
        }
        let bytes = u64::from(r.sectors) * 512;
        // Addresses in sectors and 4 KiB units, never bytes: a record may start near 2^64
        // bytes (a reader checks that it ends within 2^64 sectors).
        let end_sector = r.offset_sector + u64::from(r.sectors);
        let (start_unit, end_unit) = (r.offset_sector / UNIT_SECTORS, end_sector.div_ceil(UNIT_SECTORS));
        let kind = usize::from(r.op != IoOp::Read);
        let first_page = self.meter.observe_sectors(r.device, r.op, r.offset_sector, r.sectors);
        // A request that starts a re-referencing run has its size kept with that run's kind
        // of reuse; the others with their op's.
        let mut reuse_start = false;
        // Every page a request covers is touched space (a 2 MiB request fills extents no
        // request starts in); it is counted where it starts.
        self.covered.add(r.device, start_unit, end_unit.max(start_unit + 1));
        let here = self.per_extent.entry((r.device, start_unit)).or_insert([0, 0]);
        here[0] += 1;
        let e = self.device_end.entry(r.device).or_insert(0);
        *e = (*e).max(end_unit);
        if self.last_end.insert(r.device, end_sector) == Some(r.offset_sector) {
            self.sequential += 1;
            self.run += 1;
        } else {
            if self.run > 0 {
                *self.runs[self.run_kind].entry(self.run.next_power_of_two()).or_insert(0) += 1;
            }
            self.run = 1;
            self.run_kind = kind;
            *self.start_offsets.entry(r.offset_sector % (ALIGN_WINDOW / 512) * 512).or_insert(0) += 1;
            // A run of reads starts among the pages any request touched, a run of writes
            // among those written (a rewrite); trims touch no page.
            if let Some(p) = first_page {
                match if r.op == IoOp::Read { p.every } else { p.written } {
                    Some(d) => {
                        *self.reuse[kind].entry(bucket(d)).or_insert(0) += 1;
                        *self.reuse_sizes[kind].entry(bytes).or_insert(0) += 1;
                        reuse_start = true;
                    }
                    None => {
                        self.first_references[kind] += 1;
                        self.first_writes_of_read_pages += u64::from(r.op.writes_data() && p.every.is_some());
                        here[1] += 1;
                    }
                }
            }
        }
        if !reuse_start {
            *self.sizes[kind].entry(bytes).or_insert(0) += 1;
        }
        if let Some(p) = self.prev_t {
            self.gaps.push(r.time_ns.saturating_sub(p));
        }
        self.prev_t = Some(r.time_ns);
    }

    /// The fitted shape of the requests counted (at least one).
    fn finish(mut self, source: &str, extent_bytes: u64) -> Result<FittedWorkload, TraceError> {
        let requests = self.requests;
        let per_extent = std::mem::take(&mut self.per_extent);
        let space =
            space(per_extent, &self.covered, &self.device_end, extent_bytes, requests).ok_or_else(|| TraceError {
                file: source.into(),
                line: 0,
                field: "offset".into(),
                text: format!("devices {:?} laid side by side", self.device_end.keys().collect::<Vec<_>>()),
                rule: "the trace's addresses, its devices side by side, span more than 2^80 bytes, more than a fit \
                       describes (65,536 extents of under 2^64 bytes): fit fewer devices at a time"
                    .into(),
            })?;
        Ok(FittedWorkload {
            version: FIT_VERSION,
            source: source.into(),
            requests,
            read_share: crate::round::r6(self.reads as f64 / requests as f64),
            trim_share: crate::round::r6(self.trims as f64 / requests as f64),
            sequential_share: crate::round::r6(self.sequential as f64 / requests as f64),
            write_sizes: top_sizes(std::mem::take(&mut self.sizes[1])),
            read_sizes: top_sizes(std::mem::take(&mut self.sizes[0])),
            read_run_lengths: weighted(&self.runs[0]),
            write_run_lengths: weighted(&self.runs[1]),
            read_reuse: Reuse {
                distances: weighted(&self.reuse[0]),
                sizes: top_sizes(std::mem::take(&mut self.reuse_sizes[0])),
                first_references: self.first_references[0],
                first_writes_of_read_pages: 0,
            },
            write_reuse: Reuse {
                distances: weighted(&self.reuse[1]),
                sizes: top_sizes(std::mem::take(&mut self.reuse_sizes[1])),
                first_references: self.first_references[1],
                first_writes_of_read_pages: self.first_writes_of_read_pages,
            },
            start_offsets_in_64k: weighted(&self.start_offsets),
            space,
            arrival: arrival_shape(self.gaps),
            locality: self.meter.locality(),
            imposed: None,
        })
    }
}

/// The popularity map of `requests` requests: the 4 KiB units counted (`per_extent`) and
/// covered (`covered`), the devices side by side, each from 0 to the end of its last request
/// (`device_end`, units), grouped in extents of `extent_bytes`, doubled until the range has
/// at most [`MAX_EXTENTS`]. In 128 bits: devices side by side may pass 2^64 units. `None` if
/// an extent would pass 2^64 bytes.
fn space(
    per_extent: HashMap<(u32, u64), [u64; 2]>,
    covered: &PageRuns,
    device_end: &BTreeMap<u32, u64>,
    extent_bytes: u64,
    requests: u64,
) -> Option<Space> {
    let mut device_base: HashMap<u32, u128> = HashMap::new();
    let mut range_units = 0u128;
    for (&dev, &end) in device_end {
        device_base.insert(dev, range_units);
        range_units += u128::from(end);
    }
    let mut per = u128::from(extent_bytes.max(UNIT) / UNIT);
    while range_units.div_ceil(per) > u128::from(MAX_EXTENTS) {
        per *= 2;
    }
    let extent = u64::try_from(per * u128::from(UNIT)).ok()?;
    let extents = range_units.div_ceil(per).max(1) as u64;
    let index = |dev: u32, unit: u64| ((device_base[&dev] + u128::from(unit)) / per) as u64;
    let mut counts: BTreeMap<u64, [u64; 2]> = BTreeMap::new();
    for ((dev, unit), n) in per_extent {
        let c = counts.entry(index(dev, unit)).or_insert([0, 0]);
        c[0] += n[0];
        c[1] += n[1];
    }
    // Covered extents no request starts in are touched too. Runs are disjoint, so this visits
    // at most every extent once plus one per run.
    for (dev, first, end, _) in covered.runs() {
        for i in index(dev, first)..=index(dev, end - 1) {
            counts.entry(i).or_insert([0, 0]);
        }
    }
    let touched: Vec<[u64; 3]> = counts.into_iter().map(|(i, n)| [i, n[0], n[1]]).collect();
    let mut ranked: Vec<u64> = touched.iter().map(|t| t[1]).collect();
    ranked.sort_unstable_by(|a, b| b.cmp(a));
    let top = |share: f64| {
        let n = ((ranked.len() as f64 * share).ceil() as usize).max(1);
        crate::round::r6(ranked[..n].iter().sum::<u64>() as f64 / requests as f64)
    };
    Some(Space { extent_bytes: extent, extents, top_1pct_share: top(0.01), top_10pct_share: top(0.10), touched })
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
        self.check_shares()?;
        self.check_sizes_and_runs()?;
        self.check_reuse()?;
        self.check_space()?;
        self.locality.check("locality")?;
        if let Some(i) = &self.imposed {
            check_share("imposed.update_share", i.update_share)?;
            check_share("imposed.reached", i.reached)?;
            check_share("imposed.trace", i.trace)?;
            if !(i.factor.is_finite() && i.factor > 0.0) {
                return Err(format!("imposed.factor = {} (a positive number)", i.factor));
            }
        }
        self.check_arrival()
    }

    /// The request mix and the shares.
    fn check_shares(&self) -> Result<(), String> {
        for (name, x) in [
            ("read_share", self.read_share),
            ("trim_share", self.trim_share),
            ("locality.update_share", self.locality.update_share),
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
        Ok(())
    }

    /// Request sizes, sequential run lengths and where runs start in a 64 KiB window.
    fn check_sizes_and_runs(&self) -> Result<(), String> {
        for (name, w) in [("read_sizes", &self.read_sizes), ("write_sizes", &self.write_sizes)] {
            check_weighted(name, w, true)?;
            if let Some(&s) = w.values.iter().find(|&&s| s == 0 || s % 512 != 0 || s > MAX_REQUEST_BYTES) {
                return Err(format!(
                    "{name}: {s} bytes (every size a positive multiple of 512 bytes, at most {MAX_REQUEST_BYTES})"
                ));
            }
        }
        if self.read_sizes.values.is_empty() && self.write_sizes.values.is_empty() {
            return Err("read_sizes, write_sizes: at least one size".into());
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
        Ok(())
    }

    /// The reuse of reads and of writes: distances, sizes and first references.
    fn check_reuse(&self) -> Result<(), String> {
        for (name, r) in [("read_reuse", &self.read_reuse), ("write_reuse", &self.write_reuse)] {
            check_weighted(&format!("{name}.distances"), &r.distances, true)?;
            check_weighted(&format!("{name}.sizes"), &r.sizes, true)?;
            if let Some(&s) = r.sizes.values.iter().find(|&&s| s == 0 || s % 512 != 0 || s > MAX_REQUEST_BYTES) {
                return Err(format!(
                    "{name}.sizes: {s} bytes (positive multiples of 512, at most {MAX_REQUEST_BYTES})"
                ));
            }
            if r.first_writes_of_read_pages > r.first_references {
                return Err(format!(
                    "{name}.first_writes_of_read_pages = {} (at most first_references = {})",
                    r.first_writes_of_read_pages, r.first_references
                ));
            }
            if let Some(v) = r.distances.values.iter().find(|&&v| bucket(v) != v || v > 1 << 40) {
                return Err(format!(
                    "{name}.distances: {v} (bucket lower bounds: 0-4, then four per power of two, up to 2^40)"
                ));
            }
        }
        Ok(())
    }

    /// The popularity map.
    fn check_space(&self) -> Result<(), String> {
        let sp = &self.space;
        if sp.extent_bytes == 0 || !sp.extent_bytes.is_multiple_of(4096) {
            return Err(format!("space.extent_bytes = {} (a positive multiple of 4096)", sp.extent_bytes));
        }
        // The range may pass 2^64 bytes (devices side by side, sector numbers near 2^64): it
        // is laid on a drive's span in floating point.
        if sp.extents == 0 || sp.extents > MAX_EXTENTS {
            return Err(format!("space.extents = {} (in [1, {MAX_EXTENTS}])", sp.extents));
        }
        if sp.touched.iter().all(|t| t[1] == 0) {
            return Err("space.touched: at least one [extent, requests, fresh runs] triple".into());
        }
        for (k, t) in sp.touched.iter().enumerate() {
            if t[0] >= sp.extents || t[2] > t[1] || (k > 0 && sp.touched[k - 1][0] >= t[0]) {
                return Err(format!(
                    "space.touched: [{}, {}, {}] (triples [extent < extents, requests, fresh runs <= requests] \
                     in increasing extent order)",
                    t[0], t[1], t[2]
                ));
            }
        }
        Ok(())
    }

    /// The inter-arrival times: their mean, bucket edges and transitions.
    fn check_arrival(&self) -> Result<(), String> {
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

    /// The largest request, bytes.
    pub fn largest_size(&self) -> u64 {
        [&self.read_sizes, &self.write_sizes, &self.read_reuse.sizes, &self.write_reuse.sizes]
            .iter()
            .flat_map(|w| w.values.iter().copied())
            .max()
            .unwrap_or(4096)
    }

    /// Request sizes when `read_share` of the requests are reads: each kind's sizes (with
    /// those of its re-referencing run starts) weighed by its share; a kind the trace has no
    /// request of takes the other's, as the sampler does.
    pub fn sizes_at(&self, read_share: f64) -> Vec<(u64, f64)> {
        let kind = |sizes: &Weighted, reuse: &Weighted| {
            let mut m: BTreeMap<u64, f64> = BTreeMap::new();
            for w in [sizes, reuse] {
                for (&v, &n) in w.values.iter().zip(&w.weights) {
                    *m.entry(v).or_insert(0.0) += n as f64;
                }
            }
            m
        };
        let (mut r, mut w) =
            (kind(&self.read_sizes, &self.read_reuse.sizes), kind(&self.write_sizes, &self.write_reuse.sizes));
        if r.is_empty() {
            r = w.clone();
        } else if w.is_empty() {
            w = r.clone();
        }
        let mut by_size: BTreeMap<u64, f64> = BTreeMap::new();
        for (sizes, share) in [(r, read_share), (w, 1.0 - read_share)] {
            let total = sizes.values().sum::<f64>().max(1.0);
            for (v, n) in sizes {
                *by_size.entry(v).or_insert(0.0) += share * n / total;
            }
        }
        by_size.into_iter().filter(|p| p.1 > 0.0).collect()
    }

    /// The shape with runs of writes starting on fresh pages `factor` times as likely against
    /// rewriting ones (below 1 the rewriting ones weigh 1/factor times as much instead, so no
    /// weight rounds to nothing).
    pub fn with_fresh_write_factor(&self, factor: f64) -> FittedWorkload {
        let mut w = self.clone();
        let r = &mut w.write_reuse;
        if factor >= 1.0 {
            let scaled = |n: u64| (n as f64 * factor).round() as u64;
            r.first_writes_of_read_pages = scaled(r.first_writes_of_read_pages);
            r.first_references = scaled(r.first_references.max(1));
        } else {
            for n in &mut r.distances.weights {
                *n = (*n as f64 / factor).round() as u64;
            }
        }
        w
    }

    /// The fit's own locality: `requests` requests drawn as `file:` draws them by default
    /// (compact layout, the trace's alignment) on the footprint the trace touched, seeded.
    /// Beside [`FittedWorkload::locality`] it says how well the fit keeps the trace's reuse
    /// ([`Locality::distance`]).
    pub fn replay_locality(&self, requests: u64, seed: u64) -> Locality {
        use rand::SeedableRng;
        let largest = self.largest_size();
        let span = (self.space.touched.len() as u64).saturating_mul(self.space.extent_bytes).max(2 * largest);
        let mut sampler = FittedSampler::new(self, span, 512, true, FittedLayout::Compact);
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut meter = LocalityMeter::new();
        for _ in 0..requests {
            let (op, offset, bytes) = sampler.next(&mut rng);
            meter.observe(0, op, offset, bytes);
        }
        meter.locality()
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

/// Indices drawn by weight without replacement: each draw takes one from its index's count,
/// and an empty urn is refilled. A replay as long as its trace starts as many fresh runs in
/// each extent as the trace did (drawn with replacement, some extents would get more than
/// they hold and their runs would overlap); a longer one goes round again. A Fenwick tree of
/// the counts: O(log n) a draw.
#[derive(Debug, Clone)]
struct Urn {
    full: Vec<u64>,
    tree: Vec<u64>,
    left: u64,
}

impl Urn {
    fn new(counts: Vec<u64>) -> Urn {
        let mut u = Urn { tree: vec![0; counts.len()], full: counts, left: 0 };
        u.refill();
        u
    }

    fn refill(&mut self) {
        self.tree.iter_mut().for_each(|t| *t = 0);
        for k in 0..self.full.len() {
            self.add(k, self.full[k] as i64);
        }
        self.left = self.full.iter().sum();
    }

    fn add(&mut self, k: usize, delta: i64) {
        let mut i = k + 1;
        while i <= self.tree.len() {
            self.tree[i - 1] = self.tree[i - 1].wrapping_add_signed(delta);
            i += i & i.wrapping_neg();
        }
    }

    /// An index by the counts left (0, without a draw, when every count is 0).
    fn draw<R: Rng>(&mut self, rng: &mut R) -> usize {
        if self.left == 0 {
            self.refill();
            if self.left == 0 {
                return 0;
            }
        }
        let mut pick = rng.gen_range(0..self.left);
        let (mut pos, mut step) = (0usize, self.tree.len().next_power_of_two());
        while step > 0 {
            if pos + step <= self.tree.len() && self.tree[pos + step - 1] <= pick {
                pos += step;
                pick -= self.tree[pos - 1];
            }
            step >>= 1;
        }
        self.add(pos, -1);
        self.left -= 1;
        pos
    }
}

/// The reuse draw that stands for a first reference.
const FIRST_REFERENCE: u64 = u64::MAX;

/// Places a first reference is redrawn at when it falls on a touched page.
const FIRST_PLACE_TRIES: usize = 8;
/// Pages of a first reference's expected run checked for being untouched.
const FRESH_RUN_PAGES: usize = 1024;
/// Pages of its extent searched for an untouched one when every redrawn place was touched.
const FRESH_PAGE_SEARCH: usize = 4096;

/// Draws requests of a fitted workload's shape on a span of `span_bytes`.
#[derive(Debug, Clone)]
pub struct FittedSampler {
    /// Sizes of reads, and of writes and trims.
    sizes: [Cumulative; 2],
    /// Sizes of the requests that start re-referencing runs of each kind (empty: the kind's).
    reuse_sizes: [Cumulative; 2],
    /// Their means, bytes: how far a run is expected to reach.
    mean_size: [u64; 2],
    /// Run lengths of runs of reads, and of writes and trims.
    runs: [Cumulative; 2],
    /// Share of runs that are runs of reads: the request mix given the kinds' mean lengths.
    read_runs: f64,
    /// The touched extents by the fresh runs that started there, drawn without replacement.
    extents: Urn,
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
    /// Stack distances where runs of reads, and of writes and trims, start (bucket lower
    /// bounds), by count; [`FIRST_REFERENCE`] stands for a page not touched before.
    reuse: [Cumulative; 2],
    /// LRU stacks of the 4 KiB pages touched by any request, and of those written: a run
    /// re-references the page at the distance it draws.
    stacks: [LruStack; 2],
    /// The deepest page each stack keeps: one past the largest distance its kind draws.
    depth: [usize; 2],
    /// Compact layout: the next page past the laid-out footprint where fresh runs go once the
    /// footprint has no room for them.
    tail_page: Option<u64>,
    /// Where in its page the last request starting on each page started, bytes.
    starts_within: HashMap<u64, u16>,
    /// The same pages as sets: where a first reference may land. Compressed bitmaps, so their
    /// memory follows the pages touched, not the span (a trace of far-apart extents laid out
    /// over terabytes).
    touched: [RoaringTreemap; 2],
    /// Share of first references of runs of writes that land on a page read before (the
    /// others on a page no request touched).
    first_writes_of_read_pages: f64,
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
        let place = place_extents(&w.space, span_bytes, align, layout);
        let pairs = |v: &Weighted| v.values.iter().copied().zip(v.weights.iter().copied()).collect::<Vec<_>>();
        // A kind the trace has no request of (a spec's `read=` may ask for it) takes the
        // other kind's sizes.
        let kind_sizes = match (w.read_sizes.values.is_empty(), w.write_sizes.values.is_empty()) {
            (true, _) => [&w.write_sizes, &w.write_sizes],
            (_, true) => [&w.read_sizes, &w.read_sizes],
            _ => [&w.read_sizes, &w.write_sizes],
        };
        let runs =
            [&w.read_run_lengths, &w.write_run_lengths]
                .map(|r| if r.values.is_empty() { vec![(1, 1)] } else { pairs(r) });
        let read_runs = read_run_share(w.read_share, &runs);
        let a = &w.arrival;
        let (per_bucket, gap_correction) = gap_buckets(a);
        let by_bucket = |row: &[u64]| Cumulative::new(row.iter().copied().enumerate().map(|(b, c)| (b as u64, c)));
        let tail_page = (layout == FittedLayout::Compact)
            .then(|| place.iter().map(|&(start, len): &(u64, u64)| (start + len).div_ceil(4096)).max().unwrap_or(0));
        FittedSampler {
            sizes: kind_sizes.map(|k| Cumulative::new(pairs(k))),
            reuse_sizes: [&w.read_reuse, &w.write_reuse].map(|r| Cumulative::new(pairs(&r.sizes))),
            mean_size: kind_sizes.map(|k| {
                let n = k.weights.iter().sum::<u64>().max(1) as f64;
                (k.values.iter().zip(&k.weights).map(|(&v, &c)| v as f64 * c as f64).sum::<f64>() / n) as u64
            }),
            runs: runs.map(Cumulative::new),
            read_runs,
            // First references land where the trace's fresh runs started (by request count
            // if it had none: a trace of trims only).
            extents: {
                let fresh = w.space.touched.iter().any(|t| t[2] > 0);
                Urn::new(w.space.touched.iter().map(|t| t[if fresh { 2 } else { 1 }]).collect())
            },
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
            gap_correction,
            reuse: [&w.read_reuse, &w.write_reuse].map(|r| {
                Cumulative::new(pairs(&r.distances).into_iter().chain([(FIRST_REFERENCE, r.first_references.max(1))]))
            }),
            stacks: [LruStack::default(), LruStack::default()],
            touched: [RoaringTreemap::new(), RoaringTreemap::new()],
            starts_within: HashMap::new(),
            tail_page,
            depth: [&w.read_reuse, &w.write_reuse]
                .map(|r| r.distances.values.iter().map(|&b| (b + bucket_width(b)) as usize).max().unwrap_or(1)),
            first_writes_of_read_pages: w.write_reuse.first_writes_of_read_pages as f64
                / w.write_reuse.first_references.max(1) as f64,
            span_bytes,
            align,
            run_left: 0,
            next_offset: 0,
            op: IoOp::Write,
        }
    }

    /// The next request's op, offset and size in bytes.
    pub fn next<R: Rng>(&mut self, rng: &mut R) -> (IoOp, u64, u64) {
        let mut size = if self.run_left > 0 { self.kind_size(self.op, rng) } else { 0 };
        if self.run_left == 0 || self.next_offset + size > self.span_bytes {
            size = self.start_run(rng);
        }
        let offset = self.next_offset;
        self.next_offset += size;
        self.starts_within.insert(offset / 4096, (offset % 4096) as u16);
        // Trims touch no page, as the trace's locality counts them.
        if self.op != IoOp::Trim {
            self.touch(offset);
        }
        self.run_left -= 1;
        (self.op, offset, size)
    }

    /// A request size of `op`'s kind, within the span.
    fn kind_size<R: Rng>(&self, op: IoOp, rng: &mut R) -> u64 {
        self.sizes[usize::from(op != IoOp::Read)].draw(rng).min(self.span_bytes)
    }

    /// A new run: its op from the mix (runs of reads and of writes differ in length), its
    /// length from its kind's run-length buckets (uniform within a bucket), its first
    /// request's place; returns that request's size.
    fn start_run<R: Rng>(&mut self, rng: &mut R) -> u64 {
        self.op = if rng.gen::<f64>() < self.read_runs {
            IoOp::Read
        } else if rng.gen::<f64>() * (1.0 - self.read_share) < self.trim_share {
            IoOp::Trim
        } else {
            IoOp::Write
        };
        let upper = self.runs[usize::from(self.op != IoOp::Read)].draw(rng).max(1);
        self.run_left = rng.gen_range(upper / 2 + 1..=upper);
        // A re-reference: the page at the drawn LRU stack distance (a run of reads among
        // the pages any request touched, a run of writes among those written: a
        // rewrite), at the trace's offset within a page; else a place by popularity.
        let kind = usize::from(self.op != IoOp::Read);
        let lower = self.reuse[kind].draw(rng);
        let reused = (lower != FIRST_REFERENCE)
            .then(|| self.stacks[kind].page_at_depth(lower + rng.gen_range(0..bucket_width(lower))))
            .flatten();
        let (offset, size) = match reused {
            Some((_, page)) => self.re_reference(rng, kind, page),
            None => self.first_reference(rng, kind),
        };
        self.next_offset = offset;
        size
    }

    /// A run of `kind` starting on `page` again: its (offset, size).
    fn re_reference<R: Rng>(&mut self, rng: &mut R, kind: usize, page: u64) -> (u64, u64) {
        let size = match self.reuse_sizes[kind].values.is_empty() {
            true => self.kind_size(self.op, rng),
            false => self.reuse_sizes[kind].draw(rng).min(self.span_bytes),
        };
        // Where in the page the last request that started there did (a rewrite lands where
        // the data was), else the trace's offsets.
        let within = match (self.starts_within.get(&page), &self.start_offsets) {
            (Some(&w), _) => u64::from(w),
            (None, Some(o)) => o.draw(rng) % 4096,
            (None, None) => 0,
        };
        (self.aligned(page * 4096 + within, size), size)
    }

    /// A first reference of a run of `kind`: its (offset, size). It lands on pages not
    /// touched (a run of writes: not written) before, as in the trace: its place in the
    /// extent is redrawn a few times until the run's first and last page are fresh, then the
    /// extent is searched for a fresh page (a hot extent may have none left).
    fn first_reference<R: Rng>(&mut self, rng: &mut R, kind: usize) -> (u64, u64) {
        let size = self.kind_size(self.op, rng);
        let extent = self.extents.draw(rng);
        let run_bytes = size.saturating_add((self.run_left - 1).saturating_mul(self.mean_size[usize::from(kind != 0)]));
        // A page fresh for a run of writes is one not written; as often as in the trace, one
        // no request touched either.
        let kind = if kind == 1 && rng.gen::<f64>() >= self.first_writes_of_read_pages { 0 } else { kind };
        let fresh = |s: &Self, o: u64| {
            let end = o.saturating_add(run_bytes).min(s.span_bytes).div_ceil(4096);
            (o / 4096..end).take(FRESH_RUN_PAGES).all(|p| !s.touched[kind].contains(p))
        };
        let mut offset = self.first_place(rng, extent, size);
        let mut tries = 0;
        while !fresh(self, offset) && tries < FIRST_PLACE_TRIES {
            offset = self.first_place(rng, extent, size);
            tries += 1;
        }
        if !fresh(self, offset) {
            let need = run_bytes.div_ceil(4096).min(FRESH_RUN_PAGES as u64);
            let within = self.start_offsets.as_ref().map_or(0, |o| o.draw(rng) % 4096);
            let gap = self.fresh_gap(kind, extent, need);
            let page = match gap {
                Some((p, len)) if len >= need => Some(p),
                // The footprint is full: new data goes past it, into the span the layout
                // left free (compact layout), as a longer trace's would.
                _ if self.tail_page.is_some_and(|t| (t + need) * 4096 <= self.span_bytes) => {
                    let t = self.tail_page.expect("checked");
                    self.tail_page = Some(t + need);
                    Some(t)
                }
                _ => gap.map(|g| g.0),
            };
            if let Some(p) = page {
                offset = self.aligned(p * 4096 + within, size);
            }
        }
        (offset, size)
    }

    /// The pages from `offset` to the next request's are touched (and written, by a write).
    fn touch(&mut self, offset: u64) {
        for p in offset / 4096..self.next_offset.div_ceil(4096) {
            // A page no distance reaches is forgotten, with where a request started on it
            // (a written page kept deeper in the written stack then draws that offset).
            if let Some((_, old)) = self.stacks[0].touch_within((0, p), self.depth[0]) {
                self.starts_within.remove(&old);
            }
            self.touched[0].insert(p);
            if self.op == IoOp::Write {
                self.stacks[1].touch_within((0, p), self.depth[1]);
                self.touched[1].insert(p);
            }
            // Whatever reaches past the footprint (a run going on, a gap at its end) moves
            // the tail on, so the tail never hands out written pages as fresh.
            if let Some(t) = self.tail_page.filter(|&t| p >= t) {
                self.tail_page = Some(t.max(p + 1));
            }
        }
    }

    /// `offset` as a request of `size` may start there: on a multiple of `align=` (with the
    /// trace's own alignment, of 512 bytes), inside the span.
    fn aligned(&self, offset: u64, size: u64) -> u64 {
        let align = if self.start_offsets.is_some() { 512 } else { self.align };
        (offset / align * align).min(self.span_bytes - size) / 512 * 512
    }

    /// The first page of a run of `need` pages untouched by `kind`, searched from the start of
    /// extent `extent` on, then in the next touched extents (round them all: a full extent
    /// spills into its neighbours, never into space the trace left alone), with its length;
    /// else the start of the longest such run met; `None` if every page searched was touched.
    fn fresh_gap(&self, kind: usize, extent: usize, need: u64) -> Option<(u64, u64)> {
        let last_page = self.span_bytes.div_ceil(4096);
        let (mut best, mut best_len) = (None, 0u64);
        let mut searched = 0usize;
        for k in (extent..self.place.len()).chain(0..extent) {
            let (start, len) = self.place[k];
            let (mut p, end) = (start / 4096, (start + len).div_ceil(4096).min(last_page));
            while p < end {
                if searched >= FRESH_PAGE_SEARCH {
                    return best;
                }
                if self.touched[kind].contains(p) {
                    p += 1;
                    searched += 1;
                    continue;
                }
                // The untouched pages from here on (a run may continue past the extent).
                let mut gap = 1;
                while gap < need && p + gap < last_page && !self.touched[kind].contains(p + gap) {
                    gap += 1;
                }
                if gap >= need {
                    return Some((p, gap));
                }
                if gap > best_len {
                    (best, best_len) = (Some((p, gap)), gap);
                }
                p += gap;
                searched += gap as usize;
            }
        }
        best
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

/// Where each touched extent of `space` goes on a span of `span_bytes`, as (start, length)
/// aligned to `align`: compact (side by side, scaled down to fit) or over the whole range.
fn place_extents(space: &Space, span_bytes: u64, align: u64, layout: FittedLayout) -> Vec<(u64, u64)> {
    let laid_out = match layout {
        FittedLayout::Compact => space.touched.len() as f64,
        FittedLayout::Range => space.extents as f64,
    };
    let mut scale = span_bytes as f64 / (laid_out * space.extent_bytes as f64);
    if layout == FittedLayout::Compact {
        scale = scale.min(1.0);
    }
    space
        .touched
        .iter()
        .enumerate()
        .map(|(k, &[i, _, _])| {
            let slot = if layout == FittedLayout::Compact { k as u64 } else { i };
            let start = ((slot as f64 * space.extent_bytes as f64 * scale) as u64) / align * align;
            let len = ((space.extent_bytes as f64 * scale) as u64 / align * align).max(align);
            (start.min(span_bytes.saturating_sub(align)), len)
        })
        .collect()
}

/// The share of runs that are reads, so that requests are reads at `read_share` given the
/// run lengths of reads and writes (`runs`, (bucket upper bound, count) pairs).
fn read_run_share(read_share: f64, runs: &[Vec<(u64, u64)>; 2]) -> f64 {
    // A run is drawn uniformly inside its bucket (upper/2, upper]: its mean length.
    let mean_run = |r: &[(u64, u64)]| {
        let n = r.iter().map(|p| p.1).sum::<u64>().max(1) as f64;
        r.iter().map(|&(u, c)| c as f64 * (u / 2 + 1 + u) as f64 / 2.0).sum::<f64>() / n
    };
    let (lr, lw) = (mean_run(&runs[0]), mean_run(&runs[1]));
    let (r, wr) = (read_share / lr, (1.0 - read_share) / lw);
    if r + wr > 0.0 {
        r / (r + wr)
    } else {
        0.0
    }
}

/// How many gaps fall in each bucket of `a` (the rows' sums column by column), and the
/// factor that brings the mean of gaps drawn at bucket midpoints to the trace's mean.
fn gap_buckets(a: &ArrivalShape) -> (Vec<u64>, f64) {
    let per_bucket: Vec<u64> = (0..a.edges_ns.len() - 1).map(|b| a.transitions.iter().map(|r| r[b]).sum()).collect();
    let total = per_bucket.iter().sum::<u64>() as f64;
    let drawn = per_bucket
        .iter()
        .enumerate()
        .map(|(b, &c)| c as f64 * (a.edges_ns[b] + a.edges_ns[b + 1]) as f64 / 2.0)
        .sum::<f64>()
        / total.max(1.0);
    (per_bucket, if drawn > 0.0 && total > 0.0 { a.mean_ns / drawn } else { 1.0 })
}
