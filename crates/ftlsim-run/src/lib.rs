//! One ftlsim run from its description: drive, FTL, request source, preconditioning. The CLI
//! (`ftlsim run`, `compare`) and the Python package (`ftlsim.run`) both go through here, so a
//! run described the same way gives the same results.json whichever front asked for it.
//!
//! [`RunSpec`] says what to run, [`RunSpec::plan`] checks it and resolves the config, and
//! [`execute`] runs it, reporting progress and time-series rows to a [`RunObserver`].

pub mod memory;
mod results;

pub use results::{result_json, wall_time_json};

use ftlsim_core::config::DriveConfig;
use ftlsim_core::error::{SimError, WorkloadError};
use ftlsim_core::metrics::Observer;
use ftlsim_core::presets;
use ftlsim_core::sim::{Precondition, Replay, Report, RunOptions};
use ftlsim_core::trace::{TraceFormat, TraceOptions, TraceSource};
use ftlsim_core::workload::{parse_duration_ns, Arrival, Generator, Limit, WorkloadSpec};
use std::path::PathBuf;

/// A trace time window `START..END` (`10s..20s`) in ns after the first request.
pub fn time_window_ns(w: &str) -> Result<(u64, u64), SimError> {
    let (a, b) = w
        .split_once("..")
        .ok_or_else(|| WorkloadError::new("--time-window", w, "expected START..END, e.g. 10s..20s"))?;
    let (a, b) = (parse_duration_ns("--time-window", a)?, parse_duration_ns("--time-window", b)?);
    if b <= a {
        return Err(WorkloadError::new("--time-window", w, "END must be after START").into());
    }
    Ok((a, b))
}

/// Where the drive config comes from.
#[derive(Debug, Clone)]
pub enum Drive {
    /// A built-in preset by name (`ftlsim presets`).
    Preset(String),
    /// A TOML file.
    File(PathBuf),
    /// A config already built (and validated when it is planned).
    Config(Box<DriveConfig>),
}

/// Where requests come from.
#[derive(Debug, Clone)]
pub enum Source {
    /// The synthetic generator with this workload spec (`pattern=zipf:0.9,read=0.3,...`;
    /// empty = the default workload).
    Synthetic(String),
    /// A trace file, replayed open loop at its times or, given `qd`, closed loop.
    Trace {
        /// The file (plain, .gz or .zst).
        path: PathBuf,
        /// Reader options.
        options: TraceOptions,
        /// Queue depth of a closed-loop replay; `None` replays at the trace's times.
        qd: Option<u32>,
    },
}

/// Everything that describes a run.
#[derive(Debug, Clone)]
pub struct RunSpec {
    /// Drive config.
    pub drive: Drive,
    /// Config overrides `(key, value)` (`ftl.gc_victim`, `fifo`), applied before `ftl`.
    pub sets: Vec<(String, String)>,
    /// FTL overriding the config's `ftl.name`.
    pub ftl: Option<String>,
    /// Request source.
    pub source: Source,
    /// Seed of the workload and preconditioning.
    pub seed: u64,
    /// Share of the logical space filled sequentially before measuring; `None`: the config's
    /// `precondition.fill`.
    pub fill: Option<f64>,
    /// Share left unwritten from the start before the fill begins.
    pub fill_offset: f64,
    /// Overwrite randomly after the fill until write amplification settles.
    pub steady_state: bool,
    /// Load the drive from this snapshot instead of preconditioning it.
    pub load_state: Option<PathBuf>,
    /// Save the drive to this snapshot after preconditioning.
    pub save_state: Option<PathBuf>,
    /// Time-series interval in simulated ns (0 = none).
    pub interval_ns: u64,
    /// Check every read against a data oracle.
    pub verify: bool,
    /// Refuse a drive whose memory estimate exceeds this many bytes; `None`: the memory
    /// the system has available.
    pub max_memory: Option<u64>,
}

impl Default for RunSpec {
    /// `ftlsim run` with no flags: the default preset, filled once, the default workload.
    fn default() -> Self {
        RunSpec {
            drive: Drive::Preset("default".into()),
            sets: Vec::new(),
            ftl: None,
            source: Source::Synthetic(String::new()),
            seed: 1,
            fill: None,
            fill_offset: 0.0,
            steady_state: false,
            load_state: None,
            save_state: None,
            interval_ns: 100_000_000,
            verify: false,
            max_memory: None,
        }
    }
}

/// A checked [`RunSpec`]: the resolved config and how to replay.
#[derive(Debug, Clone)]
pub struct RunPlan {
    /// Drive config with overrides applied, derived and checked.
    pub cfg: DriveConfig,
    /// Synthetic workload (the default one for a trace run, where it is unused).
    pub workload: WorkloadSpec,
    /// Workload text as given.
    pub workload_text: String,
    /// Preconditioning.
    pub precondition: Precondition,
    /// Replay options.
    pub opts: RunOptions,
}

impl RunSpec {
    /// Resolve the config (preset or file, overrides, FTL) and check the spec: every
    /// mistake is an error naming the key, flag or file, before anything is allocated.
    pub fn plan(&self) -> Result<RunPlan, SimError> {
        let cfg = match &self.drive {
            Drive::Preset(name) => presets::load(name)?,
            Drive::File(path) => DriveConfig::from_file(path)?,
            Drive::Config(cfg) => (**cfg).clone(),
        };
        let mut cfg = cfg.with_overrides(&self.sets)?;
        if let Some(f) = &self.ftl {
            cfg.ftl.name = f.clone();
        }
        cfg.derive()?;
        ftlsim_ftl::info(&cfg.ftl.name)?;
        let (workload_text, qd) = match &self.source {
            Source::Synthetic(text) => (text.clone(), None),
            Source::Trace { qd, .. } => (String::new(), Some(*qd)),
        };
        let workload = WorkloadSpec::parse(&workload_text)?;
        let (replay, max_sim_ns) = match qd {
            Some(Some(queue_depth)) => (Replay::Closed { queue_depth }, None),
            Some(None) => (Replay::Open { time_scale: 1.0 }, None),
            None => match (workload.arrival, workload.limit) {
                (Arrival::Closed { queue_depth }, Limit::DurationNs(d)) => (Replay::Closed { queue_depth }, Some(d)),
                (Arrival::Closed { queue_depth }, _) => (Replay::Closed { queue_depth }, None),
                _ => (Replay::Open { time_scale: 1.0 }, None),
            },
        };
        let opts = RunOptions { replay, max_sim_ns, interval_ns: self.interval_ns, ..RunOptions::default() };
        let precondition = Precondition {
            fill: self.fill.unwrap_or(cfg.precondition.fill),
            fill_offset: self.fill_offset,
            steady_state: self.steady_state,
            seed: self.seed,
            ..Precondition::default()
        };
        Ok(RunPlan { cfg, workload, workload_text, precondition, opts })
    }
}

/// What a run reports as it goes, beyond the core's [`Observer`] calls.
pub trait RunObserver: Observer {
    /// A line of information for the user (what was loaded, detected, estimated).
    fn notice(&mut self, _msg: &str) {}
    /// Preconditioning is over and the measured replay begins: `total` requests if known.
    fn replay_begins(&mut self, _total: Option<u64>) {}
}

/// An observer that ignores everything.
pub struct Quiet;
impl Observer for Quiet {}
impl RunObserver for Quiet {}

/// A finished run.
#[derive(Debug)]
pub struct Outcome {
    /// The report.
    pub report: Report,
    /// results.json: what was run, the report and the wall time by stage.
    pub json: serde_json::Value,
}

/// Run a planned spec: build the drive, precondition it (or load its snapshot), replay,
/// report.
pub fn execute(spec: &RunSpec, p: &RunPlan, obs: &mut dyn RunObserver) -> Result<Outcome, SimError> {
    let started = std::time::Instant::now();
    let memory_estimate = memory::check_drive(&p.cfg, spec.verify, spec.max_memory)?;
    obs.notice(&format!("memory: about {} (estimate)", memory::bytes(memory_estimate)));
    let mut sim = ftlsim_ftl::simulator(p.cfg.clone(), spec.verify)?;
    let precondition = match &spec.load_state {
        Some(path) => {
            let h = sim.load_state(path)?;
            obs.notice(&format!("loaded drive state from {} (preconditioned: {})", path.display(), h.precondition));
            serde_json::json!({ "loaded_from": path.display().to_string(), "saved_with": h.precondition })
        }
        None => {
            let pre = &p.precondition;
            obs.notice(&format!(
                "preconditioning: fill {:.0}%{}",
                pre.fill * 100.0,
                if pre.steady_state { " + steady state" } else { "" }
            ));
            sim.precondition_observed(pre, obs)?;
            let pre = serde_json::to_value(pre).expect("preconditioning serialises");
            if let Some(path) = &spec.save_state {
                sim.save_state(path, serde_json::json!({ "seed": spec.seed, "precondition": pre }))?;
                obs.notice(&format!("saved drive state to {}", path.display()));
            }
            pre
        }
    };
    let logical = sim.derived().logical_bytes;
    let (report, trace_info) = match &spec.source {
        Source::Synthetic(_) => {
            obs.replay_begins(match p.workload.limit {
                Limit::Requests(n) => Some(n),
                Limit::DurationNs(_) => None,
            });
            let mut gen = Generator::new(&p.workload, logical, spec.seed)?.map(Ok);
            (sim.run(&mut gen, &p.opts, obs)?, None)
        }
        Source::Trace { path, options, .. } => {
            let spp = p.cfg.geometry.sectors_per_page();
            let mut src = TraceSource::open(path, options.clone(), logical / 512, spp)?;
            let i = src.info();
            let units = TraceFormat::from_name(&i.format).map_or("", |f| f.units());
            obs.notice(&format!(
                "trace {}: format {}, {units}{}",
                i.file,
                i.format,
                if i.detected { " (detected; --format overrides)" } else { "" }
            ));
            obs.replay_begins(None);
            let report = sim.run(&mut src, &p.opts, obs)?;
            let mut info = serde_json::to_value(src.info()).expect("replay info serialises");
            info["options"] = serde_json::to_value(options).expect("options serialise");
            info["bad_lines_skipped"] = src.bad_lines().into();
            info["untyped_records_skipped"] = src.untyped_records().into();
            (report, Some(info))
        }
    };
    if report.host.requests == 0 {
        return Err(SimError::Input(match &spec.source {
            Source::Trace { path, .. } => format!(
                "{}: no request was replayed (the trace has requests, but --device, --skip, --time-window or --max-requests left none)",
                path.display()
            ),
            Source::Synthetic(_) => "the workload produced no request".into(),
        }));
    }
    let mut wall = wall_time_json(sim.wall_times(), started.elapsed().as_secs_f64(), report.host.requests);
    wall["memory_estimate_bytes"] = memory_estimate.into();
    wall["peak_rss_bytes"] = memory::peak_rss_bytes().into();
    let mut json = result_json(p, spec.seed, precondition, &report, wall);
    if let Some(info) = trace_info {
        json["run"]["trace"] = info;
        json["run"]["workload"] = serde_json::Value::Null;
        json["run"]["workload_spec"] = serde_json::Value::Null;
    }
    Ok(Outcome { report, json })
}
