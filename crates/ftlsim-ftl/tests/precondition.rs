//! The steady-state criterion of preconditioning (issue 11): it settles on a drive that
//! has reached steady state, the WAF it reports is what the drive then does, and it does
//! not settle while the fill's transient lasts or before GC has run.

use crate::util;

use ftlsim_core::metrics::NoObserver;
use ftlsim_core::sim::{Precondition, Replay, RunOptions};
use ftlsim_core::workload::{Generator, WorkloadSpec};
use util::small_config;

fn pre(fill: f64, passes: f64) -> Precondition {
    Precondition { fill, steady_state: true, max_overwrite_passes: passes, seed: 3, ..Precondition::default() }
}

#[test]
fn settles_at_the_waf_the_drive_then_shows() {
    let mut sim = ftlsim_ftl::simulator(small_config(128, 32, 0.12, ""), false).unwrap();
    let rep = sim.precondition(&pre(1.0, 4.0)).unwrap();
    assert!(rep.settled, "{rep:?}");
    assert!(rep.overwrite_passes >= 1.0 && rep.overwrite_passes < 4.0, "{rep:?}");
    assert_eq!(rep.window_waf.len() as u64, rep.overwrite_pages / rep.window_pages);
    let n = rep.window_waf.len();
    let (a, b) = (rep.window_waf[n - 2], rep.window_waf[n - 1]);
    assert!((a - b).abs() <= 0.01 * b, "the last two windows agree: {a} {b}");
    // A further pass of the same uniform overwrites, timed: its WAF is the settled one.
    let logical = sim.derived().logical_pages;
    let spec = WorkloadSpec::parse(&format!("read=0,size=4k,requests={logical}")).unwrap();
    let mut gen = Generator::new(&spec, sim.derived().logical_bytes, 9).unwrap().map(Ok);
    let opts = RunOptions { replay: Replay::Closed { queue_depth: 8 }, interval_ns: 0, ..RunOptions::default() };
    let r = sim.run(&mut gen, &opts, &mut NoObserver).unwrap();
    let waf = r.write_amplification.total;
    assert!((waf - rep.final_waf).abs() <= 0.02 * rep.final_waf, "run WAF {waf} vs settled {}", rep.final_waf);
}

#[test]
fn does_not_settle_during_the_fill_transient() {
    // One pass is two windows: the first still has the free space the fill left, so its WAF
    // is lower than the second's.
    let mut sim = ftlsim_ftl::simulator(small_config(128, 32, 0.12, ""), false).unwrap();
    let rep = sim.precondition(&pre(1.0, 1.0)).unwrap();
    assert_eq!(rep.window_waf.len(), 2);
    assert!(!rep.settled, "{rep:?}");
    assert!(rep.window_waf[0] < 0.97 * rep.window_waf[1], "{rep:?}");
}

#[test]
fn does_not_settle_before_gc_has_run() {
    // A third of the drive written and rewritten twice: still no GC, WAF 1. That is not a
    // steady state (GC starts once the free blocks run out).
    let mut sim = ftlsim_ftl::simulator(small_config(128, 32, 0.12, ""), false).unwrap();
    let rep = sim.precondition(&pre(0.3, 2.0)).unwrap();
    assert!(rep.window_waf.iter().all(|&w| w == 1.0), "{rep:?}");
    assert!(!rep.settled, "{rep:?}");
}

#[test]
fn an_overwrite_span_ages_only_its_region_and_counts_passes_in_it() {
    // A quarter of a full drive aged, the rest cold: the passes count in the quarter's pages,
    // and a timed pass over the quarter then collects at the settled WAF, lower than the
    // whole drive's (the cold three quarters fill the victims' room less).
    let mut sim = ftlsim_ftl::simulator(small_config(128, 32, 0.12, ""), true).unwrap();
    let span = Precondition { overwrite_span: 0.25, ..pre(1.0, 8.0) };
    let rep = sim.precondition(&span).unwrap();
    let logical = u64::from(sim.derived().logical_pages);
    assert!(rep.settled, "{rep:?}");
    assert_eq!(rep.fill_pages, logical);
    let aged = logical / 4;
    assert!((rep.overwrite_passes - rep.overwrite_pages as f64 / aged as f64).abs() < 1e-5, "{rep:?}");
    let mut whole = ftlsim_ftl::simulator(small_config(128, 32, 0.12, ""), false).unwrap();
    let all = whole.precondition(&pre(1.0, 8.0)).unwrap();
    assert!(rep.final_waf < all.final_waf, "region {} vs whole drive {}", rep.final_waf, all.final_waf);
    // A region written by random writes alone beside a sequential fill: every page of it is
    // written once the overwrites settle but a few.
    let mut beside = ftlsim_ftl::simulator(small_config(128, 32, 0.12, ""), false).unwrap();
    let r = beside.precondition(&Precondition { fill_offset: 0.25, overwrite_span: 0.25, ..pre(0.75, 8.0) }).unwrap();
    assert!(r.settled && r.overwrite_passes >= 1.0, "{r:?}");
    let bad = Precondition { overwrite_span: 1.5, ..pre(0.25, 1.0) };
    let e = ftlsim_ftl::simulator(small_config(128, 32, 0.12, ""), false).unwrap().precondition(&bad).unwrap_err();
    assert!(e.to_string().contains("precondition.overwrite_span"), "{e}");
}

/// Issue 37: `trim_to` leaves that share of the logical space valid after the drive was
/// written over (the thesis's general recovery case, seed 001 L1396), the trimmed pages read
/// as never written, and the same seed leaves the same valid pages.
#[test]
fn trim_to_leaves_the_share_asked_valid_and_the_rest_unwritten() {
    let trimmed = |seed: u64| {
        let cfg = small_config(64, 16, 0.12, "");
        let mut sim = ftlsim_ftl::simulator(cfg.clone(), true).unwrap();
        let logical = u64::from(sim.derived().logical_pages);
        let p = Precondition { trim_to: Some(0.25), seed, ..pre(1.0, 2.0) };
        let rep = sim.precondition(&p).unwrap();
        let keep = (logical as f64 * 0.25) as u64;
        assert_eq!(rep.trimmed_pages, logical - keep, "{rep:?}");
        assert!(rep.overwrite_pages >= logical, "written over before the trim: {rep:?}");
        // The page FTL keeps only data pages: exactly the pages kept are valid on flash.
        let flash = sim.flash();
        let valid: u64 = (0..cfg.geometry.blocks()).map(|b| u64::from(flash.valid_count(b))).sum();
        assert_eq!(valid, keep);
        sim.check_invariants();
        // Every page reads back against the oracle: the trimmed ones as never written.
        let back = RunOptions { replay: Replay::Closed { queue_depth: 4 }, interval_ns: 0, ..RunOptions::default() };
        let r = sim.run(&mut util::read_all(logical as u32), &back, &mut NoObserver).unwrap();
        assert_eq!(r.host.requests, logical);
        (0..cfg.geometry.blocks()).map(|b| sim.flash().valid_count(b)).collect::<Vec<_>>()
    };
    assert_eq!(trimmed(5), trimmed(5));
    assert_ne!(trimmed(5), trimmed(6));
    let e = ftlsim_ftl::simulator(small_config(64, 16, 0.12, ""), false)
        .unwrap()
        .precondition(&Precondition { trim_to: Some(1.5), ..pre(1.0, 1.0) })
        .unwrap_err()
        .to_string();
    assert!(e.contains("precondition.trim_to") && e.contains("[0, 1]"), "{e}");
}
