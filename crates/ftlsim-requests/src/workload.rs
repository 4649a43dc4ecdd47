//! Synthetic workloads, the built-in default: uniform random, sequential and hot/cold (Zipf,
//! or x% of traffic to y% of space) access; read share; request-size distribution; fixed or
//! Poisson inter-arrival times, or a closed loop at queue depth N (with think times or not); a request count or a
//! duration. Seeded with xoshiro256++, so a spec and a seed give the same stream on every
//! platform.
//!
//! Spec syntax (also accepted from TOML as a string): comma-separated `key=value` pairs,
//! e.g. `pattern=zipf:0.9,read=0.3,size=4k@0.8|64k@0.2,arrival=poisson:100us,requests=1e6`.
//! Keys and defaults: see [`WorkloadSpec::parse`] and docs/workloads.md.

use crate::error::WorkloadError;
pub use crate::fitted::FittedLayout;
use crate::fitted::{FittedSampler, FittedWorkload, ImposedUpdateShare};
use crate::host::{IoOp, Request, MAX_REQUEST_BYTES};
use crate::locality::{Locality, LocalityMeter};
use crate::time::{SIM_TIME_LIMIT_NS, SIM_TIME_LIMIT_TEXT};
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Exp, Zipf};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::Serialize;

/// Which addresses are touched.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    /// Uniform random over the span.
    Uniform,
    /// Sequential from the start of the span, wrapping.
    Sequential,
    /// `traffic` share of requests go to the first `space` share of the span.
    HotCold {
        /// Share of requests to the hot area.
        traffic: f64,
        /// Share of the span that is hot.
        space: f64,
    },
    /// Zipf over aligned slots with exponent `theta` (slot 0 hottest).
    Zipf {
        /// Exponent.
        theta: f64,
    },
    /// A trace's shape fitted by `ftlsim trace fit` (crate::fitted): mix, sizes, places,
    /// sequential runs.
    Fitted {
        /// The TOML file it was read from.
        file: String,
        /// The fitted shape.
        #[serde(skip)]
        model: std::sync::Arc<FittedWorkload>,
        /// Where the trace's extents land on the span.
        layout: FittedLayout,
        /// Runs start where the trace's did within 64 KiB windows (no `align=` given).
        own_alignment: bool,
    },
}

/// When requests arrive.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Arrival {
    /// Closed loop: keep this many requests outstanding.
    Closed {
        /// Queue depth.
        queue_depth: u32,
    },
    /// Open loop, one request every `interval_ns`.
    Fixed {
        /// Inter-arrival time, ns.
        interval_ns: u64,
    },
    /// Open loop, exponential inter-arrival times with this mean.
    Poisson {
        /// Mean inter-arrival time, ns.
        mean_ns: u64,
    },
    /// Closed loop with think times (rcFTL's Fio intensities, seed 003 L159: High / Mid / Low
    /// = 30 / 50 / 70% of requests "issued with some idle times"): `queue_depth` requests
    /// outstanding; a request is issued as soon as a slot frees or, with probability `share`,
    /// after an exponential think time of mean `mean_ns` (one Fio job's `thinktime`: requests
    /// are issued in order, so the host pauses while one thinks).
    Think {
        /// Queue depth.
        queue_depth: u32,
        /// Share of requests issued after a think time, [0, 1].
        share: f64,
        /// Mean think time, ns.
        mean_ns: u64,
    },
    /// Open loop, inter-arrival times drawn from a fitted trace's distribution, multiplied by
    /// `scale` (`rate=` and `speed=` set it).
    Fitted {
        /// Factor on the trace's inter-arrival times.
        scale: f64,
    },
}

impl Arrival {
    /// Closed-loop replay (a queue depth, not arrival times).
    pub fn is_closed(&self) -> bool {
        matches!(self, Arrival::Closed { .. } | Arrival::Think { .. })
    }

    /// The queue depth of a closed loop.
    pub fn queue_depth(&self) -> Option<u32> {
        match *self {
            Arrival::Closed { queue_depth } | Arrival::Think { queue_depth, .. } => Some(queue_depth),
            _ => None,
        }
    }
}

/// How long the workload runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// This many requests.
    Requests(u64),
    /// Until this much simulated time has passed, ns.
    DurationNs(u64),
}

/// A parsed synthetic workload.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkloadSpec {
    /// Address pattern.
    pub pattern: Pattern,
    /// Share of reads, [0, 1].
    pub read_share: f64,
    /// Share of trims, [0, 1 - read_share].
    pub trim_share: f64,
    /// Request sizes in bytes with weights.
    pub sizes: Vec<(u64, f64)>,
    /// Arrival process.
    pub arrival: Arrival,
    /// Length.
    pub limit: Limit,
    /// Share of the logical space addressed, (0, 1].
    pub span: f64,
    /// Alignment of request offsets, bytes (multiple of 512).
    pub align_bytes: u64,
    /// Offset of the aligned slots from the span's start, bytes (below `align_bytes`, a
    /// multiple of 512): a partition that starts mid-page, as Windows XP's at sector 63.
    #[serde(skip_serializing_if = "is_zero_u64")]
    pub shift_bytes: u64,
    /// Share of requests that start where the previous one ended (a sequential
    /// continuation, as WAFTL's Table III counts "Seq."); the others are placed by the
    /// pattern. 0 unless `seq` is given (and then in results.json).
    #[serde(skip_serializing_if = "is_zero")]
    pub seq_share: f64,
    /// Weight of this part's requests in a mixture (`weight=`; 1 unless given).
    #[serde(skip_serializing_if = "is_one")]
    pub weight: f64,
    /// Further parts of a mixture (`SPEC; SPEC; ...`): each request comes from one part,
    /// drawn by weight; the first part's arrival and length rule the whole.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mix: Vec<WorkloadSpec>,
}

fn is_one(x: &f64) -> bool {
    *x == 1.0
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

fn is_zero_u64(x: &u64) -> bool {
    *x == 0
}

impl Default for WorkloadSpec {
    fn default() -> Self {
        WorkloadSpec {
            pattern: Pattern::Uniform,
            read_share: 0.3,
            trim_share: 0.0,
            sizes: vec![(4096, 1.0)],
            arrival: Arrival::Closed { queue_depth: 32 },
            limit: Limit::Requests(200_000),
            span: 1.0,
            align_bytes: 4096,
            shift_bytes: 0,
            seq_share: 0.0,
            weight: 1.0,
            mix: Vec::new(),
        }
    }
}

fn err(key: &str, value: &str, rule: &str) -> WorkloadError {
    WorkloadError { key: key.into(), value: value.into(), rule: rule.into() }
}

/// Largest byte count [`parse_bytes`] takes: 2^62 bytes (4 EiB), so that sums of sizes and
/// offsets stay within `u64`.
const MAX_BYTES: f64 = (1u64 << 62) as f64;

/// Parse `4096`, `4k`, `64KiB`, `1m`, `1.5e6` into bytes (k = 1024).
pub fn parse_bytes(key: &str, s: &str) -> Result<u64, WorkloadError> {
    let t = s.trim().to_ascii_lowercase();
    let t = t.trim_end_matches("ib").trim_end_matches('b');
    let (num, mult) = match t.chars().last() {
        Some('k') => (&t[..t.len() - 1], 1u64 << 10),
        Some('m') => (&t[..t.len() - 1], 1 << 20),
        Some('g') => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    let v: f64 = num.parse().map_err(|_| err(key, s, "expected a size like 4096, 4k or 1m"))?;
    if !(v > 0.0 && v.is_finite()) {
        return Err(err(key, s, "must be > 0"));
    }
    let bytes = (v * mult as f64).round();
    if bytes > MAX_BYTES {
        return Err(err(key, s, "must be at most 4 EiB (2^62 bytes)"));
    }
    Ok(bytes as u64)
}

/// A byte count as [`parse_bytes`] reads it that is a whole number of 512-byte sectors.
fn parse_sectors_bytes(key: &str, s: &str) -> Result<u64, WorkloadError> {
    let bytes = parse_bytes(key, s)?;
    if bytes % 512 != 0 {
        return Err(err(key, s, "must be a multiple of 512 bytes"));
    }
    Ok(bytes)
}

/// Parse `100us`, `2ms`, `1s`, `500ns` or a plain number of ns, at most
/// [`SIM_TIME_LIMIT_NS`].
pub fn parse_duration_ns(key: &str, s: &str) -> Result<u64, WorkloadError> {
    let t = s.trim();
    let (num, mult) = if let Some(n) = t.strip_suffix("ns") {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix("us") {
        (n, 1e3)
    } else if let Some(n) = t.strip_suffix("ms") {
        (n, 1e6)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1e9)
    } else {
        (t, 1.0)
    };
    let v: f64 = num.parse().map_err(|_| err(key, s, "expected a duration like 100us, 2ms or 1s"))?;
    if !(v >= 0.0 && v.is_finite()) {
        return Err(err(key, s, "must be >= 0"));
    }
    let ns = (v * mult).round();
    if ns > SIM_TIME_LIMIT_NS as f64 {
        return Err(err(key, s, &format!("must be at most {SIM_TIME_LIMIT_TEXT} of simulated time")));
    }
    Ok(ns as u64)
}

fn parse_share(key: &str, s: &str) -> Result<f64, WorkloadError> {
    let v: f64 = s.trim().parse().map_err(|_| err(key, s, "expected a number in [0, 1]"))?;
    if !(0.0..=1.0).contains(&v) {
        return Err(err(key, s, "must be in [0, 1]"));
    }
    Ok(v)
}

fn parse_count(key: &str, s: &str) -> Result<u64, WorkloadError> {
    let v: f64 = s.trim().parse().map_err(|_| err(key, s, "expected a whole number like 100000 or 1e6"))?;
    if !(v >= 1.0 && v.fract() == 0.0 && v < 1e18) {
        return Err(err(key, s, "must be a whole number >= 1"));
    }
    Ok(v as u64)
}

impl WorkloadSpec {
    /// Parse a spec string; unspecified keys keep their defaults (uniform, 30% reads, 4 KiB,
    /// closed loop at QD 32, 200,000 requests, whole span, 4 KiB alignment).
    ///
    /// Keys: `pattern` = `uniform` | `sequential` | `hotcold:TRAFFIC:SPACE` | `zipf:THETA`;
    /// `read`, `trim` = share; `size` = `SIZE` or `SIZE@WEIGHT|SIZE@WEIGHT...`;
    /// `arrival` = `closed:QD` | `fixed:DURATION` | `poisson:DURATION` | `think:QD:SHARE:DURATION`; `qd` = N (closed loop);
    /// `requests` = N; `duration` = DURATION; `span` = share; `align` = SIZE; `shift` = SIZE
    /// (slots start this far into the span); `seq` = share of requests continuing the
    /// previous one.
    ///
    /// A mixture is parts separated by `;`, each a spec with an optional `weight=W` (default
    /// 1): every request comes from one part, drawn by weight, placed by that part's keys.
    /// The first part's arrival and length rule the whole; the others may not set them.
    pub fn parse(spec: &str) -> Result<WorkloadSpec, WorkloadError> {
        if spec.contains(';') {
            if let Some(i) = spec.split(';').position(|p| p.trim().is_empty()) {
                let rule = format!("part {} of the mixture is empty: each part between `;` holds its keys", i + 1);
                return Err(err("spec", spec, &rule));
            }
        }
        let mut parts = spec.split(';');
        let mut w = WorkloadSpec::parse_part(parts.next().unwrap_or(""), None)?;
        for part in parts {
            for key in ["requests", "duration", "arrival", "qd", "rate", "speed", "file", "layout"] {
                let given = part.split(',').any(|kv| kv.split_once('=').is_some_and(|(k, _)| k.trim() == key))
                    || (key == "file" && part.contains("file:"));
                if given {
                    return Err(err(
                        key,
                        part.trim(),
                        "a mixture's later parts only place requests (pattern, read, trim, size, span, align, shift,                          seq, weight); arrival and length are the first part's",
                    ));
                }
            }
            w.mix.push(WorkloadSpec::parse_part(part, None)?);
        }
        Ok(w)
    }

    /// A fitted workload's spec from a shape in memory: `keys` are those that may follow
    /// `file:W.toml` (one part), `origin` names the shape in messages and results.
    pub fn parse_fitted(model: &FittedWorkload, origin: &str, keys: &str) -> Result<WorkloadSpec, WorkloadError> {
        if keys.contains(';') || keys.contains("file:") || keys.split(',').any(|kv| kv.trim().starts_with("file=")) {
            return Err(err("spec", keys, "the keys after file:W.toml, one part (no `;`, no other file)"));
        }
        WorkloadSpec::parse_part(&format!("file:{origin},{keys}"), Some(model))
    }

    /// One part of a spec; `file:` reads its shape from the file unless `fitted` gives it.
    fn parse_part(spec: &str, fitted: Option<&FittedWorkload>) -> Result<WorkloadSpec, WorkloadError> {
        let mut p = PartKeys::new();
        for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let part = match part.strip_prefix("file:") {
                Some(path) => format!("file={path}"),
                None => part.to_string(),
            };
            let part = part.as_str();
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| err("spec", part, "expected key=value (keys: pattern, read, trim, size, arrival, qd, requests, duration, span, align, shift, seq, weight, file, rate, speed, layout)"))?;
            let (k, v) = (k.trim(), v.trim());
            if !p.set_fitted_key(k, v, fitted)? {
                p.set_key(k, v)?;
            }
        }
        p.finish(spec)
    }

    /// The fitted-workload files (`file:W.toml`) this spec read, its parts' included.
    pub fn files(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self).chain(&self.mix).filter_map(|w| match &w.pattern {
            Pattern::Fitted { file, .. } => Some(file.as_str()),
            _ => None,
        })
    }

    /// The mean time between two requests' arrivals (open loop) or the mean think time
    /// per request (closed loop with think times), ns; 0 for a plain closed loop.
    pub fn mean_gap_ns(&self) -> f64 {
        match (&self.arrival, &self.pattern) {
            (Arrival::Closed { .. }, _) => 0.0,
            (Arrival::Fixed { interval_ns }, _) => *interval_ns as f64,
            (Arrival::Poisson { mean_ns }, _) => *mean_ns as f64,
            (Arrival::Think { share, mean_ns, .. }, _) => share * *mean_ns as f64,
            (Arrival::Fitted { scale }, Pattern::Fitted { model, .. }) => model.arrival.mean_ns * scale,
            (Arrival::Fitted { .. }, _) => unreachable!("fitted arrivals come with a fitted pattern"),
        }
    }

    /// Refuse requests that would arrive past [`SIM_TIME_LIMIT_NS`] (`key = value` set the
    /// timing): checked before anything runs, so no run fails at its end for it.
    fn check_time_span(&self, key: &str, value: &str) -> Result<(), WorkloadError> {
        let n = match self.limit {
            Limit::Requests(n) => n,
            // Open loop, a duration ends only if the arrival clock moves (a closed loop's
            // clock moves with the drive's work); a duration is itself within the limit.
            Limit::DurationNs(d) if !self.arrival.is_closed() && self.mean_gap_ns() < 1.0 => {
                return Err(err(
                    key,
                    value,
                    &format!(
                        "requests arrive {:.3e} ns apart on average, so the {d} ns of duration= would never pass: \
                         give requests=N, or gaps of at least 1 ns",
                        self.mean_gap_ns()
                    ),
                ));
            }
            Limit::DurationNs(_) => return Ok(()),
        };
        let span_ns = self.mean_gap_ns() * (n - 1) as f64;
        if span_ns > SIM_TIME_LIMIT_NS as f64 {
            let over = if span_ns.is_finite() {
                format!("over about {:.3e} years of simulated time", span_ns / 1e9 / 3.156e7)
            } else {
                "beyond any finite simulated time".into()
            };
            return Err(err(
                key,
                value,
                &format!(
                    "the {n} requests would arrive {over}; ftlsim simulates at most {SIM_TIME_LIMIT_TEXT}: give a \
                     higher rate, shorter gaps or fewer requests"
                ),
            ));
        }
        Ok(())
    }
}

fn parse_qd(v: &str) -> Result<u32, WorkloadError> {
    let qd = parse_count("qd", v)?;
    if qd > 65_536 {
        return Err(err("qd", v, "must be in [1, 65536]"));
    }
    Ok(qd as u32)
}

/// The keys of one part of a spec as they are read, and what the checks after them need.
struct PartKeys {
    w: WorkloadSpec,
    arrival_given: bool,
    read_given: bool,
    trim_given: bool,
    rate: Option<f64>,
    speed: Option<f64>,
    layout: Option<FittedLayout>,
    align_given: bool,
    /// Keys a fitted workload does not use: given beside `file:`, they are refused rather
    /// than silently dropped (or, before it, silently replaced).
    pattern_given: Option<String>,
    size_given: Option<String>,
    /// The key and value that set the arrival timing, for the time-span check.
    timing: (&'static str, String),
}

impl PartKeys {
    fn new() -> PartKeys {
        PartKeys {
            w: WorkloadSpec::default(),
            arrival_given: false,
            read_given: false,
            trim_given: false,
            rate: None,
            speed: None,
            layout: None,
            align_given: false,
            pattern_given: None,
            size_given: None,
            timing: ("arrival", String::new()),
        }
    }

    /// The keys of where requests land and of a fitted workload: pattern, file, layout, rate
    /// and speed; `file` reads its shape from the file unless `fitted` gives it. Returns
    /// whether `k` was one of them.
    fn set_fitted_key(&mut self, k: &str, v: &str, fitted: Option<&FittedWorkload>) -> Result<bool, WorkloadError> {
        let w = &mut self.w;
        match k {
            "pattern" => {
                self.pattern_given = Some(v.to_string());
                if !matches!(w.pattern, Pattern::Fitted { .. }) {
                    w.pattern = parse_pattern(v)?;
                }
            }
            "file" => {
                let model = match fitted {
                    Some(m) => m.clone(),
                    None => {
                        let text = std::fs::read_to_string(v)
                            .map_err(|e| err("file", v, &format!("cannot read the fitted workload: {e}")))?;
                        FittedWorkload::from_toml(&text, v).map_err(|e| err("file", v, &e))?
                    }
                };
                w.pattern = Pattern::Fitted {
                    file: v.to_string(),
                    model: std::sync::Arc::new(model),
                    layout: self.layout.unwrap_or_default(),
                    own_alignment: true,
                };
            }
            "layout" => {
                let l = match v {
                    "compact" => FittedLayout::Compact,
                    "range" => FittedLayout::Range,
                    _ => return Err(err(k, v, "expected compact or range")),
                };
                self.layout = Some(l);
                if let Pattern::Fitted { layout, .. } = &mut w.pattern {
                    *layout = l;
                }
            }
            "rate" | "speed" => {
                let x: f64 = v.parse().map_err(|_| err(k, v, "expected a number > 0"))?;
                if !(x > 0.0 && x.is_finite()) {
                    return Err(err(k, v, "must be > 0"));
                }
                if k == "rate" {
                    self.rate = Some(x);
                } else {
                    self.speed = Some(x);
                }
                self.timing = (if k == "rate" { "rate" } else { "speed" }, v.to_string());
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The other keys: the mix, sizes, timing, length and placement of requests.
    fn set_key(&mut self, k: &str, v: &str) -> Result<(), WorkloadError> {
        let w = &mut self.w;
        match k {
            "read" => {
                self.read_given = true;
                w.read_share = parse_share(k, v)?
            }
            "trim" => {
                self.trim_given = true;
                w.trim_share = parse_share(k, v)?
            }
            "size" => {
                self.size_given = Some(v.to_string());
                w.sizes = parse_sizes(v)?
            }
            "arrival" => {
                self.arrival_given = true;
                self.timing = ("arrival", v.to_string());
                w.arrival = parse_arrival(v)?
            }
            "qd" => {
                self.arrival_given = true;
                w.arrival = Arrival::Closed { queue_depth: parse_qd(v)? }
            }
            "requests" => w.limit = Limit::Requests(parse_count(k, v)?),
            "duration" => {
                let d = parse_duration_ns(k, v)?;
                if d == 0 {
                    return Err(err(k, v, "must be > 0"));
                }
                w.limit = Limit::DurationNs(d)
            }
            "span" => {
                let s = parse_share(k, v)?;
                if s == 0.0 {
                    return Err(err(k, v, "must be in (0, 1]"));
                }
                w.span = s
            }
            "seq" => w.seq_share = parse_share(k, v)?,
            "weight" => {
                let x: f64 = v.parse().map_err(|_| err(k, v, "expected a number > 0"))?;
                if !(x > 0.0 && x.is_finite()) {
                    return Err(err(k, v, "must be > 0"));
                }
                w.weight = x;
            }
            "align" => {
                w.align_bytes = parse_sectors_bytes(k, v)?;
                self.align_given = true;
            }
            "shift" => {
                w.shift_bytes = match v.trim() {
                    "0" => 0,
                    t if t.starts_with('-') => {
                        return Err(err(k, v, "must be >= 0: a multiple of 512 bytes below align"));
                    }
                    _ => parse_sectors_bytes(k, v)?,
                }
            }
            _ => {
                return Err(err(
                    "spec",
                    k,
                    "unknown key (keys: pattern, read, trim, size, arrival, qd, requests, duration, span, align, shift, seq, weight, file, rate, speed, layout)",
                ))
            }
        }
        Ok(())
    }

    /// The spec once every key of the part `spec` is read: the rules between keys, and a
    /// fitted workload's mix and timing where the keys leave them.
    fn finish(mut self, spec: &str) -> Result<WorkloadSpec, WorkloadError> {
        if self.w.shift_bytes >= self.w.align_bytes {
            return Err(err(
                "shift",
                &self.w.shift_bytes.to_string(),
                &format!("must be below align ({} bytes)", self.w.align_bytes),
            ));
        }
        if matches!(self.w.pattern, Pattern::Fitted { .. }) {
            self.check_fitted_keys(spec)?;
            self.fitted_defaults(spec)?;
        } else if self.rate.is_some() || self.speed.is_some() {
            return Err(err("rate", spec, "rate and speed apply to a fitted workload (file:W.toml)"));
        } else if self.layout.is_some() {
            return Err(err("layout", spec, "layout applies to a fitted workload (file:W.toml)"));
        }
        let w = self.w;
        if w.read_share + w.trim_share > 1.0 + 1e-12 {
            return Err(err("trim", &w.trim_share.to_string(), "read + trim must be <= 1"));
        }
        w.check_time_span(self.timing.0, &self.timing.1)?;
        Ok(w)
    }

    /// A fitted workload keeps the trace's offsets, runs, places and sizes: the keys of the
    /// patterns are refused beside it.
    fn check_fitted_keys(&mut self, spec: &str) -> Result<(), WorkloadError> {
        let w = &mut self.w;
        if let Pattern::Fitted { own_alignment, .. } = &mut w.pattern {
            *own_alignment = !self.align_given;
        }
        if w.shift_bytes > 0 {
            return Err(err(
                "shift",
                spec,
                "a fitted workload keeps the trace's own offsets; shift is for the patterns",
            ));
        }
        if w.seq_share > 0.0 {
            return Err(err("seq", spec, "a fitted workload keeps the trace's own runs; seq is for the patterns"));
        }
        if let Some(v) = &self.pattern_given {
            return Err(err(
                "pattern",
                v,
                "a fitted workload (file:W.toml) places requests where the trace's shape puts them; pattern is \
                 for the synthetic patterns: give one or the other",
            ));
        }
        if let Some(v) = &self.size_given {
            return Err(err(
                "size",
                v,
                "a fitted workload (file:W.toml) draws the trace's own request sizes; size is for the synthetic \
                 patterns: give one or the other",
            ));
        }
        Ok(())
    }

    /// The trace's mix and timing unless the keys of the part `spec` say otherwise.
    fn fitted_defaults(&mut self, spec: &str) -> Result<(), WorkloadError> {
        let w = &mut self.w;
        let Pattern::Fitted { model, file, .. } = &w.pattern else {
            return Ok(());
        };
        if !self.read_given {
            w.read_share = model.read_share;
        }
        // What runs is what results.json records: the trace's sizes of reads and of
        // writes, weighed by the mix.
        w.sizes = model.sizes_at(w.read_share);
        if !self.trim_given {
            w.trim_share = model.trim_share;
        }
        if self.arrival_given {
            if self.rate.is_some() || self.speed.is_some() {
                return Err(err("rate", spec, "rate and speed scale the trace's timing: not with arrival or qd"));
            }
            return Ok(());
        }
        let mean = model.arrival.mean_ns.max(1.0);
        let scale = match (self.rate, self.speed) {
            (Some(_), Some(_)) => return Err(err("rate", spec, "give rate or speed, not both")),
            (Some(r), None) => 1e9 / r / mean,
            (None, Some(s)) => 1.0 / s,
            (None, None) => {
                self.timing = ("file", file.clone());
                1.0
            }
        };
        if !(scale > 0.0 && scale.is_finite()) {
            return Err(err(
                self.timing.0,
                &self.timing.1,
                "scales the trace's inter-arrival times beyond any finite time",
            ));
        }
        w.arrival = Arrival::Fitted { scale };
        Ok(())
    }
}

fn parse_pattern(v: &str) -> Result<Pattern, WorkloadError> {
    let mut it = v.split(':');
    let name = it.next().unwrap_or("");
    let args: Vec<&str> = it.collect();
    let p = match (name, args.as_slice()) {
        ("uniform" | "random", []) => Pattern::Uniform,
        ("sequential" | "seq", []) => Pattern::Sequential,
        ("hotcold", [t, s]) => {
            let traffic = parse_share("pattern", t)?;
            let space = parse_share("pattern", s)?;
            if space == 0.0 || space == 1.0 {
                return Err(err("pattern", v, "hot space share must be in (0, 1)"));
            }
            Pattern::HotCold { traffic, space }
        }
        ("zipf", [t]) => {
            let theta: f64 = t.parse().map_err(|_| err("pattern", v, "expected zipf:THETA with THETA > 0"))?;
            if !(theta > 0.0 && theta.is_finite()) {
                return Err(err("pattern", v, "zipf exponent must be > 0"));
            }
            Pattern::Zipf { theta }
        }
        _ => return Err(err("pattern", v, "expected uniform, sequential, hotcold:TRAFFIC:SPACE or zipf:THETA")),
    };
    Ok(p)
}

fn parse_sizes(v: &str) -> Result<Vec<(u64, f64)>, WorkloadError> {
    let mut out = Vec::new();
    for item in v.split('|') {
        let (s, w) = match item.split_once('@') {
            Some((s, w)) => {
                let w: f64 = w.parse().map_err(|_| err("size", item, "expected SIZE@WEIGHT"))?;
                if !(w > 0.0 && w.is_finite()) {
                    return Err(err("size", item, "weight must be > 0"));
                }
                (s, w)
            }
            None => (item, 1.0),
        };
        let bytes = parse_bytes("size", s)?;
        if bytes % 512 != 0 {
            return Err(err("size", s, "must be a multiple of 512 bytes"));
        }
        if bytes > MAX_REQUEST_BYTES {
            return Err(err("size", s, "must be at most 2 TiB (a request's length is a 32-bit count of sectors)"));
        }
        out.push((bytes, w));
    }
    Ok(out)
}

fn parse_arrival(v: &str) -> Result<Arrival, WorkloadError> {
    let (kind, arg) = v.split_once(':').ok_or_else(|| {
        err("arrival", v, "expected closed:QD, fixed:DURATION, poisson:DURATION or think:QD:SHARE:DURATION")
    })?;
    match kind {
        "closed" => Ok(Arrival::Closed { queue_depth: parse_qd(arg)? }),
        "fixed" => Ok(Arrival::Fixed { interval_ns: parse_duration_ns("arrival", arg)? }),
        "poisson" => {
            let m = parse_duration_ns("arrival", arg)?;
            if m == 0 {
                return Err(err("arrival", v, "mean inter-arrival time must be > 0"));
            }
            Ok(Arrival::Poisson { mean_ns: m })
        }
        "think" => {
            let mut parts = arg.splitn(3, ':');
            let (Some(qd), Some(share), Some(gap)) = (parts.next(), parts.next(), parts.next()) else {
                return Err(err("arrival", v, "expected think:QD:SHARE:DURATION, e.g. think:8:0.3:5ms"));
            };
            let share: f64 = share.parse().ok().filter(|x: &f64| (0.0..=1.0).contains(x)).ok_or_else(|| {
                err("arrival", v, "the share of requests issued after a think time must be in [0, 1]")
            })?;
            let m = parse_duration_ns("arrival", gap)?;
            if m == 0 {
                return Err(err("arrival", v, "mean think time must be > 0"));
            }
            Ok(Arrival::Think { queue_depth: parse_qd(qd)?, share, mean_ns: m })
        }
        _ => Err(err("arrival", v, "expected closed:QD, fixed:DURATION, poisson:DURATION or think:QD:SHARE:DURATION")),
    }
}

/// A seeded stream of requests for a drive of `logical_bytes`.
#[derive(Debug, Clone)]
pub struct Generator {
    spec: WorkloadSpec,
    /// A mixture's later parts (placement only) and the cumulative weights of all parts.
    parts: Vec<Generator>,
    part_cdf: Vec<f64>,
    rng: Xoshiro256PlusPlus,
    slots: u64,
    size_cdf: Vec<(u64, f64)>,
    zipf: Option<Zipf<f64>>,
    exp: Option<Exp<f64>>,
    fitted: Option<FittedSampler>,
    issued: u64,
    clock_ns: u64,
    seq_next: u64,
    span_bytes: u64,
    /// Where the previous request ended (for `seq`).
    last_end: Option<u64>,
}

impl Generator {
    /// A generator; errors if the largest request does not fit in the span.
    pub fn new(spec: &WorkloadSpec, logical_bytes: u64, seed: u64) -> Result<Generator, WorkloadError> {
        let addressed = (logical_bytes as f64 * spec.span) as u64;
        if spec.align_bytes > addressed {
            return Err(err(
                "align",
                &spec.align_bytes.to_string(),
                &format!("larger than the {addressed} bytes addressed (the drive's logical bytes x span=)"),
            ));
        }
        let span_bytes = addressed / spec.align_bytes * spec.align_bytes;
        let max_size = spec.sizes.iter().map(|s| s.0).max().unwrap_or(4096);
        if max_size + spec.shift_bytes > span_bytes {
            return Err(match &spec.pattern {
                Pattern::Fitted { file, .. } => err(
                    "file",
                    file,
                    &format!(
                        "the fit's largest request ({max_size} bytes) is larger than the addressed span of \
                         {span_bytes} bytes: a larger drive, or a larger span="
                    ),
                ),
                _ => {
                    err("size", &max_size.to_string(), &format!("larger than the addressed span of {span_bytes} bytes"))
                }
            });
        }
        let slots = span_bytes / spec.align_bytes;
        let total: f64 = spec.sizes.iter().map(|s| s.1).sum();
        let mut acc = 0.0;
        let size_cdf = spec
            .sizes
            .iter()
            .map(|&(s, w)| {
                acc += w / total;
                (s, acc)
            })
            .collect();
        let zipf = match spec.pattern {
            Pattern::Zipf { theta } => {
                Some(Zipf::new(slots, theta).map_err(|e| err("pattern", &theta.to_string(), &e.to_string()))?)
            }
            _ => None,
        };
        let exp = match spec.arrival {
            Arrival::Poisson { mean_ns } | Arrival::Think { mean_ns, .. } => {
                Some(Exp::new(1.0 / mean_ns as f64).expect("mean > 0 checked at parse"))
            }
            _ => None,
        };
        let fitted = match &spec.pattern {
            Pattern::Fitted { model, layout, own_alignment, .. } => {
                let mut m = (**model).clone();
                // The spec's mix wins over the trace's (`read=`, `trim=`).
                m.read_share = spec.read_share;
                m.trim_share = spec.trim_share;
                Some(FittedSampler::new(&m, span_bytes, spec.align_bytes, *own_alignment, *layout))
            }
            _ => None,
        };
        // A mixture's parts: their own placement streams; the first part draws which.
        let parts = spec
            .mix
            .iter()
            .enumerate()
            .map(|(k, p)| Generator::new(p, logical_bytes, seed ^ (k as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)))
            .collect::<Result<Vec<_>, _>>()?;
        let total = spec.weight + spec.mix.iter().map(|p| p.weight).sum::<f64>();
        let mut acc = 0.0;
        let part_cdf = std::iter::once(spec.weight)
            .chain(spec.mix.iter().map(|p| p.weight))
            .map(|w| {
                acc += w / total;
                acc
            })
            .collect();
        Ok(Generator {
            spec: spec.clone(),
            parts,
            part_cdf,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            slots,
            size_cdf,
            zipf,
            exp,
            fitted,
            issued: 0,
            clock_ns: 0,
            seq_next: 0,
            span_bytes,
            last_end: None,
        })
    }

    fn size(&mut self) -> u64 {
        if self.size_cdf.len() == 1 {
            return self.size_cdf[0].0;
        }
        let u: f64 = self.rng.gen();
        self.size_cdf.iter().find(|&&(_, c)| u < c).map_or(self.size_cdf[self.size_cdf.len() - 1].0, |&(s, _)| s)
    }

    fn offset(&mut self, size: u64) -> u64 {
        let (align, shift) = (self.spec.align_bytes, self.spec.shift_bytes);
        // Slots where a request of this size still fits inside the span.
        let fit = (self.span_bytes - shift - size) / align + 1;
        let slot = match self.spec.pattern {
            Pattern::Uniform => self.rng.gen_range(0..fit),
            Pattern::Sequential => {
                let s = if self.seq_next + size > self.span_bytes { shift } else { self.seq_next.max(shift) };
                self.seq_next = s + size;
                return s;
            }
            Pattern::HotCold { traffic, space } => {
                let hot = ((fit as f64 * space) as u64).max(1);
                if self.rng.gen_bool(traffic) || hot >= fit {
                    self.rng.gen_range(0..hot)
                } else {
                    self.rng.gen_range(hot..fit)
                }
            }
            Pattern::Zipf { .. } => {
                let z = self.zipf.as_ref().expect("zipf built for zipf pattern");
                ((z.sample(&mut self.rng) as u64).saturating_sub(1)).min(fit - 1)
            }
            Pattern::Fitted { .. } => unreachable!("fitted requests come from their sampler"),
        };
        debug_assert!(slot < self.slots);
        slot * align + shift
    }
}

/// The temporal locality of the requests `spec` draws for a drive of `logical_bytes` with
/// `seed` (a workload with an end: a request count, or a duration in an open loop).
pub fn locality(spec: &WorkloadSpec, logical_bytes: u64, seed: u64) -> Result<Locality, WorkloadError> {
    if matches!(spec.limit, Limit::DurationNs(_)) && spec.arrival.is_closed() {
        return Err(err(
            "duration",
            "closed loop",
            "a closed loop's requests have no time: give requests= to measure its locality",
        ));
    }
    let mut meter = LocalityMeter::new();
    for r in Generator::new(spec, logical_bytes, seed)? {
        meter.observe_sectors(r.device, r.op, r.offset_sector, r.sectors);
    }
    Ok(meter.locality())
}

/// [`impose_update_share`] on `model` (read from, or written to, `origin`) for the replay
/// whose keys are `replay` on a drive of `logical_bytes`, each mistake named by the option
/// that gave it: `names` = (the replay's, the capacity's), `--replay` and `--capacity` from
/// the CLI, `replay` and `capacity_bytes` from Python.
pub fn impose_on_fit(
    model: &FittedWorkload,
    origin: &str,
    replay: &str,
    logical_bytes: u64,
    target: f64,
    seed: u64,
    names: (&str, &str),
) -> Result<FittedWorkload, WorkloadError> {
    let spec = WorkloadSpec::parse_fitted(model, origin, replay).map_err(|e| {
        // A rule about the fit as a whole (its arrival over the replay's length) is the replay's.
        let rule = if e.key == "file" { e.rule } else { format!("{} = `{}`: {}", e.key, e.value, e.rule) };
        err(names.0, replay, &rule)
    })?;
    let addressed = (logical_bytes as f64 * spec.span) as u64;
    let largest = model.largest_size();
    if largest > addressed {
        return Err(err(
            names.1,
            &logical_bytes.to_string(),
            &format!(
                "the fit's largest request ({largest} bytes) is larger than the {addressed} bytes its replay addresses \
                 there (span={}): give a larger {}",
                spec.span, names.1
            ),
        ));
    }
    impose_update_share(&spec, replay, logical_bytes, target, seed)
}

/// Steps of the bisection on the fresh-write factor (log2 from -12 to 12: 1/8,000 of a step).
const IMPOSE_STEPS: u32 = 16;

/// `spec`'s fitted shape with the weight of its fresh runs of writes chosen so that this
/// replay (`spec` on `logical_bytes` with `seed`) rewrites `target` of its page writes, or
/// as near as the shape allows (a bisection on [`FittedWorkload::with_fresh_write_factor`]:
/// more fresh runs, fewer rewrites). `replay` is the spec's text after `file:`, kept in the
/// result.
pub fn impose_update_share(
    spec: &WorkloadSpec,
    replay: &str,
    logical_bytes: u64,
    target: f64,
    seed: u64,
) -> Result<FittedWorkload, WorkloadError> {
    if !(0.0..=1.0).contains(&target) {
        return Err(err("update_share", &target.to_string(), "a share: a number in [0, 1]"));
    }
    let Pattern::Fitted { model, .. } = &spec.pattern else {
        return Err(err("update_share", replay, "an update share is imposed on a fitted workload (file:W.toml)"));
    };
    let share = |factor: f64| -> Result<(f64, FittedWorkload), WorkloadError> {
        let w = model.with_fresh_write_factor(factor);
        let mut s = spec.clone();
        if let Pattern::Fitted { model, .. } = &mut s.pattern {
            *model = std::sync::Arc::new(w.clone());
        }
        Ok((locality(&s, logical_bytes, seed)?.update_share, w))
    };
    let (mut lo, mut hi) = (-12.0f64, 12.0f64);
    let (most, w_most) = share(lo.exp2())?;
    let (least, w_least) = share(hi.exp2())?;
    let (reached, factor, mut w) = if target >= most {
        (most, lo.exp2(), w_most)
    } else if target <= least {
        (least, hi.exp2(), w_least)
    } else {
        let mut best = (least, hi.exp2(), w_least);
        for _ in 0..IMPOSE_STEPS {
            let mid = (lo + hi) / 2.0;
            let (got, w) = share(mid.exp2())?;
            if (got - target).abs() < (best.0 - target).abs() {
                best = (got, mid.exp2(), w);
            }
            if got > target {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        best
    };
    w.imposed = Some(ImposedUpdateShare {
        update_share: target,
        reached,
        trace: model.locality.update_share,
        factor: crate::round::r6(factor),
        replay: replay.to_string(),
        capacity_bytes: logical_bytes,
        seed,
    });
    Ok(w)
}

impl Iterator for Generator {
    type Item = Request;
    fn next(&mut self) -> Option<Request> {
        let arrival_ns = match self.spec.arrival {
            // Saturating: a time past the limit is refused by the replay, never wrapped.
            Arrival::Fixed { interval_ns } => self.issued.saturating_mul(interval_ns),
            Arrival::Poisson { .. } => {
                if self.issued > 0 {
                    let e = self.exp.as_ref().expect("exp built for poisson arrivals");
                    self.clock_ns = self.clock_ns.saturating_add(e.sample(&mut self.rng).round() as u64);
                }
                self.clock_ns
            }
            Arrival::Closed { .. } | Arrival::Think { .. } => 0,
            Arrival::Fitted { scale } => {
                if self.issued > 0 {
                    let gap = match self.fitted.as_mut() {
                        Some(f) => f.gap_ns(&mut self.rng),
                        None => 0.0,
                    };
                    self.clock_ns = self.clock_ns.saturating_add((gap * scale).round() as u64);
                }
                self.clock_ns
            }
        };
        match self.spec.limit {
            Limit::Requests(n) if self.issued >= n => return None,
            Limit::DurationNs(d) if !self.spec.arrival.is_closed() && arrival_ns >= d => return None,
            _ => {}
        }
        self.issued += 1;
        let think_ns = match self.spec.arrival {
            Arrival::Think { share, .. } if self.rng.gen_bool(share) => {
                self.exp.as_ref().expect("exp built for think times").sample(&mut self.rng).round() as u64
            }
            _ => 0,
        };
        let (op, offset, size) = match self.parts.is_empty() {
            true => self.place(),
            false => {
                let u: f64 = self.rng.gen();
                match self.part_cdf.iter().position(|&c| u < c).unwrap_or(self.parts.len()) {
                    0 => self.place(),
                    k => self.parts[k - 1].place(),
                }
            }
        };
        Some(Request { arrival_ns, think_ns, device: 0, offset_sector: offset / 512, sectors: (size / 512) as u32, op })
    }
}

impl Generator {
    /// The next request's operation, offset and size, bytes.
    fn place(&mut self) -> (IoOp, u64, u64) {
        if let Some(f) = self.fitted.as_mut() {
            return f.next(&mut self.rng);
        }
        let size = self.size();
        // A sequential continuation (`seq`) when it fits; the draw only with `seq` given, so
        // other specs keep their streams.
        let go_on = match self.last_end {
            Some(end) if self.spec.seq_share > 0.0 && end + size <= self.span_bytes => {
                self.rng.gen_bool(self.spec.seq_share).then_some(end)
            }
            _ => None,
        };
        let offset = match go_on {
            Some(end) => end,
            None => self.offset(size),
        };
        self.last_end = Some(offset + size);
        let u: f64 = self.rng.gen();
        let op = if u < self.spec.read_share {
            IoOp::Read
        } else if u < self.spec.read_share + self.spec.trim_share {
            IoOp::Trim
        } else {
            IoOp::Write
        };
        (op, offset, size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shift_places_every_write_at_the_partition_offset() {
        // Windows XP's partition at sector 63: 4 KiB clusters start at sector 7 mod 8.
        let spec = WorkloadSpec::parse("pattern=uniform,read=0,size=4k,align=4k,shift=3584,requests=5000").unwrap();
        let span = 1u64 << 24;
        for r in Generator::new(&spec, span, 3).unwrap() {
            assert_eq!(r.offset_sector % 8, 7, "{r:?}");
            assert!((r.offset_sector + u64::from(r.sectors)) * 512 <= span, "{r:?}");
        }
        let e = WorkloadSpec::parse("align=4k,shift=4k").unwrap_err();
        assert_eq!(e.key, "shift");
        assert!(WorkloadSpec::parse("shift=100").is_err());
    }

    #[test]
    fn a_mixture_draws_each_request_from_one_part_by_weight() {
        // Desktop's hot single pages on one channel's stripe beside its main stream.
        let spec = WorkloadSpec::parse(
            "pattern=uniform,read=0,size=64k,align=64k,requests=20000;weight=0.25,pattern=uniform,read=0,size=4k,align=32k,span=0.01",
        )
        .unwrap();
        assert_eq!(spec.mix.len(), 1);
        let span = 1u64 << 30;
        let reqs: Vec<Request> = Generator::new(&spec, span, 5).unwrap().collect();
        assert_eq!(reqs.len(), 20000, "the first part's length rules");
        let hot: Vec<&Request> = reqs.iter().filter(|r| r.sectors == 8).collect();
        let share = hot.len() as f64 / reqs.len() as f64;
        assert!((share - 0.2).abs() < 0.01, "weight 0.25 of 1.25: {share}");
        assert!(hot.iter().all(|r| r.offset_sector % 64 == 0 && r.offset_sector * 512 < span / 100));
        assert!(reqs.iter().filter(|r| r.sectors == 128).all(|r| r.offset_sector % 128 == 0));
        let again: Vec<Request> = Generator::new(&spec, span, 5).unwrap().collect();
        assert_eq!(reqs, again, "deterministic");
        for bad in [
            "size=4k;requests=5",
            "size=4k;qd=4",
            "size=4k;arrival=closed:2",
            "size=4k;file:x.toml",
            "size=4k;weight=0",
        ] {
            assert!(WorkloadSpec::parse(bad).is_err(), "{bad}");
        }
        let e = WorkloadSpec::parse("size=4k;requests=5").unwrap_err();
        assert_eq!(e.key, "requests");
    }

    #[test]
    fn seq_continues_that_share_of_requests() {
        let spec = WorkloadSpec::parse("pattern=uniform,seq=0.6,size=8k@1|64k@1,requests=20000").unwrap();
        let reqs: Vec<Request> = Generator::new(&spec, 1 << 30, 7).unwrap().collect();
        let cont =
            reqs.windows(2).filter(|w| w[0].offset_sector + u64::from(w[0].sectors) == w[1].offset_sector).count();
        let share = cont as f64 / (reqs.len() - 1) as f64;
        assert!((share - 0.6).abs() < 0.02, "{share}");
        // Without seq the stream is the one it always was.
        let plain = WorkloadSpec::parse("pattern=uniform,requests=100").unwrap();
        let with0 = WorkloadSpec::parse("pattern=uniform,seq=0,requests=100").unwrap();
        let a: Vec<Request> = Generator::new(&plain, 1 << 30, 7).unwrap().collect();
        let b: Vec<Request> = Generator::new(&with0, 1 << 30, 7).unwrap().collect();
        assert_eq!(a, b);
        assert!(WorkloadSpec::parse("seq=1.5").unwrap_err().to_string().contains("seq"));
    }

    #[test]
    fn parses_a_full_spec() {
        let w = WorkloadSpec::parse(
            "pattern=hotcold:0.8:0.2, read=0.5,size=4k@3|64k@1,arrival=poisson:100us,requests=1e3,span=0.5,align=8k",
        )
        .unwrap();
        assert_eq!(w.pattern, Pattern::HotCold { traffic: 0.8, space: 0.2 });
        assert_eq!(w.sizes, vec![(4096, 3.0), (65536, 1.0)]);
        assert_eq!(w.arrival, Arrival::Poisson { mean_ns: 100_000 });
        assert_eq!(w.limit, Limit::Requests(1000));
        assert_eq!(w.align_bytes, 8192);
    }

    #[test]
    fn bad_specs_name_key_and_rule() {
        let e = |s: &str| WorkloadSpec::parse(s).unwrap_err().to_string();
        assert_eq!(e("read=1.5"), "invalid workload spec: read = `1.5` (must be in [0, 1])");
        assert!(e("pattern=zipf").contains("zipf:THETA"));
        assert!(e("colour=red").contains("unknown key"));
        assert!(e("size=1000").contains("multiple of 512"));
        assert!(e("requests=0").contains("whole number >= 1"));
        assert!(e("arrival=poisson:0").contains("must be > 0"));
        assert!(e("read=0.8,trim=0.5").contains("read + trim"));
        assert!(e("nonsense").contains("expected key=value"));
    }

    #[test]
    fn streams_are_seeded_and_in_range() {
        let w = WorkloadSpec::parse("pattern=zipf:0.9,size=4k|16k,requests=2000,read=0.4").unwrap();
        let a: Vec<_> = Generator::new(&w, 1 << 24, 7).unwrap().collect();
        let b: Vec<_> = Generator::new(&w, 1 << 24, 7).unwrap().collect();
        let c: Vec<_> = Generator::new(&w, 1 << 24, 8).unwrap().collect();
        assert_eq!(a.len(), 2000);
        assert_eq!(a, b);
        assert_ne!(a, c);
        for r in &a {
            assert!((r.offset_sector + u64::from(r.sectors)) * 512 <= 1 << 24);
        }
        let reads = a.iter().filter(|r| r.op == IoOp::Read).count();
        assert!((700..900).contains(&reads), "reads {reads}");
    }

    #[test]
    fn hotcold_concentrates_traffic() {
        let w = WorkloadSpec::parse("pattern=hotcold:0.9:0.1,requests=10000").unwrap();
        let hot = Generator::new(&w, 1 << 26, 1).unwrap().filter(|r| r.offset_sector * 512 < (1 << 26) / 10).count();
        assert!((8800..9200).contains(&hot), "hot {hot}");
    }

    #[test]
    fn sequential_wraps_and_poisson_advances() {
        let w = WorkloadSpec::parse("pattern=sequential,size=8k,requests=5,arrival=fixed:10us").unwrap();
        let v: Vec<_> = Generator::new(&w, 16384, 0).unwrap().collect();
        assert_eq!(v.iter().map(|r| r.offset_sector).collect::<Vec<_>>(), vec![0, 16, 0, 16, 0]);
        assert_eq!(v[4].arrival_ns, 40_000);
        let w = WorkloadSpec::parse("arrival=poisson:1ms,duration=1s").unwrap();
        let n = Generator::new(&w, 1 << 24, 3).unwrap().count();
        assert!((900..1100).contains(&n), "n {n}");
    }

    #[test]
    fn think_times_come_before_their_share_of_requests() {
        let w = WorkloadSpec::parse("arrival=think:4:0.3:2ms,requests=20000").unwrap();
        assert!(w.arrival.is_closed());
        let reqs: Vec<_> = Generator::new(&w, 1 << 30, 7).unwrap().collect();
        let thinking: Vec<u64> = reqs.iter().map(|r| r.think_ns).filter(|&t| t > 0).collect();
        let share = thinking.len() as f64 / reqs.len() as f64;
        assert!((share - 0.3).abs() < 0.02, "{share}");
        let mean = thinking.iter().sum::<u64>() as f64 / thinking.len() as f64;
        assert!((mean / 2e6 - 1.0).abs() < 0.05, "{mean}");
        let e = |s: &str| WorkloadSpec::parse(s).unwrap_err().to_string();
        assert!(e("arrival=think:4:1.5:1ms").contains("[0, 1]"));
        assert!(e("arrival=think:4:0.3").contains("think:QD:SHARE:DURATION"));
        assert!(e("arrival=think:4:0.3:0").contains("must be > 0"));
    }
}
