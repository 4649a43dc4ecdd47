//! Real traces replayed end to end on the `default` preset with the page FTL and the data
//! oracle on (issue 3): the Financial1 prefix, the WebSearch sample (six ASUs side by side,
//! compacted to fit) and the MSR hm_0 sample. Files come from ../shared/traces.

use ftlsim_core::metrics::NoObserver;
use ftlsim_core::sim::{Precondition, Replay, RunOptions};
use ftlsim_core::trace::{Overflow, TraceOptions, TraceSource};
use ftlsim_ftl::presets;
use std::path::PathBuf;

fn trace(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/traces")).join(name)
}

fn replay(name: &str, opts: TraceOptions, replay: Replay) -> (u64, u64, String) {
    let cfg = presets::load("default").unwrap();
    let mut sim = ftlsim_ftl::simulator(cfg, true).unwrap();
    sim.precondition(&Precondition { fill: 0.25, ..Precondition::default() }).unwrap();
    let logical_sectors = sim.derived().logical_bytes / 512;
    let mut src = TraceSource::open(&trace(name), opts, logical_sectors, 8).unwrap();
    let format = src.info().format.clone();
    let r = sim
        .run(
            &mut src,
            &RunOptions { replay, interval_ns: 0, check_every: 2_500, ..RunOptions::default() },
            &mut NoObserver,
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    (r.host.requests, r.host.reads, format)
}

#[test]
fn financial1_prefix_replays_open_loop_with_the_oracle() {
    // awk 'END {print NR}' financial1-first10k.ssdsim.ascii -> 10000; awk '$5==1' | wc -l -> 4078
    let (n, reads, format) =
        replay("financial1-first10k.ssdsim.ascii", TraceOptions::default(), Replay::Open { time_scale: 1.0 });
    assert_eq!((n, reads, format.as_str()), (10_000, 4_078, "mqsim"));
}

#[test]
fn websearch_sample_replays_compacted_side_by_side() {
    // awk 'END {print NR}' websearch-small.mqsim.trace -> 24783 (README); devices 0-5.
    let opts = TraceOptions { overflow: Overflow::Compact, ..TraceOptions::default() };
    let (n, _, format) = replay("websearch-small.mqsim.trace", opts, Replay::Closed { queue_depth: 16 });
    assert_eq!((n, format.as_str()), (24_783, "mqsim"));
}

#[test]
fn msr_hm0_sample_replays_repeated() {
    // 1,000 lines (README), 508 reads; replayed 5 times back to back.
    let opts = TraceOptions { repeat: 5, ..TraceOptions::default() };
    let (n, reads, format) = replay("msr-hm0-first1k.csv", opts, Replay::Open { time_scale: 1.0 });
    assert_eq!((n, reads, format.as_str()), (5_000, 5 * 508, "msr"));
}
