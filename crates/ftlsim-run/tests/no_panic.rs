//! Issue 31: timing inputs at the edges of what numbers hold never abort a run. Workload specs
//! with extreme numbers, and fit files with one value replaced by junk, go through the whole
//! pipeline a user's run takes (parse, plan, replay on a small drive): each is refused with an
//! error or runs, inside the simulated-time limit; a panic fails the test.

use ftlsim_core::config::DriveConfig;
use ftlsim_core::error::SimError;
use ftlsim_core::host::{IoOp, Request};
use ftlsim_core::metrics::NoObserver;
use ftlsim_core::scheduler::SIM_TIME_LIMIT_NS;
use ftlsim_core::sim::RunOptions;
use ftlsim_core::trace::{ParserOptions, RecordReader, TraceFormat};
use ftlsim_run::{Drive, Quiet, RunSpec, Source};
use proptest::prelude::*;
use std::sync::OnceLock;

mod common;
use common::SMALL;

/// A scratch directory, removed with its files when dropped.
fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("ftlsim-run-no-panic-").tempdir().unwrap()
}

/// The fit of the repository's small MSR trace, as TOML.
fn fit_text() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(|| {
        let path = ftlsim_core::trace::samples::small("small.msr.csv");
        let reader = RecordReader::new(&path, TraceFormat::Msr, &ParserOptions::default(), false).unwrap();
        toml::to_string(&ftlsim_core::fitted::fit(reader, path.to_str().unwrap(), 1 << 20).unwrap()).unwrap()
    })
}

/// Plan and run `workload` on the small drive, empty; the run's simulated time if it ran.
fn run(workload: &str, interval_ns: u64) -> Result<u64, SimError> {
    let spec = RunSpec {
        drive: Drive::Config(Box::new(DriveConfig::from_toml(SMALL, "tiny").unwrap())),
        source: Source::Synthetic(workload.to_string()),
        fill: Some(0.0),
        interval_ns,
        ..RunSpec::default()
    };
    let plan = spec.plan()?;
    let outcome = ftlsim_run::execute(&spec, &plan, &mut Quiet)?;
    Ok(outcome.report.expect("a drive run reports").performance.simulated_time_ns)
}

/// The run ends in an error or in time: requests are issued by the limit, and the flash work
/// after the last one takes milliseconds, not another 2^62 ns (a clock run away or wrapped).
fn check(workload: &str, interval_ns: u64) {
    if let Ok(sim_ns) = run(workload, interval_ns) {
        assert!(sim_ns < 2 * SIM_TIME_LIMIT_NS, "{workload}: ran {sim_ns} ns");
    }
}

/// Timing at the edges: zero, one, the limit and past it, huge and tiny rates.
fn timing() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "arrival=fixed:0",
        "arrival=fixed:1ns",
        "arrival=fixed:4611686018427387903ns",
        "arrival=fixed:4611686018427387904ns",
        "arrival=fixed:4611686018427387905ns",
        "arrival=fixed:1e300s",
        "arrival=poisson:1ns",
        "arrival=poisson:1e17ns",
        "arrival=poisson:4611686018427387904ns",
        "arrival=think:1:1:4e18ns",
        "arrival=think:4:0.5:1ns",
        "arrival=think:1:1:1e17ns",
        "qd=1",
        "qd=65536",
    ])
    .prop_map(str::to_string)
}

/// Fitted timing: rates and speeds at the ends of f64.
fn fitted_timing() -> impl Strategy<Value = String> {
    let x = prop::sample::select(vec![
        "5e-324",
        "1e-300",
        "0.00000000001",
        "1e-3",
        "1",
        "1e300",
        "1.7976931348623157e308",
        "inf",
        "nan",
        "-1",
        "0",
    ]);
    (prop::sample::select(vec!["rate", "speed"]), x).prop_map(|(k, v)| format!("{k}={v}"))
}

/// Ends that keep every case short: a few requests, or a duration of at most 10 us.
fn limit() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["requests=1", "requests=2", "requests=7", "duration=1ns", "duration=10us"])
        .prop_map(str::to_string)
}

fn interval() -> impl Strategy<Value = u64> {
    prop::sample::select(vec![0u64, 1, 1_000, 100_000_000])
}

/// Values that break parsers and validators.
fn junk() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "-1",
        "0",
        "1",
        "1e308",
        "-1e308",
        "nan",
        "inf",
        "-inf",
        "4611686018427387904",
        "18446744073709551615",
        "18446744073709551616",
        "\"x\"",
        "[]",
        "[0]",
        "[18446744073709551615]",
        "[-1]",
        "[[0]]",
        "true",
    ])
    .prop_map(str::to_string)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn workload_specs_with_extreme_numbers_never_panic(t in timing(), l in limit(), i in interval()) {
        check(&format!("{t},{l},read=0.5"), i);
    }

    #[test]
    fn fitted_workloads_with_extreme_rates_never_panic(t in fitted_timing(), l in limit(), i in interval()) {
        let d = scratch();
        let w = d.path().join("fit.toml");
        std::fs::write(&w, fit_text()).unwrap();
        check(&format!("file:{},{t},{l}", w.display()), i);
    }

    #[test]
    fn fit_files_with_a_junk_value_never_panic(line in 0usize..200, value in junk(), l in limit()) {
        // Replace the value of the `line`-th `key = value` line of a valid fit.
        let text = fit_text();
        let kv: Vec<usize> = text.lines().enumerate().filter(|(_, l)| l.contains(" = ")).map(|(n, _)| n).collect();
        let target = kv[line % kv.len()];
        let edited: String = text
            .lines()
            .enumerate()
            .map(|(n, l)| if n == target { format!("{} = {value}\n", l.split(" = ").next().unwrap()) } else { format!("{l}\n") })
            .collect();
        let d = scratch();
        let w = d.path().join(format!("junk-{line}.toml"));
        std::fs::write(&w, edited).unwrap();
        check(&format!("file:{},{l}", w.display()), 1_000_000);
    }
}

/// A request issued past the limit (a Poisson tail, a think time) is an error naming it, not
/// an overflow further on: the replay checks each request's time as it issues it.
#[test]
fn a_request_past_the_time_limit_is_an_error() {
    let cfg = DriveConfig::from_toml(SMALL, "tiny").unwrap();
    let mut sim = ftlsim_ftl::simulator(cfg, false).unwrap();
    let req =
        |arrival_ns| Request { arrival_ns, think_ns: 0, device: 0, offset_sector: 0, sectors: 8, op: IoOp::Write };
    let opts = RunOptions {
        replay: ftlsim_core::sim::Replay::Open { time_scale: 1.0 },
        interval_ns: 0,
        ..RunOptions::default()
    };
    let mut src = [req(5), req(SIM_TIME_LIMIT_NS + 1_000_000)].into_iter().map(Ok);
    let e = sim.run(&mut src, &opts, &mut NoObserver).unwrap_err().to_string();
    assert!(e.contains("request 2: issued at") && e.contains("past the limit of 2^62 ns"), "{e}");
    // Closed loop: a think time that far.
    let mut sim = ftlsim_ftl::simulator(DriveConfig::from_toml(SMALL, "tiny").unwrap(), false).unwrap();
    let think = Request { think_ns: u64::MAX, ..req(0) };
    let mut src = [req(0), think].into_iter().map(Ok);
    let opts = RunOptions {
        replay: ftlsim_core::sim::Replay::Closed { queue_depth: 1 },
        interval_ns: 0,
        ..RunOptions::default()
    };
    let e = sim.run(&mut src, &opts, &mut NoObserver).unwrap_err().to_string();
    assert!(e.contains("its think time"), "{e}");
}

// ---------------------------------------------------------------------------------------------
// Issue 58: zoned command lines, FlashNet rows at extreme offsets, tenant specs, and power cuts
// under every scheduling mode, each through the run a user's command takes.

/// A zoned namespace on the small drive: 4 planes of 32 blocks, zones of 64 pages.
fn zoned_spec(source: Source) -> RunSpec {
    let mut cfg = DriveConfig::from_toml(SMALL, "tiny").unwrap();
    ftlsim_ftl::zns::fit_drive(&mut cfg);
    cfg.ftl.name = "zns".into();
    RunSpec { drive: Drive::Config(Box::new(cfg)), source, fill: Some(0.0), interval_ns: 0, ..RunSpec::default() }
}

/// Plan and run `spec`: an error, or a run inside the time limit.
fn plan_and_run(spec: &RunSpec) {
    let Ok(plan) = spec.plan() else { return };
    if let Ok(o) = ftlsim_run::execute(spec, &plan, &mut Quiet) {
        if let Some(r) = o.report {
            assert!(r.performance.simulated_time_ns < 2 * SIM_TIME_LIMIT_NS);
        }
    }
}

/// A blkparse line of a zoned command (or a write) with an address and range at the edges.
fn zoned_line() -> impl Strategy<Value = String> {
    let rwbs = prop::sample::select(vec!["ZA", "ZR", "ZRA", "ZF", "ZO", "ZC", "WS", "R", "ZAS", "WZ"]);
    let sector = prop::sample::select(vec!["0", "512", "513", "4096", "65536", "18446744073709551615", "x", ""]);
    let range =
        prop::sample::select(vec!["", "+ 0", "+ 8", "+ 512", "+ 4096", "+ 4294967295", "+ -1", "[app]", "+ 8 [app]"]);
    (rwbs, sector, range).prop_map(|(r, s, g)| format!("D {r} {s} {g}"))
}

/// A FlashNet replayed row: an offset and size at the edges of 64 bits.
fn flashnet_row() -> impl Strategy<Value = String> {
    let offset = prop::sample::select(vec![
        0u64,
        4096,
        (1 << 54) * 512 - 4096,
        u64::MAX - 4095,
        u64::MAX - 511,
        u64::MAX,
        1 << 63,
    ]);
    let size = prop::sample::select(vec![512u64, 4096, 1 << 20, 1 << 31, (1 << 32) - 512, 1 << 32]);
    (offset, size, 0u8..2).prop_map(|(o, s, op)| format!("1.0,100,{op},{s},{o},1.0,{s}"))
}

/// A tenant spec of the tenant keys and a workload's, some with junk values.
fn tenant_spec() -> impl Strategy<Value = String> {
    let key = prop::sample::select(vec![
        "ns",
        "class",
        "seed",
        "plids",
        "plid_select",
        "plid_sizes",
        "device",
        "format",
        "speed",
        "overflow",
        "qd",
        "read",
        "size",
        "requests",
        "pattern",
        "arrival",
    ]);
    let value = prop::sample::select(vec![
        "0..0.5",
        "0.5..1GiB",
        "1..0",
        "-1",
        "0",
        "1",
        "high",
        "urgent",
        "0:1",
        "roundrobin",
        "random",
        "size",
        "4k",
        "1e300",
        "nan",
        "2",
        "poisson:1ns",
        "",
        "x",
    ]);
    prop::collection::vec((key, value), 0..4).prop_map(|kv| {
        let mut s = "name=t,requests=5".to_string();
        for (k, v) in kv {
            s += &format!(",{k}={v}");
        }
        s
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn zoned_command_lines_never_panic(lines in prop::collection::vec(zoned_line(), 1..12)) {
        let d = scratch();
        let path = d.path().join("zoned.blkparse");
        let text: String = lines.iter().enumerate().map(|(i, l)| format!("259,0 0 {i} 0.{i:09} 1 {l}\n")).collect();
        std::fs::write(&path, text).unwrap();
        let options = ftlsim_core::trace::TraceOptions {
            format: Some(TraceFormat::Blkparse),
            ..Default::default()
        };
        plan_and_run(&zoned_spec(Source::Trace { path, options, qd: Some(2) }));
    }

    #[test]
    fn flashnet_rows_at_extreme_offsets_never_panic(rows in prop::collection::vec(flashnet_row(), 1..6), overflow in 0u8..3) {
        let d = scratch();
        let path = d.path().join("far.flashnet");
        std::fs::write(&path, rows.iter().map(|r| format!("{r}\n")).collect::<String>()).unwrap();
        let opts = ParserOptions::default();
        if let Ok(r) = RecordReader::new(&path, TraceFormat::FlashnetReplayed, &opts, false) {
            let _ = ftlsim_core::trace::stats(r, 4096);
        }
        if let Ok(r) = RecordReader::new(&path, TraceFormat::FlashnetReplayed, &opts, false) {
            let _ = ftlsim_core::locality::of_trace(r);
        }
        if let Ok(r) = RecordReader::new(&path, TraceFormat::FlashnetReplayed, &opts, false) {
            let _ = ftlsim_core::fitted::fit(r, "far", 1 << 20);
        }
        let overflow = [ftlsim_core::trace::Overflow::Error, ftlsim_core::trace::Overflow::Wrap,
            ftlsim_core::trace::Overflow::Compact][overflow as usize];
        let options = ftlsim_core::trace::TraceOptions { format: Some(TraceFormat::FlashnetReplayed), overflow, ..Default::default() };
        let spec = RunSpec {
            drive: Drive::Config(Box::new(DriveConfig::from_toml(SMALL, "tiny").unwrap())),
            source: Source::Trace { path, options, qd: Some(2) },
            fill: Some(0.0),
            interval_ns: 0,
            ..RunSpec::default()
        };
        plan_and_run(&spec);
    }

    #[test]
    fn tenant_specs_never_panic(specs in prop::collection::vec(tenant_spec(), 1..3)) {
        let tenants: Result<Vec<_>, _> = specs
            .iter()
            .enumerate()
            .map(|(i, s)| ftlsim_run::TenantSpec::parse(&s.replacen("name=t", &format!("name=t{i}"), 1)))
            .collect();
        if let Ok(tenants) = tenants {
            let spec = RunSpec {
                drive: Drive::Config(Box::new(DriveConfig::from_toml(SMALL, "tiny").unwrap())),
                tenants,
                fill: Some(0.5),
                interval_ns: 0,
                ..RunSpec::default()
            };
            plan_and_run(&spec);
        }
    }

    #[test]
    fn power_cuts_under_every_scheduling_mode_never_panic(
        mode in 0usize..4,
        ftl in prop::sample::select(vec!["page", "dftl", "fast", "block", "scftl", "waftl"]),
        cut in prop::sample::select(vec!["1", "7", "150", "399", "400", "401", "1ms", "30ms", "random:2"]),
        buffer in any::<bool>(),
    ) {
        let mut sets = vec![("ftl.name".to_string(), format!("\"{ftl}\""))];
        match mode {
            1 => sets.push(("timing.transaction_order".into(), "\"read_first\"".into())),
            2 => sets.push(("ftl.gc_preemption".into(), "\"reads\"".into())),
            3 => {
                sets.push(("ftl.gc_preemption".into(), "\"writes\"".into()));
                sets.push(("timing.transaction_order".into(), "\"read_first\"".into()));
            }
            _ => {}
        }
        if buffer {
            sets.push(("host.write_buffer_bytes".into(), "65536".into()));
        }
        let spec = RunSpec {
            drive: Drive::Config(Box::new(DriveConfig::from_toml(SMALL, "tiny").unwrap())),
            sets,
            source: Source::Synthetic("read=0.5,requests=400".into()),
            steady_state: true,
            fill: Some(0.9),
            verify: true,
            power_cut: Some(ftlsim_run::PowerCut::parse(cut).unwrap()),
            interval_ns: 0,
            ..RunSpec::default()
        };
        plan_and_run(&spec);
    }
}
