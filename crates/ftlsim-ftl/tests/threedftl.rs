//! 3DFTL (issue 17, seed 001 Ch. 6) on the flash model: the data oracle over random
//! workloads with GC re-homing what stale pages carry (the invariants check that every GTD
//! and LTD pointer leads to a written page of its group), no translation page ever written,
//! lookups by class, refused configs.

use crate::util;

use ftlsim_core::config::{DriveConfig, InvalidTracking};
use ftlsim_core::ftl::FlashTime;
use ftlsim_core::metrics::NoObserver;
use ftlsim_core::sim::{Precondition, Replay, Report, RunOptions};
use ftlsim_core::workload::{Generator, WorkloadSpec};
use proptest::prelude::*;
use util::{metric, mix, run_oracle, small_config};

/// A drive of 4 planes x `blocks` blocks of 16 pages, 112 usable spare bytes, a CMT of
/// `lines` lines.
fn threedftl(blocks: u32, share: f64, lines: u64) -> DriveConfig {
    let cache = (lines * 2095).div_ceil(8);
    let mut cfg = small_config(blocks, 16, share, &format!("[ftl]\nname = \"3dftl\"\nmapping_cache_bytes = {cache}"));
    cfg.geometry.spare_usable_bytes = 112;
    cfg
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn every_read_returns_the_newest_version(
        m in mix(),
        lines in 1u64..40,
        share in 0.15f64..0.35,
        tracking in prop::sample::select(vec![InvalidTracking::Flags, InvalidTracking::Counters, InvalidTracking::Ilog]),
    ) {
        let mut cfg = threedftl(48, share, lines);
        cfg.ftl.invalid_tracking = tracking;
        // A BIFQ of 10 BIFs on this 192-block drive: IPs written back all along.
        util::set(&mut cfg, "ftl.ilog.bifq_bytes", "350");
        if let Err(e) = run_oracle(cfg, &m, 1500) {
            prop_assert!(false, "{e}\nlines {lines}, share {share}, {tracking:?}\nmix: {m:?}");
        }
    }
}

fn run_on(cfg: DriveConfig, fill: f64, workload: &str) -> Report {
    let mut sim = ftlsim_ftl::simulator(cfg, true).unwrap();
    sim.precondition(&Precondition {
        fill,
        steady_state: fill > 0.5,
        max_overwrite_passes: 1.0,
        ..Precondition::default()
    })
    .unwrap();
    let spec = WorkloadSpec::parse(workload).unwrap();
    let mut gen = Generator::new(&spec, sim.derived().logical_bytes, 3).unwrap().map(Ok);
    let opts = RunOptions {
        replay: Replay::Closed { queue_depth: 8 },
        check_every: 97,
        interval_ns: 0,
        ..RunOptions::default()
    };
    let r = sim.run(&mut gen, &opts, &mut NoObserver).unwrap();
    sim.check_invariants();
    r
}

#[test]
fn no_translation_page_is_written_and_lookups_fall_into_the_thesis_classes() {
    // A full drive: no read of a never-written page (whose functional write-in is counted
    // apart from the run's flash operations).
    let r = run_on(threedftl(48, 0.2, 4), 1.0, "pattern=uniform,read=0.5,size=4k,requests=4000");
    assert_eq!(r.flash.programs.mapping, 0, "3DFTL writes no translation page");
    assert_eq!(metric(&r, "translation_pages_written"), 0);
    let accesses = metric(&r, "cache_accesses");
    let classes = [
        "cache_hits",
        "cache_pointer_hits",
        "cache_misses_one_read",
        "cache_misses_two_reads",
        "cache_misses_unwritten",
    ];
    assert_eq!(classes.iter().map(|k| metric(&r, k)).sum::<u64>(), accesses);
    assert!(metric(&r, "cache_misses_one_read") > 0 && metric(&r, "cache_misses_two_reads") > 0, "{:?}", r.ftl_metrics);
    // Spare-area reads are mapping reads: one per one-read miss or pointer hit, two per
    // two-read miss, plus GC's.
    let host_reads = metric(&r, "cache_pointer_hits")
        + metric(&r, "cache_misses_one_read")
        + 2 * metric(&r, "cache_misses_two_reads");
    assert!(metric(&r, "spare_reads") >= host_reads);
    assert_eq!(r.flash.reads.mapping, metric(&r, "spare_reads"));
    assert!(r.gc.collections > 0, "GC ran");
    // Random 4 KiB writes scatter a group's pages: few compressed pages, many not.
    let pages = metric(&r, "pages_compressed") + metric(&r, "pages_semi_compressed") + metric(&r, "pages_uncompressed");
    assert!(pages >= r.host.pages_written, "{pages} < {}", r.host.pages_written);
}

#[test]
fn sequential_writes_compress_and_a_bigger_cache_hits_more() {
    let r = run_on(threedftl(48, 0.2, 4), 0.0, "pattern=sequential,read=0,size=64k,requests=300");
    assert!(metric(&r, "pages_compressed") > metric(&r, "pages_uncompressed"), "{:?}", r.ftl_metrics);
    let small = run_on(threedftl(48, 0.2, 2), 0.9, "pattern=zipf:0.9,read=0.7,size=4k,requests=3000");
    let big = run_on(threedftl(48, 0.2, 32), 0.9, "pattern=zipf:0.9,read=0.7,size=4k,requests=3000");
    let ratio = |r: &Report| r.ftl_metrics["cache_hit_ratio"].as_f64().unwrap();
    assert!(ratio(&big) > ratio(&small), "{} vs {}", ratio(&big), ratio(&small));
}

#[test]
fn configs_it_cannot_run_are_refused_with_the_reason() {
    let mut cfg = threedftl(48, 0.2, 4);
    cfg.geometry.spare_usable_bytes = 64;
    let e = ftlsim_ftl::build(&cfg).err().expect("refused").to_string();
    assert!(e.contains("geometry.spare_usable_bytes") && e.contains("106"), "{e}");
    let mut cfg = threedftl(48, 0.2, 4);
    cfg.ftl.mapping_cache_bytes = Some(100);
    let e = ftlsim_ftl::build(&cfg).err().expect("refused").to_string();
    assert!(e.contains("ftl.mapping_cache_bytes"), "{e}");
}

#[test]
fn a_run_is_deterministic() {
    let a = run_on(threedftl(48, 0.2, 4), 0.9, "pattern=hotcold:0.8:0.2,read=0.4,requests=2000");
    let b = run_on(threedftl(48, 0.2, 4), 0.9, "pattern=hotcold:0.8:0.2,read=0.4,requests=2000");
    assert_eq!(serde_json::to_string(&a).unwrap(), serde_json::to_string(&b).unwrap());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

    /// With invalid counters only (Table 8.1), GC reads every stale page of a victim and
    /// looks its LPN up; with ILog it reads a victim's IP: the oracle holds for the
    /// demand-based FTLs and 3DFTL alike.
    #[test]
    fn invalid_counters_and_ilog_keep_every_read_newest(
        m in mix(),
        ftl in prop::sample::select(vec!["dftl", "cdftl", "scftl", "dloop", "pcftl", "3dftl"]),
        tracking in prop::sample::select(vec![InvalidTracking::Counters, InvalidTracking::Ilog]),
    ) {
        let mut cfg = threedftl(48, 0.25, 4);
        cfg.ftl.name = ftl.to_string();
        cfg.ftl.mapping_cache_bytes = Some(if ftl == "cdftl" { 4360 } else { 600 });
        cfg.ftl.invalid_tracking = tracking;
        // A 10-BIF queue: write-backs, IP reads and IP moves by GC all happen.
        util::set(&mut cfg, "ftl.ilog.bifq_bytes", "350");
        if let Err(e) = run_oracle(cfg, &m, 1200) {
            prop_assert!(false, "{ftl} {tracking:?}: {e}\nmix: {m:?}");
        }
    }
}

#[test]
fn invalid_counters_read_stale_pages_and_need_4_kb_where_flags_need_a_bit_per_page() {
    for ftl in ["dftl", "3dftl"] {
        let mut flags = threedftl(48, 0.2, 4);
        flags.ftl.name = ftl.to_string();
        flags.ftl.mapping_cache_bytes = Some(2000);
        let mut counters = flags.clone();
        counters.ftl.invalid_tracking = InvalidTracking::Counters;
        let w = "pattern=uniform,read=0.3,size=4k,requests=3000";
        let (f, c) = (run_on(flags, 1.0, w), run_on(counters, 1.0, w));
        assert_eq!(metric(&f, "gc_stale_pages_read"), 0, "{ftl}");
        assert!(metric(&c, "gc_stale_pages_read") > 0, "{ftl}: {:?}", c.ftl_metrics);
        assert!(c.flash.reads.gc > f.flash.reads.gc, "{ftl}: GC reads {} vs {}", c.flash.reads.gc, f.flash.reads.gc);
        // 4 planes x 48 blocks: one byte per block against one bit per page.
        assert_eq!(metric(&c, "sram_gc_metadata_bytes"), 192, "{ftl}");
        assert_eq!(metric(&f, "sram_gc_metadata_bytes"), 192 * 16 / 8, "{ftl}");
    }
    // Other FTLs are refused.
    let mut cfg = threedftl(48, 0.2, 4);
    cfg.ftl.name = "page".into();
    cfg.ftl.invalid_tracking = InvalidTracking::Counters;
    let e = ftlsim_ftl::build(&cfg).err().expect("refused").to_string();
    assert!(e.contains("ftl.invalid_tracking"), "{e}");
}

#[test]
fn ilog_logs_invalidations_with_rare_ip_traffic_and_validates_victims_with_one_read() {
    for ftl in ["3dftl", "dftl", "cdftl", "scftl"] {
        let mut cfg = threedftl(48, 0.2, 4);
        cfg.ftl.name = ftl.into();
        if ftl != "3dftl" {
            cfg.ftl.mapping_cache_bytes = Some(if ftl == "cdftl" { 4360 } else { 2000 });
        }
        cfg.ftl.invalid_tracking = InvalidTracking::Ilog;
        let r = run_on(cfg, 1.0, "pattern=hotcold:0.8:0.2,read=0.3,size=4k,requests=6000");
        let inv = metric(&r, "ilog_invalidations");
        assert!(inv > 3000, "{ftl}: {:?}", r.ftl_metrics);
        // Table 8.2's order: far below one IP read or write per invalidation.
        let per = |k: &str| r.ftl_metrics[k].as_f64().unwrap();
        assert!(per("ilog_ip_writes_per_invalidation") < 0.05, "{ftl}: {:?}", r.ftl_metrics);
        let victims = metric(&r, "ilog_ip_reads_validation");
        assert!(victims <= r.gc.collections, "{ftl}: at most one IP read per victim");
        assert_eq!(metric(&r, "gc_stale_pages_read"), 0, "{ftl}");
        // BIFT 2 bytes per block (Table 8.1's 8 KB for 4,096 blocks) and an 8 KB BIFQ (234 BIFs).
        assert_eq!(metric(&r, "sram_gc_metadata_bytes"), 192 * 2 + 234 * 35, "{ftl}");
    }
}

/// Write `lpns` in order (version = step + 1), functionally; the versions written.
fn write_all(
    ftl: &mut dyn ftlsim_core::ftl::Ftl,
    flash: &mut ftlsim_core::flash::FlashArray,
    lpns: impl Iterator<Item = u32>,
    versions: &mut [u32],
) {
    let (mut ops, mut counts) = (Vec::new(), ftlsim_core::ftl::FlashCounts::default());
    let mut ctx = ftlsim_core::ftl::FlashCtx::new(flash, &mut ops, &mut counts, FlashTime::Functional);
    for lpn in lpns {
        versions[lpn as usize] += 1;
        ftl.write(&mut ctx, lpn, versions[lpn as usize]).unwrap();
    }
}

/// Cut the power (an idle drive: nothing torn), recover, check every page; the pages the
/// recovery read and the written pages it had to consider.
fn recover_and_check(
    ftl: &mut dyn ftlsim_core::ftl::Ftl,
    flash: &mut ftlsim_core::flash::FlashArray,
    cfg: &DriveConfig,
    versions: &[u32],
) -> (u64, u64) {
    let g = &cfg.geometry;
    let written: u64 = (0..g.blocks()).map(|b| u64::from(flash.write_pointer(b))).sum();
    flash.restart();
    let (mut ops, mut counts) = (Vec::new(), ftlsim_core::ftl::FlashCounts::default());
    {
        let mut ctx = ftlsim_core::ftl::FlashCtx::new(flash, &mut ops, &mut counts, FlashTime::Functional);
        ftl.recovery().expect("recovers").recover(&mut ctx, &crate::util::resolved(cfg)).unwrap();
    }
    let reads: u64 = counts.reads.iter().sum();
    ftl.check_invariants(flash);
    let (mut ops, mut counts) = (Vec::new(), ftlsim_core::ftl::FlashCounts::default());
    let mut ctx = ftlsim_core::ftl::FlashCtx::new(flash, &mut ops, &mut counts, FlashTime::Functional);
    for (lpn, &v) in versions.iter().enumerate() {
        let got = ftl.read(&mut ctx, lpn as u32).unwrap();
        assert_eq!(got, (v > 0).then_some(v), "lpn {lpn} after recovery");
    }
    (reads, written)
}

/// Secs. 8.1.3-8.1.4's worst cases as oracles on hand-built drives: with every page valid,
/// recovery reads at most m + n/c pages (c = 16, the fewest entries a spare area carries;
/// L1292); in general at most m + n/2 (each page read skips at least the copy it obsoleted,
/// L1294).
#[test]
fn recovery_reads_within_the_thesis_bounds() {
    let cfg = threedftl(48, 0.25, 4);
    let g = cfg.geometry.clone();
    let m = u64::from(g.blocks());
    let logical = util::resolved(&cfg).derived().logical_pages;
    let mut flash = ftlsim_core::flash::FlashArray::new(&g, false);
    flash.keep_program_stamps();
    let mut ftl = ftlsim_ftl::build(&cfg).unwrap();
    let mut versions = vec![0u32; logical as usize];
    // Every page written once, in order: all valid.
    write_all(ftl.as_mut(), &mut flash, 0..logical, &mut versions);
    let (reads, n) = recover_and_check(ftl.as_mut(), &mut flash, &cfg, &versions);
    assert!(reads <= m + n / 16, "all valid: {reads} pages read, m + n/c = {}", m + n / 16);
    // Random overwrites with GC: the general case.
    write_all(ftl.as_mut(), &mut flash, random_lpns(u64::from(logical), 3, 7).into_iter(), &mut versions);
    let (reads, n) = recover_and_check(ftl.as_mut(), &mut flash, &cfg, &versions);
    assert!(reads <= m + n / 2, "general: {reads} pages read, m + n/2 = {}", m + n / 2);
    assert!(reads > m, "the scan read pages beyond the first ones");
}

/// Blocks whose first page is an invalidation page (the thesis's m_IP).
fn ip_blocks(flash: &ftlsim_core::flash::FlashArray, g: &ftlsim_core::geometry::Geometry) -> u64 {
    (0..g.blocks())
        .filter(|&b| matches!(flash.read(g.first_page(b)), Ok(o) if o.kind == ftlsim_core::flash::PageKind::Log))
        .count() as u64
}

/// Random overwrites of the whole logical space, `passes` times over.
fn random_lpns(logical: u64, passes: u64, mut x: u64) -> Vec<u32> {
    (0..logical * passes)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % logical) as u32
        })
        .collect()
}

/// Sec. 8.1.3-8.1.4's bounds with ILog, on hand-built drives: a demand-based FTL reads at most
/// 2m + n pages (one IP per data block on top of Fig. 8.1's m + n, L1286), plus ILog's own
/// blocks; 3DFTL at most 2m + m_IP x (pages per block) + n/c with every page valid (L1296),
/// and in general m + n/2 plus ILog's blocks and one IP per block. ILog's flags save reads
/// once the drive is overwritten: 3DFTL reads fewer pages; a demand FTL, whose scan stops at
/// its oldest backup, scans no more pages but pays ILog's own reads.
#[test]
fn recovery_with_ilog_reads_within_the_thesis_bounds() {
    for ftl in ["dftl", "scftl", "3dftl"] {
        let mut reads_by_tracking = Vec::new();
        for tracking in [InvalidTracking::Counters, InvalidTracking::Ilog] {
            let mut cfg = threedftl(48, 0.25, 4);
            cfg.ftl.name = ftl.into();
            cfg.ftl.invalid_tracking = tracking;
            util::set(&mut cfg, "ftl.ilog.bifq_bytes", "350");
            if ftl != "3dftl" {
                cfg.ftl.mapping_cache_bytes = Some(600);
            }
            let g = cfg.geometry.clone();
            let (m, ppb) = (u64::from(g.blocks()), u64::from(g.pages_per_block));
            let logical = util::resolved(&cfg).derived().logical_pages;
            let mut flash = ftlsim_core::flash::FlashArray::new(&g, false);
            flash.keep_program_stamps();
            let mut ftl_box = ftlsim_ftl::build(&cfg).unwrap();
            let mut versions = vec![0u32; logical as usize];
            write_all(ftl_box.as_mut(), &mut flash, 0..logical, &mut versions);
            let m_ip = ip_blocks(&flash, &g);
            let (reads, n) = recover_and_check(ftl_box.as_mut(), &mut flash, &cfg, &versions);
            let bound = if ftl == "3dftl" { 2 * m + m_ip * ppb + n / 16 } else { 2 * m + n + m_ip * ppb };
            assert!(reads <= bound, "{ftl} {tracking:?} all valid: {reads} pages read, bound {bound}");
            let lpns = random_lpns(u64::from(logical), 3, 7);
            write_all(ftl_box.as_mut(), &mut flash, lpns.into_iter(), &mut versions);
            let m_ip = ip_blocks(&flash, &g);
            let (reads, n) = recover_and_check(ftl_box.as_mut(), &mut flash, &cfg, &versions);
            let bound = if ftl == "3dftl" { 2 * m + m_ip * ppb + n / 2 } else { 2 * m + n + m_ip * ppb };
            assert!(reads <= bound, "{ftl} {tracking:?} general: {reads} pages read, bound {bound}");
            eprintln!("{ftl} {tracking:?}: general case {reads} pages read of {n} written, m = {m}, m_IP = {m_ip}");
            reads_by_tracking.push((reads, m_ip * ppb + m));
        }
        let [(without, _), (with, ilog_pages)] = reads_by_tracking[..] else { unreachable!() };
        if ftl == "3dftl" {
            // Fig. 8.6: the flags skip pages the scan of Fig. 8.5 would read.
            assert!(with < without, "{ftl}: ILog should save reads: {with} vs {without}");
        } else {
            // Fig. 8.4: ILog's own reads (its blocks, an IP per data block) may cost more than
            // its flags save ("slightly worse", L1286), but the scan itself reads no more.
            assert!(with - ilog_pages <= without, "{ftl}: scan {} vs {without}", with - ilog_pages);
        }
    }
}

/// `[ftl.threedftl] lookup_transfer = "spare"` moves only the spare area of each page a
/// lookup reads: the same flash reads, the mapping reads' bus time a spare area's instead of
/// a page's, so the reads wait less; data stays correct (the oracle).
#[test]
fn spare_only_lookups_read_the_same_pages_in_less_time() {
    let workload = "pattern=uniform,read=0.7,size=4k,requests=3000";
    let base = threedftl(48, 0.25, 4);
    let mut spare = base.clone();
    util::set(&mut spare, "ftl.threedftl.lookup_transfer", "\"spare\"");
    let (a, b) = (run_on(base, 1.0, workload), run_on(spare, 1.0, workload));
    assert_eq!(metric(&a, "spare_reads"), metric(&b, "spare_reads"), "the same lookups");
    assert!(metric(&a, "spare_reads") > 500, "lookups miss the 4-line CMT often");
    assert!(
        b.response_time.read.mean_ns < a.response_time.read.mean_ns,
        "spare-only {} ns, page {} ns",
        b.response_time.read.mean_ns,
        a.response_time.read.mean_ns
    );
    let bad = threedftl(48, 0.25, 4)
        .with_overrides(&[("ftl.threedftl.lookup_transfer".into(), "\"bits\"".into())], |c| {
            ftlsim_ftl::build(&c).map(|_| ())
        });
    assert!(bad.is_err_and(|e| e.to_string().contains("ftl.threedftl")));
}
