//! `ftlsim`: run, list presets and FTLs, and benchmark the simulator.
//! Exit codes: 0 success, 1 bad input (config, workload, trace), 2 internal error.

mod bench;
mod compare;
mod output;
mod python_cmd;
mod trace_cmd;

use clap::{Args, Parser, Subcommand};
use ftlsim_core::error::SimError;
use ftlsim_core::outputs::{self, STAGING_PREFIX};
use ftlsim_core::sim::Report;
use ftlsim_core::workload::{parse_bytes, parse_duration_ns};
use ftlsim_ftl::presets;
use ftlsim_run::{Drive, Outcome, RunPlan, RunSpec, Source};
use std::path::Path;
use std::path::PathBuf;
use std::process::ExitCode;

/// A fast, deterministic NAND-flash SSD and FTL simulator.
#[derive(Parser, Debug)]
#[command(name = "ftlsim", version, about)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Simulate a drive under a workload and report metrics.
    Run(Box<RunArgs>),
    /// List the drive presets with their geometry and capacity.
    Presets,
    /// List the registered FTLs.
    Ftls,
    /// Run the standard performance benchmark (host requests per wall second, peak RSS).
    Bench(bench::BenchArgs),
    /// Inspect or convert block traces.
    #[command(subcommand)]
    Trace(trace_cmd::TraceCmd),
    /// Run several FTLs (`--ftl page,dftl,fast,block`) on the same drive and workload or
    /// traces (`--trace` repeatable) in parallel and compare them against a baseline.
    Compare(Box<compare::CompareArgs>),
    /// Run a parameter sweep described in TOML into a Parquet file, on a local process pool
    /// or a Dask cluster (`--scheduler ADDRESS`). Runs `python -m ftlsim sweep`: needs the
    /// Python package (`make python`).
    Sweep(python_cmd::PythonArgs),
    /// Write a self-contained HTML report with plots of run directories or sweep Parquet
    /// files (`-o report.html`). Runs `python -m ftlsim report`: needs the Python package.
    Report(python_cmd::PythonArgs),
}

/// Arguments of `ftlsim run`.
#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// Drive preset (`ftlsim presets` lists them).
    #[arg(long, default_value = "default", conflicts_with = "config")]
    preset: String,
    /// Drive config TOML file instead of a preset.
    #[arg(long)]
    config: Option<PathBuf>,
    /// FTL, overriding the config's `ftl.name` (`ftlsim ftls` lists them).
    #[arg(long)]
    ftl: Option<String>,
    /// Override one config key, e.g. `--set ftl.gc_victim=fifo` (repeatable; validated as the
    /// TOML file is; an empty value removes the key). Applied before `--ftl`.
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = parse_set)]
    sets: Vec<(String, String)>,
    /// Synthetic workload, e.g. `pattern=zipf:0.9,read=0.3,size=4k,qd=32,requests=1e5`.
    ///
    /// Keys: pattern (uniform | sequential | hotcold:T:S | zipf:THETA), read, trim, size
    /// (4k or 4k@0.7|64k@0.3), arrival (closed:QD | fixed:DUR | poisson:DUR), qd, requests,
    /// duration, span, align. Default: uniform 4 KiB, 30% reads, QD 32, 200,000 requests.
    #[arg(long, default_value = "", conflicts_with = "trace")]
    workload: String,
    /// Seed of the workload and preconditioning.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Share of the logical space filled sequentially before measuring [default: the
    /// config's precondition.fill, 1 unless the preset says otherwise]
    #[arg(long, allow_negative_numbers = true)]
    fill: Option<f64>,
    /// Share of the logical space, from its start, left unwritten before the fill begins
    /// (fill + fill-offset <= 1): the workload's region starts empty on an otherwise full drive.
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    fill_offset: f64,
    /// After the fill, overwrite randomly until write amplification settles.
    #[arg(long)]
    steady_state: bool,
    /// Share of the logical space, from its start, the steady-state overwrites address instead
    /// of the fill (with --fill-offset of the same share: a workload's region written by random
    /// writes and aged beside cold data) [default: 0, the fill]
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true, requires = "steady_state")]
    overwrite_span: f64,
    /// After the fill (and overwrites), trim written pages at random until this share of the
    /// logical space is valid: a drive written over, then freed by its file system (seed 001
    /// L1396's general case) [default: trim nothing]
    #[arg(long, allow_negative_numbers = true)]
    trim_to: Option<f64>,
    /// Save the drive after preconditioning to this file (a drive snapshot).
    ///
    /// The snapshot holds the flash and FTL state, the config and the preconditioning it
    /// came from; `--load-state` replaces preconditioning with it.
    #[arg(long, value_name = "FILE")]
    save_state: Option<PathBuf>,
    /// Load the drive from a snapshot instead of preconditioning it.
    ///
    /// The snapshot must come from the same geometry, over-provisioning, NAND and FTL
    /// settings; timing and host settings may differ. Default: precondition as asked.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["fill", "fill_offset", "steady_state", "overwrite_span", "trim_to", "save_state"])]
    load_state: Option<PathBuf>,
    /// Directory for results.json, timeseries.csv and config.toml.
    #[arg(long, default_value = "out")]
    out: PathBuf,
    /// Print the JSON report on stdout instead of the summary table.
    #[arg(long)]
    json: bool,
    /// Time-series interval in simulated time (e.g. 10ms; 0 = none).
    #[arg(long, default_value = "100ms")]
    interval: String,
    /// Check every read against a data oracle (costs memory and time).
    #[arg(long)]
    verify: bool,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
    /// Refuse a drive whose simulator memory estimate exceeds this (e.g. 2g); default: the
    /// memory the system has available.
    #[arg(long, value_name = "BYTES")]
    max_memory: Option<String>,
    /// Cut the power during the measured run, recover, and go on with the rest of the
    /// workload: AT is a request count (5000), a simulated time after the first request
    /// (250ms, 1.5s) or random:N (an uncut reference run, then N runs each cut at a seeded
    /// random instant). See docs/power-loss.md.
    #[arg(long, value_name = "AT")]
    power_cut: Option<String>,
    /// With --power-cut: cut the drive as preconditioning left it, instead of after a clean
    /// shutdown that writes the FTL's controller-only state (mapping cache) to flash.
    #[arg(long, requires = "power_cut")]
    no_clean_shutdown: bool,
    /// Starting wear of every block in P/E cycles, for the reliability model (seed 003 Table
    /// I): the same as `--set reliability.pe_cycles=N`, which turns the model on.
    #[arg(long, value_name = "N")]
    pe_cycles: Option<u32>,
    /// A tenant, like a fio job (repeatable; docs/tenants.md): its own keys name=, ns=
    /// (0..0.25 shares or 0..4GiB), class= (urgent|high|medium|low), seed=, with its workload's
    /// keys (`name=db,ns=0..0.5,pattern=uniform,read=1,qd=4`) or a trace
    /// (`name=v0,trace=t.csv,device=0,qd=8`, also format=, speed=).
    #[arg(long = "tenant", value_name = "SPEC", conflicts_with_all = ["workload", "trace"])]
    tenants: Vec<String>,
    /// How the controller picks among the tenants' queues: rr, rr:burst=4, or
    /// wrr:high=8,medium=4,low=1,burst=2 (urgent queues first) [default: rr]
    #[arg(long, value_name = "MECHANISM", requires = "tenants")]
    arbitration: Option<String>,
    #[command(flatten)]
    trace: trace_cmd::TraceArgs,
}

/// Parse a `--set KEY=VALUE`.
fn parse_set(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.trim().to_string())),
        _ => Err(format!("`{s}` is not KEY=VALUE (e.g. ftl.gc_victim=fifo)")),
    }
}

impl RunArgs {
    /// The run these arguments describe.
    pub fn spec(&self) -> Result<RunSpec, SimError> {
        if let Some(flag) = self.trace.given_without_trace() {
            return Err(SimError::Input(format!(
                "{flag} is a trace replay flag: give --trace FILE with it (a workload{} would ignore it)",
                if self.tenants.is_empty() { "" } else { " or tenants: their traces take trace options in --tenant" }
            )));
        }
        let source = match &self.trace.trace {
            Some(path) => Source::Trace { path: path.clone(), options: self.trace.options()?, qd: self.trace.qd },
            None => Source::Synthetic(self.workload.clone()),
        };
        Ok(RunSpec {
            drive: match &self.config {
                Some(p) => Drive::File(p.clone()),
                None => Drive::Preset(self.preset.clone()),
            },
            sets: self
                .sets
                .iter()
                .cloned()
                .chain(self.pe_cycles.map(|n| ("reliability.pe_cycles".to_string(), n.to_string())))
                .collect(),
            ftl: self.ftl.clone(),
            source,
            seed: self.seed,
            fill: self.fill,
            fill_offset: self.fill_offset,
            steady_state: self.steady_state,
            overwrite_span: self.overwrite_span,
            trim_to: self.trim_to,
            load_state: self.load_state.clone(),
            save_state: self.save_state.clone(),
            interval_ns: parse_duration_ns("--interval", &self.interval)?,
            verify: self.verify,
            max_memory: self.max_memory.as_deref().map(|m| parse_bytes("--max-memory", m)).transpose()?,
            power_cut: self.power_cut.as_deref().map(ftlsim_run::PowerCut::parse).transpose()?,
            clean_shutdown: !self.no_clean_shutdown,
            tenants: self.tenants.iter().map(|t| ftlsim_run::TenantSpec::parse(t)).collect::<Result<_, _>>()?,
            arbitration: self.arbitration.as_deref().map(ftlsim_run::parse_arbitration).transpose()?,
        })
    }
}

/// The spec and plan of `ftlsim run`'s arguments.
fn plan(a: &RunArgs) -> Result<(RunSpec, RunPlan), SimError> {
    let spec = a.spec()?;
    let plan = spec.plan()?;
    Ok((spec, plan))
}

/// Simulate one plan and write its result files under `out`, all of them or none: they are
/// written into a staging directory inside `out` and moved into place only when the run
/// succeeded, so a failed run leaves the previous results untouched, and so does the snapshot
/// `--save-state` asked for. No output may be an input or another output (by identity:
/// ftlsim_core::outputs). Returns the report and the result JSON.
fn simulate(
    spec: &RunSpec,
    p: &RunPlan,
    out: &Path,
    quiet: bool,
) -> Result<(Option<Report>, serde_json::Value), SimError> {
    let io = |what: &Path, e: std::io::Error| SimError::Input(format!("cannot write {}: {e}", what.display()));
    std::fs::create_dir_all(out).map_err(|e| io(out, e))?;
    let (mut outputs, _) = spec.outputs(p)?;
    for name in output::RESULT_FILES {
        outputs.replaced("--out", &out.join(name)).map_err(SimError::Input)?;
    }
    remove_stale_staging(out);
    // Removed with everything in it when dropped, i.e. on any error below.
    let prefix = format!("{STAGING_PREFIX}{}-", std::process::id());
    let staging = tempfile::Builder::new().prefix(&prefix).tempdir_in(out).map_err(|e| io(out, e))?;
    outputs::note_staging(staging.path());
    let simulated = simulate_into(spec, p, staging.path(), quiet);
    outputs::forget_staging(staging.path());
    let (report, json, mut outcome) = simulated?;
    outcome.commit()?;
    // results.json goes first and comes back last: while the files are being replaced there
    // is no results.json, so its presence always means a complete set.
    match std::fs::remove_file(out.join("results.json")) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(&out.join("results.json"), e)),
        _ => {}
    }
    for name in output::RESULT_FILES {
        let to = out.join(name);
        std::fs::rename(staging.path().join(name), &to).map_err(|e| io(&to, e))?;
    }
    Ok((report, json))
}

/// Remove staging directories that killed runs left in `out` (their cleanup never ran): those
/// whose process is gone, so that a run writing into the same directory is left alone. Best
/// effort: one that cannot be removed is left, and named.
fn remove_stale_staging(out: &Path) {
    let Ok(entries) = std::fs::read_dir(out) else { return };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name.strip_prefix(STAGING_PREFIX).and_then(|r| r.split('-').next()) else { continue };
        let alive = pid.parse::<u32>().is_ok_and(|p| Path::new("/proc").join(p.to_string()).exists());
        if !alive {
            let removed =
                if e.path().is_dir() { std::fs::remove_dir_all(e.path()) } else { std::fs::remove_file(e.path()) };
            if let Err(err) = removed {
                eprintln!("warning: cannot remove {}: {err}", e.path().display());
            }
        }
    }
}

/// [`simulate`] writing into `out` as it goes; the outcome keeps the staged snapshot.
fn simulate_into(
    spec: &RunSpec,
    p: &RunPlan,
    out: &Path,
    quiet: bool,
) -> Result<(Option<Report>, serde_json::Value, Outcome), SimError> {
    let mut obs = output::CliObserver::new(out, quiet).map_err(SimError::Input)?;
    let outcome = ftlsim_run::execute(spec, p, &mut obs);
    // The time series is complete only if the run is; its own write error comes first.
    obs.finish().map_err(SimError::Input)?;
    let mut outcome = outcome?;
    output::write_results(out, &p.cfg, &outcome.json).map_err(SimError::Input)?;
    let (report, json) = (outcome.report.take(), std::mem::take(&mut outcome.json));
    Ok((report, json, outcome))
}

fn run(a: &RunArgs) -> Result<(), SimError> {
    let (spec, p) = plan(a)?;
    let (report, json) = simulate(&spec, &p, &a.out, a.quiet)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&json).expect("report serialises"));
    } else {
        match &report {
            Some(r) => {
                print!("{}", output::summary_table(r, &json["wall_time"]));
                print!("{}", output::power_cut_summary(&json));
            }
            None => {
                print!("{}", output::channel_summary(&json));
                print!("{}", output::power_cut_summary(&json));
            }
        }
        println!("results: {}", a.out.join("results.json").display());
    }
    Ok(())
}

/// `ftlsim ftls`: every registered FTL with what it can do, by the names Python gives them
/// (`recovers`: `--power-cut`; `channel_unit`: a unit of a `[multichannel]` drive;
/// `needs_reliability`: needs `[reliability]`; `placement`: honours `[fdp]`; `zoned`: a zoned
/// namespace).
fn list_ftls() {
    for f in ftlsim_ftl::FTLS {
        let c = &f.capabilities;
        let can: Vec<&str> = c.flags().iter().filter(|(_, yes)| *yes).map(|(name, _)| *name).collect();
        let sections: Vec<String> = c.sections.iter().map(|s| format!("[ftl.{s}]")).collect();
        let sections = if sections.is_empty() { String::new() } else { format!("  options {}", sections.join(" ")) };
        println!("{:<14} {}  [{}]  ({}){sections}", f.name, f.description, f.source, can.join(", "));
    }
}

fn list_presets() {
    println!(
        "{:<10} {:>4} {:>5} {:>4} {:>6} {:>7} {:>6} {:>6} {:>10} {:>10}  source",
        "name", "ch", "chips", "dies", "planes", "blocks", "pages", "page", "raw", "logical"
    );
    for name in presets::names() {
        match presets::load(&name).and_then(ftlsim_core::config::Resolved::validate) {
            Ok(c) => {
                let g = &c.geometry;
                let d = c.derived();
                println!(
                    "{:<10} {:>4} {:>5} {:>4} {:>6} {:>7} {:>6} {:>6} {:>10} {:>10}  {}",
                    name,
                    g.channels,
                    g.chips_per_channel,
                    g.dies_per_chip,
                    g.planes(),
                    g.blocks_per_plane,
                    g.pages_per_block,
                    ftlsim_run::memory::bytes(u64::from(g.page_size_bytes)),
                    ftlsim_run::memory::bytes(g.raw_bytes()),
                    ftlsim_run::memory::bytes(d.logical_bytes),
                    c.source
                );
            }
            Err(e) => println!("{name:<10} invalid: {e}"),
        }
    }
}

/// The exit code of a subcommand run by Python.
fn python_exit(r: Result<u8, SimError>) -> ExitCode {
    match r {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

fn main() -> ExitCode {
    // A closed pipe (`ftlsim trace stats F | head`) ends the program quietly, as it does other
    // Unix tools, instead of a failed print aborting it: Rust ignores SIGPIPE by default.
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of one signal, before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // A panic is a broken invariant, a bug: it says so and exits 2 (internal error) rather
    // than aborting with a signal's code (the release profile aborts on panic, after this hook).
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        default_hook(info);
        // The process exits without destructors: its staged outputs go now, the files they
        // would have replaced stay as they were.
        outputs::remove_staging();
        eprintln!("ftlsim: internal error (a bug in ftlsim, not in your input): please report it with the command that gave it");
        std::process::exit(2);
    }));
    // Bad flags are bad input: exit 1 (clap's own convention would be 2, our internal error).
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 1 } else { 0 };
            // Printing can only fail if stdout/stderr are closed; the exit code still tells.
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let res = match &cli.cmd {
        Cmd::Run(a) => run(a),
        Cmd::Presets => {
            list_presets();
            Ok(())
        }
        Cmd::Ftls => {
            list_ftls();
            Ok(())
        }
        Cmd::Bench(b) => bench::run(b),
        Cmd::Trace(t) => trace_cmd::run(t),
        Cmd::Compare(c) => compare::run(c),
        Cmd::Sweep(a) => return python_exit(python_cmd::run("sweep", a)),
        Cmd::Report(a) => return python_exit(python_cmd::run("report", a)),
    };
    match res {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(if e.is_bad_input() { 1 } else { 2 })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("ftlsim").chain(args.iter().copied()))
    }

    #[test]
    fn run_flags_parse() {
        let c =
            parse(&["run", "--preset", "default", "--ftl", "page", "--workload", "read=0.5", "--seed", "9", "--json"])
                .unwrap();
        let Cmd::Run(a) = c.cmd else { panic!("not run") };
        assert_eq!((a.seed, a.json, a.ftl.as_deref()), (9, true, Some("page")));
        assert!(parse(&["run", "--preset", "a", "--config", "b.toml"]).is_err(), "preset and config conflict");
        assert!(parse(&["run", "--seed", "x"]).is_err());
    }

    #[test]
    fn compare_flags_parse() {
        let c =
            parse(&["compare", "--trace", "a.csv", "--trace", "b,c.csv", "--jobs", "3", "--baseline", "dftl"]).unwrap();
        let Cmd::Compare(a) = c.cmd else { panic!("not compare") };
        assert_eq!(a.traces, vec![PathBuf::from("a.csv"), PathBuf::from("b,c.csv")], "repeatable, no comma split");
        assert_eq!((a.jobs, a.baseline.as_str()), (Some(3), "dftl"));
        assert_eq!(a.run.trace.trace, Some(PathBuf::from("a.csv")));
        let c = parse(&["compare"]).unwrap();
        let Cmd::Compare(a) = c.cmd else { panic!("not compare") };
        assert_eq!((a.traces.len(), a.jobs, a.baseline.as_str()), (0, None, "page"));
        assert!(parse(&["compare", "--jobs", "0"]).is_err());
        assert!(parse(&["run", "--trace", "a", "--trace", "b"]).is_err(), "run takes one trace");
    }

    #[test]
    fn run_without_flags_is_runspec_default() {
        // Issue 59: a flag's default may not drift from RunSpec::default().
        let Cmd::Run(a) = parse(&["run"]).unwrap().cmd else { panic!("not run") };
        let (s, d) = (a.spec().unwrap(), RunSpec::default());
        assert!(matches!((&s.drive, &d.drive), (Drive::Preset(x), Drive::Preset(y)) if x == y));
        assert!(matches!((&s.source, &d.source), (Source::Synthetic(x), Source::Synthetic(y)) if x == y));
        assert_eq!(
            (s.seed, s.fill, s.fill_offset, s.steady_state, s.overwrite_span, s.trim_to),
            (d.seed, d.fill, d.fill_offset, d.steady_state, d.overwrite_span, d.trim_to)
        );
        assert_eq!(
            (s.interval_ns, s.verify, s.max_memory, s.power_cut, s.clean_shutdown, s.arbitration),
            (d.interval_ns, d.verify, d.max_memory, d.power_cut, d.clean_shutdown, d.arbitration)
        );
        assert!(s.sets.is_empty() && s.ftl.is_none() && s.tenants.is_empty());
    }

    #[test]
    fn plan_reports_bad_input_clearly() {
        let c = parse(&["run", "--ftl", "nope"]).unwrap();
        let Cmd::Run(a) = c.cmd else { panic!("not run") };
        let e = plan(&a).expect_err("unknown ftl must fail").to_string();
        assert!(e.contains("ftl.name") || e.contains("unknown"), "{e}");
        let c = parse(&["run", "--workload", "read=2"]).unwrap();
        let Cmd::Run(a) = c.cmd else { panic!("not run") };
        assert!(plan(&a).expect_err("bad spec").is_bad_input());
    }
}
