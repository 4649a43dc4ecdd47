//! SCFTL: the data oracle with tiny caches (constant splits, spatial fetches and write-backs)
//! and heavy GC of data and translation blocks under each replacement policy; the thesis's
//! Table 5.2 SRAM figures; cache-access classes.

mod util;

use ftlsim_core::config::CacheReplacement as Replacement;
use ftlsim_core::config::DriveConfig;
use ftlsim_core::flash::FlashArray;
use ftlsim_core::ftl::{FlashCounts, FlashCtx, Ftl};
use ftlsim_core::metrics::NoObserver;
use ftlsim_core::presets;
use ftlsim_core::sim::{Precondition, Replay, RunOptions, Simulator};
use ftlsim_core::workload::{Generator, WorkloadSpec};
use ftlsim_ftl::scftl::Scftl;
use proptest::prelude::*;
use util::small_config;

fn simulator(mut cfg: DriveConfig, policy: Replacement) -> Result<Simulator, String> {
    cfg.ftl.scftl.replacement = policy;
    let ftl = Scftl::new(&cfg).map_err(|e| e.to_string())?;
    Simulator::new(cfg, Box::new(ftl), true).map_err(|e| e.to_string())
}

#[allow(clippy::too_many_arguments)]
fn run(
    seed: u64,
    cache_bytes: u64,
    policy: Replacement,
    pattern: &str,
    read: f64,
    trim: f64,
    victim: &str,
    open_loop: bool,
) -> Result<(), String> {
    let extra = format!(
        "[ftl]\nname = \"scftl\"\nmapping_cache_bytes = {cache_bytes}\ngc_victim = \"{victim}\"\n[host]\nqueue_depth = 8"
    );
    // 2 KiB pages: 512 entries per translation page, so the small drive has several.
    let mut cfg = small_config(64, 16, 0.3, &extra);
    cfg.geometry.page_size_bytes = 512;
    let logical = cfg.derive().map_err(|e| e.to_string())?.logical_pages;
    let mut sim = simulator(cfg, policy)?;
    sim.precondition(&Precondition { fill: 1.0, steady_state: true, max_overwrite_passes: 1.0, seed })
        .map_err(|e| e.to_string())?;
    let arrival = if open_loop { "poisson:400us" } else { "closed:8" };
    let spec = WorkloadSpec::parse(&format!(
        "pattern={pattern},read={read},trim={trim},size=512@4|1k@1|4k@1,align=512,arrival={arrival},requests=3000"
    ))
    .map_err(|e| e.to_string())?;
    let bytes = sim.derived().logical_bytes;
    let mut gen = Generator::new(&spec, bytes, seed).map_err(|e| e.to_string())?.map(Ok);
    let replay = if open_loop { Replay::Open { time_scale: 1.0 } } else { Replay::Closed { queue_depth: 8 } };
    let r = sim
        .run(
            &mut gen,
            &RunOptions { replay, check_every: 53, interval_ns: 0, ..RunOptions::default() },
            &mut NoObserver,
        )
        .map_err(|e| e.to_string())?;
    if r.host.writes > 100 && r.flash.programs.mapping == 0 {
        return Err("a tiny cache must write translation pages back".into());
    }
    sim.check_invariants();
    let back = RunOptions { replay: Replay::Closed { queue_depth: 4 }, interval_ns: 0, ..RunOptions::default() };
    // One sector per logical page of 512 bytes.
    let reqs = (0..logical).map(|p| {
        Ok(ftlsim_core::host::Request {
            arrival_ns: 0,
            device: 0,
            offset_sector: u64::from(p),
            sectors: 1,
            op: ftlsim_core::host::IoOp::Read,
        })
    });
    sim.run(&mut reqs.into_iter(), &back, &mut NoObserver).map_err(|e| e.to_string())?;
    sim.check_invariants();
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn scftl_reads_return_the_newest_version(
        seed in any::<u64>(),
        cache in prop::sample::select(vec![18u64, 27, 72, 288, 2304]),
        policy in prop::sample::select(vec![Replacement::DNru, Replacement::Nru, Replacement::Lru]),
        pattern in prop::sample::select(vec!["uniform", "hotcold:0.8:0.2", "sequential", "zipf:1.1"]),
        read in 0.0..0.5f64,
        trim in 0.0..0.1f64,
        victim in prop::sample::select(vec!["greedy", "fifo", "cost_benefit"]),
        open_loop in any::<bool>(),
    ) {
        if let Err(e) = run(seed, cache, policy, pattern, read, trim, victim, open_loop) {
            let case = format!("seed {seed} cache {cache} policy {policy:?} pattern {pattern}");
            prop_assert!(false, "{e}\n{case} read {read} trim {trim} victim {victim} open {open_loop}");
        }
    }
}

#[test]
fn sram_matches_thesis_table_5_2() {
    // Table 5.2: TPD 2.25 KB (512 entries of 4.5 B), CMT 18.00 KB (2,048 entries of 9 B),
    // total 20.25 KB without GC metadata, 148.25 KB with 128 KB of GC metadata.
    let mut cfg = presets::load("thesis").unwrap();
    cfg.ftl.name = "scftl".into();
    cfg.ftl.mapping_cache_bytes = Some(18_432);
    let f = Scftl::new(&cfg).unwrap();
    assert_eq!(f.sram_components(), (2304, 18_432, 131_072));
    assert_eq!(f.cmt_entries(), 2048);
    assert_eq!(f.mapping_sram_bytes(), 20_736, "20.25 KB");
    let (t, c, m) = f.sram_components();
    assert_eq!(t + c + m, 151_808, "148.25 KB");
    // The default cache is the thesis's.
    cfg.ftl.mapping_cache_bytes = None;
    assert_eq!(Scftl::new(&cfg).unwrap().cmt_entries(), 2048);
}

#[test]
fn cache_classes_are_counted() {
    let cfg = small_config(32, 16, 0.25, "[ftl]\nname = \"scftl\"\nmapping_cache_bytes = 18");
    let mut flash = FlashArray::new(&cfg.geometry, false);
    let mut f = Scftl::new(&cfg).unwrap();
    let (mut ops, mut counts) = (Vec::new(), FlashCounts::default());
    let mut ctx = FlashCtx::new(&mut flash, &mut ops, &mut counts, true);
    // Two entries fit. Writes of never-mapped LPNs: misses without penalty (no translation page yet).
    f.write(&mut ctx, 0, 1).unwrap();
    f.write(&mut ctx, 1, 2).unwrap();
    assert_eq!(f.cache_counts().misses_no_penalty, 2);
    // Hit.
    assert_eq!(f.read(&mut ctx, 0).unwrap(), Some(1));
    assert_eq!(f.cache_counts().hits, 1);
    // A third LPN evicts a modified entry: write-back (translation page written, batch of both).
    f.write(&mut ctx, 2, 3).unwrap();
    assert_eq!(f.cache_counts().misses_write_back, 1);
    assert_eq!(f.cache_counts().translation_writes, 1);
    assert_eq!(f.modified_counter(0), 1, "MC reset by the write-back, then LPN 2 modified");
    // LPN 1 was written back with LPN 0 and evicted later: fetching it reads the translation
    // page, the victim (clean, batch-updated) costs no write-back.
    assert_eq!(f.read(&mut ctx, 1).unwrap(), Some(2));
    assert_eq!(f.cache_counts().misses_fetch + f.cache_counts().misses_write_back, 2, "{:?}", f.cache_counts());
    assert!(f.cache_counts().translation_reads >= 1);
    f.check_invariants(&flash);
}

#[test]
fn sequential_writes_re_merge_and_reads_hit_spatially() {
    // One plane: sequential writes get consecutive PPNs, so their entries merge (Fig. 5.2b).
    let mut cfg = small_config(32, 64, 0.25, "[ftl]\nname = \"scftl\"\nmapping_cache_bytes = 288");
    cfg.geometry.channels = 1;
    cfg.geometry.planes_per_die = 1;
    let mut flash = FlashArray::new(&cfg.geometry, false);
    let mut f = Scftl::new(&cfg).unwrap();
    let (mut ops, mut counts) = (Vec::new(), FlashCounts::default());
    let mut ctx = FlashCtx::new(&mut flash, &mut ops, &mut counts, true);
    for l in 0..40 {
        f.write(&mut ctx, l, 1).unwrap();
    }
    assert!(f.cache_counts().merges >= 30, "{:?}", f.cache_counts());
    // Consecutive fields cap at 31: 0..=31 and 32..=39.
    let e: Vec<_> = f.cached_entries().into_iter().map(|e| (e.0, e.2)).collect();
    assert_eq!(e, vec![(0, 31), (32, 7)]);
    f.check_invariants(ctx.flash());
    // Rewrite elsewhere so the cache holds other entries, then read 0..40 back: one
    // translation read brings 64 neighbours in as a few consecutive entries.
    for l in 200..240 {
        f.write(&mut ctx, l, 2).unwrap();
    }
    let reads = f.cache_counts().translation_reads;
    let fetches = f.cache_counts().misses_fetch + f.cache_counts().misses_write_back;
    for l in 0..40 {
        assert_eq!(f.read(&mut ctx, l).unwrap(), Some(1));
    }
    assert!(f.cache_counts().translation_reads - reads <= 3, "{:?}", f.cache_counts());
    assert!(f.cache_counts().misses_fetch + f.cache_counts().misses_write_back - fetches <= 2);
    f.check_invariants(&flash);
}

/// A flush of deferred write-backs once drained a plane below GC's reserve ("plane 1 has no
/// free block left"), fixed as in `dftl`; found by the property test above.
#[test]
fn regression_deferred_write_backs_keep_the_gc_reserve() {
    run(15_163_949_395_198_338_769, 288, Replacement::Nru, "uniform", 0.0, 0.076_241_748_799_101_85, "fifo", false)
        .unwrap();
    // Four translation write-backs per host write once piled all host data on one plane.
    run(0, 27, Replacement::Nru, "uniform", 0.0, 0.0, "greedy", false).unwrap();
}
