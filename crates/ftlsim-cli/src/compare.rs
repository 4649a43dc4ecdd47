//! `ftlsim compare`: several FTLs on the same drive, seed and request sources (the synthetic
//! workload, or one or more traces), normalised to a baseline FTL.
//!
//! Metric: the thesis's normalised average system response time NT = t_FTL / t_baseline for
//! the same drive and trace (seed 001, Eq. 4.3), summarised over traces by the geometric mean
//! of NT per FTL (Sec. 5.2.2, Fig. 5.10). The rows also carry the thesis's other metrics from
//! each run's report: cache hit ratio and the four cache-access classes (Sec. 4.1.1),
//! translation pages read and written, BU (Eq. 4.4), MR (Eq. 4.5), WAF, GC count and SRAM.
//!
//! Invariants: every (source, FTL) pair runs exactly once, on at most `--jobs` threads
//! (default: the machine's available parallelism); the rows come out in source-major,
//! `--ftl` order whatever order the threads finish in, so the files are deterministic.
//! Every source is checked (trace opened, format detected, footprint fitted) before any
//! simulation starts, so bad input fails in seconds rather than after a long run.
//!
//! Departure: the thesis averages over its full SPC and MSRC traces; compare averages over
//! whatever sources it is given, skipping a source whose baseline mean response time is 0
//! (NT undefined; its NT is null).

use crate::{plan, simulate, RunArgs};
use clap::{ArgAction, ArgMatches, Args, Command, FromArgMatches};
use ftlsim_core::error::{SimError, WorkloadError};
use ftlsim_core::metrics::r6;
use ftlsim_core::outputs::{write_file, Outputs};
use ftlsim_core::sim::Report;
use ftlsim_core::trace::TraceSource;
use ftlsim_run::{RunPlan, RunSpec};
use serde::Serialize;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// FTLs compared when `--ftl` is not given.
const DEFAULT_FTLS: &str = "page,dftl,fast,block";

/// Options of `ftlsim compare` beyond those of `ftlsim run`.
#[derive(Args, Debug, Clone)]
struct CompareOpts {
    /// FTL the others are normalised to (must be in --ftl).
    ///
    /// Default: page (the thesis's baseline PFTL, Eq. 4.3).
    #[arg(long, default_value = "page")]
    baseline: String,
    /// Simulations run at once (default: available cores).
    ///
    /// Default: std::thread::available_parallelism(), 1 if unknown. Each run holds a whole
    /// drive's state in memory, so lower this on a machine short of memory.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    jobs: Option<u32>,
}

/// Arguments of `ftlsim compare`: those of `ftlsim run`, with `--trace` repeatable.
///
/// `--trace` is defined once, in `trace_cmd::TraceArgs` (shared with `ftlsim run`, where it
/// takes one file). The derive macro cannot make a flattened argument repeatable, so this
/// type implements `Args` by hand: it builds `run`'s arguments, switches `--trace` to
/// `ArgAction::Append`, and reads every value before `RunArgs` keeps the first.
#[derive(Debug, Clone)]
pub struct CompareArgs {
    /// The run arguments; `run.trace.trace` is the first trace, if any.
    pub run: RunArgs,
    /// Every `--trace` in the order given (empty: the synthetic workload).
    pub traces: Vec<PathBuf>,
    /// FTL the others are normalised to.
    pub baseline: String,
    /// Simulations at once, if given.
    pub jobs: Option<u32>,
}

impl FromArgMatches for CompareArgs {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let traces = m.get_many::<PathBuf>("trace").map(|v| v.cloned().collect()).unwrap_or_default();
        let run = RunArgs::from_arg_matches(m)?;
        let o = CompareOpts::from_arg_matches(m)?;
        Ok(CompareArgs { run, traces, baseline: o.baseline, jobs: o.jobs })
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = CompareArgs::from_arg_matches(m)?;
        Ok(())
    }
}

impl Args for CompareArgs {
    fn augment_args(cmd: Command) -> Command {
        CompareOpts::augment_args(RunArgs::augment_args(cmd)).mut_arg("trace", |a| {
            a.action(ArgAction::Append)
                .help("Replay this trace; repeat --trace to compare over several traces.")
                .long_help(
                    "Replay this trace file (plain, .gz or .zst) instead of the synthetic workload. Repeat \
                     --trace to run every FTL on every trace: one table per trace plus the geometric mean of \
                     NT over the traces (thesis Sec. 5.2.2). The other trace flags apply to every trace. \
                     Default: none (the synthetic --workload).",
                )
        })
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        CompareArgs::augment_args(cmd)
    }
}

/// One request source of a comparison.
struct Source {
    /// Name in tables and file rows: the trace file name up to its first `.`, or `workload`.
    label: String,
    /// The trace, if not the synthetic workload.
    trace: Option<PathBuf>,
}

/// Short, unique labels for the sources.
fn sources(c: &CompareArgs) -> Result<Vec<Source>, SimError> {
    if c.traces.is_empty() {
        return Ok(vec![Source { label: "workload".into(), trace: None }]);
    }
    let mut out: Vec<Source> = Vec::with_capacity(c.traces.len());
    for t in &c.traces {
        let name = t.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let label = name.split('.').next().unwrap_or_default().to_string();
        if label.is_empty() {
            return Err(WorkloadError::new("--trace", t.display().to_string(), "expected a file name").into());
        }
        if let Some(prev) = out.iter().find(|s| s.label == label) {
            let prev = prev.trace.as_ref().expect("trace sources have a path").display();
            return Err(WorkloadError::new(
                "--trace",
                t.display().to_string(),
                format!("its label `{label}` (file name up to the first `.`) is also that of {prev}; rename one"),
            )
            .into());
        }
        out.push(Source { label, trace: Some(t.clone()) });
    }
    Ok(out)
}

/// Open each trace as a run would (format detection, layout pass, footprint check) so that
/// bad input fails before any simulation starts.
fn check_trace(path: &Path, spec: &RunSpec, p: &RunPlan) -> Result<(), SimError> {
    let ftlsim_run::Source::Trace { options: topts, .. } = &spec.source else { return Ok(()) };
    let d = p.cfg.derived();
    TraceSource::open(path, topts.clone(), d.logical_bytes / 512, p.cfg.geometry.sectors_per_page())?;
    Ok(())
}

/// One simulation of the comparison.
struct Job {
    /// Index into the sources.
    source: usize,
    /// FTL name.
    ftl: String,
    /// The resolved plan.
    plan: RunPlan,
    /// The run's own spec (`--ftl` and `--trace` set).
    spec: RunSpec,
    /// Where its results.json, timeseries.csv and config.toml go.
    out: PathBuf,
}

/// `ftlsim compare`: every FTL on every source, on at most `--jobs` threads, normalised to the
/// baseline; prints the tables and writes compare.csv, compare-summary.csv and compare.json.
pub fn run(c: &CompareArgs) -> Result<(), SimError> {
    let a = &c.run;
    let names = ftl_names(c)?;
    let srcs = sources(c)?;
    let jobs = plan_jobs(c, &srcs, &names)?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = c.jobs.map_or(cores, |j| j as usize).min(jobs.len()).max(1);
    // The runs in flight at once need their memory together.
    let mut largest = 0;
    for j in &jobs {
        largest = largest.max(ftlsim_ftl::memory_estimate(&j.plan.cfg, a.verify)?);
    }
    ftlsim_run::memory::check_need(
        largest * threads as u64,
        &format!("{threads} runs at once (--jobs)"),
        jobs[0].spec.max_memory,
    )?;
    let results = run_jobs(&jobs, &srcs, threads, a.quiet);
    // A failed run's directory must not show an earlier invocation's results as its own.
    for (j, r) in jobs.iter().zip(&results) {
        if r.is_err() {
            for name in crate::output::RESULT_FILES {
                let _ = std::fs::remove_file(j.out.join(name));
            }
        }
    }
    let table = compare_table(c, &srcs, &names, &jobs, &results);
    std::fs::create_dir_all(&a.out).map_err(|e| SimError::Input(format!("cannot create {}: {e}", a.out.display())))?;
    write_compare(&a.out, &table).map_err(SimError::Input)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&table).expect("table serialises"));
    } else {
        print!("{}", compare_text(&table));
        println!(
            "results: {}, {} and {}",
            a.out.join("compare.csv").display(),
            a.out.join("compare-summary.csv").display(),
            a.out.join("compare.json").display()
        );
    }
    // The tables list what ran; the exit code says that not everything did (1 if the first
    // failure is bad input, 2 if it is an internal error).
    match results.into_iter().find_map(Result::err) {
        Some(e) => {
            eprintln!(
                "{} of {} runs failed (marked in the tables and in compare.json)",
                table.failed.len(),
                jobs.len()
            );
            Err(e)
        }
        None => Ok(()),
    }
}

/// The FTLs of `--ftl`: registered, each once, the baseline among them.
fn ftl_names(c: &CompareArgs) -> Result<Vec<String>, SimError> {
    let names: Vec<String> =
        c.run.ftl.as_deref().unwrap_or(DEFAULT_FTLS).split(',').map(|s| s.trim().to_string()).collect();
    for n in &names {
        ftlsim_ftl::info(n)?;
        if names.iter().filter(|m| *m == n).count() > 1 {
            return Err(WorkloadError::new("--ftl", names.join(","), format!("lists `{n}` twice")).into());
        }
    }
    if !names.contains(&c.baseline) {
        return Err(WorkloadError::new(
            "--baseline",
            c.baseline.clone(),
            format!("must be one of --ftl {}", names.join(",")),
        )
        .into());
    }
    Ok(names)
}

/// One run per source and FTL, planned (and so validated) before any starts.
fn plan_jobs(c: &CompareArgs, srcs: &[Source], names: &[String]) -> Result<Vec<Job>, SimError> {
    let a = &c.run;
    let mut jobs: Vec<Job> = Vec::with_capacity(srcs.len() * names.len());
    for (si, s) in srcs.iter().enumerate() {
        for n in names {
            let mut one = a.clone();
            one.ftl = Some(n.clone());
            one.trace.trace = s.trace.clone();
            let (spec, p) = plan(&one)?;
            if p.cfg.multichannel.is_some() {
                return Err(SimError::Input(format!(
                    "compare: {} is a [multichannel] drive, whose channel systems are compared with `ftlsim run` \
                     or a Python sweep (docs/multichannel.md)",
                    p.cfg.name
                )));
            }
            if n == &names[0] {
                if let Some(t) = &s.trace {
                    check_trace(t, &spec, &p)?;
                }
            }
            // One source keeps the old layout OUT/<ftl>/; several get OUT/<label>/<ftl>/.
            let out = if srcs.len() == 1 { a.out.join(n) } else { a.out.join(&s.label).join(n) };
            jobs.push(Job { source: si, ftl: n.clone(), plan: p, spec, out });
        }
    }
    check_outputs(&a.out, &jobs)?;
    Ok(jobs)
}

/// Every output of the comparison (each run's result files and snapshot, the tables) against
/// every run's inputs and each other, before any run starts.
fn check_outputs(out: &Path, jobs: &[Job]) -> Result<(), SimError> {
    let mut o = Outputs::new();
    for j in jobs {
        o.inputs_of(&j.spec.inputs(&j.plan));
    }
    let claim = |o: &mut Outputs, role: &str, path: &Path| o.replaced(role, path).map(drop).map_err(SimError::Input);
    for j in jobs {
        if let Some(path) = &j.spec.save_state {
            o.file(&format!("--save-state (the {} run's)", j.ftl), path).map_err(SimError::Input)?;
        }
        for name in crate::output::RESULT_FILES {
            if j.out.is_dir() {
                claim(&mut o, "--out", &j.out.join(name))?;
            }
        }
    }
    if out.is_dir() {
        for name in COMPARE_FILES {
            claim(&mut o, "--out", &out.join(name))?;
        }
    }
    Ok(())
}

/// The tables `ftlsim compare` writes into `--out`.
const COMPARE_FILES: [&str; 4] = ["compare.csv", "compare-summary.csv", "compare-failed.csv", "compare.json"];

/// The comparison of the `results` of the `jobs`: rows normalised to the baseline per
/// source, the failed runs, and the summary over the sources where every FTL ran.
fn compare_table(
    c: &CompareArgs,
    srcs: &[Source],
    names: &[String],
    jobs: &[Job],
    results: &[JobResult],
) -> CompareTable {
    let rows: Vec<CompareRow> = srcs
        .iter()
        .enumerate()
        .flat_map(|(si, s)| {
            let of_source: Vec<(&str, &Report, &Value)> = jobs
                .iter()
                .zip(results)
                .filter(|(j, _)| j.source == si)
                .filter_map(|(j, r)| r.as_ref().ok().map(|(r, json)| (j.ftl.as_str(), r, json)))
                .collect();
            compare_rows(&s.label, &of_source, &c.baseline)
        })
        .collect();
    let failed: Vec<FailedRun> = jobs
        .iter()
        .zip(results)
        .filter_map(|(j, r)| {
            r.as_ref().err().map(|e| FailedRun {
                trace: srcs[j.source].label.clone(),
                ftl: j.ftl.clone(),
                error: e.to_string(),
            })
        })
        .collect();
    // NT is averaged only over the sources where every FTL ran, so that all FTLs are
    // averaged over the same traces.
    let complete: Vec<&str> = srcs
        .iter()
        .enumerate()
        .filter(|(si, _)| jobs.iter().zip(results).all(|(j, r)| j.source != *si || r.is_ok()))
        .map(|(_, s)| s.label.as_str())
        .collect();
    let summary = summarize(&rows, names, &complete);
    CompareTable {
        baseline: c.baseline.clone(),
        sources: srcs.iter().map(|s| s.label.clone()).collect(),
        rows,
        failed,
        summary,
    }
}

/// A run of the comparison: its report and results.json, or why it failed.
type JobResult = Result<(Report, Value), SimError>;

/// Run the jobs on `threads` workers, each taking the next unstarted job; returns each job's
/// report or error, in job order. A failed run does not stop the others.
fn run_jobs(jobs: &[Job], srcs: &[Source], threads: usize, quiet: bool) -> Vec<JobResult> {
    assert!(threads >= 1 && threads <= jobs.len(), "threads={threads} jobs={}", jobs.len());
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<Option<JobResult>>> = Mutex::new((0..jobs.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(j) = jobs.get(i) else { break };
                let started = std::time::Instant::now();
                let r = simulate(&j.spec, &j.plan, &j.out, true).and_then(|(r, json)| {
                    let r = r.ok_or_else(|| {
                        SimError::Input(
                            "compare: a [multichannel] drive is compared with `ftlsim run` or a Python sweep".into(),
                        )
                    })?;
                    Ok((r, json))
                });
                if !quiet {
                    let what = if r.is_ok() { "done" } else { "failed" };
                    let label = &srcs[j.source].label;
                    eprintln!("{label}/{}: {what} in {:.1} s", j.ftl, started.elapsed().as_secs_f64());
                }
                done.lock().expect("no worker panics while holding the lock")[i] = Some(r);
            });
        }
    });
    let done: Vec<JobResult> = done.into_inner().expect("workers joined").into_iter().flatten().collect();
    assert_eq!(done.len(), jobs.len(), "every job ran");
    done
}

/// A run of the comparison that failed: listed with its reason instead of a row.
#[derive(Debug, Clone, Serialize)]
pub struct FailedRun {
    /// Source label.
    pub trace: String,
    /// FTL.
    pub ftl: String,
    /// Why it failed (the error it stopped with).
    pub error: String,
}

/// One row of `ftlsim compare`: one FTL on one source.
#[derive(Debug, Clone, Serialize)]
pub struct CompareRow {
    /// Source label: the trace file name up to its first `.`, or `workload`.
    pub trace: String,
    /// FTL.
    pub ftl: String,
    /// Requests completed.
    pub requests: u64,
    /// Mean response time, us (thesis average system response time).
    pub mean_response_us: f64,
    /// NT = mean response / the baseline's on the same source (thesis Eq. 4.3); null if the
    /// baseline's mean is 0.
    pub normalized_response_time: Option<f64>,
    /// 99th-percentile response time, us.
    pub p99_response_us: f64,
    /// Requests per simulated second.
    pub iops: f64,
    /// Write amplification (all pages programmed / host pages written).
    pub waf: f64,
    /// GC collections (merges for FAST, rewrites for block).
    pub gc_collections: u64,
    /// Block utilisation BU (Eq. 4.4).
    pub block_utilization: f64,
    /// Valid page move rate MR (Eq. 4.5).
    pub valid_page_move_rate: f64,
    /// Mapping-cache accesses, if the FTL caches mappings.
    pub cache_accesses: Option<u64>,
    /// Hits / accesses (Eq. 4.1), if the FTL caches mappings.
    pub cache_hit_ratio: Option<f64>,
    /// Cache hits.
    pub cache_hits: Option<u64>,
    /// Misses needing no flash access (thesis class 2).
    pub cache_misses_no_penalty: Option<u64>,
    /// Misses that read one translation page (class 3).
    pub cache_misses_fetch: Option<u64>,
    /// Misses that wrote back a translation page (class 4).
    pub cache_misses_write_back: Option<u64>,
    /// Translation pages read.
    pub translation_pages_read: Option<u64>,
    /// Translation pages written.
    pub translation_pages_written: Option<u64>,
    /// Mapping SRAM, bytes (thesis Tables 5.2-5.3 "total without GC" for the cached FTLs).
    pub mapping_sram_bytes: u64,
    /// Power cuts in the run (`--power-cut`; null without): 1 for a cut at an instant (the
    /// columns above then cover the requests before it), N for `random:N` (the columns above
    /// cover the uncut reference run, the recovery columns are means over the cuts).
    pub power_cuts: Option<u64>,
    /// The cut instant, ns after the first request (a single cut; null if not reached).
    pub power_cut_at_ns: Option<u64>,
    /// Requests in flight at the cut, which fail (a single cut).
    pub requests_in_flight_at_cut: Option<u64>,
    /// Pages recovery read (mean over the cuts for `random:N`).
    pub recovery_pages_read: Option<f64>,
    /// Recovery pages read over all pages of the flash, RP (seed 001 Eq. 4.6; mean).
    pub recovery_pages_read_ratio: Option<f64>,
    /// From the cut until recovery ends, us (mean).
    pub recovery_time_us: Option<f64>,
    /// Acknowledged pages the cut lost (total over the cuts).
    pub lost_acknowledged_pages: Option<u64>,
    /// Mean response time of the requests after recovery, us (mean over the cuts).
    pub post_recovery_mean_response_us: Option<f64>,
    /// That mean over the baseline's (null where either is missing or 0).
    pub post_recovery_normalized_response_time: Option<f64>,
}

/// The power-cut columns of a row from its run's results.json (docs/power-loss.md).
struct CutColumns {
    cuts: u64,
    at_ns: Option<u64>,
    in_flight: Option<u64>,
    pages_read: Option<f64>,
    ratio: Option<f64>,
    time_us: Option<f64>,
    lost: Option<u64>,
    post_mean_us: Option<f64>,
}

fn cut_columns(json: &Value) -> Option<CutColumns> {
    let asked = &json["run"]["power_cut"];
    if asked.is_null() {
        return None;
    }
    if let Some(o) = json.get("power_cuts_overview") {
        return Some(CutColumns {
            cuts: o["cuts"].as_u64().unwrap_or(0),
            at_ns: None,
            in_flight: None,
            pages_read: o["recovery_pages_read_mean"].as_f64(),
            ratio: o["recovery_pages_read_ratio_mean"].as_f64(),
            time_us: o["recovery_time_us_mean"].as_f64(),
            lost: o["lost_acknowledged_pages_total"].as_u64(),
            post_mean_us: o["post_recovery_mean_response_ns_mean"].as_f64().map(|ns| r6(ns / 1e3)),
        });
    }
    let c = &json["report"]["power_cut"];
    let lost = &c["lost_acknowledged_pages"];
    Some(CutColumns {
        cuts: u64::from(!c.is_null()),
        at_ns: c["at_ns"].as_u64(),
        in_flight: c["requests_in_flight"].as_u64(),
        pages_read: c["recovery_pages_read"].as_f64(),
        ratio: c["recovery_pages_read_ratio"].as_f64(),
        time_us: c["recovery_time_us"].as_f64(),
        lost: lost["write_buffer"].as_u64().zip(lost["merge_buffer"].as_u64()).map(|(w, m)| w + m),
        post_mean_us: json["post_recovery"]["response_time"]["all"]["mean_ns"].as_f64().map(|ns| r6(ns / 1e3)),
    })
}

/// Per-FTL summary over the sources.
#[derive(Debug, Clone, Serialize)]
pub struct SummaryRow {
    /// FTL.
    pub ftl: String,
    /// Sources with a defined NT (those averaged).
    pub traces: usize,
    /// Geometric mean of NT over those sources (thesis Sec. 5.2.2, Fig. 5.10).
    pub nt_geomean: Option<f64>,
    /// Smallest NT.
    pub nt_min: Option<f64>,
    /// Largest NT.
    pub nt_max: Option<f64>,
    /// Arithmetic mean of the cache hit ratio over the sources, if the FTL caches mappings.
    pub cache_hit_ratio_mean: Option<f64>,
}

/// Everything `compare` writes to compare.json.
#[derive(Debug, Clone, Serialize)]
pub struct CompareTable {
    /// The baseline FTL.
    pub baseline: String,
    /// Source labels in order.
    pub sources: Vec<String>,
    /// One row per source x FTL that ran, source-major.
    pub rows: Vec<CompareRow>,
    /// The runs that failed, with their reasons.
    pub failed: Vec<FailedRun>,
    /// One row per FTL.
    pub summary: Vec<SummaryRow>,
}

fn metric(r: &Report, key: &str) -> Option<u64> {
    r.ftl_metrics.get(key).and_then(|v| v.as_u64())
}

/// Rows of one source normalised to `baseline` (each report with its run's results.json, for
/// the power-cut columns); NT is undefined (null) for every row when the baseline's run failed.
pub fn compare_rows(trace: &str, reports: &[(&str, &Report, &Value)], baseline: &str) -> Vec<CompareRow> {
    let of_baseline = reports.iter().find(|(n, ..)| *n == baseline);
    let base = of_baseline.map_or(0, |(_, r, _)| r.response_time.all.mean_ns);
    let base_post = of_baseline.and_then(|(.., json)| cut_columns(json)).and_then(|c| c.post_mean_us);
    reports
        .iter()
        .map(|(n, r, json)| (n, r, cut_columns(json)))
        .map(|(n, r, cut)| CompareRow {
            trace: trace.to_string(),
            ftl: n.to_string(),
            requests: r.host.requests,
            mean_response_us: r6(r.response_time.all.mean_ns as f64 / 1e3),
            normalized_response_time: (base > 0).then(|| r6(r.response_time.all.mean_ns as f64 / base as f64)),
            p99_response_us: r6(r.response_time.all.p99_ns as f64 / 1e3),
            iops: r.performance.iops,
            waf: r.write_amplification.total,
            gc_collections: r.gc.collections,
            block_utilization: r.gc.block_utilization,
            valid_page_move_rate: r.gc.valid_page_move_rate,
            cache_accesses: metric(r, "cache_accesses"),
            cache_hit_ratio: r.ftl_metrics.get("cache_hit_ratio").and_then(|v| v.as_f64()).map(r6),
            cache_hits: metric(r, "cache_hits"),
            cache_misses_no_penalty: metric(r, "cache_misses_no_penalty"),
            cache_misses_fetch: metric(r, "cache_misses_fetch"),
            cache_misses_write_back: metric(r, "cache_misses_write_back"),
            translation_pages_read: metric(r, "translation_pages_read"),
            translation_pages_written: metric(r, "translation_pages_written"),
            mapping_sram_bytes: r.mapping_sram_bytes,
            power_cuts: cut.as_ref().map(|c| c.cuts),
            power_cut_at_ns: cut.as_ref().and_then(|c| c.at_ns),
            requests_in_flight_at_cut: cut.as_ref().and_then(|c| c.in_flight),
            recovery_pages_read: cut.as_ref().and_then(|c| c.pages_read),
            recovery_pages_read_ratio: cut.as_ref().and_then(|c| c.ratio),
            recovery_time_us: cut.as_ref().and_then(|c| c.time_us),
            lost_acknowledged_pages: cut.as_ref().and_then(|c| c.lost),
            post_recovery_mean_response_us: cut.as_ref().and_then(|c| c.post_mean_us),
            post_recovery_normalized_response_time: cut
                .as_ref()
                .and_then(|c| c.post_mean_us)
                .zip(base_post)
                .filter(|&(_, b)| b > 0.0)
                .map(|(m, b)| r6(m / b)),
        })
        .collect()
}

/// Geometric mean of positive values; None if there are none.
pub fn geomean(xs: &[f64]) -> Option<f64> {
    assert!(xs.iter().all(|x| *x > 0.0 && x.is_finite()), "geomean of non-positive values {xs:?}");
    (!xs.is_empty()).then(|| (xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len() as f64).exp())
}

/// One summary row per FTL, in `names` order, over the sources in `complete` (those where
/// every FTL ran).
pub fn summarize(rows: &[CompareRow], names: &[String], complete: &[&str]) -> Vec<SummaryRow> {
    names
        .iter()
        .map(|n| {
            let mine: Vec<&CompareRow> =
                rows.iter().filter(|r| &r.ftl == n && complete.contains(&r.trace.as_str())).collect();
            // NT 0 means the FTL's own mean was 0 (no requests); leave it out like an undefined NT.
            let nts: Vec<f64> = mine.iter().filter_map(|r| r.normalized_response_time).filter(|x| *x > 0.0).collect();
            let hits: Vec<f64> = mine.iter().filter_map(|r| r.cache_hit_ratio).collect();
            SummaryRow {
                ftl: n.clone(),
                traces: nts.len(),
                nt_geomean: geomean(&nts).map(r6),
                nt_min: nts.iter().copied().reduce(f64::min),
                nt_max: nts.iter().copied().reduce(f64::max),
                cache_hit_ratio_mean: (!hits.is_empty()).then(|| r6(hits.iter().sum::<f64>() / hits.len() as f64)),
            }
        })
        .collect()
}

fn pct(part: Option<u64>, whole: Option<u64>) -> String {
    match (part, whole) {
        (Some(p), Some(w)) if w > 0 => format!("{:.1}%", p as f64 * 100.0 / w as f64),
        _ => "-".into(),
    }
}

fn opt<T: std::fmt::Display>(x: Option<T>) -> String {
    x.map_or("-".into(), |v| v.to_string())
}

fn nt(x: Option<f64>) -> String {
    x.map_or("-".into(), |v| format!("{v:.3}"))
}

/// The comparison as text: one table per source, then the summary if there are several.
pub fn compare_text(t: &CompareTable) -> String {
    let mut s = String::new();
    for src in &t.sources {
        if t.sources.len() > 1 {
            s += &format!("{src} (NT relative to {})\n", t.baseline);
        }
        s += &format!(
            "{:<8} {:>12} {:>8} {:>8} {:>7} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>8} {:>8} {:>10}\n",
            "ftl",
            "mean us",
            "NT",
            "WAF",
            "GCs",
            "BU",
            "MR",
            "hit",
            "miss0",
            "missR",
            "missW",
            "TP read",
            "TP writ",
            "SRAM"
        );
        for r in t.rows.iter().filter(|r| &r.trace == src) {
            s += &format!(
                "{:<8} {:>12.1} {:>8} {:>8.3} {:>7} {:>6.3} {:>6.3} {:>6} {:>6} {:>6} {:>6} {:>8} {:>8} {:>10}\n",
                r.ftl,
                r.mean_response_us,
                nt(r.normalized_response_time),
                r.waf,
                r.gc_collections,
                r.block_utilization,
                r.valid_page_move_rate,
                pct(r.cache_hits, r.cache_accesses),
                pct(r.cache_misses_no_penalty, r.cache_accesses),
                pct(r.cache_misses_fetch, r.cache_accesses),
                pct(r.cache_misses_write_back, r.cache_accesses),
                opt(r.translation_pages_read),
                opt(r.translation_pages_written),
                ftlsim_run::memory::bytes(r.mapping_sram_bytes)
            );
        }
        for f in t.failed.iter().filter(|f| &f.trace == src) {
            s += &format!("{:<8} FAILED: {}\n", f.ftl, f.error);
        }
        s += &cut_table(t.rows.iter().filter(|r| &r.trace == src));
        s += "\n";
    }
    if t.sources.len() > 1 {
        s += &format!("geometric mean of NT over {} traces (thesis Sec. 5.2.2)\n", t.sources.len());
        s += &format!(
            "{:<8} {:>7} {:>10} {:>8} {:>8} {:>9}\n",
            "ftl", "traces", "NT geomean", "NT min", "NT max", "mean hit"
        );
        for r in &t.summary {
            let hit = r.cache_hit_ratio_mean.map_or("-".into(), |h| format!("{:.1}%", h * 100.0));
            s += &format!(
                "{:<8} {:>7} {:>10} {:>8} {:>8} {:>9}\n",
                r.ftl,
                r.traces,
                nt(r.nt_geomean),
                nt(r.nt_min),
                nt(r.nt_max),
                hit
            );
        }
    }
    s
}

/// The power-cut table of one source's rows (empty without `--power-cut`).
fn cut_table<'a>(rows: impl Iterator<Item = &'a CompareRow>) -> String {
    let rows: Vec<&CompareRow> = rows.filter(|r| r.power_cuts.is_some()).collect();
    let Some(first) = rows.first() else { return String::new() };
    let f1 = |x: Option<f64>, scale: f64| x.map_or("-".into(), |v| format!("{:.1}", v * scale));
    let mut s = if first.power_cut_at_ns.is_some() || first.power_cuts == Some(0) {
        "power cut: the table above covers the requests before it; recovery and the run after it:\n".to_string()
    } else {
        format!(
            "power cuts: the table above is the uncut run; means over its {} cuts:\n",
            first.power_cuts.unwrap_or(0)
        )
    };
    s += &format!(
        "{:<8} {:>5} {:>12} {:>10} {:>8} {:>12} {:>10} {:>16} {:>8}\n",
        "ftl", "cuts", "cut at ms", "in flight", "RP %", "recovery ms", "lost ack", "after: mean us", "NT"
    );
    for r in &rows {
        s += &format!(
            "{:<8} {:>5} {:>12} {:>10} {:>8} {:>12} {:>10} {:>16} {:>8}\n",
            r.ftl,
            opt(r.power_cuts),
            r.power_cut_at_ns.map_or("-".into(), |ns| format!("{:.3}", ns as f64 / 1e6)),
            opt(r.requests_in_flight_at_cut),
            r.recovery_pages_read_ratio.map_or("-".into(), |x| format!("{:.2}", x * 100.0)),
            f1(r.recovery_time_us, 1e-3),
            opt(r.lost_acknowledged_pages),
            f1(r.post_recovery_mean_response_us, 1.0),
            nt(r.post_recovery_normalized_response_time)
        );
    }
    if rows.iter().any(|r| r.power_cuts == Some(0)) {
        s += "(cuts 0: the run ended before the cut instant; nothing was cut)\n";
    }
    s
}

/// Write `rows` as CSV, atomically; `header` is written when there are no rows (serde writes
/// it with the first row).
fn write_csv<T: Serialize>(path: &Path, rows: &[T], header: &[&str]) -> Result<(), String> {
    write_file("--out", path, |f| {
        let mut w = csv::Writer::from_writer(f);
        if rows.is_empty() {
            w.write_record(header).map_err(std::io::Error::other)?;
        }
        for r in rows {
            w.serialize(r).map_err(std::io::Error::other)?;
        }
        w.flush()
    })
}

/// Write compare.csv (one row per source x FTL that ran), compare-summary.csv (one row per
/// FTL), compare-failed.csv (one row per failed run) and compare.json (all of them, with the
/// baseline and the source labels), each atomically.
pub fn write_compare(out: &Path, t: &CompareTable) -> Result<(), String> {
    write_csv(&out.join("compare.csv"), &t.rows, &["trace", "ftl"])?;
    write_csv(&out.join("compare-summary.csv"), &t.summary, &["ftl"])?;
    write_csv(&out.join("compare-failed.csv"), &t.failed, &["trace", "ftl", "error"])?;
    let json = serde_json::to_string_pretty(t).expect("table serialises");
    write_file("--out", &out.join("compare.json"), |f| f.write_all(json.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geomean_of_known_values() {
        assert_eq!(geomean(&[]), None);
        let g = geomean(&[1.0, 4.0, 16.0]).unwrap();
        assert!((g - 4.0).abs() < 1e-12, "{g}");
    }

    #[test]
    #[should_panic(expected = "non-positive")]
    fn geomean_rejects_zero() {
        geomean(&[1.0, 0.0]);
    }
}
