//! The reliability model (seed 003 Table I) under the FTLs that copy back within it (issue
//! 18): FastGC's worst-case limit and rcFTL's per-page quota. The flash model refuses any
//! copy-back a page's quota does not cover, so a run that completes proves no page was moved
//! past what its blocks allow; the tests add the data oracle, each limit's own bound on every
//! valid page at the end, and the limits' order at high wear.

use crate::util;

use ftlsim_core::config::DriveConfig;
use ftlsim_core::metrics::NoObserver;
use ftlsim_core::sim::{Precondition, Replay, Report, RunOptions};
use ftlsim_core::workload::{Generator, WorkloadSpec};
use proptest::prelude::*;
use util::{metric, mix, run_oracle, small_config};

/// A small drive of 4 planes x 48 blocks of 16 pages with the reliability model at
/// `pe_cycles`, running `ftl`, with the spare room its open blocks need ([`util::drive_for`]).
fn drive(ftl: &str, pe_cycles: u32) -> DriveConfig {
    let f = ftlsim_ftl::info(ftl).unwrap();
    util::drive_for(f, 48, 16, &format!("[reliability]\npe_cycles = {pe_cycles}\nclass_shares = [0.3, 0.5, 0.2]"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

    /// Every read returns the newest version and every valid page ends within its limit:
    /// FastGC's consecutive copy-backs below the worst class's threshold at the starting wear,
    /// the per-page quota's spending within Q_init (which the flash enforces on each copy-back),
    /// rcFTL's block quotas never above what their pages have left (its invariants).
    #[test]
    fn copy_backs_stay_within_each_limit_and_reads_stay_newest(
        m in mix(),
        ftl in prop::sample::select(vec!["fastgc", "rcftl-per-page", "rcftl"]),
        pe in prop::sample::select(vec![0u32, 700, 2500, 4500]),
    ) {
        let (sim, _) = match run_oracle(drive(ftl, pe), &m, 1500) {
            Ok(x) => x,
            Err(e) => return Err(TestCaseError::fail(format!("{ftl} at {pe}: {e}\nmix: {m:?}"))),
        };
        let f = sim.flash();
        let model = f.reliability().expect("model on").clone();
        for p in 0..f.geometry().pages() {
            if !f.is_valid(p) {
                continue;
            }
            prop_assert!(f.quota_spent(p) <= model.q_init(), "page {p} spent {}", f.quota_spent(p));
            if ftl == "fastgc" {
                prop_assert!(f.copyback_count(p) <= model.worst_ct(pe), "page {p}: {} copy-backs", f.copyback_count(p));
            }
        }
    }
}

fn run(ftl: &str, pe: u32) -> Report {
    let m = util::Mix { seed: 5, open_loop: false, read: 0.2, trim: 0.0, pattern: "hotcold:0.8:0.2", fill: 1.0 };
    run_oracle(drive(ftl, pe), &m, 4000).unwrap_or_else(|e| panic!("{ftl} at {pe}: {e}")).1
}

#[test]
fn at_high_wear_fastgc_stops_copying_back_where_the_per_page_quota_still_can() {
    // 4.5K cycles: the worst class allows none, so FastGC copies everything off-chip; the
    // per-page quota still copies back from best and median blocks (Table I: 2 and 1).
    let fast = run("fastgc", 4500);
    let quota = run("rcftl-per-page", 4500);
    assert!(metric(&fast, "gc_offchip_copies") > 0, "{:?}", fast.ftl_metrics);
    assert_eq!(metric(&fast, "gc_copybacks"), 0);
    assert!(metric(&quota, "gc_copybacks") > 0, "{:?}", quota.ftl_metrics);
    assert!(metric(&quota, "gc_copybacks_refused") > 0, "the quota ran out on some pages");
    // Young blocks: FastGC copies back too (worst CT 3), the quota more (CT 3-5).
    let (fast0, quota0) = (run("fastgc", 0), run("rcftl-per-page", 0));
    assert!(metric(&fast0, "gc_copybacks") > 0);
    let share = |r: &Report| metric(r, "gc_copybacks") as f64 / r.gc.pages_moved as f64;
    assert!(share(&quota0) >= share(&fast0), "{} vs {}", share(&quota0), share(&fast0));
    assert!(share(&quota0) > share(&quota), "wear leaves fewer copy-backs");
}

#[test]
fn rcftl_copies_back_by_block_quota_and_goes_off_chip_when_it_runs_out() {
    for pe in [0, 4500] {
        let r = run("rcftl", pe);
        let (cb, off) = (metric(&r, "rcftl_victims_copyback"), metric(&r, "rcftl_victims_offchip"));
        assert!(cb > 0 && off > 0, "pe {pe}: {:?}", r.ftl_metrics);
        assert_eq!(metric(&r, "rcftl_quota_levels"), 8);
        let by_quota = r.ftl_metrics["rcftl_blocks_by_quota"].as_object().unwrap();
        assert!(by_quota.len() == 8 && by_quota["60"].as_u64().unwrap() > 0, "{by_quota:?}");
        // Pages of the victims whose quota ran out are the refused copy-backs.
        let refused = metric(&r, "gc_copybacks_refused");
        assert!(refused > 0 && refused <= metric(&r, "gc_offchip_copies"), "pe {pe}: {:?}", r.ftl_metrics);
    }
    // Young blocks: more of the victims copy back than at 4.5K cycles.
    let share = |r: &Report| metric(r, "gc_copybacks") as f64 / r.gc.pages_moved as f64;
    assert!(share(&run("rcftl", 0)) > share(&run("rcftl", 4500)));
}

#[test]
fn runs_are_deterministic_and_the_limits_need_the_model() {
    let a = run("rcftl-per-page", 2500);
    let b = run("rcftl-per-page", 2500);
    assert_eq!(serde_json::to_string(&a).unwrap(), serde_json::to_string(&b).unwrap());
    // All 26 reachable levels when asked (26 + 1 open blocks per plane need the room), at
    // least two.
    let mut cfg = drive("rcftl", 0);
    cfg.overprovisioning.share = Some(0.75);
    util::set(&mut cfg, "ftl.rcftl.quota_levels", "40");
    let r = run_oracle(
        cfg.clone(),
        &util::Mix { seed: 5, open_loop: false, read: 0.2, trim: 0.0, pattern: "uniform", fill: 1.0 },
        500,
    );
    assert_eq!(metric(&r.unwrap().1, "rcftl_quota_levels"), 26);
    // "all" keeps the same 26, and the capability counts them (and the host stream), not 40.
    util::set(&mut cfg, "ftl.rcftl.quota_levels", "all");
    let f = ftlsim_ftl::info("rcftl").unwrap();
    assert_eq!((f.capabilities.open_blocks_per_plane)(&cfg), 27);
    let r = run_oracle(
        cfg.clone(),
        &util::Mix { seed: 5, open_loop: false, read: 0.2, trim: 0.0, pattern: "uniform", fill: 1.0 },
        500,
    );
    assert_eq!(metric(&r.unwrap().1, "rcftl_quota_levels"), 26);
    for (bad, says) in [("most", "expected a count of levels or \"all\""), ("-3", "expected a count of levels")] {
        let e = cfg.with_overrides(&[("ftl.rcftl.quota_levels".into(), bad.into())], ftlsim_ftl::resolve);
        let e = e.expect_err(bad).to_string();
        assert!(e.contains(says), "{bad}: {e}");
    }
    let e = cfg.with_overrides(&[("ftl.rcftl.quota_levels".into(), "1".into())], ftlsim_ftl::resolve);
    let e = e.expect_err("refused").to_string();
    assert!(e.contains("ftl.rcftl.quota_levels = 1"), "{e}");
    let cfg = small_config(48, 16, 0.25, "[ftl]\nname = \"fastgc\"");
    let e = ftlsim_ftl::build(&cfg).err().expect("refused").to_string();
    assert!(e.contains("reliability") && e.contains("--pe-cycles"), "{e}");
    // The page FTL copying back without checking the model is stopped by the flash.
    let cfg =
        small_config(48, 16, 0.25, "[ftl]\nname = \"page\"\ngc_copy = \"copyback\"\n[reliability]\npe_cycles = 4500");
    let m = util::Mix { seed: 5, open_loop: false, read: 0.2, trim: 0.0, pattern: "hotcold:0.8:0.2", fill: 1.0 };
    let e = run_oracle(cfg, &m, 4000).err().expect("the flash refuses");
    assert!(e.contains("reliability rule"), "{e}");
}

/// rcFTL's mode selector (Sec. IV-B) on a drive with a write-behind buffer and idle time:
/// background victims go off-chip while the buffer is quiet, foreground ones copy back; off
/// (rcFTL-) the background copies back too. Reads stay newest either way, and the time
/// series counts every victim by its mode.
#[test]
fn the_mode_selector_sends_quiet_background_victims_off_chip() {
    let run_with = |selector: bool, pe: u32| {
        let mut cfg = util::drive_for(
            ftlsim_ftl::info("rcftl").unwrap(),
            48,
            16,
            &format!(
                "background_gc = true\nbackground_gc_threshold_blocks = 4\n[ftl.rcftl]\nmode_selector = {selector}\n\
                 [host]\nwrite_buffer_bytes = 65536\nwrite_buffer_policy = \"write_behind\"\n[reliability]\npe_cycles = {pe}"
            ),
        );
        cfg.reliability.as_mut().unwrap().class_shares = [0.3, 0.5, 0.2];
        let mut sim = ftlsim_ftl::simulator(cfg, true).unwrap();
        sim.precondition(&Precondition {
            fill: 1.0,
            steady_state: true,
            max_overwrite_passes: 1.0,
            seed: 3,
            fill_offset: 0.0,
            overwrite_span: 0.0,
            trim_to: None,
        })
        .unwrap();
        let spec =
            WorkloadSpec::parse("pattern=hotcold:0.8:0.2,read=0.2,size=4k,arrival=think:4:0.5:3ms,requests=6000")
                .unwrap();
        let logical_bytes = sim.derived().logical_bytes;
        let mut gen = Generator::new(&spec, logical_bytes, 9).unwrap().map(Ok);
        let mut rows = util::Rows::default();
        let opts = RunOptions {
            replay: Replay::Closed { queue_depth: 4 },
            check_every: 97,
            interval_ns: 50_000_000,
            ..RunOptions::default()
        };
        let r = sim.run(&mut gen, &opts, &mut rows).unwrap();
        let logical = sim.derived().logical_pages;
        let back = RunOptions { replay: Replay::Closed { queue_depth: 4 }, interval_ns: 0, ..RunOptions::default() };
        sim.run(&mut util::read_all(logical), &back, &mut NoObserver).unwrap();
        (r, rows.0)
    };
    // Every wear: a victim keeps one destination (a sweep once ran a plane out of blocks when
    // foreground GC switched a background victim's mode half-way).
    for pe in [0, 4500] {
        let (r, _) = run_with(true, pe);
        assert!(metric(&r, "rcftl_dmms_background_offchip") > 0, "pe {pe}");
    }
    let (on, rows) = run_with(true, 2500);
    assert_eq!(on.ftl_metrics["rcftl_mode_selector"], "on");
    let (bg_cb, bg_off, urgent) = (
        metric(&on, "rcftl_dmms_background_copyback"),
        metric(&on, "rcftl_dmms_background_offchip"),
        metric(&on, "rcftl_dmms_urgent_copyback"),
    );
    assert!(bg_off > 0 && bg_off > bg_cb, "quiet buffer: background off-chip ({bg_cb} / {bg_off})");
    assert!(on.gc.background_collections > 0 && urgent > 0, "{:?}", on.ftl_metrics);
    let column = |name: &str| -> u64 {
        rows.iter().map(|r| r.ftl.iter().find(|c| c.0 == name).expect("an rcFTL column").1).sum()
    };
    let (cb, off) = (column("victims_copyback"), column("victims_offchip"));
    assert_eq!(cb, metric(&on, "rcftl_victims_copyback"));
    assert_eq!(off, metric(&on, "rcftl_victims_offchip"));
    assert!(rows.iter().all(|r| r.write_buffer_utilisation.is_some_and(|u| (0.0..=1.0).contains(&u))));
    let (greedy, _) = run_with(false, 2500);
    assert!(greedy.ftl_metrics["rcftl_mode_selector"].as_str().unwrap().starts_with("off"));
    assert_eq!(metric(&greedy, "rcftl_dmms_background_offchip"), 0);
    assert!(metric(&greedy, "rcftl_dmms_background_copyback") > 0);
    assert!(metric(&greedy, "gc_copybacks") > metric(&on, "gc_copybacks"));
}

/// The per-page schemes' counter table (docs/reliability.md): one metadata page closes every
/// block they fill, programmed as mapping work, so their WAF is above the same FTL keeping
/// the counters in the spare area; the table is never moved by GC.
#[test]
fn the_per_page_table_closes_every_block_and_costs_waf() {
    let m = util::Mix { seed: 5, open_loop: false, read: 0.2, trim: 0.0, pattern: "hotcold:0.8:0.2", fill: 1.0 };
    for ftl in ["rcftl-per-page", "fastgc"] {
        let with = run_oracle(drive(ftl, 2500), &m, 4000).unwrap().1;
        let mut cfg = drive(ftl, 2500);
        util::set(&mut cfg, "ftl.copyback_table.pages", "0");
        let without = run_oracle(cfg, &m, 4000).unwrap().1;
        assert_eq!(without.flash.programs.mapping, 0);
        let f = &with.flash;
        let (tables, data) = (f.programs.mapping, f.programs.host + f.programs.gc + f.copybacks.gc);
        // One table page per 15 data pages (16-page blocks), give or take the open blocks.
        assert!((data / 15).abs_diff(tables) <= 16, "{ftl}: {tables} table pages for {data} data pages");
        assert!(with.write_amplification.total > without.write_amplification.total, "{ftl}");
    }
    let mut cfg = drive("rcftl-per-page", 0);
    util::set(&mut cfg, "ftl.copyback_table.pages", "16");
    let e = ftlsim_ftl::build(&cfg).err().expect("refused").to_string();
    assert!(e.contains("ftl.copyback_table.pages"), "{e}");
}

/// Issue 33: rcFTL files GC pages in one open block per quota level, the per-page quota in
/// one; they copy back nearly the same pages. Counted in free blocks, rcFTL's collections
/// gained a block or none by luck, its planes fell out of the step in which round-robin
/// striping keeps one-stream planes, and a plane collected while the write-behind buffer
/// filled with pages striped to it and the others idled: 0.84 of the per-page quota's
/// throughput here, planes busy 80% against 94%. Paced by erased pages it keeps within a few
/// per cent (the `rcftl` preset on 16 planes, NTRX's stand-in, every level with room).
#[test]
fn per_block_quotas_keep_the_per_page_quotas_throughput() {
    let run = |ftl: &str, pacing: &str| {
        let sets: Vec<(String, String)> = [
            ("ftl.name", ftl),
            ("ftl.rcftl.gc_pacing", pacing),
            ("geometry.channels", "4"),
            ("geometry.chips_per_channel", "4"),
            ("geometry.blocks_per_plane", "128"),
            ("geometry.pages_per_block", "64"),
            ("overprovisioning.share", "0.15"),
            ("host.write_buffer_bytes", "2621440"),
            ("ftl.background_gc", "false"),
            ("ftl.background_gc_threshold_blocks", "2"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let cfg = ftlsim_ftl::presets::load("rcftl").unwrap().with_overrides(&sets, ftlsim_ftl::resolve).unwrap();
        let mut sim = ftlsim_ftl::simulator_for(cfg, false).unwrap();
        sim.precondition(&Precondition { fill: 0.86, steady_state: true, seed: 1, ..Precondition::default() }).unwrap();
        let spec = WorkloadSpec::parse(
            "pattern=hotcold:0.8:0.2,read=0.05,size=16k,span=0.86,align=16k,arrival=closed:32,requests=60000",
        )
        .unwrap();
        let mut gen = Generator::new(&spec, sim.derived().logical_bytes, 1).unwrap().map(Ok);
        sim.run(&mut gen, &RunOptions::default(), &mut NoObserver).unwrap()
    };
    let (per_page, rcftl) = (run("rcftl-per-page", "erased_pages"), run("rcftl", "erased_pages"));
    let busy = |r: &Report| r.channels.plane_host_share + r.channels.plane_gc_share;
    let ratio = rcftl.performance.throughput_mb_per_s / per_page.performance.throughput_mb_per_s;
    assert!(
        ratio > 0.95,
        "rcftl {:.1} MB/s against the per-page quota's {:.1} (planes busy {:.3} against {:.3})",
        rcftl.performance.throughput_mb_per_s,
        per_page.performance.throughput_mb_per_s,
        busy(&rcftl),
        busy(&per_page)
    );
    assert!(busy(&rcftl) > busy(&per_page) - 0.03, "planes busy {:.3} against {:.3}", busy(&rcftl), busy(&per_page));
    let copybacks = |r: &Report| metric(r, "gc_copybacks") as f64 / r.gc.pages_moved as f64;
    assert!(copybacks(&rcftl) > 0.9 && copybacks(&per_page) > 0.9, "both copy back nearly every move at 0K");
    // The counterfactual stays at hand: counted in free blocks, the planes fall out of step.
    let old = run("rcftl", "free_blocks");
    let ratio = old.performance.throughput_mb_per_s / per_page.performance.throughput_mb_per_s;
    assert!(ratio < 0.9 && busy(&old) < busy(&per_page) - 0.1, "free-block pacing: {ratio:.3}, busy {:.3}", busy(&old));
}
