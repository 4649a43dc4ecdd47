//! Issue 15: power cuts in a measured run. The replay stops at the cut, the operation under
//! way is torn, the volatile buffers are lost (or flushed within the hold-up budget), the FTL
//! recovers, every logical page is read back against the data oracle, and the rest of the
//! workload runs on, checked read by read.

mod util;

use ftlsim_core::config::DriveConfig;
use ftlsim_core::metrics::NoObserver;
use ftlsim_core::recovery::RECOVERABLE;
use ftlsim_core::sim::{CutAt, PowerCutReport, Precondition, Replay, Report, RunOptions};
use ftlsim_core::workload::{Generator, WorkloadSpec};
use util::small_config;

/// Precondition (fill + steady state), shut down cleanly, run `workload` with a cut at `at`,
/// then the rest of it; both runs verified by the data oracle.
fn cut_run(cfg: &DriveConfig, workload: &str, at: CutAt, seed: u64) -> (Report, Option<Report>) {
    let mut sim = ftlsim_ftl::simulator(cfg.clone(), true).unwrap();
    sim.keep_program_stamps();
    sim.precondition(&Precondition { fill: 1.0, steady_state: true, seed, ..Precondition::default() }).unwrap();
    sim.clean_shutdown().unwrap();
    let spec = WorkloadSpec::parse(workload).unwrap();
    let logical = sim.derived().logical_bytes;
    let mut gen = Generator::new(&spec, logical, seed).unwrap().map(Ok);
    let opts = RunOptions {
        replay: Replay::Closed { queue_depth: 8 },
        interval_ns: 0,
        power_cut: Some(at),
        check_every: 97,
        ..RunOptions::default()
    };
    let before = sim.run(&mut gen, &opts, &mut NoObserver).unwrap_or_else(|e| panic!("{}: {e}", cfg.ftl.name));
    if before.power_cut.is_none() {
        return (before, None);
    }
    let after = RunOptions { power_cut: None, ..opts };
    let post =
        sim.run(&mut gen, &after, &mut NoObserver).unwrap_or_else(|e| panic!("{} after recovery: {e}", cfg.ftl.name));
    sim.check_invariants();
    (before, Some(post))
}

fn config(ftl: &str, extra: &str) -> DriveConfig {
    // Small pages give the demand FTLs several translation pages; tiny caches write them back often.
    let cache = match ftl {
        "cdftl" => "mapping_cache_bytes = 4170\n",
        "3dftl" => "mapping_cache_bytes = 524\n",
        "page" => "",
        // They limit copy-backs by the reliability model (worn, so some pages go off-chip).
        "fastgc" | "rcftl-per-page" | "rcftl" => "[reliability]\npe_cycles = 2500\n",
        _ => "mapping_cache_bytes = 80\n",
    };
    // rcFTL keeps an open block per quota level and plane: more spare room.
    let share = if ftl == "rcftl" { 0.5 } else { 0.3 };
    let mut cfg = small_config(32, 16, share, &format!("[ftl]\nname = \"{ftl}\"\n{cache}{extra}"));
    // 3DFTL's spare areas hold up to 106 bytes of mapping entries (seed 001 L986).
    cfg.geometry.spare_usable_bytes = cfg.geometry.spare_usable_bytes.max(112);
    cfg
}

fn cut(r: &Report) -> &PowerCutReport {
    r.power_cut.as_ref().expect("the run was cut")
}

#[test]
fn every_recoverable_ftl_survives_cuts_in_a_run_and_goes_on() {
    let workload = "pattern=zipf:0.8,read=0.3,size=4k@0.7|16k@0.3,requests=4000";
    for ftl in RECOVERABLE {
        let cfg = config(ftl, "");
        let mut torn = 0;
        for (i, at) in [CutAt::Request(1), CutAt::Request(777), CutAt::Request(2_501), CutAt::TimeNs(60_000_000)]
            .into_iter()
            .enumerate()
        {
            let (before, post) = cut_run(&cfg, workload, at, 11 + i as u64);
            let c = cut(&before);
            let post = post.expect("requests are left after the cut");
            assert_eq!(c.oracle_checked_pages, u64::from(cfg.derive().unwrap().logical_pages), "{ftl} {at:?}");
            assert_eq!(c.requests_completed, before.host.requests, "{ftl} {at:?}");
            // Up to the queue depth dispatched, and one the host was about to issue.
            assert!(c.requests_in_flight >= 1 && c.requests_in_flight <= 9, "{ftl} {at:?}: {c:?}");
            assert_eq!(before.host.requests + c.requests_in_flight + post.host.requests, 4000, "{ftl} {at:?}");
            assert!(c.recovery_pages_read > 0 && c.recovery_time_us > 0.0, "{ftl} {at:?}: {c:?}");
            let physical = f64::from(cfg.derive().unwrap().physical_pages);
            assert!((c.recovery_pages_read_ratio - c.recovery_pages_read as f64 / physical).abs() < 1e-6);
            if let CutAt::Request(n) = at {
                assert_eq!(c.requests_completed + c.requests_in_flight, n, "{ftl} {at:?}");
            }
            torn += u32::from(c.torn_operation.is_some());
            if *ftl != "pcftl" {
                assert_eq!(c.lost_acknowledged_pages.write_buffer, 0, "{ftl}: no write buffer, nothing lost");
            }
        }
        // A read, or a write the buffer absorbs, tears nothing; most cuts tear a program or erase.
        assert!(torn >= 1, "{ftl}: none of 4 cuts tore an operation");
    }
}

#[test]
fn a_cut_after_a_clean_shutdown_reads_far_less_than_a_full_scan_on_demand_ftls() {
    // Few writes since the shutdown: the page FTL still scans everything, a demand FTL reads
    // the first page of each block, its translation and GC blocks, and what was written since.
    let workload = "pattern=uniform,read=0.3,requests=300";
    let page = cut_run(&config("page", ""), workload, CutAt::Request(30), 3).0;
    for ftl in ["dftl", "cdftl", "scftl", "dloop", "pcftl"] {
        let demand = cut_run(&config(ftl, ""), workload, CutAt::Request(30), 3).0;
        let (d, p) = (cut(&demand).recovery_pages_read, cut(&page).recovery_pages_read);
        assert!(d * 2 < p, "{ftl}: recovery read {d} pages, the page FTL's full scan {p}");
    }
}

#[test]
fn the_write_buffer_loses_acknowledged_pages_unless_protected_and_within_budget() {
    let workload = "pattern=uniform,read=0,requests=2000";
    let buffer = "[host]\nwrite_buffer_bytes = 262144\n";
    let lost = |extra: &str| {
        let (before, _) = cut_run(&config("pcftl", &format!("{buffer}{extra}")), workload, CutAt::Request(1500), 5);
        cut(&before).clone()
    };
    let open = lost("");
    assert!(open.lost_acknowledged_pages.write_buffer > 40, "{open:?}");
    assert_eq!(open.buffer_flushed_pages, 0);
    let protected = lost("buffer_power_protected = true\n");
    assert_eq!(protected.lost_acknowledged_pages.write_buffer, 0, "{protected:?}");
    assert_eq!(protected.buffer_flushed_pages, 64, "a 256 KiB buffer of 4 KiB pages, full");
    let budget = lost("buffer_power_protected = true\nbuffer_flush_budget_pages = 10\n");
    assert_eq!(budget.buffer_flushed_pages, 10);
    assert_eq!(
        budget.lost_acknowledged_pages.write_buffer + budget.lost_unacknowledged_pages,
        open.lost_acknowledged_pages.write_buffer + open.lost_unacknowledged_pages - 10,
        "what the budget did not flush is lost: {budget:?} vs {open:?}"
    );
}

#[test]
fn a_cut_run_is_deterministic() {
    let cfg = config("scftl", "");
    let workload = "pattern=zipf:0.9,read=0.3,requests=1500";
    let a = cut_run(&cfg, workload, CutAt::Request(900), 9);
    let b = cut_run(&cfg, workload, CutAt::Request(900), 9);
    let json = |r: &(Report, Option<Report>)| serde_json::to_string(&(&r.0, &r.1)).unwrap();
    assert_eq!(json(&a), json(&b));
}

#[test]
fn a_cut_beyond_the_run_cuts_nothing() {
    let (before, post) = cut_run(&config("dftl", ""), "requests=100", CutAt::Request(1_000), 1);
    assert!(before.power_cut.is_none() && post.is_none());
    assert_eq!(before.host.requests, 100);
}

#[test]
fn the_merge_buffer_loses_partial_pages_unless_protected() {
    // Partial-page writes (512 B to 2 KiB) wait in the merge buffer for their page to fill.
    let workload = "pattern=uniform,read=0,size=512@0.5|2k@0.5,align=512,requests=2000";
    let merge = "[host]\npartial_write = \"merge\"\nmerge_buffer_pages = 32\n";
    let lost = |extra: &str| {
        let (before, post) = cut_run(&config("dftl", &format!("{merge}{extra}")), workload, CutAt::Request(1500), 8);
        assert!(post.is_some());
        cut(&before).clone()
    };
    let open = lost("");
    assert!(open.lost_acknowledged_pages.merge_buffer > 10, "{open:?}");
    let protected = lost("buffer_power_protected = true\n");
    assert_eq!(protected.lost_acknowledged_pages.merge_buffer, 0, "{protected:?}");
    assert!(protected.buffer_flushed_pages >= open.lost_acknowledged_pages.merge_buffer, "{protected:?}");
}
