//! Real traces replayed end to end on the `default` preset with the page FTL and the data
//! oracle on (issue 3): the Financial1 prefix, the WebSearch sample (six ASUs side by side,
//! compacted to fit) and the MSR hm_0 sample. Files come from the real samples
//! (ftlsim_core::trace::samples); without them each test says so and passes.

use ftlsim_core::metrics::NoObserver;
use ftlsim_core::sim::{Precondition, Replay, RunOptions};
use ftlsim_core::trace::{Overflow, TraceOptions, TraceSource};
use ftlsim_ftl::presets;

/// Replay the real sample `name` on the default drive, filled a quarter: its requests, reads
/// and detected format; `None` when the sample is absent.
fn replay(name: &str, opts: TraceOptions, replay: Replay) -> Option<(u64, u64, String)> {
    let path = ftlsim_core::trace::samples::find_or_say(name)?;
    let cfg = presets::load("default").unwrap();
    let mut sim = ftlsim_ftl::simulator(cfg, true).unwrap();
    sim.precondition(&Precondition { fill: 0.25, ..Precondition::default() }).unwrap();
    let logical_sectors = sim.derived().logical_bytes / 512;
    let mut src = TraceSource::open(&path, opts, logical_sectors, 8).unwrap();
    let format = src.info().format.clone();
    let r = sim
        .run(
            &mut src,
            &RunOptions { replay, interval_ns: 0, check_every: 2_500, ..RunOptions::default() },
            &mut NoObserver,
        )
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    Some((r.host.requests, r.host.reads, format))
}

#[test]
fn financial1_prefix_replays_open_loop_with_the_oracle() {
    // awk 'END {print NR}' financial1-first10k.ssdsim.ascii -> 10000; awk '$5==1' | wc -l -> 4078
    let Some((n, reads, format)) =
        replay("financial1-first10k.ssdsim.ascii", TraceOptions::default(), Replay::Open { time_scale: 1.0 })
    else {
        return;
    };
    assert_eq!((n, reads, format.as_str()), (10_000, 4_078, "mqsim"));
}

#[test]
fn websearch_sample_replays_compacted_side_by_side() {
    // awk 'END {print NR}' websearch-small.mqsim.trace -> 24783 (README); devices 0-5.
    let opts = TraceOptions { overflow: Overflow::Compact, ..TraceOptions::default() };
    let Some((n, _, format)) = replay("websearch-small.mqsim.trace", opts, Replay::Closed { queue_depth: 16 }) else {
        return;
    };
    assert_eq!((n, format.as_str()), (24_783, "mqsim"));
}

#[test]
fn msr_hm0_sample_replays_repeated() {
    // 1,000 lines (README), 508 reads; replayed 5 times back to back.
    let opts = TraceOptions { repeat: 5, ..TraceOptions::default() };
    let Some((n, reads, format)) = replay("msr-hm0-first1k.csv", opts, Replay::Open { time_scale: 1.0 }) else {
        return;
    };
    assert_eq!((n, reads, format.as_str()), (5_000, 5 * 508, "msr"));
}

/// The repository's own small traces (tools/make-test-traces), one in each format the
/// simulator reads, detected and replayed with the oracle on: these run in every clone.
#[test]
fn every_small_trace_is_detected_and_replays_with_the_oracle() {
    let dir = ftlsim_core::trace::samples::small("");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("small."))
        .collect();
    names.sort();
    assert_eq!(names.len(), 13, "one small trace per format: {names:?}");
    for name in names {
        // small.<format>[-<variant>].<ext>; ssdsim's text is mqsim's, and is detected as such.
        let named = name.split('.').nth(1).unwrap().split('-').next().unwrap();
        let expected = if named == "ssdsim" { "mqsim" } else { named };
        let cfg = presets::load("default").unwrap();
        let mut sim = ftlsim_ftl::simulator(cfg, true).unwrap();
        let logical_sectors = sim.derived().logical_bytes / 512;
        let path = dir.join(&name);
        let mut src = TraceSource::open(&path, TraceOptions::default(), logical_sectors, 8).unwrap();
        assert_eq!(src.info().format, expected, "{name}: detected format");
        let r = sim
            .run(
                &mut src,
                &RunOptions { replay: Replay::Open { time_scale: 1.0 }, ..RunOptions::default() },
                &mut NoObserver,
            )
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!((r.host.requests, r.host.reads), (300, 90), "{name}");
    }
}
