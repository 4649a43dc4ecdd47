//! WAFTL (issue 16) on the flash model: the data oracle through the Buffer Zone, migrations,
//! BMB rewrites, read-miss copies and offline GC, over random workloads; each branch of
//! Algorithm 1 seen at work; offline GC only in idle time; determinism; power cuts anywhere
//! in each of its mechanisms (beyond the conformance suite's drives).

use crate::crash;
use crate::util;

use ftlsim_core::config::DriveConfig;
use ftlsim_core::flash::{FlashArray, PageKind};
use ftlsim_core::ftl::Ftl;
use ftlsim_core::metrics::NoObserver;
use ftlsim_core::sim::{Precondition, Replay, Report, RunOptions};
use ftlsim_core::workload::{Generator, WorkloadSpec};
use proptest::prelude::*;
use util::{metric, mix, run_oracle, small_config};

/// A drive of 4 planes x 48 blocks of 16 pages with a Buffer Zone of `zone_blocks` per plane
/// and a tiny CPMT; `extra` adds `[ftl.waftl]` lines.
fn waftl(zone_blocks: u32, extra: &str) -> DriveConfig {
    let zone = u64::from(zone_blocks) * 4 * 16 * 4096;
    small_config(
        48,
        16,
        0.3,
        &format!(
            "[ftl]\nname = \"waftl\"\nmapping_cache_bytes = 132\n[ftl.waftl]\nbuffer_zone_bytes = {zone}\n{extra}"
        ),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn every_read_returns_the_newest_version(
        m in mix(),
        zone in 1u32..4,
        threshold in 0u32..17,
        dynamic in any::<bool>(),
        foreground in any::<bool>(),
        idle_gc in any::<bool>(),
        whole_nodes in any::<bool>(),
        copies in prop::sample::select(vec!["zone_blocks", "all", "off"]),
        prewrite in prop::sample::select(vec!["home", "zone"]),
    ) {
        let mut extra = if dynamic { "dynamic_d = 0.05".to_string() } else { format!("threshold_pages = {threshold}") };
        let step = if whole_nodes { "block_node" } else { "page" };
        extra += &format!("\nmigration_step = \"{step}\"\nread_miss_copy = \"{copies}\"\nprewrite = \"{prewrite}\"");
        // Incremental migration needs room for two zones: at most 2 blocks per plane here.
        let zone = if foreground { zone } else { zone.min(2) };
        extra += if foreground { "\nmigration = \"foreground\"" } else { "\nmigration = \"incremental\"" };
        let mut cfg = waftl(zone, &extra);
        // Idle time (open loop) then erases waiting blocks and migrates draining nodes.
        cfg.ftl.background_gc = idle_gc;
        cfg.ftl.idle_threshold_ns = 1_000;
        if let Err(e) = run_oracle(cfg, &m, 1500) {
            prop_assert!(false, "{e}\nzone {zone}, {extra}, idle GC {idle_gc}\nmix: {m:?}");
        }
    }
}

/// Run `workload` on a drive filled to `fill`; the report.
fn run_on(cfg: DriveConfig, fill: f64, workload: &str, open_loop: bool) -> Report {
    let mut sim = ftlsim_ftl::simulator(cfg, true).unwrap();
    sim.precondition(&Precondition { fill, ..Precondition::default() }).unwrap();
    let spec = WorkloadSpec::parse(workload).unwrap();
    let mut gen = Generator::new(&spec, sim.derived().logical_bytes, 3).unwrap().map(Ok);
    let replay = if open_loop { Replay::Open { time_scale: 1.0 } } else { Replay::Closed { queue_depth: 8 } };
    let opts = RunOptions { replay, check_every: 101, interval_ns: 0, ..RunOptions::default() };
    let r = sim.run(&mut gen, &opts, &mut NoObserver).unwrap();
    sim.check_invariants();
    r
}

/// [`run_on`] a drive 90% full.
fn run(cfg: DriveConfig, workload: &str, open_loop: bool) -> Report {
    run_on(cfg, 0.9, workload, open_loop)
}

#[test]
fn sequential_blocks_go_block_mapped_and_their_updates_rewrite_them() {
    // Whole-block sequential writes: new blocks reach the threshold (a full block) and become
    // BMBs; then small random updates of them rewrite the BMBs.
    let r = run_on(waftl(2, ""), 0.0, "pattern=sequential,read=0,size=64k,requests=400", false);
    let migrations = metric(&r, "waftl_migrations");
    assert!(migrations > 2, "{:?}", r.ftl_metrics);
    assert!(metric(&r, "waftl_new_to_bmb") > 10, "{:?}", r.ftl_metrics);
    // A migration whose most popular block is new sends it to the PMB whatever its size
    // (once the sequential stream wraps, the blocks are rewrites and none is new).
    // On an empty drive every mapped block was migrated by the run.
    assert_eq!(metric(&r, "waftl_run_block_mapped_blocks"), metric(&r, "waftl_block_mapped_blocks"));
    assert_eq!(metric(&r, "waftl_run_page_mapped_blocks"), metric(&r, "waftl_page_mapped_blocks"));
    let popular = metric(&r, "waftl_new_most_popular_to_pmb");
    assert!(popular >= 1 && popular <= migrations, "{:?}", r.ftl_metrics);
    let r = run(waftl(2, ""), "pattern=uniform,read=0,size=4k,requests=3000", false);
    assert!(metric(&r, "waftl_bmb_rewrites") > 10, "{:?}", r.ftl_metrics);
}

#[test]
fn scattered_small_writes_go_page_mapped() {
    let r = run(waftl(2, "threshold_pages = 16"), "pattern=uniform,read=0,size=4k,requests=3000", false);
    // After the fill, most blocks were migrated whole (BMB); scattered 4 KiB writes rewrite them.
    // With a threshold of 2 pages instead, ones with 2 pages go to BMBs only if new; updates of
    // page-mapped blocks go to the PMB.
    let low = run(waftl(2, "threshold_pages = 2"), "pattern=uniform,read=0,size=4k,requests=3000", false);
    assert!(metric(&r, "waftl_page_mapped_blocks") + metric(&low, "waftl_page_mapped_blocks") > 0);
    let reads = run(waftl(2, "read_miss_copy = \"all\""), "pattern=uniform,read=1,size=4k,requests=1000", false);
    assert!(metric(&reads, "waftl_read_miss_copies") > 800, "{:?}", reads.ftl_metrics);
    assert!(metric(&reads, "waftl_dropped_clean_blocks") > 0, "clean copies of block-mapped data are dropped");
}

#[test]
fn read_misses_are_copied_only_for_blocks_the_zone_holds_written_pages_of() {
    // Reads alone: no block has a written page in the zone, so no copy could join a BMB
    // rewrite and none is made (the default); every read miss is counted as not copied.
    let reads = run(waftl(2, ""), "pattern=uniform,read=1,size=4k,requests=1000", false);
    assert_eq!(metric(&reads, "waftl_read_miss_copies"), 0, "{:?}", reads.ftl_metrics);
    assert!(metric(&reads, "waftl_read_misses_not_copied") > 800, "{:?}", reads.ftl_metrics);
    assert_eq!(metric(&reads, "waftl_migration_programs"), 0, "{:?}", reads.ftl_metrics);
    // Sequential reads behind sequential writes of the same blocks: copies are made.
    let mixed = run(waftl(2, ""), "pattern=zipf:1.2,read=0.6,size=4k,requests=3000", false);
    assert!(metric(&mixed, "waftl_read_miss_copies") > 0, "{:?}", mixed.ftl_metrics);
    let all = run(waftl(2, "read_miss_copy = \"all\""), "pattern=zipf:1.2,read=0.6,size=4k,requests=3000", false);
    assert!(
        metric(&all, "waftl_read_miss_copies") > metric(&mixed, "waftl_read_miss_copies"),
        "all: {:?}\nzone blocks: {:?}",
        all.ftl_metrics,
        mixed.ftl_metrics
    );
}

#[test]
fn the_host_programs_its_pages_once_and_waftls_own_copies_are_counted_apart() {
    // Every zone write is the host's (WAF host 1.00, as for every FTL); migration and
    // read-miss copies are WAFTL's own work, GC-tagged and counted under their own names,
    // and with the page-mapped part's GC moves and translation writes they make up the rest.
    let r = run(waftl(2, "read_miss_copy = \"all\""), "pattern=uniform,read=0.5,size=4k,requests=4000", false);
    let host_pages = r.host.pages_written as f64;
    assert_eq!(r.write_amplification.host, 1.0, "{:?}", r.write_amplification);
    let own = metric(&r, "waftl_migration_programs") + metric(&r, "waftl_read_miss_copies") + r.gc.pages_moved;
    assert!(metric(&r, "waftl_migration_programs") > 0 && metric(&r, "waftl_read_miss_copies") > 0);
    let gc = r.write_amplification.gc * host_pages;
    assert!((gc - own as f64).abs() < 0.5 + 1e-6 * gc, "GC-tagged programs {gc} vs causes {own}: {:?}", r.ftl_metrics);
}

#[test]
fn never_written_pages_a_read_asks_for_are_put_home_not_into_the_zone() {
    // An empty drive read at random: each page is materialized off the clock. At home (the
    // default) nothing enters the zone; through the zone (the counterfactual) the pages fill
    // it and the run migrates them.
    let w = "pattern=uniform,read=1,size=4k,requests=2000";
    let home = run_on(waftl(2, ""), 0.0, w, false);
    assert_eq!(metric(&home, "waftl_prewrites_home"), home.host.unmapped_page_reads, "{:?}", home.ftl_metrics);
    assert!(home.host.unmapped_page_reads > 1000);
    for k in ["waftl_migrations", "waftl_migration_programs", "waftl_read_miss_copies"] {
        assert_eq!(metric(&home, k), 0, "{k}: {:?}", home.ftl_metrics);
    }
    let zone = run_on(waftl(2, "prewrite = \"zone\""), 0.0, w, false);
    assert_eq!(metric(&zone, "waftl_prewrites_home"), 0);
    assert!(metric(&zone, "waftl_migrations") > 5, "{:?}", zone.ftl_metrics);
    assert!(metric(&zone, "waftl_migration_programs") > 1000, "the zone's pages migrated in the run");
}

/// 64 KB writes of whole logical blocks every 10 ms and, 9 ms after each, a 4 KB read of a
/// page written before: the draining zone moves out in the idle time between them (the write
/// that finds the zone full moves a block's worth paced, done within 6 ms; the reads come
/// after it).
fn spaced_blocks_and_reads(cfg: DriveConfig) -> Report {
    use ftlsim_core::host::{IoOp, Request};
    let mut sim = ftlsim_ftl::simulator(cfg, true).unwrap();
    sim.precondition(&Precondition::default()).unwrap();
    let mut reqs = Vec::new();
    let mut x = 7u64;
    for k in 0..300u64 {
        let t = k * 10_000_000;
        reqs.push(Request {
            arrival_ns: t,
            think_ns: 0,
            device: 0,
            offset_sector: k % 40 * 128,
            sectors: 128,
            op: IoOp::Write,
        });
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let page = (x >> 33) % (k.min(39) + 1) * 16;
        reqs.push(Request {
            arrival_ns: t + 9_000_000,
            think_ns: 0,
            device: 0,
            offset_sector: page * 8,
            sectors: 8,
            op: IoOp::Read,
        });
    }
    let mut gen = reqs.into_iter().map(Ok);
    let opts = RunOptions {
        replay: Replay::Open { time_scale: 1.0 },
        check_every: 7,
        interval_ns: 0,
        ..RunOptions::default()
    };
    let r = sim.run(&mut gen, &opts, &mut NoObserver).unwrap();
    sim.check_invariants();
    r
}

#[test]
fn idle_time_migration_holds_a_read_for_at_most_one_page_copy() {
    let drive = |step: &str| {
        let mut cfg = waftl(2, &format!("threshold_pages = 16\nmigration_step = \"{step}\""));
        cfg.ftl.background_gc = true;
        cfg.ftl.idle_threshold_ns = 1_000;
        // Erases shorter than a page copy: the bound below is the copy's.
        util::set(&mut cfg, "timing.t_bers_ns", "200000");
        cfg
    };
    let page = spaced_blocks_and_reads(drive("page"));
    let node = spaced_blocks_and_reads(drive("block_node"));
    for r in [&page, &node] {
        assert!(metric(r, "waftl_nodes_migrated_idle") > 100, "{:?}", r.ftl_metrics);
        assert_eq!(metric(r, "waftl_nodes_migrated_at_full_zone"), 0, "{:?}", r.ftl_metrics);
    }
    // One read: command + tR + transfer = 75.1 us; one controller copy under way: a read and
    // a program (command + transfer + tPROG) = 325.2 us; the channel the two planes share
    // may hold each of the read's bus phases for a transfer, 2 x 50.1 us. Anything beyond is
    // a second page operation.
    let bound = 75_100 + 325_200 + 2 * 50_100;
    let (p, n) = (page.response_time.read.max_ns, node.response_time.read.max_ns);
    assert!(
        p <= bound,
        "page steps: a read took {p} ns, more than one copy beyond its own ({bound} ns); nodes: {n} ns"
    );
    assert!(n > 3 * bound, "whole-node steps (the counterfactual) should hold a read for several copies: {n} ns");
}

#[test]
fn offline_gc_erases_only_in_idle_time() {
    let busy = run(waftl(1, ""), "pattern=uniform,read=0,size=4k,requests=3000", false);
    assert_eq!(metric(&busy, "waftl_offline_erases"), 0, "closed loop: no idle time");
    assert!(metric(&busy, "waftl_online_erases") > 0);
    let mut idle_cfg = waftl(1, "");
    idle_cfg.ftl.background_gc = true;
    idle_cfg.ftl.idle_threshold_ns = 1_000;
    let idle = run(idle_cfg, "pattern=uniform,read=0,size=4k,arrival=poisson:20ms,requests=3000", true);
    assert!(metric(&idle, "waftl_offline_erases") > 0, "{:?}", idle.ftl_metrics);
    assert!(metric(&idle, "waftl_idle_periods") > 100, "{:?}", idle.ftl_metrics);
}

#[test]
fn a_full_zone_drains_in_idle_time_or_paced_by_the_writes_never_all_at_once() {
    // Open loop with long gaps: the draining zone moves out in idle time.
    let mut idle_cfg = waftl(1, "");
    idle_cfg.ftl.background_gc = true;
    idle_cfg.ftl.idle_threshold_ns = 1_000;
    let idle = run_on(idle_cfg, 0.0, "pattern=uniform,read=0,size=4k,arrival=poisson:20ms,requests=2000", true);
    assert!(metric(&idle, "waftl_migrations") > 5, "{:?}", idle.ftl_metrics);
    assert!(metric(&idle, "waftl_nodes_migrated_idle") > 100, "{:?}", idle.ftl_metrics);
    assert_eq!(metric(&idle, "waftl_nodes_migrated_at_full_zone"), 0, "{:?}", idle.ftl_metrics);
    // Closed loop, no idle time: every node moves with the writes into the new zone, none is
    // left when it fills.
    let busy = run_on(waftl(1, ""), 0.0, "pattern=uniform,read=0,size=4k,requests=2000", false);
    assert_eq!(metric(&busy, "waftl_nodes_migrated_idle"), 0);
    assert!(metric(&busy, "waftl_nodes_migrated_paced") > 100, "{:?}", busy.ftl_metrics);
    assert_eq!(metric(&busy, "waftl_nodes_migrated_at_full_zone"), 0, "{:?}", busy.ftl_metrics);
    // Foreground: every node moves in the request that finds the zone full; the worst
    // response (open loop, no queueing behind other requests) is then a whole zone's copy,
    // far beyond paced migration's few nodes.
    // (A short run on an empty drive: no collection of the page-mapped part in the way.)
    let spaced = "pattern=uniform,read=0,size=4k,arrival=poisson:20ms,requests=800";
    let fg = run_on(waftl(2, "migration = \"foreground\""), 0.0, spaced, true);
    assert!(metric(&fg, "waftl_nodes_migrated_at_full_zone") > 200, "{:?}", fg.ftl_metrics);
    assert_eq!(metric(&fg, "waftl_nodes_migrated_paced") + metric(&fg, "waftl_nodes_migrated_idle"), 0);
    let paced = run_on(waftl(2, ""), 0.0, spaced, true);
    assert_eq!(metric(&paced, "waftl_nodes_migrated_at_full_zone"), 0, "{:?}", paced.ftl_metrics);
    let (f, p) = (fg.response_time.all.max_ns, paced.response_time.all.max_ns);
    assert!(f > 4 * p, "foreground max {f} ns, incremental {p} ns\n{:?}\n{:?}", fg.ftl_metrics, paced.ftl_metrics);
}

#[test]
fn preconditioning_leaves_no_migration_or_erase_to_the_run() {
    // A fill through WAFTL leaves full zones behind; the drive settles before the run, so a
    // few reads in idle time find nothing to erase or migrate.
    let mut cfg = waftl(2, "");
    cfg.ftl.background_gc = true;
    cfg.ftl.idle_threshold_ns = 1_000;
    let r = run_on(cfg, 0.9, "pattern=uniform,span=0.9,read=1,size=4k,arrival=poisson:20ms,requests=20", true);
    assert_eq!(metric(&r, "waftl_offline_erases") + metric(&r, "waftl_online_erases"), 0, "{:?}", r.ftl_metrics);
    assert_eq!(metric(&r, "waftl_nodes_migrated_idle"), 0, "{:?}", r.ftl_metrics);
    assert_eq!(r.flash.erases.total, 0);
    // The fill's blocks are mapped but the run migrated none of them.
    assert!(metric(&r, "waftl_block_mapped_blocks") > 0);
    assert_eq!(metric(&r, "waftl_run_page_mapped_blocks") + metric(&r, "waftl_run_block_mapped_blocks"), 0);
}

#[test]
fn a_run_is_deterministic() {
    let a = run(waftl(2, "dynamic_d = 0.03"), "pattern=zipf:0.9,read=0.3,requests=2000", false);
    let b = run(waftl(2, "dynamic_d = 0.03"), "pattern=zipf:0.9,read=0.3,requests=2000", false);
    assert_eq!(serde_json::to_string(&a).unwrap(), serde_json::to_string(&b).unwrap());
}

#[test]
fn a_zone_larger_than_the_spare_blocks_is_refused_with_the_numbers() {
    let e = ftlsim_ftl::build(&waftl(40, "")).err().expect("refused").to_string();
    assert!(e.contains("ftl.waftl.buffer_zone_bytes") && e.contains("spare blocks per plane"), "{e}");
    // Incremental migration needs two zones' room, foreground one.
    let (zones, fits_once) = (1..40)
        .map(|z| (z, ftlsim_ftl::build(&waftl(z, "migration = \"foreground\"")).is_ok()))
        .take_while(|p| p.1)
        .last()
        .unwrap();
    assert!(fits_once && zones >= 2);
    assert!(ftlsim_ftl::build(&waftl(zones, "")).is_err(), "{zones} blocks per plane: two zones do not fit");
    assert!(ftlsim_ftl::build(&waftl(zones / 2, "")).is_ok());
    // GC preemption keeps deferred work per plane; a migration copies across planes.
    let mut cfg = waftl(1, "");
    cfg.ftl.gc_preemption = ftlsim_core::config::GcPreemption::Reads;
    let e = ftlsim_ftl::build(&cfg).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(e.contains("ftl.gc_preemption") && e.contains("migration_step"), "{e}");
}

// ---------------------------------------------------------------------------------------
// Power cuts.

/// WAFTL's own drives for power cuts: BMBs from 2 pages up (rewrites, `bmb_to_pmb`), the
/// dynamic threshold, foreground migration copying every read miss, incremental migration
/// with a zone of two blocks per plane, and whole-node steps with never-written pages
/// prewritten into the zone (the counterfactuals of issue 34). The CPMT holds 8 entries: translation pages are written back all along.
fn cut_drives() -> Vec<(&'static str, DriveConfig)> {
    let mut drives = vec![
        ("threshold 2 pages", waftl(1, "threshold_pages = 2")),
        ("dynamic threshold", waftl(1, "dynamic_d = 0.05")),
        (
            "foreground migration, every read miss copied",
            waftl(2, "threshold_pages = 4\nmigration = \"foreground\"\nread_miss_copy = \"all\""),
        ),
        (
            "whole-node steps, pages prewritten into the zone",
            waftl(2, "threshold_pages = 4\nmigration_step = \"block_node\"\nprewrite = \"zone\""),
        ),
        ("incremental, 2 blocks per plane", waftl(2, "threshold_pages = 8")),
    ];
    for (_, cfg) in &mut drives {
        util::set(cfg, "ftl.mapping_cache_bytes", "66");
    }
    drives
}

fn waftl_info() -> &'static ftlsim_ftl::FtlInfo {
    ftlsim_ftl::info("waftl").unwrap()
}

#[test]
fn waftl_recovers_every_acknowledged_write_from_a_cut_anywhere() {
    for (k, (label, cfg)) in cut_drives().into_iter().enumerate() {
        // Torn zone, home and translation pages, and an erase. Where most data goes block-mapped
        // (BMBs from 4 pages up) the CPMT writes back rarely: translation pages are torn on the
        // other drives.
        let rare = cfg.ftl.sections["waftl"].get("threshold_pages").and_then(|v| v.as_integer()) == Some(4);
        let kinds: &[PageKind] = if rare {
            &[PageKind::Staged, PageKind::Data]
        } else {
            &[PageKind::Staged, PageKind::Data, PageKind::Translation]
        };
        if let Err(e) = crash::cut_drive(waftl_info(), k, label, &cfg, kinds) {
            panic!("{e}");
        }
    }
}

/// WAFTL's counters whose growth marks each of its mechanisms.
const MECHANISMS: [&str; 7] = [
    "waftl_new_to_bmb",
    "waftl_bmb_rewrites",
    "waftl_pmb_updates",
    "waftl_new_to_pmb",
    "waftl_read_miss_copies",
    "waftl_offline_erases",
    "waftl_online_erases",
];

#[test]
fn a_cut_inside_each_mechanism_loses_nothing_and_a_cut_rewrite_is_finished() {
    let f = waftl_info();
    for (label, cfg) in cut_drives() {
        // The uncut run, host operation by host operation: the flash mutations so far and
        // each mechanism's counter.
        let mut steps: Vec<(u64, Vec<u64>)> = Vec::new();
        let mut probe = |ftl: &dyn Ftl, flash: &FlashArray| {
            let m = ftl.extra_metrics();
            steps.push((flash.mutations(), MECHANISMS.iter().map(|k| m[*k].as_u64().unwrap()).collect()));
        };
        crash::crash_case_probed(f, &cfg, 7, u64::MAX / 2, &mut probe)
            .unwrap_or_else(|e| panic!("{label}, uncut: {e}"));
        let mut finished = 0;
        for (i, name) in MECHANISMS.iter().enumerate() {
            // The first host operation in which the mechanism ran: cut at 8 points of it, and
            // at each of its mutations for a BMB rewrite (a foreground migration moves a whole
            // zone in one operation).
            let Some(w) = steps.windows(2).find(|w| w[1].1[i] > w[0].1[i]) else {
                assert!(*name == "waftl_offline_erases" || *name == "waftl_new_to_pmb", "{label}: {name} never ran");
                continue;
            };
            let (from, to) = (w[0].0, w[1].0);
            let points = if *name == "waftl_bmb_rewrites" { (to - from).min(400) } else { 8 };
            for j in 0..points {
                let at = from + (to - from) * j / points;
                let c = crash::crash_case(f, &cfg, 7, at)
                    .unwrap_or_else(|e| panic!("{label}: a cut in {name} at mutation {at} (of {from}..{to}): {e}"));
                assert!(c.torn.is_some(), "{label}: the cut at {at} tore nothing");
                if *name == "waftl_bmb_rewrites" {
                    finished += c.metrics_after_recovery["waftl_recovery_rewrites_finished"].as_u64().unwrap();
                }
            }
        }
        assert!(finished > 0, "{label}: no cut inside a BMB rewrite left recovery anything to finish");
    }
}

#[test]
fn recovery_without_a_cut_keeps_every_logical_blocks_mapping() {
    let f = waftl_info();
    for (label, cfg) in cut_drives() {
        let mut before = serde_json::Map::new();
        let mut probe = |ftl: &dyn Ftl, _: &FlashArray| before = ftl.extra_metrics();
        let c = crash::crash_case_probed(f, &cfg, 3, u64::MAX / 2, &mut probe).unwrap();
        assert!(c.torn.is_none());
        for k in ["waftl_block_mapped_blocks", "waftl_page_mapped_blocks"] {
            assert_eq!(c.metrics_after_recovery[k], before[k], "{label}: {k} before the restart and after recovery");
        }
        assert!(before["waftl_block_mapped_blocks"].as_u64().unwrap() > 0, "{label}: no BMB to recover");
    }
}
