//! Data oracle under random mixed workloads with heavy GC: every read returns the newest
//! version written, across GC policies, scopes, copy-back (with the parity rule), background
//! GC, partial-page policies and timing modes; at the end every logical page is read back.
//! Failures print the proptest seed inputs, which replay the case exactly.

mod util;

use ftlsim_core::metrics::NoObserver;
use ftlsim_core::sim::{Precondition, Replay, RunOptions};
use ftlsim_core::workload::{Generator, WorkloadSpec};
use proptest::prelude::*;
use util::{read_all, small_config};

#[derive(Debug, Clone)]
struct Case {
    seed: u64,
    victim: &'static str,
    scope: &'static str,
    copyback: bool,
    parity: bool,
    background: bool,
    partial: &'static str,
    allocation: &'static str,
    timing: &'static str,
    open_loop: bool,
    read: f64,
    trim: f64,
    pattern: &'static str,
    fill: f64,
}

fn case() -> impl Strategy<Value = Case> {
    (
        any::<u64>(),
        prop::sample::select(vec!["greedy", "fifo", "cost_benefit"]),
        prop::sample::select(vec!["plane", "die", "chip", "channel", "device"]),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        prop::sample::select(vec!["read_modify_write", "zero_pad", "merge"]),
        prop::sample::select(vec!["round_robin", "static_lpn"]),
        prop::sample::select(vec![
            "",
            "multi_plane = true",
            "serial = true",
            "plane_concurrency = \"multi_plane_only\"\nmulti_plane = true",
            "register_read_hits = true\nhost_mb_per_s = 600.0\ndram_access_ns = 50",
        ]),
        (any::<bool>(), 0.0..0.5f64, 0.0..0.15f64),
        (prop::sample::select(vec!["uniform", "hotcold:0.8:0.2", "zipf:0.9", "sequential"]), 0.0..1.0f64),
    )
        .prop_map(
            |(
                seed,
                victim,
                scope,
                copyback,
                parity,
                background,
                partial,
                allocation,
                timing,
                (open_loop, read, trim),
                (pattern, fill),
            )| Case {
                seed,
                victim,
                scope,
                copyback,
                parity,
                background,
                partial,
                allocation,
                timing,
                open_loop,
                read,
                trim,
                pattern,
                fill,
            },
        )
}

fn run_case(c: &Case) -> Result<(), String> {
    let extra = format!(
        "{}\n[nand]\ncopyback_same_parity = {}\n[ftl]\ngc_victim = \"{}\"\ngc_scope = \"{}\"\ngc_copy = \"{}\"\nbackground_gc = {}\nidle_threshold_ns = 100000\nallocation = \"{}\"\n[host]\npartial_write = \"{}\"\nmerge_buffer_pages = 8\nqueue_depth = 8\n",
        c.timing,
        c.parity,
        c.victim,
        c.scope,
        if c.copyback { "copyback" } else { "controller" },
        c.background,
        c.allocation,
        c.partial,
    );
    let cfg = small_config(24, 16, 0.25, &extra);
    let logical = cfg.derive().map_err(|e| e.to_string())?.logical_pages;
    let mut sim = ftlsim_ftl::simulator(cfg, true).map_err(|e| e.to_string())?;
    sim.precondition(&Precondition {
        fill: c.fill,
        steady_state: c.fill > 0.5,
        max_overwrite_passes: 1.0,
        seed: c.seed,
    })
    .map_err(|e| e.to_string())?;
    let arrival = if c.open_loop { "poisson:300us" } else { "closed:8" };
    let spec = WorkloadSpec::parse(&format!(
        "pattern={},read={},trim={},size=512@1|4k@4|8k@2|12k@1|64k@0.3,arrival={arrival},requests=2500,align=512",
        c.pattern, c.read, c.trim
    ))
    .map_err(|e| e.to_string())?;
    let logical_bytes = sim.derived().logical_bytes;
    let mut gen = Generator::new(&spec, logical_bytes, c.seed).map_err(|e| e.to_string())?.map(Ok);
    let replay = if c.open_loop { Replay::Open { time_scale: 1.0 } } else { Replay::Closed { queue_depth: 8 } };
    let opts = RunOptions { replay, check_every: 61, interval_ns: 1_000_000, ..RunOptions::default() };
    let r = sim.run(&mut gen, &opts, &mut NoObserver).map_err(|e| e.to_string())?;
    if r.host.requests != 2500 {
        return Err(format!("{} of 2500 requests completed", r.host.requests));
    }
    sim.check_invariants();
    // Nothing acknowledged is lost: every page reads back its newest version.
    let back = RunOptions { replay: Replay::Closed { queue_depth: 4 }, interval_ns: 0, ..RunOptions::default() };
    sim.run(&mut read_all(logical), &back, &mut NoObserver).map_err(|e| e.to_string())?;
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn every_read_returns_the_newest_version(c in case()) {
        if let Err(e) = run_case(&c) {
            prop_assert!(false, "{e}\ncase: {c:?}");
        }
    }
}

#[test]
fn heavy_gc_with_copyback_parity_mixes_copybacks_and_off_chip_copies() {
    let extra = "[nand]\ncopyback_same_parity = true\n[ftl]\ngc_copy = \"copyback\"\n";
    let cfg = small_config(32, 16, 0.2, extra);
    let mut sim = ftlsim_ftl::simulator(cfg, true).unwrap();
    sim.precondition(&Precondition { fill: 1.0, steady_state: true, seed: 3, ..Precondition::default() }).unwrap();
    let spec = WorkloadSpec::parse("read=0.2,requests=20000,qd=16").unwrap();
    let logical_bytes = sim.derived().logical_bytes;
    let mut gen = Generator::new(&spec, logical_bytes, 5).unwrap().map(Ok);
    let r = sim.run(&mut gen, &RunOptions { check_every: 997, ..RunOptions::default() }, &mut NoObserver).unwrap();
    assert!(r.gc.collections > 100, "gc {}", r.gc.collections);
    assert_eq!(r.flash.copybacks.gc + r.flash.programs.gc, r.gc.pages_moved, "every move is one program");
    assert!(r.flash.copybacks.gc > r.gc.pages_moved / 4, "same-parity moves use copy-back");
    assert!(r.flash.programs.gc > r.gc.pages_moved / 4, "other-parity moves go off-chip");
    assert_eq!(r.flash.reads.gc, r.flash.programs.gc, "off-chip moves read then program");
    assert_eq!(r.flash.wasted_pages, 0, "the page FTL never wastes pages");
    assert!(r.write_amplification.total > 1.5);
}
