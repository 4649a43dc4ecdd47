//! Power cuts for the FTL tests: a write-heavy run cut at a chosen flash mutation, recovery
//! from flash alone, the data oracle after it and after more writes (`crash_case`); and a
//! drive cut at random mutations until the cuts have torn every kind of operation and page
//! asked for (`cut_drive`); a measured run cut part-way that then goes on (`cut_run`).
//! `FTLSIM_CRASH_CASES=N` sets the cases per drive (12 by default).

use ftlsim_core::config::DriveConfig;
use ftlsim_core::error::{FlashError, SimError};
use ftlsim_core::flash::{FlashArray, PageKind, TornOp};
use ftlsim_core::ftl::{FlashCounts, FlashCtx, FlashTime, Ftl};
use ftlsim_core::geometry::Lpn;
use ftlsim_core::metrics::NoObserver;
use ftlsim_core::sim::{CutAt, Precondition, Replay, Report, RunOptions, Simulator};
use ftlsim_core::workload::{Generator, WorkloadSpec};
use ftlsim_ftl::FtlInfo;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::HashSet;

pub fn crash_cases() -> u64 {
    std::env::var("FTLSIM_CRASH_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(12)
}

pub fn is_power_lost(e: &SimError) -> bool {
    matches!(e, SimError::Flash(FlashError::PowerLost))
}

/// Write `lpn` as `version`; `Ok(false)` when the power went during the write.
fn write(
    ftl: &mut dyn Ftl,
    flash: &mut FlashArray,
    counts: &mut FlashCounts,
    lpn: Lpn,
    version: u32,
) -> Result<bool, String> {
    let mut ops = Vec::new();
    let mut ctx = FlashCtx::new(flash, &mut ops, counts, FlashTime::Functional);
    match ftl.write(&mut ctx, lpn, version) {
        Ok(()) => Ok(true),
        Err(e) if is_power_lost(&e) => Ok(false),
        Err(e) => Err(format!("write of lpn {lpn}: {e}")),
    }
}

/// Every logical page reads its acknowledged version, or for the page whose write was cut,
/// that write's version too.
fn check_oracle(
    ftl: &mut dyn Ftl,
    flash: &mut FlashArray,
    acked: &[Option<u32>],
    in_flight: Option<(Lpn, u32)>,
) -> Result<(), String> {
    let (mut ops, mut counts) = (Vec::new(), FlashCounts::default());
    let mut ctx = FlashCtx::new(flash, &mut ops, &mut counts, FlashTime::Functional);
    for (lpn, &want) in acked.iter().enumerate() {
        let lpn = lpn as Lpn;
        let got = ftl.read(&mut ctx, lpn).map_err(|e| format!("read of lpn {lpn}: {e}"))?;
        let also = in_flight.filter(|f| f.0 == lpn).map(|f| f.1);
        if got != want && (also.is_none() || got != also) {
            return Err(format!("lpn {lpn}: read {got:?}, acknowledged {want:?}, in flight {also:?}"));
        }
    }
    Ok(())
}

/// What one crash case did.
pub struct Crash {
    /// The operation the cut tore (`None`: the run ended before the cut).
    pub torn: Option<TornOp>,
    pub torn_kind: Option<PageKind>,
    /// Programs, copy-backs and erases before the cut.
    pub mutations: u64,
    /// Copy-backs of the first phase (before the cut).
    pub copybacks: u64,
    /// Pages recovery read.
    pub reads: u64,
    /// The FTL's own metrics right after recovery.
    pub metrics_after_recovery: serde_json::Map<String, serde_json::Value>,
}

/// A fill, then overwrites (80% to a fifth of the pages: heavy GC) with a read now and then and an idle-time GC step
/// now and then, cut at mutation `cut_after`; recovery from flash alone; the oracle, the
/// invariants and two more fills of writes.
pub fn crash_case(f: &FtlInfo, cfg: &DriveConfig, seed: u64, cut_after: u64) -> Result<Crash, String> {
    crash_case_probed(f, cfg, seed, cut_after, &mut |_, _| {})
}

/// [`crash_case`], calling `probe` with the FTL and the flash after each host operation of
/// the first phase (for a test to find where an operation of interest happens).
pub fn crash_case_probed(
    f: &FtlInfo,
    cfg: &DriveConfig,
    seed: u64,
    cut_after: u64,
    probe: &mut dyn FnMut(&dyn Ftl, &FlashArray),
) -> Result<Crash, String> {
    let cfg = ftlsim_ftl::resolve(cfg.clone()).map_err(|e| e.to_string())?;
    let logical = cfg.derived().logical_pages;
    let mut flash = FlashArray::for_config(&cfg).map_err(|e| e.to_string())?;
    flash.keep_program_stamps();
    let mut ftl = (f.build)(&cfg).map_err(|e| e.to_string())?;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut acked: Vec<Option<u32>> = vec![None; logical as usize];
    let (mut next_version, mut in_flight) = (1u32, None);
    let mut counts = FlashCounts::default();
    flash.arm_power_cut(cut_after);
    for i in 0..logical * 5 {
        let lpn = if i < logical {
            i
        } else if rng.gen_bool(0.8) {
            rng.gen_range(0..logical / 5)
        } else {
            rng.gen_range(0..logical)
        };
        if !write(ftl.as_mut(), &mut flash, &mut counts, lpn, next_version)? {
            in_flight = Some((lpn, next_version));
            break;
        }
        acked[lpn as usize] = Some(next_version);
        next_version += 1;
        if i % 5 == 2 {
            // A read now and then: an FTL may write on a read (a cache's write-back, WAFTL's
            // read-miss copy into its zone), so cuts land there too.
            let lpn = rng.gen_range(0..logical);
            let mut ops = Vec::new();
            let mut ctx = FlashCtx::new(&mut flash, &mut ops, &mut counts, FlashTime::Functional);
            match ftl.read(&mut ctx, lpn) {
                Err(e) if is_power_lost(&e) => break,
                Err(e) => return Err(format!("read of lpn {lpn}: {e}")),
                Ok(got) if got != acked[lpn as usize] => {
                    return Err(format!(
                        "before the cut, lpn {lpn} read {got:?}, acknowledged {:?}",
                        acked[lpn as usize]
                    ))
                }
                Ok(_) => {}
            }
        }
        probe(ftl.as_ref(), &flash);
        if i % 7 == 0 {
            let mut ops = Vec::new();
            let mut ctx = FlashCtx::new(&mut flash, &mut ops, &mut counts, FlashTime::Functional);
            match ftl.background_step(&mut ctx) {
                Err(e) if is_power_lost(&e) => break,
                Err(e) => return Err(format!("idle-time GC: {e}")),
                Ok(_) => {}
            }
        }
    }
    let (torn, torn_kind, mutations) = (flash.torn_op(), flash.torn_kind(), flash.mutations());
    let copybacks: u64 = counts.copybacks.iter().sum();
    flash.restart();
    // A full scan reads every page below each block's write pointer and the erased page that
    // ends each block that is not full; first-page reads add at most one per block (seed 001
    // Sec. 8.1: m + n in the worst case); reads beyond feed what recovery programs.
    let g = cfg.geometry.clone();
    let scan: u64 = (0..g.blocks())
        .map(|b| u64::from(flash.write_pointer(b)) + u64::from(flash.write_pointer(b) < g.pages_per_block))
        .sum();
    let (mut ops, mut rc) = (Vec::new(), FlashCounts::default());
    {
        let mut ctx = FlashCtx::new(&mut flash, &mut ops, &mut rc, FlashTime::Functional);
        let r = ftl.recovery().ok_or("it declares recovery but offers none")?;
        r.recover(&mut ctx, &cfg).map_err(|e| format!("recovery: {e}"))?;
    }
    let reads: u64 = rc.reads.iter().sum();
    let programs: u64 = rc.programs.iter().sum::<u64>() + rc.copybacks.iter().sum::<u64>();
    if reads.saturating_sub(programs) > scan + u64::from(g.blocks()) {
        return Err(format!(
            "recovery read {reads} pages for {programs} programs, more than m + n = {}",
            scan + u64::from(g.blocks())
        ));
    }
    let metrics_after_recovery = ftl.extra_metrics();
    flash.check_invariants();
    ftl.check_invariants(&flash);
    check_oracle(ftl.as_mut(), &mut flash, &acked, in_flight).map_err(|e| format!("after recovery: {e}"))?;
    if let Some((lpn, _)) = in_flight {
        let (mut ops, mut c) = (Vec::new(), FlashCounts::default());
        let mut ctx = FlashCtx::new(&mut flash, &mut ops, &mut c, FlashTime::Functional);
        acked[lpn as usize] = ftl.read(&mut ctx, lpn).map_err(|e| e.to_string())?;
    }
    for _ in 0..logical * 2 {
        let lpn = rng.gen_range(0..logical);
        let mut c = FlashCounts::default();
        if !write(ftl.as_mut(), &mut flash, &mut c, lpn, next_version).map_err(|e| format!("after recovery: {e}"))? {
            return Err("power lost with no cut armed".into());
        }
        acked[lpn as usize] = Some(next_version);
        next_version += 1;
    }
    flash.check_invariants();
    ftl.check_invariants(&flash);
    check_oracle(ftl.as_mut(), &mut flash, &acked, None).map_err(|e| format!("after more writes: {e}"))?;
    Ok(Crash { torn, torn_kind, mutations, copybacks, reads, metrics_after_recovery })
}

/// Cut drive `cfg` (labelled `label`, the `k`-th of its FTL) at random mutations,
/// `crash_cases()` times and on until the cuts have torn an erase, a copy-back where the
/// drive copies back, and a page of each kind of `kinds` (at most ten times as many cases).
pub fn cut_drive(f: &FtlInfo, k: usize, label: &str, cfg: &DriveConfig, kinds: &[PageKind]) -> Result<(), String> {
    let uncut = crash_case(f, cfg, u64::MAX, u64::MAX / 2).map_err(|e| format!("drive \"{label}\", uncut: {e}"))?;
    let mut torn = HashSet::new();
    let mut torn_kinds = HashSet::new();
    let covered = |torn: &HashSet<TornOp>, torn_kinds: &HashSet<PageKind>| {
        torn.contains(&TornOp::Erase)
            && (uncut.copybacks == 0 || torn.contains(&TornOp::Copyback))
            && kinds.iter().all(|k| torn_kinds.contains(k))
    };
    let (mut case, mut cut, mut reads) = (0u64, 0u64, 0u64);
    while case < crash_cases() || (!covered(&torn, &torn_kinds) && case < 10 * crash_cases()) {
        let seed = (k as u64) << 32 | case;
        let at = Xoshiro256PlusPlus::seed_from_u64(seed ^ 0xC0FFEE).gen_range(0..uncut.mutations);
        let c = crash_case(f, cfg, seed, at)
            .map_err(|e| format!("drive \"{label}\", seed {seed}, cut at mutation {at}: {e}"))?;
        if let Some(op) = c.torn {
            torn.insert(op);
            cut += 1;
        }
        if let Some(kind) = c.torn_kind {
            torn_kinds.insert(kind);
        }
        reads += c.reads;
        case += 1;
    }
    if cut < case * 3 / 4 {
        return Err(format!("drive \"{label}\": only {cut} of {case} cases were cut"));
    }
    if !covered(&torn, &torn_kinds) {
        return Err(format!("drive \"{label}\": the cuts missed a kind of operation or page: {torn:?} {torn_kinds:?}"));
    }
    eprintln!(
        "{} \"{label}\": {cut} cuts in {case} cases, torn {torn:?}, recovery read {} pages per case",
        f.name,
        reads / case
    );
    Ok(())
}

/// On a verifying simulator: precondition (fill and steady state), shut down cleanly, run
/// `workload` at queue depth 8 with a cut at `at`, then the rest of it; both runs checked
/// read by read, the invariants at the end. The report of the cut run, and of the run after
/// recovery when the cut came.
pub fn cut_run(mut sim: Simulator, workload: &str, at: CutAt, seed: u64) -> Result<(Report, Option<Report>), String> {
    sim.keep_program_stamps();
    sim.precondition(&Precondition { fill: 1.0, steady_state: true, seed, ..Precondition::default() })
        .map_err(|e| e.to_string())?;
    sim.clean_shutdown().map_err(|e| e.to_string())?;
    let spec = WorkloadSpec::parse(workload).map_err(|e| e.to_string())?;
    let mut gen = Generator::new(&spec, sim.derived().logical_bytes, seed).map_err(|e| e.to_string())?.map(Ok);
    let opts = RunOptions {
        replay: Replay::Closed { queue_depth: 8 },
        interval_ns: 0,
        power_cut: Some(at),
        check_every: 97,
        ..RunOptions::default()
    };
    let before = sim.run(&mut gen, &opts, &mut NoObserver).map_err(|e| format!("{at:?}: {e}"))?;
    if before.power_cut.is_none() {
        return Ok((before, None));
    }
    let after = RunOptions { power_cut: None, ..opts };
    let post = sim.run(&mut gen, &after, &mut NoObserver).map_err(|e| format!("{at:?}, after recovery: {e}"))?;
    sim.check_invariants();
    Ok((before, Some(post)))
}
