//! One ftlsim run from its description: drive, FTL, request source, preconditioning. The CLI
//! (`ftlsim run`, `compare`) and the Python package (`ftlsim.run`) both go through here, so a
//! run described the same way gives the same results.json whichever front asked for it.
//!
//! [`RunSpec`] says what to run, [`RunSpec::plan`] checks it and resolves the config, and
//! [`execute`] runs it, reporting progress and time-series rows to a [`RunObserver`].

mod channels;
pub mod memory;
mod placement;
mod results;
pub mod tenants;

pub use results::{result_json, wall_time_json};
pub use tenants::{parse_arbitration, TenantSpec};

use ftlsim_core::config::{DriveConfig, Resolved};
use ftlsim_core::error::{RequestError, SimError, WorkloadError};
use ftlsim_core::host::Request;
use ftlsim_core::metrics::Observer;
use ftlsim_core::outputs::{Outputs, Staged, Target};
use ftlsim_core::sim::{CutAt, Precondition, QueueArbitration, Replay, Report, RunOptions, Simulator};
use ftlsim_core::trace::{TraceFormat, TraceOptions, TraceSource};
use ftlsim_core::workload::{parse_duration_ns, Generator, Limit, WorkloadSpec};
use ftlsim_ftl::presets;
use std::path::{Path, PathBuf};

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

/// Power cuts in a run (`--power-cut`, docs/power-loss.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PowerCut {
    /// One cut at this instant; the run goes on after recovery.
    At(CutAt),
    /// An uncut reference run, then this many runs from the same start, each cut at a
    /// seeded random simulated time within the reference run's length.
    Random(u32),
}

impl PowerCut {
    /// Parse `AT`: a request count (`5000`: as the 5,000th request is dispatched), a
    /// simulated time after the first request (`250ms`, `1.5s`, `800us`), or `random:N`.
    pub fn parse(s: &str) -> Result<PowerCut, SimError> {
        PowerCut::parse_named("--power-cut", s)
    }

    /// [`PowerCut::parse`], errors naming the option `key` (`power_cut` in Python).
    pub fn parse_named(key: &str, s: &str) -> Result<PowerCut, SimError> {
        let t = s.trim();
        let bad = |rule: &str| SimError::from(WorkloadError::new(key, s, rule));
        if let Some(n) = t.strip_prefix("random:") {
            let n: u32 = n.parse().map_err(|_| bad("expected random:N with N a whole number of cuts"))?;
            if n == 0 {
                return Err(bad("random:N needs N >= 1"));
            }
            return Ok(PowerCut::Random(n));
        }
        if let Ok(n) = t.parse::<u64>() {
            if n == 0 {
                return Err(bad("a request count counts from 1"));
            }
            return Ok(PowerCut::At(CutAt::Request(n)));
        }
        if !t.ends_with('s') {
            return Err(bad(
                "expected a request count (5000), a simulated time with its unit (250ms, 1.5s) or random:N",
            ));
        }
        Ok(PowerCut::At(CutAt::TimeNs(parse_duration_ns(key, t)?)))
    }
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
    /// Share of the logical space, from its start, the overwrites address; 0 = the fill.
    pub overwrite_span: f64,
    /// After the fill and overwrites, trim written pages at random until this share of the
    /// logical space is valid; `None`: trim nothing.
    pub trim_to: Option<f64>,
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
    /// Power cuts during the measured run.
    pub power_cut: Option<PowerCut>,
    /// With a power cut: shut the drive down cleanly after preconditioning (the FTL writes
    /// its controller-only state to flash), so recovery starts from a recent backup point.
    /// `false` cuts the drive as preconditioning left it.
    pub clean_shutdown: bool,
    /// Tenants, each its own source, submission queue and namespace (`--tenant`); empty:
    /// the one `source`.
    pub tenants: Vec<TenantSpec>,
    /// How the controller picks among the tenants' queues (`--arbitration`); `None`: round
    /// robin. Given without tenants it is refused (it would be ignored).
    pub arbitration: Option<QueueArbitration>,
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
            overwrite_span: 0.0,
            trim_to: None,
            load_state: None,
            save_state: None,
            interval_ns: 100_000_000,
            verify: false,
            max_memory: None,
            power_cut: None,
            clean_shutdown: true,
            tenants: Vec::new(),
            arbitration: None,
        }
    }
}

/// A checked [`RunSpec`]: the resolved config and how to replay.
#[derive(Debug, Clone)]
pub struct RunPlan {
    /// Drive config with overrides applied, derived and checked.
    pub cfg: Resolved,
    /// Synthetic workload (the default one for a trace run, where it is unused).
    pub workload: WorkloadSpec,
    /// Workload text as given.
    pub workload_text: String,
    /// Preconditioning.
    pub precondition: Precondition,
    /// Replay options (with the tenants, `opts.tenants`).
    pub opts: RunOptions,
    /// Each tenant's workload (`None` for a trace tenant), beside `opts.tenants`.
    pub tenant_workloads: Vec<Option<WorkloadSpec>>,
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
        let cfg = cfg.with_overrides(&self.sets, |mut cfg| {
            if let Some(f) = &self.ftl {
                cfg.ftl.name = f.clone();
            }
            ftlsim_ftl::resolve(cfg)
        })?;
        if self.power_cut.is_some() && cfg.fdp.is_some() {
            return Err(SimError::Input(
                "--power-cut: power-loss recovery under [fdp] is not supported (which handle a page belongs to is \
                 controller memory the cut takes)"
                    .into(),
            ));
        }
        if self.power_cut.is_some() && !ftlsim_ftl::info(&cfg.ftl.name)?.capabilities.recovers {
            return Err(SimError::Input(format!(
                "--power-cut: {} does not recover from a power cut (those that do: {})",
                cfg.ftl.name,
                ftlsim_ftl::names(|c| c.recovers)
            )));
        }
        if ftlsim_ftl::info(&cfg.ftl.name)?.capabilities.zoned {
            self.check_zoned_preconditioning()?;
        }
        let (workload_text, qd) = match &self.source {
            Source::Synthetic(text) => (text.clone(), None),
            Source::Trace { qd, .. } => (String::new(), Some(*qd)),
        };
        let workload = WorkloadSpec::parse(&workload_text)?;
        let (replay, max_sim_ns) = match qd {
            Some(Some(queue_depth)) => (Replay::Closed { queue_depth }, None),
            Some(None) => (Replay::Open { time_scale: 1.0 }, None),
            None => match (workload.arrival.queue_depth(), workload.limit) {
                (Some(queue_depth), Limit::DurationNs(d)) => (Replay::Closed { queue_depth }, Some(d)),
                (Some(queue_depth), _) => (Replay::Closed { queue_depth }, None),
                _ => (Replay::Open { time_scale: 1.0 }, None),
            },
        };
        if qd.is_none() && self.interval_ns > 0 && cfg.multichannel.is_none() {
            // The time series' length, known before the run for a synthetic workload: one
            // that would pass the row limit is refused now, not once it gets there.
            let span_ns = match workload.limit {
                Limit::Requests(n) => workload.mean_gap_ns() * (n - 1) as f64,
                Limit::DurationNs(d) => d as f64,
            };
            if span_ns / self.interval_ns as f64 > ftlsim_core::sim::MAX_INTERVAL_ROWS as f64 {
                return Err(ftlsim_core::sim::too_many_rows(self.interval_ns, span_ns as u64));
            }
        }
        let mut opts = RunOptions { replay, max_sim_ns, interval_ns: self.interval_ns, ..RunOptions::default() };
        let tenant_workloads = self.plan_tenants(&cfg, &mut opts)?;
        let precondition = Precondition {
            fill: self.fill.unwrap_or(cfg.precondition.fill),
            fill_offset: self.fill_offset,
            steady_state: self.steady_state,
            overwrite_span: self.overwrite_span,
            trim_to: self.trim_to,
            seed: self.seed,
            ..Precondition::default()
        };
        Ok(RunPlan { cfg, workload, workload_text, precondition, opts, tenant_workloads })
    }

    /// A zoned namespace takes sequential writes from its zones' starts only: preconditioning
    /// other than a sequential fill from the drive's start is refused before anything runs,
    /// naming the option (the FTL would refuse it part way).
    fn check_zoned_preconditioning(&self) -> Result<(), SimError> {
        let why = "a zoned namespace takes writes only at its zones' write pointers; precondition it with a \
                   sequential fill from its start (--fill), and write or reset zones in the workload";
        let given = [
            ("--steady-state", self.steady_state),
            ("--fill-offset", self.fill_offset != 0.0),
            ("--overwrite-span", self.overwrite_span != 0.0),
            ("--trim-to", self.trim_to.is_some()),
        ];
        match given.iter().find(|(_, g)| *g) {
            Some((flag, _)) => Err(SimError::Input(format!("{flag}: not for the zns FTL: {why}"))),
            None => Ok(()),
        }
    }

    /// The files this run reads, each by the option that names it, for the output check
    /// (docs/configuration.md, "Outputs"): config, trace, fit files, snapshot, tenants' traces
    /// and scheme files.
    pub fn inputs(&self, p: &RunPlan) -> Outputs {
        let mut o = Outputs::new();
        if let Drive::File(path) = &self.drive {
            o.input("--config", path);
        }
        if let Source::Trace { path, .. } = &self.source {
            o.input("--trace", path);
        }
        if let Some(path) = &self.load_state {
            o.input("--load-state", path);
        }
        for file in p.workload.files() {
            o.input("--workload file", Path::new(file));
        }
        for (t, w) in self.tenants.iter().zip(&p.tenant_workloads) {
            let role = format!("--tenant {}", t.name);
            if let Source::Trace { path, .. } = &t.source {
                o.input(&format!("{role} trace"), path);
            }
            if let Some(path) = &t.scheme_file {
                o.input(&format!("{role} dp_scheme"), path);
            }
            for file in w.iter().flat_map(|w| w.files()) {
                o.input(&format!("{role} file"), Path::new(file));
            }
        }
        o
    }

    /// The run's outputs checked against its inputs: the check a front claims its own
    /// outputs on (`--out`'s files), and where the snapshot goes (`--save-state`).
    pub fn outputs(&self, p: &RunPlan) -> Result<(Outputs, Option<Target>), SimError> {
        let mut o = self.inputs(p);
        let save = match &self.save_state {
            Some(path) => Some(o.file("--save-state", path).map_err(SimError::Input)?),
            None => None,
        };
        Ok((o, save))
    }

    /// The tenants in `opts` and their workloads; a mistake names the tenant and its key.
    fn plan_tenants(&self, cfg: &Resolved, opts: &mut RunOptions) -> Result<Vec<Option<WorkloadSpec>>, SimError> {
        if self.tenants.is_empty() {
            if self.arbitration.is_some() {
                return Err(SimError::Input(
                    "--arbitration: only with --tenant (it picks among the tenants' submission queues; a run of one \
                     source has one queue)"
                        .into(),
                ));
            }
            return Ok(Vec::new());
        }
        opts.arbitration = self.arbitration.unwrap_or(opts.arbitration);
        tenants::check_tenants(&self.tenants)?;
        tenants::check_placements(&self.tenants, cfg.fdp.as_ref().map(|f| f.handles))?;
        let refuse = |what: &str| Err(SimError::Input(format!("--tenant: {what}")));
        if !matches!(&self.source, Source::Synthetic(t) if t.is_empty()) {
            return refuse("give each tenant its workload or trace in its --tenant, not --workload or --trace");
        }
        if self.power_cut.is_some() {
            return refuse("power cuts with tenants are not supported yet (--power-cut needs one source)");
        }
        if cfg.multichannel.is_some() {
            return refuse("a [multichannel] system takes one source; tenants need a single drive");
        }
        let d = cfg.derived();
        let spp = cfg.geometry.sectors_per_page();
        let mut workloads = Vec::new();
        for (i, t) in self.tenants.iter().enumerate() {
            let ns = t.namespace(u64::from(d.logical_pages), spp)?;
            let w = match &t.source {
                Source::Synthetic(text) => Some(WorkloadSpec::parse(text)?),
                Source::Trace { .. } => None,
            };
            opts.tenants.push(t.tenant(ns, w.as_ref(), t.seed_in(self.seed, i)));
            workloads.push(w);
        }
        Ok(workloads)
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
    /// The drive report; `None` for a channel-system run (`[multichannel]`), whose report
    /// is only in `json`.
    pub report: Option<Report>,
    /// results.json: what was run, the report and the wall time by stage.
    pub json: serde_json::Value,
    /// The snapshot `--save-state` asked for, written and waiting to be renamed into place:
    /// the front commits it once its own outputs are written ([`Outcome::commit`]), so a run
    /// that fails anywhere leaves an existing file as it was.
    pub snapshot: Option<Staged>,
}

impl Outcome {
    /// Rename the staged snapshot, if any, into place.
    pub fn commit(&mut self) -> Result<(), SimError> {
        match self.snapshot.take() {
            Some(s) => s.commit().map_err(SimError::Input),
            None => Ok(()),
        }
    }
}

/// One replay of a spec: the drive built and preconditioned (or loaded), the source
/// replayed with `opts`, and after a power cut the rest of the source.
struct Replayed {
    report: Report,
    /// The run after recovery (`None` without a cut, or when no request was left).
    post_recovery: Option<Report>,
    precondition: serde_json::Value,
    trace_info: Option<serde_json::Value>,
    /// `run.tenants` of results.json (runs with tenants).
    tenants_run: Option<serde_json::Value>,
    memory_estimate: u64,
    wall: ftlsim_core::sim::WallTimes,
    /// The snapshot saved after preconditioning, to commit with the run's results.
    snapshot: Option<Staged>,
}

/// A power-cut run refuses a snapshot whose pages carry no program stamps.
pub(crate) fn unstamped_snapshot(path: &std::path::Path) -> SimError {
    SimError::Input(format!(
        "{}: this snapshot was saved by a run without --power-cut, so its pages carry no program stamps, which \
         recovery needs to tell old copies from new; save it from a run with --power-cut",
        path.display()
    ))
}

/// The report of the requests left after a cut, if any was.
fn after_cut(
    sim: &mut Simulator,
    report: &Report,
    source: &mut dyn Iterator<Item = Result<Request, RequestError>>,
    opts: &RunOptions,
    obs: &mut dyn RunObserver,
) -> Result<Option<Report>, SimError> {
    if report.power_cut.is_none() {
        return Ok(None);
    }
    let opts = RunOptions { power_cut: None, ..opts.clone() };
    let post = sim.run(source, &opts, obs)?;
    Ok((post.host.requests > 0).then_some(post))
}

/// Replay `spec` once; the drive is saved after preconditioning to `save`, if given.
fn replay(
    spec: &RunSpec,
    p: &RunPlan,
    opts: &RunOptions,
    save: Option<&Target>,
    obs: &mut dyn RunObserver,
) -> Result<Replayed, SimError> {
    let cut = spec.power_cut.is_some();
    let memory_estimate = memory::check_drive(&p.cfg, spec.verify, cut, spec.max_memory)?;
    obs.notice(&format!("memory: about {} (estimate)", memory::bytes(memory_estimate)));
    for ignored in ftlsim_ftl::ignored_settings(&p.cfg) {
        obs.notice(&ignored);
    }
    let mut sim = ftlsim_ftl::simulator_for(p.cfg.clone(), spec.verify)?;
    if cut {
        // Recovery reads program stamps from the spare areas; they are written from the start.
        sim.keep_program_stamps();
    }
    let mut snapshot = None;
    let precondition = match &spec.load_state {
        Some(path) => {
            let h = sim.load_state(path)?;
            if cut && !sim.flash().keeps_program_stamps() {
                return Err(unstamped_snapshot(path));
            }
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
            if let Some(to) = save {
                snapshot = Some(sim.stage_state(to, serde_json::json!({ "seed": spec.seed, "precondition": pre }))?);
                obs.notice(&format!("drive state written for {} (kept once the run succeeds)", to.shown().display()));
            }
            pre
        }
    };
    if cut && spec.clean_shutdown {
        sim.clean_shutdown()?;
    }
    let logical = sim.derived().logical_bytes;
    let mut tenants_run = None;
    let (report, post_recovery, trace_info) = match &spec.source {
        _ if !spec.tenants.is_empty() => {
            let (report, run) = replay_tenants(&mut sim, spec, p, opts, obs)?;
            tenants_run = Some(run);
            (report, None, None)
        }
        Source::Synthetic(_) => {
            let mut gen = synthetic(p, logical, spec.seed, obs)?;
            let report = sim.run(&mut gen, opts, obs)?;
            let post = after_cut(&mut sim, &report, &mut gen, opts, obs)?;
            (report, post, None)
        }
        Source::Trace { path, options, .. } => {
            let mut src = open_trace(path, options, p, logical, obs)?;
            let report = sim.run(&mut src, opts, obs)?;
            let post = after_cut(&mut sim, &report, &mut src, opts, obs)?;
            (report, post, Some(trace_json(&src, options)))
        }
    };
    if report.host.requests + report.host.refused == 0 && report.power_cut.is_none() {
        return Err(SimError::Input(match &spec.source {
            _ if !spec.tenants.is_empty() => "the tenants' workloads and traces produced no request".into(),
            Source::Trace { path, .. } => format!(
                "{}: no request was replayed (the trace has requests, but --device, --skip, --time-window or --max-requests left none)",
                path.display()
            ),
            Source::Synthetic(_) => "the workload produced no request".into(),
        }));
    }
    Ok(Replayed {
        report,
        post_recovery,
        precondition,
        trace_info,
        tenants_run,
        memory_estimate,
        wall: sim.wall_times().clone(),
        snapshot,
    })
}

/// Replay a run's tenants, each from its own source in its namespace; returns the report and
/// `run.tenants` of results.json (each tenant as given and resolved, with its trace's info).
fn replay_tenants(
    sim: &mut Simulator,
    spec: &RunSpec,
    p: &RunPlan,
    opts: &RunOptions,
    obs: &mut dyn RunObserver,
) -> Result<(Report, serde_json::Value), SimError> {
    /// A tenant's requests; traces are kept to read their info after the run.
    enum Opened {
        Synthetic(Box<dyn Iterator<Item = Result<Request, RequestError>>>),
        Trace(Box<TraceSource>, TraceOptions),
    }
    let spp = p.cfg.geometry.sectors_per_page();
    let mut opened = Vec::new();
    let mut run = Vec::new();
    for (i, ((t, tenant), w)) in spec.tenants.iter().zip(&opts.tenants).zip(&p.tenant_workloads).enumerate() {
        let seed = t.seed_in(spec.seed, i);
        run.push(serde_json::json!({
            "name": t.name,
            "spec": t.text,
            "class": t.class.name(),
            "namespace": tenant.namespace,
            "seed": seed,
            "placement": placement::describe(&t.placement),
            "replay": tenant.replay,
            "workload": w,
        }));
        opened.push(match (&t.source, w) {
            (Source::Synthetic(_), Some(w)) => {
                Opened::Synthetic(Box::new(Generator::new(w, tenant.namespace.sectors * 512, seed)?.map(Ok)))
            }
            (Source::Trace { path, options, .. }, _) => {
                let src = TraceSource::open(path, options.clone(), tenant.namespace.sectors, spp)?;
                obs.notice(&format!("tenant {}: trace {}, format {}", t.name, src.info().file, src.info().format));
                Opened::Trace(Box::new(src), options.clone())
            }
            (Source::Synthetic(_), None) => unreachable!("a synthetic tenant's workload is parsed when planned"),
        });
    }
    obs.replay_begins(None);
    let mut refs: Vec<&mut dyn Iterator<Item = Result<Request, RequestError>>> = opened
        .iter_mut()
        .map(|o| match o {
            Opened::Synthetic(g) => g.as_mut() as &mut dyn Iterator<Item = Result<Request, RequestError>>,
            Opened::Trace(src, _) => src.as_mut(),
        })
        .collect();
    let report = sim.run_tenants(&mut refs, opts, obs)?;
    drop(refs);
    // A tenant that gave no request is a mistake in its spec (a device its trace lacks, a
    // window that leaves nothing), not a tenant with a slowdown of 0.
    for (t, r) in spec.tenants.iter().zip(report.tenants.iter().flatten()) {
        if r.host.requests + r.host.refused == 0 {
            let why = match &t.source {
                Source::Trace { path, options, .. } => format!(
                    "its trace {} gave none{}",
                    path.display(),
                    match options.device {
                        Some(d) => format!(" of device={d} (trace stats lists the trace's devices)"),
                        None => String::new(),
                    }
                ),
                Source::Synthetic(_) => "its workload gave none".into(),
            };
            return Err(SimError::Input(format!("--tenant {}: no request was replayed: {why}", t.name)));
        }
    }
    for (i, o) in opened.iter().enumerate() {
        if let Opened::Trace(src, options) = o {
            run[i]["trace"] = trace_json(src, options);
        }
    }
    Ok((report, run.into()))
}

/// The synthetic source of a plan over `logical` bytes, the observer told how many requests
/// come.
fn synthetic(
    p: &RunPlan,
    logical: u64,
    seed: u64,
    obs: &mut dyn RunObserver,
) -> Result<impl Iterator<Item = Result<Request, RequestError>>, SimError> {
    obs.replay_begins(match p.workload.limit {
        Limit::Requests(n) => Some(n),
        Limit::DurationNs(_) => None,
    });
    Ok(Generator::new(&p.workload, logical, seed)?.map(Ok))
}

/// A trace opened for a drive of `logical` bytes, the observer told what was detected.
fn open_trace(
    path: &std::path::Path,
    options: &TraceOptions,
    p: &RunPlan,
    logical: u64,
    obs: &mut dyn RunObserver,
) -> Result<TraceSource, SimError> {
    let src = TraceSource::open(path, options.clone(), logical / 512, p.cfg.geometry.sectors_per_page())?;
    let i = src.info();
    let units = TraceFormat::from_name(&i.format).map_or("", |f| f.units());
    obs.notice(&format!(
        "trace {}: format {}, {units}{}",
        i.file,
        i.format,
        if i.detected { " (detected; --format overrides)" } else { "" }
    ));
    obs.replay_begins(None);
    Ok(src)
}

/// `run.trace` of results.json: the replay's info, its options and what it skipped.
fn trace_json(src: &TraceSource, options: &TraceOptions) -> serde_json::Value {
    let mut info = serde_json::to_value(src.info()).expect("replay info serialises");
    info["options"] = serde_json::to_value(options).expect("options serialise");
    info["bad_lines_skipped"] = src.bad_lines().into();
    info["untyped_records_skipped"] = src.untyped_records().into();
    info
}

/// The cut instants of `--power-cut random:N`: uniform over the reference run's simulated
/// time, from the run's seed.
fn random_cut_times(seed: u64, n: u32, run_ns: u64) -> Vec<u64> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x5EED_C0DE_F00D);
    (0..n).map(|_| rng.gen_range(1..run_ns.max(2))).collect()
}

/// One cut of a `random:N` series in results.json: the cut, recovery, and the run after it.
fn cut_summary(r: &Replayed) -> serde_json::Value {
    let post = r.post_recovery.as_ref();
    serde_json::json!({
        "power_cut": r.report.power_cut,
        "before_cut": {
            "requests": r.report.host.requests,
            "mean_response_ns": r.report.response_time.all.mean_ns,
        },
        "post_recovery": post.map(|p| serde_json::json!({
            "requests": p.host.requests,
            "iops": p.performance.iops,
            "mean_response_ns": p.response_time.all.mean_ns,
            "p99_response_ns": p.response_time.all.p99_ns,
            "write_amplification": p.write_amplification.total,
        })),
    })
}

/// Means and maxima over the cuts of a `random:N` series.
fn cuts_overview(cuts: &[Replayed]) -> serde_json::Value {
    let reports: Vec<_> = cuts.iter().filter_map(|c| c.report.power_cut.as_ref()).collect();
    let n = reports.len().max(1) as f64;
    let mean = |f: &dyn Fn(&ftlsim_core::sim::PowerCutReport) -> f64| reports.iter().map(|r| f(r)).sum::<f64>() / n;
    let max = |f: &dyn Fn(&ftlsim_core::sim::PowerCutReport) -> f64| reports.iter().map(|r| f(r)).fold(0.0, f64::max);
    let post: Vec<f64> =
        cuts.iter().filter_map(|c| c.post_recovery.as_ref()).map(|p| p.response_time.all.mean_ns as f64).collect();
    let post_mean: serde_json::Value =
        if post.is_empty() { serde_json::Value::Null } else { (post.iter().sum::<f64>() / post.len() as f64).into() };
    let mut torn = serde_json::Map::new();
    for r in &reports {
        let k = r.torn_operation.unwrap_or("none");
        let e = torn.entry(k).or_insert(0u64.into());
        *e = (e.as_u64().unwrap_or(0) + 1).into();
    }
    serde_json::json!({
        "cuts": reports.len(),
        "recovery_pages_read_ratio_mean": mean(&|r| r.recovery_pages_read_ratio),
        "recovery_pages_read_ratio_max": max(&|r| r.recovery_pages_read_ratio),
        "recovery_pages_read_mean": mean(&|r| r.recovery_pages_read as f64),
        "recovery_time_us_mean": mean(&|r| r.recovery_time_us),
        "recovery_time_us_max": max(&|r| r.recovery_time_us),
        "before_cut_mean_response_ns_mean": cuts.iter()
            .map(|c| c.report.response_time.all.mean_ns as f64).sum::<f64>() / n,
        "post_recovery_mean_response_ns_mean": post_mean,
        "lost_acknowledged_pages_total": reports.iter()
            .map(|r| r.lost_acknowledged_pages.write_buffer + r.lost_acknowledged_pages.merge_buffer)
            .sum::<u64>(),
        "torn_operations": torn,
    })
}

/// Run a planned spec: build the drive, precondition it (or load its snapshot), replay,
/// report; with `--power-cut`, cut, recover and go on (docs/power-loss.md).
pub fn execute(spec: &RunSpec, p: &RunPlan, obs: &mut dyn RunObserver) -> Result<Outcome, SimError> {
    if p.cfg.multichannel.is_some() {
        return channels::execute(spec, p, obs);
    }
    let started = std::time::Instant::now();
    let cut_at = match spec.power_cut {
        Some(PowerCut::At(at)) => Some(at),
        _ => None,
    };
    let (_, save) = spec.outputs(p)?;
    let mut r = replay(spec, p, &RunOptions { power_cut: cut_at, ..p.opts.clone() }, save.as_ref(), obs)?;
    let mut series = Vec::new();
    if let Some(PowerCut::Random(n)) = spec.power_cut {
        let times = random_cut_times(spec.seed, n, r.report.performance.simulated_time_ns);
        for (i, &t) in times.iter().enumerate() {
            obs.notice(&format!("power cut {} of {n} at {:.3} ms of simulated time", i + 1, t as f64 / 1e6));
            let opts = RunOptions { power_cut: Some(CutAt::TimeNs(t)), ..p.opts.clone() };
            series.push(replay(spec, p, &opts, None, obs)?);
        }
    }
    let requests = r.report.host.requests;
    let mut wall = wall_time_json(&r.wall, started.elapsed().as_secs_f64(), requests);
    wall["memory_estimate_bytes"] = r.memory_estimate.into();
    wall["peak_rss_bytes"] = memory::peak_rss_bytes().into();
    let mut json = result_json(p, spec.seed, r.precondition.clone(), &r.report, wall);
    if let Some(run) = &r.tenants_run {
        json["run"]["tenants"] = run.clone();
        json["run"]["arbitration"] = tenants::arbitration_json(p.opts.arbitration);
        json["run"]["workload"] = serde_json::Value::Null;
        json["run"]["workload_spec"] = serde_json::Value::Null;
        json["run"]["replay"] = serde_json::json!({ "tenants": { "device_queue_depth": p.cfg.host.queue_depth } });
    }
    if let Some(info) = &r.trace_info {
        json["run"]["trace"] = info.clone();
        json["run"]["workload"] = serde_json::Value::Null;
        json["run"]["workload_spec"] = serde_json::Value::Null;
    }
    match spec.power_cut {
        Some(PowerCut::At(at)) => {
            json["run"]["power_cut"] = serde_json::to_value(at).expect("cut serialises");
            json["run"]["power_cut_reached"] = r.report.power_cut.is_some().into();
            json["run"]["clean_shutdown"] = spec.clean_shutdown.into();
            if r.report.power_cut.is_none() {
                obs.notice("power cut: the run ended before the cut instant; nothing was cut");
            }
            json["post_recovery"] = serde_json::to_value(&r.post_recovery).expect("report serialises");
        }
        Some(PowerCut::Random(n)) => {
            json["run"]["power_cut"] = format!("random:{n}").into();
            json["run"]["clean_shutdown"] = spec.clean_shutdown.into();
            json["power_cuts"] = series.iter().map(cut_summary).collect();
            json["power_cuts_overview"] = cuts_overview(&series);
        }
        None => {}
    }
    Ok(Outcome { report: Some(r.report), json, snapshot: r.snapshot.take() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn power_cut_instants_parse_and_mistakes_name_the_flag() {
        assert_eq!(PowerCut::parse("5000").unwrap(), PowerCut::At(CutAt::Request(5000)));
        assert_eq!(PowerCut::parse("250ms").unwrap(), PowerCut::At(CutAt::TimeNs(250_000_000)));
        assert_eq!(PowerCut::parse("1.5s").unwrap(), PowerCut::At(CutAt::TimeNs(1_500_000_000)));
        assert_eq!(PowerCut::parse("random:7").unwrap(), PowerCut::Random(7));
        for bad in ["0", "random:0", "random:x", "12.5", "soon", ""] {
            let e = PowerCut::parse(bad).unwrap_err().to_string();
            assert!(e.contains("--power-cut"), "{bad}: {e}");
        }
    }

    #[test]
    fn random_cut_instants_are_seeded_and_inside_the_run() {
        let a = random_cut_times(3, 50, 1_000_000);
        assert_eq!(a, random_cut_times(3, 50, 1_000_000));
        assert_ne!(a, random_cut_times(4, 50, 1_000_000));
        assert!(a.iter().all(|&t| (1..1_000_000).contains(&t)));
    }
}
