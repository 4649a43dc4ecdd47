//! Flexible Data Placement under the page FTL and the demand FTLs (issue 39, docs/fdp.md):
//! persistently isolated handles never share a block, over random FTLs, tenants, placements and
//! heavy GC, with every read checked against the data oracle; initially isolated handles may mix under GC, and say how
//! often; the per-handle statistics add up to the drive's.

use crate::util;

use ftlsim_core::arbiter::PriorityClass;
use ftlsim_core::error::RequestError;
use ftlsim_core::host::{IoOp, Request};
use ftlsim_core::metrics::NoObserver;
use ftlsim_core::sim::{Namespace, PlacementRule, Precondition, Replay, Report, RunOptions, Simulator, Tenant};
use ftlsim_core::workload::{Generator, WorkloadSpec};
use proptest::prelude::*;
use std::cell::RefCell;
use std::rc::Rc;
use util::{drive_for, read_all, small_config};

/// One tenant of a case: its pattern, request size, and the handles its writes name: in turn,
/// or (`by_size`, two handles) the first for writes up to 8 KiB and the second for larger.
#[derive(Debug, Clone)]
struct Case {
    pattern: &'static str,
    size: &'static str,
    plids: Vec<u16>,
    by_size: bool,
}

impl Case {
    fn rule(&self) -> PlacementRule {
        if self.by_size {
            PlacementRule::Size { bounds: vec![(8192, self.plids[0])], beyond: self.plids[1] }
        } else {
            PlacementRule::RoundRobin(self.plids.clone())
        }
    }
}

fn case(handles: u16) -> impl Strategy<Value = Case> {
    (
        prop::sample::select(vec!["uniform", "sequential", "hotcold:0.8:0.2", "zipf:0.9"]),
        prop::sample::select(vec!["4k", "16k", "64k", "4k@3|32k@1"]),
        prop::collection::vec(0..handles, 1..3),
        any::<bool>(),
    )
        .prop_map(|(pattern, size, plids, by_size)| Case {
            pattern,
            size,
            by_size: by_size && plids.len() == 2,
            plids,
        })
}

/// The FTLs that honour placement handles.
fn placement_ftls() -> Vec<&'static str> {
    ftlsim_ftl::FTLS.iter().filter(|f| f.capabilities.placement).map(|f| f.name).collect()
}

/// A small FDP drive for `ftl` with `handles` handles of `kind`, filled (to handle 0) and run
/// under the tenants of `cases`, each in its own share of the logical space; the verifying
/// simulator and its report, after every page was read back.
/// Also returns each logical page's handle by the test's own account: the fill's 0, then the
/// handle of the last write to it, from the requests as the sources hand them out (a tenant's
/// writes name its handles in turn, in its source's order).
fn run_on(ftl: &str, handles: u16, kind: &str, cases: &[Case], seed: u64) -> (Simulator, Report, Vec<u16>) {
    let fdp = format!("[fdp]\nhandles = {handles}\nhandle_type = \"{kind}\"\n");
    let cfg = if ftl == "page" {
        small_config(40, 16, 0.3, &fdp)
    } else {
        // PCFTL's write cache would write pages after their requests: placement needs none.
        drive_for(ftlsim_ftl::info(ftl).unwrap(), 40, 16, &format!("\n{fdp}[host]\nwrite_buffer_bytes = 0\n"))
    };
    let cfg = ftlsim_ftl::resolve(cfg).unwrap_or_else(|e| panic!("{ftl}: {e}"));
    let mut sim = ftlsim_ftl::simulator_for(cfg, true).unwrap();
    sim.precondition(&Precondition { fill: 1.0, seed, ..Precondition::default() }).unwrap();
    let d = sim.derived().clone();
    let (pages, spp) = (u64::from(d.logical_pages), d.logical_bytes / u64::from(d.logical_pages) / 512);
    let n = cases.len() as u64;
    let mut tenants = Vec::new();
    let expected = Rc::new(RefCell::new(vec![0u16; pages as usize]));
    let mut sources: Vec<Box<dyn Iterator<Item = Result<Request, RequestError>>>> = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        let i = i as u64;
        let namespace = Namespace { first_sector: i * pages / n * spp, sectors: pages / n * spp };
        let w =
            WorkloadSpec::parse(&format!("pattern={},size={},read=0.2,qd=4,requests=1500", c.pattern, c.size)).unwrap();
        let (book, plids, by_size) = (Rc::clone(&expected), c.plids.clone(), c.by_size);
        let mut writes = 0usize;
        let gen = Generator::new(&w, namespace.sectors * 512, seed + i).unwrap().inspect(move |r| {
            if r.op == IoOp::Write {
                let h = match by_size {
                    true => plids[usize::from(r.sectors > 16)],
                    false => plids[writes % plids.len()],
                };
                writes += 1;
                let first = (namespace.first_sector + r.offset_sector) / spp;
                let last = (namespace.first_sector + r.offset_sector + u64::from(r.sectors) - 1) / spp;
                book.borrow_mut()[first as usize..=last as usize].fill(h);
            }
        });
        sources.push(Box::new(gen.map(Ok)));
        tenants.push(Tenant {
            name: format!("t{i}"),
            replay: Replay::Closed { queue_depth: 4 },
            class: PriorityClass::Medium,
            namespace,
            stop_after_ns: None,
            placement: c.rule(),
        });
    }
    let mut refs: Vec<&mut dyn Iterator<Item = Result<Request, RequestError>>> =
        sources.iter_mut().map(|s| s.as_mut() as &mut dyn Iterator<Item = Result<Request, RequestError>>).collect();
    let opts = RunOptions { tenants, check_every: 53, interval_ns: 0, ..RunOptions::default() };
    let r = sim.run_tenants(&mut refs, &opts, &mut NoObserver).unwrap();
    sim.check_invariants();
    let back = RunOptions { replay: Replay::Closed { queue_depth: 4 }, interval_ns: 0, ..RunOptions::default() };
    sim.run(&mut read_all(d.logical_pages), &back, &mut NoObserver).unwrap();
    drop(refs);
    drop(sources);
    let expected = Rc::try_unwrap(expected).expect("the sources are gone").into_inner();
    (sim, r, expected)
}

fn run(handles: u16, kind: &str, cases: &[Case], seed: u64) -> (Simulator, Report, Vec<u16>) {
    run_on("page", handles, kind, cases, seed)
}

/// Blocks whose valid pages belong to more than one handle, by the test's own account
/// (`expected`, each logical page's handle).
fn blocks_mixing(sim: &Simulator, expected: &[u16]) -> u64 {
    let flash = sim.flash();
    let mut mixing = 0;
    for b in 0..flash.geometry().blocks() {
        let mut handles = flash.valid_pages(b).map(|ppn| expected[flash.owner(ppn) as usize]);
        let first = handles.next();
        mixing += u64::from(first.is_some_and(|h| handles.any(|o| o != h)));
    }
    mixing
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn persistently_isolated_handles_never_share_a_block(
        ftl in prop::sample::select(placement_ftls()),
        handles in 2u16..5,
        cases in prop::collection::vec(case(4), 2..5),
        seed in 0u64..1000,
    ) {
        let cases: Vec<Case> = cases
            .into_iter()
            .map(|c| Case { plids: c.plids.into_iter().map(|p| p % handles).collect(), ..c })
            .collect();
        let (sim, r, expected) = run_on(ftl, handles, "persistently_isolated", &cases, seed);
        prop_assert!(r.gc.collections > 0, "the case collects");
        prop_assert_eq!(blocks_mixing(&sim, &expected), 0);
        let fdp = &r.ftl_metrics["fdp"];
        prop_assert_eq!(fdp["mixed_blocks"].as_u64(), Some(0));
    }
}

#[test]
fn initially_isolated_handles_mix_under_gc_and_count_it() {
    // Two tenants on their own handles over a uniform and a hot/cold workload: GC relocates
    // both into its one stream, so blocks come to hold both handles' pages.
    let cases = [
        Case { pattern: "uniform", size: "4k", plids: vec![1], by_size: false },
        Case { pattern: "hotcold:0.9:0.1", size: "4k", plids: vec![2], by_size: false },
    ];
    let (sim, r, expected) = run(3, "initially_isolated", &cases, 5);
    let fdp = &r.ftl_metrics["fdp"];
    assert!(fdp["mixed_blocks"].as_u64().unwrap() > 0, "{fdp}");
    assert!(blocks_mixing(&sim, &expected) > 0);
    let (sim, p, expected) = run(3, "persistently_isolated", &cases, 5);
    assert_eq!(p.ftl_metrics["fdp"]["mixed_blocks"].as_u64(), Some(0));
    assert_eq!(blocks_mixing(&sim, &expected), 0);
}

#[test]
fn handle_statistics_add_up_to_the_drives() {
    let cases = [
        Case { pattern: "uniform", size: "4k", plids: vec![0], by_size: false },
        Case { pattern: "sequential", size: "64k", plids: vec![1, 2], by_size: false },
    ];
    for kind in ["initially_isolated", "persistently_isolated"] {
        let (_, r, _) = run(3, kind, &cases, 9);
        let fdp = &r.ftl_metrics["fdp"];
        let handles = fdp["handles"].as_array().unwrap();
        let sum = |k: &str| handles.iter().map(|h| h[k].as_u64().unwrap()).sum::<u64>();
        // Host pages here are whole pages written by the FTL; the host's pages_written counts
        // partial pages alike, and every request here is whole pages.
        assert_eq!(sum("host_pages_written"), r.host.pages_written, "{kind}");
        assert_eq!(sum("gc_pages_written"), r.gc.pages_moved, "{kind}");
        assert_eq!(
            fdp["media_bytes_written"].as_u64(),
            Some((sum("host_pages_written") + sum("gc_pages_written")) * 4096)
        );
        let waf = (r.host.pages_written + r.gc.pages_moved) as f64 / r.host.pages_written as f64;
        assert!((waf - r.write_amplification.total).abs() < 1e-4, "{kind}: {waf} vs {}", r.write_amplification.total);
        // Handles 1 and 2 took the sequential tenant's writes in turn.
        let h1 = handles[1]["host_pages_written"].as_u64().unwrap();
        let h2 = handles[2]["host_pages_written"].as_u64().unwrap();
        assert!(h1 > 0 && h1.abs_diff(h2) <= 16 * 2, "{h1} vs {h2}");
    }
}

#[test]
fn pages_given_contents_off_the_clock_are_not_the_handles_writes() {
    // Half the drive never written and reads over all of it: each read of a never-written page
    // writes it off the clock first (host.unmapped_read = "flash"), which neither the drive's
    // counters nor the handles' count.
    let cfg = small_config(40, 16, 0.3, "[fdp]\nhandles = 2\n");
    let mut sim = ftlsim_ftl::simulator(cfg, true).unwrap();
    sim.precondition(&Precondition { fill: 0.5, seed: 2, ..Precondition::default() }).unwrap();
    let w = WorkloadSpec::parse("read=0.6,qd=4,requests=3000").unwrap();
    let mut gen = Generator::new(&w, sim.derived().logical_bytes, 3).unwrap().map(Ok);
    let r = sim.run(&mut gen, &RunOptions { interval_ns: 0, ..RunOptions::default() }, &mut NoObserver).unwrap();
    assert!(r.host.unmapped_page_reads > 100, "{} unmapped reads", r.host.unmapped_page_reads);
    let h = &r.ftl_metrics["fdp"]["handles"][0];
    assert_eq!(h["host_pages_written"].as_u64(), Some(r.host.pages_written));
    assert_eq!(h["gc_pages_written"].as_u64(), Some(r.gc.pages_moved));
    sim.check_invariants();
}
