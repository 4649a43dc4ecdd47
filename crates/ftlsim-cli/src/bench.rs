//! `ftlsim bench`: the standard benchmark of issue 2. The `default` preset with the page
//! FTL, filled and preconditioned to steady state, then 4 KiB uniform random requests, 70%
//! writes, closed loop at queue depth 32. Prints host requests per wall second of the
//! measured run (preconditioning excluded and timed apart), and peak RSS. `--ftls`: the
//! replay rate of every registered FTL on the same drive and workload, against DFTL's.

use clap::Args;
use ftlsim_core::error::{RequestError, SimError};
use ftlsim_core::metrics::NoObserver;
use ftlsim_core::sim::{Precondition, Replay, RunOptions};
use ftlsim_core::trace::{detect, parser, ParserOptions};
use ftlsim_core::workload::{Generator, WorkloadSpec};
use ftlsim_ftl::presets;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Arguments of `ftlsim bench`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Requests in the measured run.
    #[arg(long, default_value_t = 2_000_000)]
    requests: u64,
    /// Also measure the cost per request at 10^5, 10^6 and 10^7 requests.
    #[arg(long)]
    scaling: bool,
    /// Preset to benchmark.
    #[arg(long, default_value = "default")]
    preset: String,
    /// Instead: measure trace parsing throughput of every trace file in this directory.
    #[arg(long)]
    parse: Option<PathBuf>,
    /// Instead: replay rate of every FTL on the preset (filled, not preconditioned to
    /// steady state: a demand FTL takes minutes to get there), `--requests` requests each.
    #[arg(long, conflicts_with_all = ["scaling", "parse"])]
    ftls: bool,
    /// Also replay the same requests from this many tenants (each its share of them, of the
    /// queue depth and of the drive, round robin) and print the rate against one queue's.
    #[arg(long, value_name = "N", conflicts_with_all = ["scaling", "parse", "ftls"])]
    tenants: Option<u32>,
}

/// Replay rate of every registered FTL on `preset`: a full sequential fill, then `requests`
/// requests of the benchmark's workload; prints requests per wall second and the ratio to
/// DFTL's.
fn per_ftl(preset: &str, requests: u64) -> Result<(), SimError> {
    println!("{:<14} {:>9} {:>13} {:>9} {:>8} {:>9}", "ftl", "replay s", "requests/s", "vs dftl", "WAF", "sim IOPS");
    let mut rows = Vec::new();
    // A zoned namespace refuses the benchmark's random writes by design.
    for f in ftlsim_ftl::FTLS.iter().filter(|f| !f.capabilities.zoned) {
        let mut cfg = presets::load(preset)?;
        cfg.ftl.name = f.name.to_string();
        (f.capabilities.fit_drive)(&mut cfg);
        if f.capabilities.needs_reliability && cfg.reliability.is_none() {
            cfg.reliability = Some(Default::default());
        }
        let mut sim = ftlsim_ftl::simulator(cfg, false)?;
        sim.precondition(&Precondition { fill: 1.0, seed: 1, ..Precondition::default() })?;
        let spec = WorkloadSpec::parse(&format!("read=0.3,size=4k,qd=32,requests={requests}"))?;
        let mut gen = Generator::new(&spec, sim.derived().logical_bytes, 100)?.map(Ok);
        let opts = RunOptions { replay: Replay::Closed { queue_depth: 32 }, interval_ns: 0, ..RunOptions::default() };
        let t = Instant::now();
        let r = sim.run(&mut gen, &opts, &mut NoObserver)?;
        let secs = t.elapsed().as_secs_f64();
        rows.push((f.name, secs, r.host.requests as f64 / secs, r.write_amplification.total, r.performance.iops));
    }
    let dftl = rows.iter().find(|r| r.0 == "dftl").map_or(f64::NAN, |r| r.2);
    for (name, secs, rate, waf, iops) in rows {
        println!("{name:<14} {secs:>9.2} {rate:>13.0} {:>9.2} {waf:>8.2} {iops:>9.0}", rate / dftl);
    }
    Ok(())
}

/// Parse every trace in `dir` from memory (so disk speed does not count), repeated until
/// at least half a second has passed, and print lines per second per file and format.
fn parse_throughput(dir: &Path) -> Result<(), SimError> {
    let io = |e: std::io::Error| SimError::Input(format!("{}: {e}", dir.display()));
    let mut files: Vec<PathBuf> =
        std::fs::read_dir(dir).map_err(io)?.filter_map(|e| e.ok().map(|e| e.path())).collect();
    files.sort();
    println!("{:<36} {:<9} {:>9} {:>14}", "file", "format", "lines", "lines/s");
    for path in files {
        let Ok(format) = detect(&path, &ParserOptions::default()) else { continue };
        let text = std::fs::read_to_string(&path).map_err(io)?;
        let lines: Vec<&str> = text.lines().collect();
        let (mut passes, mut records) = (0u64, 0u64);
        let t = Instant::now();
        while t.elapsed().as_secs_f64() < 0.5 {
            let mut p = parser(format, &ParserOptions::default());
            for l in &lines {
                if let Ok(Some(r)) = p.parse(l) {
                    records += 1;
                    std::hint::black_box(r);
                }
            }
            passes += 1;
        }
        let secs = t.elapsed().as_secs_f64();
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        println!(
            "{:<36} {:<9} {:>9} {:>14.0}   ({} requests per pass)",
            name,
            format.name(),
            lines.len(),
            (passes * lines.len() as u64) as f64 / secs,
            records / passes
        );
    }
    Ok(())
}

/// The benchmark's requests from `n` tenants (issue 39): each a `1/n` share of the requests,
/// of the queue depth 32 and of the drive; the device holds 32 of them, round robin. Prints
/// and returns the replay rate.
fn tenants(sim: &mut ftlsim_core::sim::Simulator, n: u32, requests: u64) -> Result<f64, SimError> {
    use ftlsim_core::arbiter::PriorityClass;
    use ftlsim_core::sim::{Namespace, Tenant};
    if n == 0 || 32 % n != 0 {
        return Err(SimError::Input(format!("--tenants {n}: must divide the queue depth 32")));
    }
    let spp = sim.derived().logical_bytes / 512 / u64::from(sim.derived().logical_pages);
    let ns_pages = u64::from(sim.derived().logical_pages) / u64::from(n);
    let spec = WorkloadSpec::parse(&format!("read=0.3,size=4k,qd={},requests={}", 32 / n, requests / u64::from(n)))?;
    let mut tenants = Vec::new();
    let mut gens = Vec::new();
    for i in 0..u64::from(n) {
        let namespace = Namespace { first_sector: i * ns_pages * spp, sectors: ns_pages * spp };
        tenants.push(Tenant {
            name: format!("t{i}"),
            replay: Replay::Closed { queue_depth: 32 / n },
            class: PriorityClass::Medium,
            namespace,
            stop_after_ns: None,
            placement: ftlsim_core::sim::PlacementRule::Default,
        });
        gens.push(Generator::new(&spec, namespace.sectors * 512, 200 + i)?.map(Ok));
    }
    let mut sources: Vec<&mut dyn Iterator<Item = Result<ftlsim_core::host::Request, RequestError>>> =
        gens.iter_mut().map(|g| g as &mut dyn Iterator<Item = _>).collect();
    let opts = RunOptions { tenants, interval_ns: 0, ..RunOptions::default() };
    let t = Instant::now();
    let r = sim.run_tenants(&mut sources, &opts, &mut NoObserver)?;
    let secs = t.elapsed().as_secs_f64();
    let rate = r.host.requests as f64 / secs;
    println!(
        "tenants: {n} x {} requests in {:.2} s wall = {rate:.0} requests/s; WAF {:.3}, sim IOPS {:.0}",
        r.host.requests / u64::from(n),
        secs,
        r.write_amplification.total,
        r.performance.iops
    );
    Ok(rate)
}

/// Run the benchmark and print its figures.
pub fn run(a: &BenchArgs) -> Result<(), SimError> {
    if let Some(dir) = &a.parse {
        return parse_throughput(dir);
    }
    if a.ftls {
        return per_ftl(&a.preset, a.requests);
    }
    let cfg = presets::load(&a.preset)?;
    let t0 = Instant::now();
    let mut sim = ftlsim_ftl::simulator(cfg, false)?;
    let pre = sim.precondition(&Precondition { fill: 1.0, steady_state: true, seed: 1, ..Precondition::default() })?;
    let pre_s = t0.elapsed().as_secs_f64();
    println!(
        "precondition: {} fill + {} overwrite pages ({} passes) in {:.2} s ({:.1} M pages/s), settled={} at WAF {:.3}",
        pre.fill_pages,
        pre.overwrite_pages,
        pre.overwrite_passes,
        pre_s,
        (pre.fill_pages + pre.overwrite_pages) as f64 / pre_s / 1e6,
        pre.settled,
        pre.final_waf
    );
    let mut one_queue_rate = 0.0;
    let sizes: Vec<u64> = if a.scaling { vec![100_000, 1_000_000, 10_000_000] } else { vec![a.requests] };
    let opts = RunOptions { replay: Replay::Closed { queue_depth: 32 }, interval_ns: 0, ..RunOptions::default() };
    for (i, n) in sizes.iter().enumerate() {
        let spec = WorkloadSpec::parse(&format!("read=0.3,size=4k,qd=32,requests={n}"))?;
        let logical = sim.derived().logical_bytes;
        let mut gen = Generator::new(&spec, logical, 100 + i as u64)?.map(Ok);
        let t = Instant::now();
        let r = sim.run(&mut gen, &opts, &mut NoObserver)?;
        let secs = t.elapsed().as_secs_f64();
        one_queue_rate = r.host.requests as f64 / secs;
        println!(
            "run: {} requests in {:.2} s wall = {:.0} requests/s ({:.0} ns/request); WAF {:.3}, {} GC, sim IOPS {:.0}",
            r.host.requests,
            secs,
            r.host.requests as f64 / secs,
            secs * 1e9 / r.host.requests as f64,
            r.write_amplification.total,
            r.gc.collections,
            r.performance.iops
        );
        let f = &r.flash;
        let ops = f.reads.total + f.programs.total + f.copybacks.total + f.erases.total;
        println!(
            "flash: {ops} operations ({:.2} a request: {} reads, {} programs, {} copy-backs, {} erases) = {:.0} \
             flash operations/s",
            ops as f64 / r.host.requests as f64,
            f.reads.total,
            f.programs.total,
            f.copybacks.total,
            f.erases.total,
            ops as f64 / secs
        );
    }
    if let Some(n) = a.tenants {
        let rate = tenants(&mut sim, n, a.requests)?;
        // One queue again, after: the drive ages as it runs, so the tenants' rate is set
        // against the mean of one queue's before and after.
        let spec = WorkloadSpec::parse(&format!("read=0.3,size=4k,qd=32,requests={}", a.requests))?;
        let mut gen = Generator::new(&spec, sim.derived().logical_bytes, 300)?.map(Ok);
        let t = Instant::now();
        let r = sim.run(&mut gen, &opts, &mut NoObserver)?;
        let after = r.host.requests as f64 / t.elapsed().as_secs_f64();
        println!(
            "one queue again: {after:.0} requests/s; tenants / one queue (mean of before and after) = {:.2}",
            2.0 * rate / (one_queue_rate + after)
        );
    }
    match ftlsim_run::memory::peak_rss_bytes() {
        Some(b) => println!("peak RSS: {:.1} MB", b as f64 / 1e6),
        None => println!("peak RSS: unknown (no /proc/self/status)"),
    }
    Ok(())
}
