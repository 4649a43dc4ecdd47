//! `ftlsim._native`: the Rust core seen from Python. A thin layer (polars' habit, STYLE.md):
//! it turns keyword arguments into an [`ftlsim_run::RunSpec`], runs it with the GIL released,
//! and hands back plain Python objects; the friendly API (`ftlsim.run`, `Result`, `Config`,
//! `sweep`, `report`) is the Python package around it (python/ftlsim).

mod conversion;

use conversion::{json_to_py, parse_trace_options, rows_to_columns, to_py};
use ftlsim_core::config::DriveConfig;
use ftlsim_core::error::SimError;
use ftlsim_core::metrics::{IntervalRow, Observer};
use ftlsim_core::outputs::Outputs;
use ftlsim_requests::trace::{detect, stats, ParserOptions, RecordReader, TraceFormat};
use ftlsim_requests::workload::{impose_on_fit, parse_bytes, parse_duration_ns, WorkloadSpec};
use ftlsim_run::{Drive, RunObserver, RunSpec, Source};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::path::PathBuf;

create_exception!(ftlsim, FtlsimError, PyException, "Base class of every ftlsim error.");
create_exception!(
    ftlsim,
    ConfigError,
    FtlsimError,
    "A drive config that does not load or breaks a rule (`key` names it)."
);
create_exception!(ftlsim, WorkloadError, FtlsimError, "A workload spec or run option out of range (`key` names it).");
create_exception!(
    ftlsim,
    TraceError,
    FtlsimError,
    "A trace file or line that cannot be used (`file`, `line`, `field`)."
);
create_exception!(
    ftlsim,
    InputError,
    FtlsimError,
    "A bad request in a trace or generator, or a file or option that cannot be used."
);
create_exception!(ftlsim, SnapshotError, FtlsimError, "A drive snapshot that cannot be saved or loaded.");
create_exception!(
    ftlsim,
    SimulationError,
    FtlsimError,
    "The simulation failed: an FTL or flash-model bug, or an impossible drive."
);
create_exception!(
    ftlsim,
    InternalError,
    FtlsimError,
    "A bug in ftlsim: the Rust core panicked (a broken invariant). Raised in place of ending the interpreter; \
     please report it with the call that gave it."
);

/// Run `f`, a panic in it (a broken invariant: a bug) becoming `ftlsim.InternalError`. The
/// extension is built with unwinding (Cargo profile `release-py`), so the panic reaches here
/// instead of aborting the process, and a notebook's kernel survives it.
fn unwound<T>(f: impl FnOnce() -> T) -> PyResult<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|payload| {
        let msg = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".into());
        InternalError::new_err(format!(
            "internal error (a bug in ftlsim, not in your input; please report it with the call that gave it): {msg}"
        ))
    })
}

/// Reports progress to an optional Python callable, collects the time series and turns a
/// pending Ctrl-C into an interruption. Called with the GIL released: it takes the GIL only
/// at the core's progress points (every 65,536 requests or pages), which keeps the cost out
/// of the measured rate.
struct PyObserver {
    progress: Option<Py<PyAny>>,
    rows: Vec<IntervalRow>,
    /// The exception that stopped the run: a KeyboardInterrupt, or the progress callback's.
    error: Option<PyErr>,
    stage: &'static str,
    total: Option<u64>,
}

impl PyObserver {
    fn report(&mut self, done: u64, total: Option<u64>) {
        Python::attach(|py| {
            if let Err(e) = py.check_signals() {
                self.error.get_or_insert(e);
                return;
            }
            if let Some(cb) = &self.progress {
                if let Err(e) = cb.call1(py, (self.stage, done, total)) {
                    self.error.get_or_insert(e);
                }
            }
        });
    }
}

impl Observer for PyObserver {
    fn interval(&mut self, row: &IntervalRow) {
        self.rows.push(row.clone());
    }
    fn progress(&mut self, done: u64) {
        self.report(done, self.total);
    }
    fn precondition(&mut self, written: u64, most: u64) {
        self.report(written, Some(most));
    }
    fn interrupted(&mut self) -> bool {
        self.error.is_some()
    }
}

impl RunObserver for PyObserver {
    fn replay_begins(&mut self, total: Option<u64>) {
        self.stage = "replay";
        self.total = total;
        self.report(0, total);
    }
}

/// What `run` gives Python: results.json, the time series as columns, the config, and the
/// files the run read or wrote as (role, path), for the caller's output checks.
type RunReturn = (Py<PyAny>, Py<PyAny>, Py<PyAny>, Vec<(String, String)>);

/// Run one simulation; returns `(results, timeseries_columns, config, files)`: the results.json
/// document, the time series by column, the effective config, as Python objects, and the
/// files the run read or saved (`(role, path)`: what `Result.save` must not overwrite). The
/// snapshot `save_state` asks for replaces an existing file only once the run succeeded.
#[pyfunction]
#[pyo3(signature = (*, preset=None, config_toml=None, config_path=None, ftl=None, overrides=Vec::new(),
    workload=String::new(), trace=None, trace_options=None, seed=1, fill=None, fill_offset=0.0,
    steady_state=false, overwrite_span=0.0, trim_to=None, load_state=None, save_state=None, interval=String::from("100ms"), verify=false,
    max_memory=None, power_cut=None, clean_shutdown=true, tenants=Vec::new(), arbitration=None,
    progress=None))]
#[allow(clippy::too_many_arguments)]
fn run(
    py: Python<'_>,
    preset: Option<String>,
    config_toml: Option<String>,
    config_path: Option<PathBuf>,
    ftl: Option<String>,
    overrides: Vec<(String, String)>,
    workload: String,
    trace: Option<PathBuf>,
    trace_options: Option<Bound<'_, PyDict>>,
    seed: u64,
    fill: Option<f64>,
    fill_offset: f64,
    steady_state: bool,
    overwrite_span: f64,
    trim_to: Option<f64>,
    load_state: Option<PathBuf>,
    save_state: Option<PathBuf>,
    interval: String,
    verify: bool,
    max_memory: Option<String>,
    power_cut: Option<String>,
    clean_shutdown: bool,
    tenants: Vec<String>,
    arbitration: Option<String>,
    progress: Option<Py<PyAny>>,
) -> PyResult<RunReturn> {
    let drive = match (preset, config_toml, config_path) {
        (p, None, None) => Drive::Preset(p.unwrap_or_else(|| "default".into())),
        (None, Some(text), None) => {
            Drive::Config(Box::new(DriveConfig::from_toml(&text, "config").map_err(|e| to_py(py, e.into()))?))
        }
        (None, None, Some(path)) => Drive::File(path),
        _ => return Err(PyValueError::new_err("give one of preset, config (a Config or a TOML path)")),
    };
    if trace.is_none() && trace_options.as_ref().is_some_and(|d| !d.is_empty()) {
        return Err(PyValueError::new_err(
            "trace_options are a trace's replay options: give trace= with them (a workload would ignore them)",
        ));
    }
    let (options, qd) = parse_trace_options(py, trace_options.as_ref())?;
    let source = match trace {
        Some(path) => {
            if !workload.is_empty() {
                return Err(PyValueError::new_err("give workload or trace, not both"));
            }
            Source::Trace { path, options, qd }
        }
        None => Source::Synthetic(workload),
    };
    let max_memory = max_memory.map(|m| parse_bytes("max_memory", &m)).transpose().map_err(|e| to_py(py, e.into()))?;
    let interval_ns = parse_duration_ns("interval", &interval).map_err(|e| to_py(py, e.into()))?;
    let power_cut =
        power_cut.map(|c| ftlsim_run::PowerCut::parse_named("power_cut", &c)).transpose().map_err(|e| to_py(py, e))?;
    let spec = RunSpec {
        drive,
        sets: overrides,
        ftl,
        source,
        seed,
        fill,
        fill_offset,
        steady_state,
        overwrite_span,
        trim_to,
        load_state,
        save_state,
        interval_ns,
        verify,
        max_memory,
        power_cut,
        clean_shutdown,
        tenants: tenants
            .iter()
            .map(|t| ftlsim_run::TenantSpec::parse(t))
            .collect::<Result<_, _>>()
            .map_err(|e| to_py(py, e))?,
        arbitration: arbitration.as_deref().map(ftlsim_run::parse_arbitration).transpose().map_err(|e| to_py(py, e))?,
    };
    let plan = unwound(|| spec.plan())?.map_err(|e| to_py(py, e))?;
    let mut obs = PyObserver { progress, rows: Vec::new(), error: None, stage: "precondition", total: None };
    let outcome = py.detach(|| unwound(|| ftlsim_run::execute(&spec, &plan, &mut obs)))?;
    if let Some(e) = obs.error.take() {
        return Err(e);
    }
    let mut outcome = outcome.map_err(|e| to_py(py, e))?;
    outcome.commit().map_err(|e| to_py(py, e))?;
    let cfg = serde_json::to_value(plan.cfg.cfg()).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let mut files: Vec<(String, String)> = spec
        .inputs(&plan)
        .inputs()
        .map(|(role, path)| (role.to_string(), path.to_string_lossy().into_owned()))
        .collect();
    files.extend(spec.save_state.iter().map(|p| ("save_state".to_string(), p.to_string_lossy().into_owned())));
    Ok((json_to_py(py, &outcome.json)?, rows_to_columns(py, &obs.rows)?, json_to_py(py, &cfg)?, files))
}

/// The built-in presets: one dict each (name, geometry, capacities, source, config TOML).
#[pyfunction]
fn presets(py: Python<'_>) -> PyResult<Py<PyList>> {
    let out = PyList::empty(py);
    for name in ftlsim_ftl::presets::names() {
        let c = ftlsim_ftl::presets::load(&name)
            .and_then(ftlsim_core::config::Resolved::validate)
            .map_err(|e| to_py(py, e.into()))?;
        let d = c.derived();
        let g = &c.geometry;
        let item = PyDict::new(py);
        item.set_item("name", &name)?;
        item.set_item("channels", g.channels)?;
        item.set_item("chips_per_channel", g.chips_per_channel)?;
        item.set_item("dies_per_chip", g.dies_per_chip)?;
        item.set_item("planes", g.planes())?;
        item.set_item("blocks_per_plane", g.blocks_per_plane)?;
        item.set_item("pages_per_block", g.pages_per_block)?;
        item.set_item("page_size_bytes", g.page_size_bytes)?;
        item.set_item("raw_bytes", g.raw_bytes())?;
        item.set_item("logical_bytes", d.logical_bytes)?;
        item.set_item("ftl", &c.ftl.name)?;
        item.set_item("source", &c.source)?;
        out.append(item)?;
    }
    Ok(out.unbind())
}

/// The registered FTLs: name, description, source and capabilities.
#[pyfunction]
fn ftls(py: Python<'_>) -> PyResult<Py<PyList>> {
    let out = PyList::empty(py);
    for f in ftlsim_ftl::FTLS {
        let c = &f.capabilities;
        let item = PyDict::new(py);
        item.set_item("name", f.name)?;
        item.set_item("description", f.description)?;
        item.set_item("source", f.source)?;
        for (name, yes) in c.flags() {
            item.set_item(name, yes)?;
        }
        item.set_item("sections", c.sections.to_vec())?;
        let tracking: Vec<String> = c.invalid_tracking.iter().map(|t| format!("{t:?}").to_lowercase()).collect();
        item.set_item("invalid_tracking", tracking)?;
        out.append(item)?;
    }
    Ok(out.unbind())
}

/// The parts of the config `text` (resolved as a run resolves it) that shape a drive's
/// state, as JSON text: what a snapshot must match, so runs agreeing on it share one
/// (`ftlsim.sweep`'s snapshot key).
#[pyfunction]
fn state_shaping(py: Python<'_>, text: &str) -> PyResult<String> {
    let c = unwound(|| DriveConfig::from_toml(text, "config").and_then(ftlsim_ftl::resolve))?
        .map_err(|e| to_py(py, e.into()))?;
    Ok(ftlsim_core::sim::state_shaping(&c).to_string())
}

/// The keys a tenant takes besides its workload's (`--tenant`, docs/tenants.md).
#[pyfunction]
fn tenant_keys() -> Vec<&'static str> {
    ftlsim_run::tenants::TENANT_KEYS.to_vec()
}

/// A run's defaults as `RunSpec::default()` has them, by Python's argument names: what
/// `ftlsim.run` and `_native.run` must default to (python/tests/test_run_options.py).
#[pyfunction]
fn run_defaults(py: Python<'_>) -> PyResult<Py<PyAny>> {
    let d = RunSpec::default();
    let Drive::Preset(preset) = &d.drive else { unreachable!("the default run names a preset") };
    let v = serde_json::json!({
        "preset": preset,
        "seed": d.seed,
        "fill_offset": d.fill_offset,
        "steady_state": d.steady_state,
        "overwrite_span": d.overwrite_span,
        "interval_ns": d.interval_ns,
        "verify": d.verify,
        "clean_shutdown": d.clean_shutdown,
    });
    json_to_py(py, &v)
}

/// A preset's config as TOML text.
#[pyfunction]
fn preset_toml(py: Python<'_>, name: &str) -> PyResult<String> {
    let c = ftlsim_ftl::presets::load(name).map_err(|e| to_py(py, e.into()))?;
    toml::to_string(&c).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Validate TOML config text (with overrides applied) exactly as the CLI does, through the
/// FTL registry (its sections checked and completed); returns the complete config as TOML
/// (every default filled in) and as a dict.
#[pyfunction]
#[pyo3(signature = (text, origin="config", overrides=Vec::new()))]
fn check_config(
    py: Python<'_>,
    text: &str,
    origin: &str,
    overrides: Vec<(String, String)>,
) -> PyResult<(String, Py<PyAny>)> {
    let c = unwound(|| {
        DriveConfig::from_toml(text, origin).and_then(|c| c.with_overrides(&overrides, ftlsim_ftl::resolve))
    })?
    .map_err(|e| to_py(py, e.into()))?;
    let text = toml::to_string(c.cfg()).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let v = serde_json::to_value(c.cfg()).map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok((text, json_to_py(py, &v)?))
}

/// Statistics of a trace file (`ftlsim trace stats --json`).
#[pyfunction]
#[pyo3(signature = (path, format=None, page_size=4096, skip_bad_lines=false))]
fn trace_stats(
    py: Python<'_>,
    path: PathBuf,
    format: Option<String>,
    page_size: u32,
    skip_bad_lines: bool,
) -> PyResult<Py<PyAny>> {
    if page_size < 512 || !page_size.is_multiple_of(512) {
        return Err(PyValueError::new_err(format!("page_size = {page_size} must be a multiple of 512")));
    }
    let opts = ParserOptions::default();
    let v = py
        .detach(|| {
            unwound(|| -> Result<serde_json::Value, SimError> {
                let format = match &format {
                    Some(f) => f.parse::<TraceFormat>().map_err(SimError::Input)?,
                    None => detect(&path, &opts)?,
                };
                let reader = RecordReader::new(&path, format, &opts, skip_bad_lines)?;
                let s = stats(reader, page_size)?;
                let mut v = serde_json::to_value(&s).expect("stats serialise");
                v["format"] = format.name().into();
                v["units"] = format.units().into();
                Ok(v)
            })
        })?
        .map_err(|e| to_py(py, e))?;
    json_to_py(py, &v)
}

/// A trace's shape as a synthetic workload (`ftlsim trace fit`): the fitted TOML text and
/// the same as a dict; with `out`, the TOML is also written there (atomically, never over
/// the input trace).
#[pyfunction]
#[pyo3(signature = (path, extent_bytes=1 << 20, format=None, out=None, update_share=None, replay=None, capacity_bytes=None, seed=1))]
#[allow(clippy::too_many_arguments)]
fn trace_fit(
    py: Python<'_>,
    path: PathBuf,
    extent_bytes: u64,
    format: Option<String>,
    out: Option<PathBuf>,
    update_share: Option<f64>,
    replay: Option<String>,
    capacity_bytes: Option<u64>,
    seed: u64,
) -> PyResult<(String, Py<PyAny>)> {
    let given = [update_share.is_some(), replay.is_some(), capacity_bytes.is_some()];
    if given.iter().any(|&g| g) && !given.iter().all(|&g| g) {
        return Err(PyValueError::new_err(
            "update_share, replay and capacity_bytes go together (the share holds for that replay on that drive)",
        ));
    }
    if extent_bytes < 4096 || !extent_bytes.is_multiple_of(4096) {
        return Err(PyValueError::new_err(format!("extent_bytes = {extent_bytes} must be a multiple of 4096")));
    }
    let target = match &out {
        Some(out) => {
            let mut o = Outputs::new();
            o.input("input trace", &path);
            Some(o.file("out", out).map_err(|e| to_py(py, SimError::Input(e)))?)
        }
        None => None,
    };
    let opts = ParserOptions::default();
    let w = py
        .detach(|| {
            unwound(|| -> Result<ftlsim_requests::fitted::FittedWorkload, SimError> {
                let format = match &format {
                    Some(f) => f.parse::<TraceFormat>().map_err(SimError::Input)?,
                    None => detect(&path, &opts)?,
                };
                let reader = RecordReader::new(&path, format, &opts, false)?;
                let w = ftlsim_requests::fitted::fit(reader, &path.display().to_string(), extent_bytes)?;
                match (update_share, &replay, capacity_bytes) {
                    (Some(target), Some(replay), Some(capacity)) => {
                        let origin = out.as_ref().unwrap_or(&path).display().to_string();
                        let names = ("replay", "capacity_bytes");
                        Ok(impose_on_fit(&w, &origin, replay, capacity, target, seed, names)?)
                    }
                    _ => Ok(w),
                }
            })
        })?
        .map_err(|e| to_py(py, e))?;
    let text = toml::to_string(&w).map_err(|e| PyValueError::new_err(e.to_string()))?;
    if let Some(target) = &target {
        target
            .write(|f| f.write_all(text.as_bytes()))
            .and_then(|s| s.commit())
            .map_err(|e| to_py(py, SimError::Input(e)))?;
    }
    let v = serde_json::to_value(&w).map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok((text, json_to_py(py, &v)?))
}

/// A trace's temporal locality (`ftlsim trace locality --json`).
#[pyfunction]
#[pyo3(signature = (path, format=None))]
fn trace_locality(py: Python<'_>, path: PathBuf, format: Option<String>) -> PyResult<Py<PyAny>> {
    let opts = ParserOptions::default();
    let v = py
        .detach(|| {
            unwound(|| -> Result<serde_json::Value, SimError> {
                let format = match &format {
                    Some(f) => f.parse::<TraceFormat>().map_err(SimError::Input)?,
                    None => detect(&path, &opts)?,
                };
                let l = ftlsim_requests::locality::of_trace(RecordReader::new(&path, format, &opts, false)?)?;
                Ok(serde_json::to_value(l.report()).expect("locality serialises"))
            })
        })?
        .map_err(|e| to_py(py, e))?;
    json_to_py(py, &v)
}

/// The temporal locality of a synthetic workload's requests on a drive of `capacity_bytes`.
#[pyfunction]
#[pyo3(signature = (spec, capacity_bytes, seed=1))]
fn workload_locality(py: Python<'_>, spec: &str, capacity_bytes: u64, seed: u64) -> PyResult<Py<PyAny>> {
    let v = py
        .detach(|| {
            unwound(|| -> Result<serde_json::Value, SimError> {
                let spec = WorkloadSpec::parse(spec)?;
                let l = ftlsim_requests::workload::locality(&spec, capacity_bytes, seed)?;
                Ok(serde_json::to_value(l.report()).expect("locality serialises"))
            })
        })?
        .map_err(|e| to_py(py, e))?;
    json_to_py(py, &v)
}

/// A fitted shape replayed as long as its trace (or `requests`), against the trace's
/// locality the fit keeps: both, and their distance.
#[pyfunction]
#[pyo3(signature = (fit, requests=None, seed=1))]
fn fit_check(py: Python<'_>, fit: PathBuf, requests: Option<u64>, seed: u64) -> PyResult<Py<PyAny>> {
    let v = py
        .detach(|| {
            unwound(|| -> Result<serde_json::Value, SimError> {
                let origin = fit.display().to_string();
                let text = std::fs::read_to_string(&fit)
                    .map_err(|e| SimError::Input(format!("{origin}: cannot read the fitted workload: {e}")))?;
                let w = ftlsim_requests::fitted::FittedWorkload::from_toml(&text, &origin).map_err(SimError::Input)?;
                let n = requests.unwrap_or(w.requests);
                let replayed = w.replay_locality(n, seed);
                Ok(serde_json::json!({
                    "requests": n,
                    "seed": seed,
                    "trace": w.locality.report(),
                    "fit": replayed.report(),
                    "distance": w.locality.distance(&replayed),
                }))
            })
        })?
        .map_err(|e| to_py(py, e))?;
    json_to_py(py, &v)
}

/// Refuse outputs that would destroy an input or each other (ftlsim_core::outputs): each of
/// `outputs` (`(role, path)`) is a file a Python writer replaces whole, checked against
/// `inputs` and the outputs before it by identity. Raises `InputError` naming both.
#[pyfunction]
fn check_outputs(py: Python<'_>, inputs: Vec<(String, PathBuf)>, outputs: Vec<(String, PathBuf)>) -> PyResult<()> {
    let mut o = Outputs::new();
    for (role, path) in &inputs {
        o.input(role, path);
    }
    for (role, path) in &outputs {
        o.replaced(role, path).map_err(|e| to_py(py, SimError::Input(e)))?;
    }
    Ok(())
}

/// Panic with `message`, as a broken invariant in the core would: the test that a panic
/// becomes `ftlsim.InternalError` and the interpreter lives on (python/tests/test_errors.py).
#[pyfunction]
fn _panic_for_test(message: &str) -> PyResult<()> {
    unwound(|| panic!("{message}"))
}

/// The native module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(preset_toml, m)?)?;
    m.add_function(wrap_pyfunction!(ftls, m)?)?;
    m.add_function(wrap_pyfunction!(check_config, m)?)?;
    m.add_function(wrap_pyfunction!(trace_stats, m)?)?;
    m.add_function(wrap_pyfunction!(trace_fit, m)?)?;
    m.add_function(wrap_pyfunction!(trace_locality, m)?)?;
    m.add_function(wrap_pyfunction!(workload_locality, m)?)?;
    m.add_function(wrap_pyfunction!(fit_check, m)?)?;
    m.add_function(wrap_pyfunction!(check_outputs, m)?)?;
    m.add_function(wrap_pyfunction!(state_shaping, m)?)?;
    m.add_function(wrap_pyfunction!(tenant_keys, m)?)?;
    m.add_function(wrap_pyfunction!(run_defaults, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_test, m)?)?;
    m.add("FtlsimError", py.get_type::<FtlsimError>())?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("WorkloadError", py.get_type::<WorkloadError>())?;
    m.add("TraceError", py.get_type::<TraceError>())?;
    m.add("SnapshotError", py.get_type::<SnapshotError>())?;
    m.add("InputError", py.get_type::<InputError>())?;
    m.add("SimulationError", py.get_type::<SimulationError>())?;
    m.add("InternalError", py.get_type::<InternalError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
