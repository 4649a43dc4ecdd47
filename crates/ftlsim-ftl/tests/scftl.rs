//! SCFTL: the data oracle with tiny caches (constant splits, spatial fetches and write-backs)
//! and heavy GC of data and translation blocks under each replacement policy; the thesis's
//! Table 5.2 SRAM figures; cache-access classes.

use crate::util;

use ftlsim_core::flash::FlashArray;
use ftlsim_core::ftl::{FlashCounts, FlashCtx, FlashTime, Ftl};
use ftlsim_ftl::presets;
use ftlsim_ftl::scftl::CacheReplacement as Replacement;
use ftlsim_ftl::scftl::Scftl;
use proptest::prelude::*;
use util::small_config;

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
    let policy = match policy {
        Replacement::Lru => "lru",
        Replacement::Nru => "nru",
        Replacement::DNru => "d-nru",
    };
    let lines = format!(
        "name = \"scftl\"\nmapping_cache_bytes = {cache_bytes}\ngc_victim = \"{victim}\"\n[ftl.scftl]\nreplacement = \"{policy}\""
    );
    // 2 KiB pages: 512 entries per translation page.
    util::run_demand(&lines, 2048, seed, pattern, read, trim, open_loop)
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
    let f = Scftl::new(&util::resolved(&cfg)).unwrap();
    assert_eq!(f.sram_components(), (2304, 18_432, 131_072));
    assert_eq!(f.cmt_entries(), 2048);
    assert_eq!(f.mapping_sram_bytes(), 20_736, "20.25 KB");
    let (t, c, m) = f.sram_components();
    assert_eq!(t + c + m, 151_808, "148.25 KB");
    // The default cache is the thesis's.
    cfg.ftl.mapping_cache_bytes = None;
    assert_eq!(Scftl::new(&util::resolved(&cfg)).unwrap().cmt_entries(), 2048);
}

#[test]
fn cache_classes_are_counted() {
    let cfg = small_config(32, 16, 0.25, "[ftl]\nname = \"scftl\"\nmapping_cache_bytes = 18");
    let mut flash = FlashArray::new(&cfg.geometry, false);
    let mut f = Scftl::new(&util::resolved(&cfg)).unwrap();
    let (mut ops, mut counts) = (Vec::new(), FlashCounts::default());
    let mut ctx = FlashCtx::new(&mut flash, &mut ops, &mut counts, FlashTime::Timed);
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
    let mut f = Scftl::new(&util::resolved(&cfg)).unwrap();
    let (mut ops, mut counts) = (Vec::new(), FlashCounts::default());
    let mut ctx = FlashCtx::new(&mut flash, &mut ops, &mut counts, FlashTime::Timed);
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
