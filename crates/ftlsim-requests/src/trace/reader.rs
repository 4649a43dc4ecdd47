//! Streaming trace reading: files (plain, gzip or zstd, told apart by their magic bytes),
//! line-numbered parse errors, format detection, and [`TraceSource`], which turns records
//! into host requests under the user's replay options.
//!
//! Order of the replay steps: parse -> device selection -> bounded reorder window ->
//! time relative to the first request -> skip / time window / request limit -> address
//! layout and overflow policy -> repeat -> speed. Memory is bounded by the reorder window
//! plus, only for `--overflow compact` and multi-device layouts, one pass's per-device
//! extents and the set of touched pages (the footprint, never more than the drive).

use super::{parser, LineParser, ParserOptions, TraceFormat, TraceRecord};
use crate::error::TraceError;
use crate::host::{IoOp, Request};
use crate::time::{SIM_TIME_LIMIT_NS, SIM_TIME_LIMIT_TEXT};
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// The error of a request on `line` of `sectors` sectors, more than the drive's
/// `logical_sectors`: no overflow rule places it.
fn larger_than_drive(path: &Path, line: u64, sectors: u32, logical_sectors: u64) -> TraceError {
    TraceError {
        file: path.display().to_string(),
        line,
        field: "size".into(),
        text: format!("{sectors} sectors ({} bytes)", u64::from(sectors) * 512),
        rule: format!(
            "larger than the drive's whole logical space of {logical_sectors} sectors, so no --overflow mode places \
             it; use a drive of at least this size"
        ),
    }
}

fn file_error(path: &Path, text: impl Into<String>, rule: impl Into<String>) -> TraceError {
    TraceError { file: path.display().to_string(), line: 0, field: "file".into(), text: text.into(), rule: rule.into() }
}

/// Open a trace for line reading, decompressing gzip or zstd by their magic bytes.
pub fn open(path: &Path) -> Result<Box<dyn BufRead>, TraceError> {
    let mut f = File::open(path).map_err(|e| file_error(path, e.to_string(), "check the path"))?;
    let mut magic = [0u8; 4];
    let n = f.read(&mut magic).map_err(|e| file_error(path, e.to_string(), "cannot read"))?;
    let f = File::open(path).map_err(|e| file_error(path, e.to_string(), "check the path"))?;
    const BUF: usize = 1 << 16;
    if n >= 2 && magic[..2] == [0x1f, 0x8b] {
        return Ok(Box::new(BufReader::with_capacity(BUF, flate2::read::MultiGzDecoder::new(f))));
    }
    if n == 4 && magic == [0x28, 0xb5, 0x2f, 0xfd] {
        let z = zstd::stream::read::Decoder::new(f).map_err(|e| file_error(path, e.to_string(), "bad zstd stream"))?;
        return Ok(Box::new(BufReader::with_capacity(BUF, z)));
    }
    Ok(Box::new(BufReader::with_capacity(BUF, f)))
}

/// Records of one file in file order, with their line numbers.
pub struct RecordReader {
    path: PathBuf,
    lines: Box<dyn BufRead>,
    buf: Vec<u8>,
    line: u64,
    parser: Box<dyn LineParser>,
    skip_bad_lines: bool,
    bad_lines: u64,
    format: TraceFormat,
    records: u64,
    /// The end (or the error for a trace without requests) was returned.
    ended: bool,
}

impl RecordReader {
    /// Read `path` as `format`. With `skip_bad_lines`, malformed lines are counted and
    /// skipped instead of ending the read with an error.
    pub fn new(
        path: &Path,
        format: TraceFormat,
        opts: &ParserOptions,
        skip_bad_lines: bool,
    ) -> Result<Self, TraceError> {
        Ok(RecordReader {
            path: path.to_path_buf(),
            lines: open(path)?,
            buf: Vec::with_capacity(256),
            line: 0,
            parser: parser(format, opts),
            skip_bad_lines,
            bad_lines: 0,
            format,
            records: 0,
            ended: false,
        })
    }

    /// The error for a trace that ended without a single request: a silent all-zero run
    /// would hide a wrong format or the wrong event type.
    fn no_requests(&self) -> TraceError {
        let rule = if self.bad_lines > 0 {
            format!("all {} lines that could be requests were malformed as {} and skipped", self.bad_lines, self.format)
        } else {
            self.parser
                .empty_hint()
                .unwrap_or_else(|| format!("no line holds a {} request: check --format", self.format))
        };
        TraceError {
            file: self.path.display().to_string(),
            line: 0,
            field: "file".into(),
            text: format!("no requests in {} lines", self.line),
            rule,
        }
    }

    /// Malformed lines skipped so far.
    pub fn bad_lines(&self) -> u64 {
        self.bad_lines
    }

    /// The format being read.
    pub fn format(&self) -> TraceFormat {
        self.format
    }

    /// Records of unknown type read so far ([`LineParser::untyped_records`]).
    pub fn untyped_records(&self) -> u64 {
        self.parser.untyped_records()
    }

    /// The latency the trace recorded for the record returned last, ns (see
    /// [`LineParser::recorded_latency_ns`]).
    pub fn recorded_latency_ns(&self) -> Option<u64> {
        self.parser.recorded_latency_ns()
    }

    /// The error refusing the record returned last: its file and line, `field` and what it
    /// holds, and the rule it breaks.
    pub fn refuse(&self, field: &str, text: &str, rule: &str) -> TraceError {
        self.error(field, text, rule)
    }

    fn error(&self, field: &str, text: &str, rule: &str) -> TraceError {
        TraceError {
            file: self.path.display().to_string(),
            line: self.line,
            field: field.into(),
            text: text.into(),
            rule: rule.into(),
        }
    }
}

impl Iterator for RecordReader {
    type Item = Result<(u64, TraceRecord), TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.ended {
            return None;
        }
        loop {
            self.buf.clear();
            match self.lines.read_until(b'\n', &mut self.buf) {
                Ok(0) => {
                    self.ended = true;
                    return (self.records == 0).then(|| Err(self.no_requests()));
                }
                Ok(_) => {}
                Err(e) => return Some(Err(self.error("file", &e.to_string(), "read failed"))),
            }
            self.line += 1;
            let mut bytes = &self.buf[..];
            while let [rest @ .., b'\n' | b'\r'] = bytes {
                bytes = rest;
            }
            let text = match std::str::from_utf8(bytes) {
                Ok(t) => t,
                Err(_) if self.skip_bad_lines => {
                    self.bad_lines += 1;
                    continue;
                }
                Err(_) => {
                    let lossy = String::from_utf8_lossy(bytes).chars().take(80).collect::<String>();
                    return Some(Err(self.error("line", &lossy, "not UTF-8 text")));
                }
            };
            match self.parser.parse(text) {
                Ok(Some(r)) => {
                    // Every parser refuses a request ending past 2^64 sectors: address
                    // arithmetic downstream adds a request's length to its start.
                    debug_assert!(r.offset_sector.checked_add(u64::from(r.sectors)).is_some(), "{r:?}");
                    self.records += 1;
                    return Some(Ok((self.line, r)));
                }
                Ok(None) => {}
                Err(_) if self.skip_bad_lines => self.bad_lines += 1,
                Err(e) => return Some(Err(self.error(e.field, &e.text, e.rule))),
            }
        }
    }
}

/// Lines auto-detection reads.
const DETECT_LINES: usize = 64;

/// Detect the format from the first lines: the first format (in [`TraceFormat::ALL`]
/// order) that parses every one of them and finds at least one request.
pub fn detect(path: &Path, opts: &ParserOptions) -> Result<TraceFormat, TraceError> {
    let mut lines = Vec::new();
    let mut r = open(path)?;
    let mut buf = Vec::new();
    while lines.len() < DETECT_LINES {
        buf.clear();
        match r.read_until(b'\n', &mut buf) {
            Ok(0) => break,
            Ok(_) => lines.push(String::from_utf8_lossy(&buf).trim_end_matches(['\n', '\r']).to_string()),
            Err(e) => return Err(file_error(path, e.to_string(), "read failed")),
        }
    }
    let fits: Vec<TraceFormat> = TraceFormat::ALL
        .into_iter()
        .filter(|&f| {
            let mut p = parser(f, opts);
            let mut found = 0;
            let ok = lines.iter().all(|l| match p.parse(l) {
                Ok(Some(_)) => {
                    found += 1;
                    true
                }
                Ok(None) => true,
                Err(_) => false,
            });
            ok && found > 0
        })
        .collect();
    let Some(&first) = fits.first() else {
        return Err(file_error(
            path,
            "no known format fits its first lines",
            format!(
                "give --format (one of {})",
                TraceFormat::ALL.iter().map(|f| f.name()).collect::<Vec<_>>().join(", ")
            ),
        ));
    };
    // The five-field ASCII formats read the same lines with sizes in sectors or in bytes; a
    // wrong guess makes every size 512x too large or too small, so the sizes decide, and a
    // sample that does not tell them apart is refused.
    let in_sectors = [TraceFormat::MqSim, TraceFormat::SsdSim, TraceFormat::DiskSim];
    if in_sectors.contains(&first) && fits.contains(&TraceFormat::Linnos) {
        let sectors = first;
        return match size_units(&lines) {
            SizeUnits::Bytes => Ok(TraceFormat::Linnos),
            SizeUnits::Sectors => Ok(sectors),
            SizeUnits::Unclear => Err(file_error(
                path,
                format!("{sectors} and linnos both fit its first lines"),
                format!(
                    "they differ in units ({}: {}; linnos: {}); sizes and offsets here do not tell which: give --format",
                    sectors,
                    sectors.units(),
                    TraceFormat::Linnos.units()
                ),
            )),
        };
    }
    Ok(first)
}

/// What the size and offset fields of five-field ASCII lines look like.
#[derive(Debug, PartialEq, Eq)]
enum SizeUnits {
    /// Every size and offset a multiple of 512: byte counts.
    Bytes,
    /// Some size not a multiple of 512: sector counts (byte sizes are whole sectors).
    Sectors,
    /// Sizes all multiples of 512 but offsets not: neither reading is plausible.
    Unclear,
}

fn size_units(lines: &[String]) -> SizeUnits {
    let (mut sizes_aligned, mut offsets_aligned) = (true, true);
    for l in lines {
        let f: Vec<&str> = l.split_ascii_whitespace().collect();
        if f.len() != 5 || f[0].starts_with('#') {
            continue;
        }
        let aligned = |t: &str| t.parse::<u64>().is_ok_and(|v| v % 512 == 0);
        sizes_aligned &= aligned(f[3]);
        offsets_aligned &= aligned(f[2]);
    }
    match (sizes_aligned, offsets_aligned) {
        (true, true) => SizeUnits::Bytes,
        (false, _) => SizeUnits::Sectors,
        (true, false) => SizeUnits::Unclear,
    }
}

/// What to do with addresses beyond the drive's logical capacity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Overflow {
    /// Stop with an error naming the line.
    Error,
    /// Wrap modulo the capacity (a request crossing the end moves to end the drive).
    Wrap,
    /// Remap the touched pages densely, in address order (a first pass finds them).
    Compact,
}

impl Overflow {
    /// Every rule, in the order the docs give them.
    pub const ALL: [Overflow; 3] = [Overflow::Error, Overflow::Wrap, Overflow::Compact];

    /// Its name on the command line, in tenant specs and in Python.
    pub fn name(self) -> &'static str {
        match self {
            Overflow::Error => "error",
            Overflow::Wrap => "wrap",
            Overflow::Compact => "compact",
        }
    }
}

impl std::str::FromStr for Overflow {
    type Err = String;

    fn from_str(s: &str) -> Result<Overflow, String> {
        Overflow::ALL.iter().copied().find(|o| o.name() == s).ok_or_else(|| {
            format!("expected {}", Overflow::ALL.iter().map(|o| o.name()).collect::<Vec<_>>().join(", "))
        })
    }
}

/// Replay options of a trace.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceOptions {
    /// Format; detected when `None`.
    #[serde(skip)]
    pub format: Option<TraceFormat>,
    /// Parser switches.
    #[serde(skip)]
    pub parser: ParserOptions,
    /// Replay only this device; otherwise devices are laid side by side.
    pub device: Option<u32>,
    /// Address overflow policy.
    pub overflow: Overflow,
    /// Replay speed: inter-arrival times are divided by it.
    pub speed: f64,
    /// Requests held to sort out-of-order timestamps; a request older than one already
    /// replayed after that is an error.
    pub reorder_window: usize,
    /// Requests skipped at the start (after device selection).
    pub skip: u64,
    /// At most this many requests per pass.
    pub max_requests: Option<u64>,
    /// Only requests in `[start, end)` ns after the first request.
    pub time_window_ns: Option<(u64, u64)>,
    /// Replay the trace this many times back to back, times shifted.
    pub repeat: u32,
    /// Count and skip malformed lines instead of stopping.
    pub skip_bad_lines: bool,
}

impl Default for TraceOptions {
    fn default() -> Self {
        TraceOptions {
            format: None,
            parser: ParserOptions::default(),
            device: None,
            overflow: Overflow::Error,
            speed: 1.0,
            reorder_window: 4096,
            skip: 0,
            max_requests: None,
            time_window_ns: None,
            repeat: 1,
            skip_bad_lines: false,
        }
    }
}

/// What a replay did to the trace, recorded with every result.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ReplayInfo {
    /// Trace file.
    pub file: String,
    /// Format used.
    pub format: String,
    /// Whether the format was detected (not given).
    pub detected: bool,
    /// Devices found and the sector each starts at in the drive (side-by-side layout).
    pub device_offsets_sectors: BTreeMap<u32, u64>,
    /// Distinct pages touched (with `compact`), else 0.
    pub compacted_pages: u64,
}

/// Host requests from a trace file, for the simulator's run (`ftlsim_core::sim::Simulator::run`).
pub struct TraceSource {
    path: PathBuf,
    format: TraceFormat,
    opts: TraceOptions,
    reader: RecordReader,
    logical_sectors: u64,
    sectors_per_page: u64,
    device_offsets: BTreeMap<u32, u64>,
    compact: Option<HashMap<u64, u64>>,
    window: BinaryHeap<Reverse<(u64, u64, u64, RecordKey)>>,
    seq: u64,
    first_ns: Option<u64>,
    last_released_ns: u64,
    last_arrival_ns: u64,
    pass: u32,
    pass_offset_ns: u64,
    pass_requests: u64,
    pass_skipped: u64,
    exhausted: bool,
    bad_lines_before: u64,
    untyped_before: u64,
    info: ReplayInfo,
}

/// A record in the reorder window, ordered by (time, sequence).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct RecordKey {
    device: u32,
    offset_sector: u64,
    sectors: u32,
    op: u8,
}

const OPS: [IoOp; 9] = [
    IoOp::Read,
    IoOp::Write,
    IoOp::Trim,
    IoOp::ZoneAppend,
    IoOp::ZoneOpen,
    IoOp::ZoneClose,
    IoOp::ZoneFinish,
    IoOp::ZoneReset,
    IoOp::ZoneResetAll,
];

fn op_code(op: IoOp) -> u8 {
    OPS.iter().position(|&o| o == op).expect("every op listed") as u8
}

fn op_of(code: u8) -> IoOp {
    OPS[usize::from(code)]
}

/// The first pass of [`TraceSource::open`], where the layout needs one: each device's extent
/// in sectors (for the side-by-side layout) and, under `compact`, the pages touched, keyed by
/// device first so devices stay apart after compaction.
#[allow(clippy::type_complexity)]
fn first_pass(
    path: &Path,
    format: TraceFormat,
    opts: &TraceOptions,
    logical_sectors: u64,
    spp: u64,
) -> Result<(BTreeMap<u32, u64>, Option<std::collections::BTreeSet<u64>>), TraceError> {
    let mut extents: BTreeMap<u32, u64> = BTreeMap::new();
    if opts.device.is_some() && opts.overflow != Overflow::Compact {
        return Ok((extents, None));
    }
    let mut pages = (opts.overflow == Overflow::Compact).then(std::collections::BTreeSet::new);
    for rec in RecordReader::new(path, format, &opts.parser, opts.skip_bad_lines)? {
        let (line, r) = rec?;
        if opts.device.is_some_and(|d| d != r.device) {
            continue;
        }
        let end = r.offset_sector + u64::from(r.sectors);
        let e = extents.entry(r.device).or_insert(0);
        *e = (*e).max(end);
        if let Some(set) = pages.as_mut() {
            if u64::from(r.sectors) > logical_sectors {
                return Err(larger_than_drive(path, line, r.sectors, logical_sectors));
            }
            for p in r.offset_sector / spp..end.div_ceil(spp) {
                set.insert((u64::from(r.device) << 44) | p);
            }
            // The set never holds more than the drive: past it, the trace is refused here,
            // its memory bounded by the drive's pages.
            if set.len() as u64 * spp > logical_sectors {
                return Err(TraceError {
                    file: path.display().to_string(),
                    line,
                    field: "offset".into(),
                    text: format!("{} pages touched by this line", set.len()),
                    rule: format!(
                        "the trace's footprint passes the drive's {} pages even compacted; use a bigger drive",
                        logical_sectors / spp
                    ),
                });
            }
        }
    }
    Ok((extents, pages))
}

/// Each device's first sector when the devices of `extents` are laid side by side, each
/// from a page boundary.
fn side_by_side(path: &Path, extents: &BTreeMap<u32, u64>, spp: u64) -> Result<BTreeMap<u32, u64>, TraceError> {
    let mut device_offsets = BTreeMap::new();
    let mut next = 0u64;
    for (&d, &end) in extents {
        device_offsets.insert(d, next);
        next = end.div_ceil(spp).checked_mul(spp).and_then(|e| next.checked_add(e)).ok_or_else(|| {
            file_error(
                path,
                format!("device {d} ends at sector {end}"),
                "the devices laid side by side pass sector 2^64; replay one with --device N",
            )
        })?;
    }
    Ok(device_offsets)
}

impl TraceSource {
    /// Open `path` for a drive of `logical_sectors` 512-byte sectors and pages of
    /// `sectors_per_page`. Multi-device layouts and `compact` read the file once first.
    pub fn open(
        path: &Path,
        opts: TraceOptions,
        logical_sectors: u64,
        sectors_per_page: u32,
    ) -> Result<Self, TraceError> {
        if !(opts.speed > 0.0 && opts.speed.is_finite()) {
            return Err(file_error(path, format!("speed {}", opts.speed), "--speed must be a finite number > 0"));
        }
        if opts.repeat == 0 || opts.reorder_window == 0 {
            return Err(file_error(path, "repeat or reorder window of 0", "must be >= 1"));
        }
        let (format, detected) = match opts.format {
            Some(f) => (f, false),
            None => (detect(path, &opts.parser)?, true),
        };
        let spp = u64::from(sectors_per_page);
        let (extents, touched) = first_pass(path, format, &opts, logical_sectors, spp)?;
        let device_offsets = side_by_side(path, &extents, spp)?;
        let compact =
            touched.map(|set| set.into_iter().enumerate().map(|(i, p)| (p, i as u64)).collect::<HashMap<_, _>>());
        let compacted_pages = compact.as_ref().map_or(0, |c| c.len() as u64);
        assert!(compacted_pages * spp <= logical_sectors, "the first pass stops at the drive's pages");
        let reader = RecordReader::new(path, format, &opts.parser, opts.skip_bad_lines)?;
        let info = ReplayInfo {
            file: path.display().to_string(),
            format: format.name().into(),
            detected,
            device_offsets_sectors: if opts.device.is_none() && opts.overflow != Overflow::Compact {
                device_offsets.clone()
            } else {
                BTreeMap::new()
            },
            compacted_pages,
        };
        Ok(TraceSource {
            path: path.to_path_buf(),
            format,
            opts,
            reader,
            logical_sectors,
            sectors_per_page: spp,
            device_offsets,
            compact,
            window: BinaryHeap::new(),
            seq: 0,
            first_ns: None,
            last_released_ns: 0,
            last_arrival_ns: 0,
            pass: 0,
            pass_offset_ns: 0,
            pass_requests: 0,
            pass_skipped: 0,
            exhausted: false,
            bad_lines_before: 0,
            untyped_before: 0,
            info,
        })
    }

    /// The format in use and how the trace was laid out.
    pub fn info(&self) -> &ReplayInfo {
        &self.info
    }

    /// Malformed lines skipped, over all passes so far.
    pub fn bad_lines(&self) -> u64 {
        self.bad_lines_before + self.reader.bad_lines()
    }

    /// Records of unknown type skipped, over all passes so far.
    pub fn untyped_records(&self) -> u64 {
        self.untyped_before + self.reader.untyped_records()
    }

    fn err(&self, line: u64, field: &str, text: String, rule: String) -> TraceError {
        TraceError { file: self.path.display().to_string(), line, field: field.into(), text, rule }
    }

    /// Next record in time order from the reorder window.
    fn next_sorted(&mut self) -> Option<Result<(u64, u64, TraceRecord), TraceError>> {
        while !self.exhausted && self.window.len() < self.opts.reorder_window {
            match self.reader.next() {
                None => self.exhausted = true,
                Some(Err(e)) => return Some(Err(e)),
                Some(Ok((line, r))) => {
                    if self.opts.device.is_some_and(|d| d != r.device) {
                        continue;
                    }
                    let key = RecordKey {
                        device: r.device,
                        offset_sector: r.offset_sector,
                        sectors: r.sectors,
                        op: op_code(r.op),
                    };
                    self.window.push(Reverse((r.time_ns, self.seq, line, key)));
                    self.seq += 1;
                }
            }
        }
        let Reverse((t, _, line, k)) = self.window.pop()?;
        if t < self.last_released_ns {
            return Some(Err(self.err(
                line,
                "timestamp",
                format!("{t} ns"),
                format!(
                    "earlier than {} ns, already replayed, by more than the reorder window of {} requests; raise --reorder-window",
                    self.last_released_ns, self.opts.reorder_window
                ),
            )));
        }
        self.last_released_ns = t;
        let r = TraceRecord {
            time_ns: t,
            device: k.device,
            offset_sector: k.offset_sector,
            sectors: k.sectors,
            op: op_of(k.op),
        };
        Some(Ok((line, t, r)))
    }

    fn restart(&mut self) -> Result<bool, TraceError> {
        if self.pass + 1 >= self.opts.repeat || self.pass_requests == 0 {
            return Ok(false);
        }
        // The next pass starts one mean inter-arrival time after this one ended.
        let span = self.last_arrival_ns - self.pass_offset_ns;
        let gap = span / self.pass_requests.saturating_sub(1).max(1);
        self.pass_offset_ns = self.last_arrival_ns.saturating_add(gap.max(1));
        self.pass += 1;
        self.pass_requests = 0;
        self.pass_skipped = 0;
        self.first_ns = None;
        self.last_released_ns = 0;
        self.exhausted = false;
        self.bad_lines_before += self.reader.bad_lines();
        self.untyped_before += self.reader.untyped_records();
        self.reader = RecordReader::new(&self.path, self.format, &self.opts.parser, self.opts.skip_bad_lines)?;
        Ok(true)
    }

    fn place(&self, line: u64, r: &TraceRecord) -> Result<u64, TraceError> {
        if self.compact.is_some() && r.op.is_zoned() {
            return Err(self.err(
                line,
                "op",
                r.op.name().into(),
                "a zoned command names zones by address, which --overflow compact moves: use --overflow error \
                 or wrap"
                    .into(),
            ));
        }
        let spp = self.sectors_per_page;
        let base =
            if self.opts.device.is_some() { 0 } else { self.device_offsets.get(&r.device).copied().unwrap_or(0) };
        let len = u64::from(r.sectors);
        let offset = match &self.compact {
            Some(map) => {
                let key = (u64::from(r.device) << 44) | (r.offset_sector / spp);
                let dense = map.get(&key).copied().ok_or_else(|| {
                    self.err(
                        line,
                        "offset",
                        r.offset_sector.to_string(),
                        "page not seen in the first pass (file changed?)".into(),
                    )
                })?;
                dense * spp + r.offset_sector % spp
            }
            None => base + r.offset_sector,
        };
        let cap = self.logical_sectors;
        if offset.checked_add(len).is_some_and(|end| end <= cap) {
            return Ok(offset);
        }
        if len > cap {
            return Err(larger_than_drive(&self.path, line, r.sectors, cap));
        }
        match self.opts.overflow {
            Overflow::Wrap if len <= cap => {
                let w = offset % cap;
                Ok(if w + len > cap { cap - len } else { w })
            }
            _ => Err(self.err(
                line,
                "offset",
                format!("sectors [{offset}, {})", offset.saturating_add(len)),
                format!(
                    "beyond the drive's {cap} logical sectors; use --overflow wrap or compact, --device N, or a bigger drive"
                ),
            )),
        }
    }
}

impl Iterator for TraceSource {
    type Item = Result<Request, crate::error::RequestError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.opts.max_requests.is_some_and(|m| self.pass_requests >= m) {
                self.window.clear();
                self.exhausted = true;
            }
            let (line, t, r) = match self.next_sorted() {
                Some(Ok(x)) => x,
                Some(Err(e)) => return Some(Err(e.into())),
                None => match self.restart() {
                    Ok(true) => continue,
                    Ok(false) => return None,
                    Err(e) => return Some(Err(e.into())),
                },
            };
            let first = *self.first_ns.get_or_insert(t);
            let rel = t - first;
            if self.pass_skipped < self.opts.skip {
                self.pass_skipped += 1;
                continue;
            }
            if let Some((start, end)) = self.opts.time_window_ns {
                if rel < start {
                    continue;
                }
                if rel >= end {
                    self.window.clear();
                    self.exhausted = true;
                    continue;
                }
            }
            let offset = match self.place(line, &r) {
                Ok(o) => o,
                Err(e) => return Some(Err(e.into())),
            };
            let scaled = (rel as f64 / self.opts.speed).round();
            // Integer arithmetic within the limit (exact to the ns), f64 only to tell how far past.
            let arrival = (scaled <= SIM_TIME_LIMIT_NS as f64)
                .then(|| self.pass_offset_ns + scaled as u64)
                .filter(|&a| a <= SIM_TIME_LIMIT_NS);
            let Some(arrival) = arrival else {
                let at_ns = self.pass_offset_ns as f64 + scaled;
                return Some(Err(self
                    .err(
                        line,
                        "time",
                        format!("replayed {:.3e} s after the first request (pass {})", at_ns / 1e9, self.pass + 1),
                        format!(
                            "replayed past the simulated-time limit of {SIM_TIME_LIMIT_TEXT}: a larger --speed, a \
                             --time-window or fewer --repeat passes"
                        ),
                    )
                    .into()));
            };
            self.last_arrival_ns = arrival;
            self.pass_requests += 1;
            return Some(Ok(Request {
                arrival_ns: arrival,
                think_ns: 0,
                device: r.device,
                offset_sector: offset,
                sectors: r.sectors,
                op: r.op,
            }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::RequestError;
    use std::io::Write;

    /// A temporary file ending in `name` (its extension picks the decompression), removed
    /// when dropped.
    fn temp(name: &str, bytes: &[u8]) -> tempfile::TempPath {
        let mut f = tempfile::Builder::new().prefix("ftlsim-reader-").suffix(name).tempfile().unwrap();
        f.write_all(bytes).unwrap();
        f.into_temp_path()
    }

    /// MQSim lines: `time_ns device start_sector size_sectors type(0 = write, 1 = read)`.
    const MQ: &str = "1000 0 0 8 0\n3000 0 8 8 1\n2000 1 16 8 0\n4000 0 24 8 1\n";

    fn source(path: &Path, opts: TraceOptions, cap: u64) -> Result<Vec<Request>, RequestError> {
        TraceSource::open(path, TraceOptions { format: Some(TraceFormat::MqSim), ..opts }, cap, 8)?.collect()
    }

    #[test]
    fn plain_gzip_and_zstd_read_the_same() {
        let plain = temp("a.trace", MQ.as_bytes());
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(MQ.as_bytes()).unwrap();
        let gz = temp("a.trace.gz", &gz.finish().unwrap());
        let zst = temp("a.trace.zst", &zstd::encode_all(MQ.as_bytes(), 1).unwrap());
        let read = |p: &Path| -> Vec<TraceRecord> {
            RecordReader::new(p, TraceFormat::MqSim, &ParserOptions::default(), false)
                .unwrap()
                .map(|r| r.unwrap().1)
                .collect()
        };
        assert_eq!(read(&plain).len(), 4);
        assert_eq!(read(&plain), read(&gz));
        assert_eq!(read(&plain), read(&zst));
    }

    #[test]
    fn reorders_within_the_window_and_lays_devices_side_by_side() {
        let p = temp("b.trace", MQ.as_bytes());
        let v = source(&p, TraceOptions::default(), 1 << 20).unwrap();
        let times: Vec<u64> = v.iter().map(|r| r.arrival_ns).collect();
        assert_eq!(times, vec![0, 1000, 2000, 3000], "sorted, relative to the first");
        // Device 0 spans sectors [0, 32); device 1 starts right after it.
        assert_eq!(v[1].offset_sector, 32 + 16);
        let only1 = source(&p, TraceOptions { device: Some(1), ..TraceOptions::default() }, 1 << 20).unwrap();
        assert_eq!(only1.len(), 1);
        assert_eq!(only1[0].offset_sector, 16);
    }

    #[test]
    fn out_of_order_beyond_the_window_names_the_line() {
        let p = temp("c.trace", MQ.as_bytes());
        let e =
            source(&p, TraceOptions { reorder_window: 1, ..TraceOptions::default() }, 1 << 20).unwrap_err().to_string();
        assert!(e.contains("c.trace:3: field timestamp = `2000 ns`"), "{e}");
        assert!(e.contains("--reorder-window"), "{e}");
    }

    #[test]
    fn overflow_policies() {
        let p = temp("d.trace", b"0 0 100 8 0\n10 0 4 8 0\n20 0 100 8 1\n");
        let e = source(&p, TraceOptions { device: Some(0), ..TraceOptions::default() }, 64).unwrap_err().to_string();
        assert!(e.contains("d.trace:1: field offset = `sectors [100, 108)`"), "{e}");
        assert!(e.contains("--overflow wrap or compact"), "{e}");
        let w = source(&p, TraceOptions { device: Some(0), overflow: Overflow::Wrap, ..TraceOptions::default() }, 64)
            .unwrap();
        assert_eq!(w.iter().map(|r| r.offset_sector).collect::<Vec<_>>(), vec![36, 4, 36]);
        let c =
            source(&p, TraceOptions { device: Some(0), overflow: Overflow::Compact, ..TraceOptions::default() }, 64)
                .unwrap();
        // Touched pages of 8 sectors: 0 and 1 (sectors 4..12) and 12..13 (100..108) -> dense 0, 1, 2, 3.
        assert_eq!(c.iter().map(|r| r.offset_sector).collect::<Vec<_>>(), vec![2 * 8 + 4, 4, 2 * 8 + 4]);
    }

    #[test]
    fn skip_limit_window_repeat_and_speed() {
        let p = temp("e.trace", MQ.as_bytes());
        let o = |f: fn(&mut TraceOptions)| {
            let mut t = TraceOptions::default();
            f(&mut t);
            source(&p, t, 1 << 20).unwrap()
        };
        assert_eq!(o(|t| t.skip = 1).len(), 3);
        assert_eq!(o(|t| t.max_requests = Some(2)).len(), 2);
        assert_eq!(o(|t| t.time_window_ns = Some((1000, 3000))).len(), 2);
        let r = o(|t| t.repeat = 3);
        assert_eq!(r.len(), 12);
        assert!(r.windows(2).all(|w| w[0].arrival_ns <= w[1].arrival_ns), "passes follow each other");
        assert_eq!(r[4].arrival_ns, 3000 + 1000, "next pass one mean gap later");
        assert_eq!(o(|t| t.speed = 2.0)[3].arrival_ns, 1500);
    }

    #[test]
    fn bad_lines_stop_or_are_counted() {
        let p = temp("f.trace", b"0 0 0 8 0\n5 0 x 8 0\n\xff\xfe\n9 0 8 8 1\n");
        let e = source(&p, TraceOptions::default(), 1 << 20).unwrap_err().to_string();
        assert!(e.starts_with("trace ") && e.contains("f.trace:2: field start_sector = `x`"), "{e}");
        let mut s = TraceSource::open(
            &p,
            TraceOptions {
                format: Some(TraceFormat::MqSim),
                skip_bad_lines: true,
                device: Some(0),
                ..TraceOptions::default()
            },
            1 << 20,
            8,
        )
        .unwrap();
        assert_eq!(s.by_ref().count(), 2);
        assert_eq!(s.bad_lines(), 2);
        let missing = TraceSource::open(Path::new("/nonexistent.trace"), TraceOptions::default(), 1, 8);
        assert!(missing.err().unwrap().to_string().contains("/nonexistent.trace"));
    }
}
