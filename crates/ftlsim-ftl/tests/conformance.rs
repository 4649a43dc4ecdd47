//! The FTL contract (issue 32): every FTL the registry lists (`ftlsim_ftl::FTLS`) passes every
//! check here by being registered. Its drives come from its declared capabilities (the blocks
//! it keeps open, the invalid-tracking modes it supports, whether it needs the reliability
//! model), never from its name, so a new FTL needs no line in this file:
//! - the data oracle under random mixed workloads with heavy GC, several drives each
//!   (proptest; invariants checked along the run and at its end, the flash checked against
//!   the oracle: one valid copy of each live page, its newest, so a leak no read sees is
//!   caught; then every page read back);
//! - a real trace (Financial1) replayed with the oracle on a full drive;
//! - determinism: the same seed gives byte-identical results, another seed does not;
//! - snapshots: a loaded drive gives the results of preconditioning in the process;
//! - memory: the estimate's per-page terms cover the heap the FTL's run uses;
//! - power cuts: random cuts at any program, copy-back or erase, recovery from flash alone,
//!   the oracle after it and after more writes; and cuts in a measured run that then goes on;
//! - channel systems, for the FTLs that can be their units;
//! - the capabilities agree with what the FTL objects offer.
//!
//! Every registered FTL recovers. A deliberately broken FTL is caught (the last test).
//! `FTLSIM_CRASH_CASES=N` runs N power cuts per drive instead of the suite's few
//! (`make crash-test`); `FTLSIM_FTLS=a,b` checks only the FTLs named.

use crate::crash;
use crate::util;

use ftlsim_core::config::{DriveConfig, GcPreemption, InvalidTracking, PlaneConcurrency, Resolved, TransactionOrder};
use ftlsim_core::error::{ConfigError, SimError};
use ftlsim_core::flash::{FlashArray, PageKind};
use ftlsim_core::ftl::{FlashCtx, Ftl, GcCounts, PrefetchStage, SeriesValue};
use ftlsim_core::geometry::Lpn;
use ftlsim_core::host::IoOp;
use ftlsim_core::metrics::{NoObserver, RowCollector};
use ftlsim_core::sim::{CutAt, Precondition, Replay, Report, RunOptions, Simulator};
use ftlsim_core::trace::{Overflow, TraceOptions, TraceSource};
use ftlsim_core::workload::{Generator, WorkloadSpec};
use ftlsim_ftl::{Capabilities, FtlInfo, FTLS};
use proptest::prelude::*;
use proptest::test_runner::{Config as RunnerConfig, TestRunner};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use util::{drive_for, mix, read_all, zoned_stream, Mix};

// ---------------------------------------------------------------------------------------
// Heap accounting per thread, for the memory check: the simulation runs on the test's own
// thread, so its allocations are that thread's whatever other tests do meanwhile.

struct Counting;

thread_local! {
    static HEAP_NOW: Cell<i64> = const { Cell::new(0) };
    static HEAP_PEAK: Cell<i64> = const { Cell::new(0) };
}

fn account(delta: i64) {
    // `try_with`: allocations while the thread's locals are torn down go uncounted.
    let _ = HEAP_NOW.try_with(|now| {
        let n = now.get() + delta;
        now.set(n);
        let _ = HEAP_PEAK.try_with(|peak| peak.set(peak.get().max(n)));
    });
}

// SAFETY: every call is forwarded to the system allocator unchanged; the bookkeeping only
// touches thread-local cells, which never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        account(l.size() as i64);
        System.alloc(l)
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        account(l.size() as i64);
        System.alloc_zeroed(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        account(-(l.size() as i64));
        System.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        account(new as i64 - l.size() as i64);
        System.realloc(p, l, new)
    }
}

#[global_allocator]
static HEAP: Counting = Counting;

/// The heap this thread uses at its peak while `f` runs, above what it held before, bytes.
fn heap_peak_of<T>(f: impl FnOnce() -> T) -> (T, i64) {
    let start = HEAP_NOW.with(Cell::get);
    HEAP_PEAK.with(|p| p.set(start));
    let out = f();
    (out, HEAP_PEAK.with(Cell::get) - start)
}

// ---------------------------------------------------------------------------------------
// The FTLs and their drives.

/// The registered FTLs whose capabilities pass `keep` (only those `FTLSIM_FTLS` names, a
/// comma-separated list, when it is set: to check one FTL while writing it), zoned ones
/// included: for the checks that run no host workload (capabilities, recovery).
fn every_registered(keep: impl Fn(&Capabilities) -> bool) -> Vec<&'static FtlInfo> {
    let only = std::env::var("FTLSIM_FTLS").ok();
    let named = |f: &FtlInfo| only.as_deref().is_none_or(|o| o.split(',').any(|n| n.trim() == f.name));
    FTLS.iter().filter(|f| keep(&f.capabilities) && named(f)).collect()
}

/// [`every_registered`] but the zoned: a zoned namespace refuses the contract's random
/// writes by design (tests/zns.rs is its contract, and the cut test below its own).
fn registered(keep: impl Fn(&Capabilities) -> bool) -> Vec<&'static FtlInfo> {
    every_registered(|c| !c.zoned && keep(c))
}

/// Run `check` on every FTL of `ftls`, gathering the failures: one failing FTL does not hide
/// another's.
fn each(ftls: &[&FtlInfo], mut check: impl FnMut(&FtlInfo) -> Result<(), String>) {
    let failures: Vec<String> =
        ftls.iter().filter_map(|f| check(f).err().map(|e| format!("{}: {e}", f.name))).collect();
    assert!(failures.is_empty(), "{} of {} FTLs failed:\n{}", failures.len(), ftls.len(), failures.join("\n"));
}

/// A mapping cache a few hundred entries or one translation page large, for FTLs that have
/// one: translation pages written back all along.
fn small_cache(f: &FtlInfo) -> &'static str {
    if f.bytes_per_cache_byte > 0 {
        "mapping_cache_bytes = 4360\n"
    } else {
        ""
    }
}

/// The drives an FTL is checked on, by label, from its capabilities: its defaults; a small
/// mapping cache with copy-back and idle-time GC; each other way of tracking invalid pages
/// it supports (ILog with a 10-BIF queue); copy-back under the same-parity rule unless its GC
/// may never end under that rule.
fn variants(f: &FtlInfo) -> Vec<(String, DriveConfig)> {
    let cache = small_cache(f);
    let mut out = vec![
        ("defaults".to_string(), drive_for(f, 32, 16, "")),
        (
            "small cache, copy-back, idle-time GC".into(),
            drive_for(
                f,
                32,
                16,
                &format!("{cache}gc_copy = \"copyback\"\nbackground_gc = true\nidle_threshold_ns = 1\n"),
            ),
        ),
    ];
    for &t in f.capabilities.invalid_tracking.iter().filter(|&&t| t != InvalidTracking::Flags) {
        let (name, ilog) = match t {
            InvalidTracking::Ilog => ("ilog", "[ftl.ilog]\nbifq_bytes = 350\n"),
            _ => ("counters", ""),
        };
        out.push((
            format!("invalid_tracking = {name}"),
            drive_for(f, 32, 16, &format!("{cache}invalid_tracking = \"{name}\"\n{ilog}")),
        ));
    }
    out.extend(scheduling_modes(f, &drive_for(f, 32, 16, cache)).into_iter().skip(1));
    if !f.capabilities.never_ending_gc {
        out.push((
            "same-parity copy-back".into(),
            drive_for(f, 32, 16, &format!("{cache}gc_copy = \"copyback\"\n[nand]\ncopyback_same_parity = true\n")),
        ));
    }
    out
}

/// `cfg` under each way of ordering flash work the scheduler has, by label, `cfg` itself
/// (first come, first served) first: reading first (issue 40: a request's programs and erases
/// wait in their planes' queues, reads overtake them, queued work of a die's planes becomes
/// multi-plane commands); GC preempted by reads; and host writes ahead of GC while a plane
/// keeps an erased block (`gc_preemption = "writes"`, MQSim's preemptible GC), reading first
/// as MQSim runs it. WAFTL refuses GC preemption (its migration copies across planes).
fn scheduling_modes(f: &FtlInfo, cfg: &DriveConfig) -> Vec<(String, DriveConfig)> {
    let mut read_first = cfg.clone();
    read_first.timing.transaction_order = TransactionOrder::ReadFirst;
    read_first.timing.plane_concurrency = PlaneConcurrency::MultiPlaneOnly;
    read_first.timing.multi_plane = true;
    let mut gc_behind_reads = cfg.clone();
    gc_behind_reads.ftl.gc_preemption = GcPreemption::Reads;
    let mut writes_first = read_first.clone();
    writes_first.ftl.gc_preemption = GcPreemption::Writes;
    let mut out = vec![("first come, first served".to_string(), cfg.clone())];
    for (label, c) in [("GC preempted by reads", gc_behind_reads), ("host writes ahead of GC", writes_first)] {
        match simulator(f, &c, false) {
            Err(e) if f.name == "waftl" => assert!(e.contains("ftl.gc_preemption"), "waftl: {e}"),
            _ => out.push((label.into(), c)),
        }
    }
    out.push(("reading first".into(), read_first));
    out
}

/// A simulator of `f` (its constructor, not its registered name's) on `cfg`.
fn simulator(f: &FtlInfo, cfg: &DriveConfig, verify: bool) -> Result<Simulator, String> {
    let cfg = ftlsim_ftl::resolve(cfg.clone()).map_err(|e| e.to_string())?;
    let ftl = (f.build)(&cfg).map_err(|e| e.to_string())?;
    Simulator::new(cfg, ftl, verify).map_err(|e| e.to_string())
}

/// The data oracle under `m` (`util::oracle_on`): precondition, `requests` mixed requests
/// checked read by read with the invariants every 61 requests and at the end, every page
/// read back.
fn oracle(f: &FtlInfo, cfg: &DriveConfig, m: &Mix, requests: u64) -> Result<Report, String> {
    let (sim, r) = util::oracle_on(simulator(f, cfg, true)?, m, requests)?;
    // The flash holds one valid copy of each live page, its newest, whatever the FTL checks.
    sim.check_flash_against_oracle(f.capabilities.superseded_valid)?;
    Ok(r)
}

/// Random mixes on every drive of `f`: `cases` proptest cases per drive, the failing case
/// shrunk and named.
fn oracle_everywhere(f: &FtlInfo, cases: u32) -> Result<(), String> {
    for (label, cfg) in variants(f) {
        let mut runner = TestRunner::new(RunnerConfig { cases, failure_persistence: None, ..RunnerConfig::default() });
        runner
            .run(&mix(), |m| oracle(f, &cfg, &m, 1500).map(drop).map_err(TestCaseError::fail))
            .map_err(|e| format!("drive \"{label}\": {e}"))?;
    }
    Ok(())
}

#[test]
fn every_ftl_keeps_the_data_oracle_under_heavy_gc_on_every_drive() {
    each(&registered(|_| true), |f| oracle_everywhere(f, 6));
}

#[test]
fn every_ftl_replays_a_real_trace_with_the_oracle_on_a_full_drive() {
    let Some(trace) = ftlsim_core::trace::samples::find_or_say("financial1-first10k.ssdsim.ascii") else { return };
    each(&registered(|_| true), |f| {
        let mut cfg = drive_for(f, 64, 32, small_cache(f));
        cfg.host.queue_depth = 8;
        let mut sim = simulator(f, &cfg, true)?;
        sim.precondition(&Precondition { fill: 1.0, ..Precondition::default() }).map_err(|e| e.to_string())?;
        let opts = TraceOptions { overflow: Overflow::Wrap, repeat: 3, ..TraceOptions::default() };
        let mut src =
            TraceSource::open(&trace, opts, sim.derived().logical_bytes / 512, 8).map_err(|e| e.to_string())?;
        let run = RunOptions {
            replay: Replay::Closed { queue_depth: 8 },
            interval_ns: 0,
            check_every: 997,
            ..RunOptions::default()
        };
        let r = sim.run(&mut src, &run, &mut NoObserver).map_err(|e| e.to_string())?;
        if r.host.requests != 30_000 || r.gc.collections < 50 {
            return Err(format!(
                "{} requests, {} collections: not the full, collecting run",
                r.host.requests, r.gc.collections
            ));
        }
        sim.check_invariants();
        let back = RunOptions { replay: Replay::Closed { queue_depth: 4 }, interval_ns: 0, ..RunOptions::default() };
        sim.run(&mut read_all(sim.derived().logical_pages), &back, &mut NoObserver).map_err(|e| e.to_string())?;
        Ok(())
    });
}

/// Precondition `f` on `cfg` to steady state with `seed`.
fn preconditioned(f: &FtlInfo, cfg: &DriveConfig, seed: u64, verify: bool) -> Result<Simulator, String> {
    let mut sim = simulator(f, cfg, verify)?;
    let pre =
        Precondition { fill: 0.9, steady_state: true, max_overwrite_passes: 2.0, seed, ..Precondition::default() };
    sim.precondition(&pre).map_err(|e| e.to_string())?;
    Ok(sim)
}

/// A measured run with idle time (background GC) and a time series: its report and rows as
/// text.
fn measured(sim: &mut Simulator, seed: u64) -> Result<String, String> {
    let spec =
        WorkloadSpec::parse("pattern=zipf:0.8,read=0.4,trim=0.02,size=4k|16k,arrival=poisson:500us,requests=2500")
            .map_err(|e| e.to_string())?;
    let mut gen = Generator::new(&spec, sim.derived().logical_bytes, seed).map_err(|e| e.to_string())?.map(Ok);
    let opts =
        RunOptions { replay: Replay::Open { time_scale: 1.0 }, interval_ns: 20_000_000, ..RunOptions::default() };
    let mut rows = RowCollector::default();
    let r = sim.run(&mut gen, &opts, &mut rows).map_err(|e| e.to_string())?;
    Ok(serde_json::to_string(&r).expect("reports serialise") + &format!("{:?}", rows.rows))
}

#[test]
fn every_ftl_gives_identical_results_for_identical_inputs() {
    each(&registered(|_| true), |f| {
        let cfg = drive_for(f, 32, 16, "background_gc = true\nidle_threshold_ns = 200000\n");
        let run = |seed| preconditioned(f, &cfg, seed, false).and_then(|mut s| measured(&mut s, seed));
        let (a, b, c) = (run(11)?, run(11)?, run(12)?);
        if a != b {
            return Err("two runs of the same config, workload and seed differ".into());
        }
        if a == c {
            return Err("another seed gave the same run".into());
        }
        Ok(())
    });
}

#[test]
fn every_ftl_resumes_from_a_snapshot_as_from_its_preconditioning() {
    let dir = tempfile::tempdir().unwrap();
    each(&registered(|_| true), |f| {
        let cfg = drive_for(f, 48, 16, "");
        let mut original = preconditioned(f, &cfg, 4, true)?;
        let path = dir.path().join(format!("{}.snap", f.name));
        original.save_state(&path, serde_json::json!({ "seed": 4 })).map_err(|e| e.to_string())?;
        let expected = measured(&mut original, 21)?;
        let mut loaded = simulator(f, &cfg, true)?;
        loaded.load_state(&path).map_err(|e| e.to_string())?;
        let got = measured(&mut loaded, 21)?;
        loaded.check_invariants();
        if got != expected {
            return Err("results after loading the snapshot differ from the original drive's".into());
        }
        Ok(())
    });
}

/// The heap a run of `f` on a drive of `blocks` blocks of 64 pages per plane uses at its peak,
/// and the memory estimate of the drive, bytes.
fn heap_and_estimate(f: &FtlInfo, blocks: u32) -> Result<(i64, i64), String> {
    let cfg = drive_for(f, blocks, 64, "");
    let estimate = ftlsim_ftl::memory_estimate(&util::resolved(&cfg), true).map_err(|e| e.to_string())?;
    let (run, peak) = heap_peak_of(|| -> Result<(), String> {
        let mut sim = simulator(f, &cfg, true)?;
        sim.precondition(&Precondition { fill: 1.0, ..Precondition::default() }).map_err(|e| e.to_string())?;
        measured(&mut sim, 3).map(drop)
    });
    run?;
    Ok((peak, estimate as i64))
}

#[test]
fn every_ftl_stays_within_its_memory_estimate() {
    // The estimate is per-page terms plus a fixed 16 MiB (program, histograms, I/O buffers):
    // the heap of a run stays below it, and grows with the drive no faster than its per-page
    // terms (two drives, 65,536 and 131,072 pages: the fixed costs cancel in the difference).
    // What the run's timing sizes (the channel buses' booked intervals, queues) does not
    // cancel exactly: up to `TIMING_SLACK` of the difference is theirs. (FAST's merges book
    // bus time far ahead: its two runs' peaks, 2,790,411 and 3,908,683 bytes, are 9 KB apart
    // beyond its per-page terms; with the buses of before, 2,800,459 and 3,906,443, 3 KB
    // inside them.)
    const TIMING_SLACK: f64 = 64.0 * 1024.0;
    each(&registered(|_| true), |f| {
        let (small_heap, small_estimate) = heap_and_estimate(f, 256)?;
        let (heap, estimate) = heap_and_estimate(f, 512)?;
        if heap > estimate {
            return Err(format!("the run's heap peaked at {heap} bytes, above the estimate of {estimate}"));
        }
        let pages = 65_536.0;
        let grew = (heap - small_heap) as f64 / pages;
        let allowed = ((estimate - small_estimate) as f64 + TIMING_SLACK) / pages;
        if grew > allowed {
            return Err(format!(
                "the heap grows by {grew:.2} bytes per physical page, the estimate by {allowed:.2} with {} KiB for the run's timing (peaks {small_heap} \
                 and {heap} bytes)",
                TIMING_SLACK / 1024.0
            ));
        }
        Ok(())
    });
}

// ---------------------------------------------------------------------------------------
// Power cuts.
/// Cut every drive of `f` at random mutations (`crash::cut_drive`), an ILog page torn too
/// where the drive has ILog.
fn cut_everywhere(f: &FtlInfo) -> Result<(), String> {
    for (k, (label, cfg)) in variants(f).into_iter().enumerate() {
        let kinds: &[PageKind] = if label.contains("ilog") { &[PageKind::Log] } else { &[] };
        crash::cut_drive(f, k, &label, &cfg, kinds)?;
    }
    Ok(())
}

#[test]
fn every_ftl_recovers_every_acknowledged_write_from_a_cut_anywhere() {
    each(&registered(|c| c.recovers), cut_everywhere);
}

#[test]
fn every_ftl_recovers() {
    let not: Vec<&str> = every_registered(|c| !c.recovers).iter().map(|f| f.name).collect();
    assert!(not.is_empty(), "every registered FTL recovers from a power cut; these do not: {not:?}");
}

/// Cuts in a measured run of `f` on `cfg` at three instants, each followed by recovery, the
/// oracle over every page and the rest of the workload; returns the queued operations the
/// cuts dropped (work waiting behind reads or preempted GC that never ran).
fn cut_measured_runs(f: &FtlInfo, cfg: &DriveConfig, workload: &str, requests: u64) -> Result<u64, String> {
    let mut dropped = 0;
    for (i, at) in [CutAt::Request(1), CutAt::Request(1_777), CutAt::TimeNs(60_000_000)].into_iter().enumerate() {
        let seed = 11 + i as u64;
        let sim = simulator(f, cfg, true)?;
        let logical = u64::from(sim.derived().logical_pages);
        let (before, post) = crash::cut_run(sim, workload, at, seed)?;
        let c = before.power_cut.as_ref().ok_or(format!("{at:?}: the run was not cut"))?;
        if c.oracle_checked_pages != logical || c.recovery_pages_read == 0 {
            return Err(format!("{at:?}: {c:?}"));
        }
        let post = post.ok_or(format!("{at:?}: the run did not go on after recovery"))?;
        if before.host.requests + c.requests_in_flight + post.host.requests != requests {
            return Err(format!("{at:?}: requests before, in flight and after do not add up"));
        }
        dropped += c.queued_operations_dropped;
    }
    Ok(dropped)
}

#[test]
fn every_ftl_survives_cuts_in_a_measured_run_under_every_scheduling_mode_and_goes_on() {
    let workload = "pattern=zipf:0.8,read=0.3,size=4k@0.7|16k@0.3,requests=3000";
    each(&registered(|c| c.recovers), |f| {
        let mut dropped = 0;
        for (label, cfg) in scheduling_modes(f, &drive_for(f, 32, 16, small_cache(f))) {
            let d = cut_measured_runs(f, &cfg, workload, 3000).map_err(|e| format!("{label}: {e}"))?;
            if label.starts_with("first come") && d > 0 {
                return Err(format!("{label}: {d} queued operations dropped where nothing queues"));
            }
            dropped += d;
        }
        // The cuts found work queued: the path that once panicked (issue 58) was taken.
        if dropped == 0 {
            return Err("no cut under reading first or GC preemption found queued work".into());
        }
        Ok(())
    });
}

#[test]
fn the_zoned_namespace_survives_cuts_in_a_measured_run_under_every_scheduling_mode_and_goes_on() {
    // Its contract is tests/zns.rs (the random workloads above break a zone's rules by
    // design); here, its cuts as every other FTL's, with a zoned host's requests.
    let f = ftlsim_ftl::info("zns").unwrap();
    assert!(f.capabilities.recovers && f.capabilities.zoned);
    let requests = 3000;
    each(&[f], |f| {
        let mut dropped = 0;
        for (label, cfg) in scheduling_modes(f, &drive_for(f, 32, 16, "")) {
            for (i, at) in [CutAt::Request(1), CutAt::Request(1_777), CutAt::TimeNs(60_000_000)].into_iter().enumerate()
            {
                let seed = 11 + i as u64;
                let what = format!("{label}, {at:?}");
                let mut sim = simulator(f, &cfg, true)?;
                sim.keep_program_stamps();
                sim.precondition(&Precondition { fill: 0.0, seed, ..Precondition::default() })
                    .map_err(|e| e.to_string())?;
                sim.clean_shutdown().map_err(|e| e.to_string())?;
                let logical = u64::from(sim.derived().logical_pages);
                let zone_pages = u64::from(cfg.geometry.planes() * cfg.geometry.pages_per_block);
                let mut src = zoned_stream(logical / zone_pages, zone_pages, requests, seed);
                let opts = RunOptions {
                    replay: Replay::Closed { queue_depth: 8 },
                    interval_ns: 0,
                    power_cut: Some(at),
                    check_every: 97,
                    ..RunOptions::default()
                };
                let before = sim.run(&mut src, &opts, &mut NoObserver).map_err(|e| format!("{what}: {e}"))?;
                let c = before.power_cut.as_ref().ok_or(format!("{what}: the run was not cut"))?;
                if c.oracle_checked_pages != logical || c.recovery_pages_read == 0 {
                    return Err(format!("{what}: {c:?}"));
                }
                let after = RunOptions { power_cut: None, ..opts };
                let post = sim.run(&mut src, &after, &mut NoObserver).map_err(|e| format!("{what}, after: {e}"))?;
                sim.check_invariants();
                let answered = |r: &Report| r.host.requests + r.host.refused;
                if answered(&before) + c.requests_in_flight + answered(&post) != requests {
                    return Err(format!("{what}: requests before, in flight and after do not add up"));
                }
                if post.host.pages_written == 0 {
                    return Err(format!("{what}: nothing written after recovery"));
                }
                dropped += c.queued_operations_dropped;
            }
        }
        if dropped == 0 {
            return Err("no cut under reading first or GC preemption found queued work".into());
        }
        Ok(())
    });
}

// ---------------------------------------------------------------------------------------
// Channel systems and capabilities.

#[test]
fn every_channel_unit_keeps_the_oracle_in_a_channel_system() {
    use ftlsim_core::multichannel::{ChannelSystem, McOptions};
    each(&registered(|c| c.channel_unit), |f| {
        for mode in ["fi", "cf"] {
            let mut base = drive_for(f, 48, 16, "");
            base.geometry.chips_per_channel = 1;
            base.geometry.dies_per_chip = 1;
            let cfg = base
                .with_overrides(
                    &[
                        ("multichannel.mode".into(), format!("\"{mode}\"")),
                        ("multichannel.spare_threshold".into(), "8".into()),
                        ("host.write_buffer_bytes".into(), "65536".into()),
                        ("host.write_buffer_policy".into(), "\"fifo\"".into()),
                    ],
                    ftlsim_ftl::resolve,
                )
                .map_err(|e| e.to_string())?;
            let mut sys = ChannelSystem::new(&cfg, &f.build, true).map_err(|e| e.to_string())?;
            sys.precondition(
                &ftlsim_core::sim::Precondition { fill: 1.0, seed: 5, ..Default::default() },
                &mut NoObserver,
            )
            .map_err(|e| e.to_string())?;
            let spec =
                WorkloadSpec::parse("read=0,size=512|4k|12k,align=512,requests=1500").map_err(|e| e.to_string())?;
            let mut gen = Generator::new(&spec, sys.logical_bytes(), 5).map_err(|e| e.to_string())?.map(Ok);
            let r = sys
                .run(&mut gen, &McOptions { interval_ns: 0, check_every: 17, ..McOptions::default() }, &mut NoObserver)
                .map_err(|e| format!("{mode}: {e}"))?;
            if r.host.requests != 1500 || r.gc.erases == 0 {
                return Err(format!("{mode}: {} requests, {} erases", r.host.requests, r.gc.erases));
            }
        }
        Ok(())
    });
}

#[test]
fn capabilities_agree_with_what_each_ftl_offers() {
    let mut names = std::collections::HashSet::new();
    each(&every_registered(|_| true), |f| {
        if !names.insert(f.name) {
            return Err("registered twice".into());
        }
        let cfg = ftlsim_ftl::resolve(drive_for(f, 32, 16, "")).map_err(|e| e.to_string())?;
        let mut ftl = (f.build)(&cfg).map_err(|e| e.to_string())?;
        let c = &f.capabilities;
        if ftl.name() != f.name {
            return Err(format!("its object calls itself {}", ftl.name()));
        }
        if c.recovers != ftl.recovery().is_some() {
            return Err(format!("declares recovers = {} but its object disagrees", c.recovers));
        }
        // A zoned namespace takes zone management commands at admission; others refuse them.
        let g = &cfg.geometry;
        let zone_bytes = u64::from(g.pages_per_block) * u64::from(g.planes()) * u64::from(g.page_size_bytes);
        if c.zoned != ftl.admit(IoOp::ZoneReset, 0, (zone_bytes / 512) as u32).is_ok() {
            return Err(format!("declares zoned = {} but its object disagrees at admission", c.zoned));
        }
        if c.channel_unit && ftl.managed_gc().is_none() {
            return Err("declares it runs as a channel unit but offers no managed GC".into());
        }
        for s in c.sections {
            if !ftlsim_ftl::SECTIONS.iter().any(|k| &k.name == s) || !cfg.ftl.sections.contains_key(*s) {
                return Err(format!("reads section [ftl.{s}], which the registry does not know or did not complete"));
            }
        }
        // A zoned namespace's open blocks are its zones', the host's to open: it keeps none.
        if ((c.open_blocks_per_plane)(&cfg) == 0) != c.zoned {
            return Err(format!("keeps {} open blocks per plane", (c.open_blocks_per_plane)(&cfg)));
        }
        Ok(())
    });
}

// ---------------------------------------------------------------------------------------
// The suite catches a broken FTL.

/// The page FTL with one line wrong: a trim does nothing (the page stays mapped).
struct ForgetsTrims(Box<dyn Ftl>);

impl Ftl for ForgetsTrims {
    fn name(&self) -> &'static str {
        self.0.name()
    }
    fn read(&mut self, ctx: &mut FlashCtx, lpn: Lpn) -> Result<Option<u32>, SimError> {
        self.0.read(ctx, lpn)
    }
    fn write(&mut self, ctx: &mut FlashCtx, lpn: Lpn, version: u32) -> Result<(), SimError> {
        self.0.write(ctx, lpn, version)
    }
    fn prefetch_write(&self, flash: &FlashArray, lpn: Lpn, stage: PrefetchStage) {
        self.0.prefetch_write(flash, lpn, stage)
    }
    fn trim(&mut self, _ctx: &mut FlashCtx, _lpn: Lpn) -> Result<(), SimError> {
        Ok(()) // the defect
    }
    fn background_step(&mut self, ctx: &mut FlashCtx) -> Result<bool, SimError> {
        self.0.background_step(ctx)
    }
    fn gc_counts(&self) -> GcCounts {
        self.0.gc_counts()
    }
    fn free_blocks(&self) -> u64 {
        self.0.free_blocks()
    }
    fn mapping_sram_bytes(&self) -> u64 {
        self.0.mapping_sram_bytes()
    }
    fn series(&self) -> Vec<SeriesValue> {
        self.0.series()
    }
    fn check_invariants(&self, flash: &FlashArray) {
        self.0.check_invariants(flash)
    }
    fn save_state(&self) -> Vec<u8> {
        self.0.save_state()
    }
    fn load_state(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.0.load_state(bytes)
    }
}

fn forgets_trims(cfg: &Resolved) -> Result<Box<dyn Ftl>, ConfigError> {
    Ok(Box::new(ForgetsTrims(ftlsim_ftl::build_for(cfg)?)))
}

#[test]
fn a_deliberately_broken_ftl_is_caught() {
    let page = ftlsim_ftl::info("page").unwrap();
    let broken = FtlInfo { build: forgets_trims, ..*page };
    let e = oracle_everywhere(&broken, 6).expect_err("an FTL that ignores trims must fail the oracle");
    // The flash check finds the trimmed page still valid before the read-back reads it.
    assert!(e.contains("is trimmed or was never written, yet page") || e.contains("data oracle: read of lpn"), "{e}");
    // The check it failed is the one every registered FTL passes (the first test above).
    oracle_everywhere(page, 2).unwrap();
}

/// The page FTL with a defect no read sees: the first overwrite of a page still in an open
/// block leaves the superseded copy valid (a leak; in an open block, so that the victim index,
/// which counts closed blocks, takes the count as the block closes), and the FTL's own
/// whole-state check, which would see it, is not run.
struct LeaksOneCopy {
    inner: Box<dyn Ftl>,
    leaked: bool,
}

impl Ftl for LeaksOneCopy {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn read(&mut self, ctx: &mut FlashCtx, lpn: Lpn) -> Result<Option<u32>, SimError> {
        self.inner.read(ctx, lpn)
    }
    fn write(&mut self, ctx: &mut FlashCtx, lpn: Lpn, version: u32) -> Result<(), SimError> {
        let f = ctx.flash();
        let old = if self.leaked {
            None
        } else {
            let g = f.geometry();
            let open = |p| f.write_pointer(g.block_of(p)) < g.pages_per_block;
            (0..g.blocks()).flat_map(|b| f.valid_pages(b)).find(|&p| f.owner(p) == lpn && open(p))
        };
        self.inner.write(ctx, lpn, version)?;
        if let Some(p) = old {
            ctx.revalidate(p)?; // the defect
            self.leaked = true;
        }
        Ok(())
    }
    fn trim(&mut self, ctx: &mut FlashCtx, lpn: Lpn) -> Result<(), SimError> {
        self.inner.trim(ctx, lpn)
    }
    fn background_step(&mut self, ctx: &mut FlashCtx) -> Result<bool, SimError> {
        self.inner.background_step(ctx)
    }
    fn gc_counts(&self) -> GcCounts {
        self.inner.gc_counts()
    }
    fn free_blocks(&self) -> u64 {
        self.inner.free_blocks()
    }
    fn mapping_sram_bytes(&self) -> u64 {
        self.inner.mapping_sram_bytes()
    }
    fn check_invariants(&self, _flash: &FlashArray) {}
    fn save_state(&self) -> Vec<u8> {
        self.inner.save_state()
    }
    fn load_state(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.inner.load_state(bytes)
    }
}

fn leaks_one_copy(cfg: &Resolved) -> Result<Box<dyn Ftl>, ConfigError> {
    Ok(Box::new(LeaksOneCopy { inner: ftlsim_ftl::build_for(cfg)?, leaked: false }))
}

#[test]
fn a_leak_no_read_sees_is_caught_by_the_flash_check() {
    let page = ftlsim_ftl::info("page").unwrap();
    let leaky = FtlInfo { build: leaks_one_copy, ..*page };
    let (_, cfg) = variants(&leaky).remove(0);
    // An empty drive and a few dozen requests, most on a few pages: the leak is made, and
    // no GC moves it yet.
    let m = Mix { seed: 7, open_loop: false, read: 0.2, trim: 0.0, pattern: "hotcold:0.9:0.01", fill: 0.0 };
    let e = oracle(&leaky, &cfg, &m, 40).expect_err("a leaked copy must fail the suite");
    assert!(e.contains("two valid copies on flash") && e.contains("a leak"), "{e}");
}
