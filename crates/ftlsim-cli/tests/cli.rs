//! The `ftlsim` binary end to end: exit codes, error messages, result files, determinism.

use crate::common;

use common::{ftlsim, shared_trace, small_trace, tmp, SMALL};
use std::process::Output;

fn small_config(dir: &std::path::Path, text: &str) -> String {
    let p = dir.join("small.toml");
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

#[test]
fn run_writes_results_and_is_deterministic() {
    let d = tmp("det");
    let cfg = small_config(&d, SMALL);
    let mut jsons = Vec::new();
    for i in 0..2 {
        let out = d.join(format!("out{i}"));
        let o = ftlsim(&[
            "run",
            "--config",
            &cfg,
            "--steady-state",
            "--workload",
            "requests=3000,qd=8",
            "--quiet",
            "--json",
            "--interval",
            "10ms",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let mut v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert!(v["report"]["gc"]["collections"].as_u64().unwrap() > 0, "steady state must GC");
        assert!(out.join("timeseries.csv").exists() && out.join("config.toml").exists());
        let on_disk: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
        assert_eq!(on_disk["report"], v["report"]);
        v.as_object_mut().unwrap().remove("wall_time");
        jsons.push(v);
    }
    assert_eq!(jsons[0], jsons[1]);
}

#[test]
fn a_saved_drive_loads_instead_of_preconditioning_with_the_same_results() {
    let d = tmp("snap");
    let cfg = small_config(&d, SMALL);
    let snap = d.join("drive.snap");
    let run = |extra: &[&str], out: &str| {
        let mut args = vec!["run", "--config", &cfg, "--workload", "requests=2000,qd=8", "--quiet", "--json"];
        let out = d.join(out);
        args.extend(["--out", out.to_str().unwrap()]);
        args.extend(extra);
        ftlsim(&args)
    };
    let saved = run(&["--steady-state", "--save-state", snap.to_str().unwrap()], "a");
    assert!(saved.status.success(), "{}", String::from_utf8_lossy(&saved.stderr));
    let loaded = run(&["--load-state", snap.to_str().unwrap()], "b");
    assert!(loaded.status.success(), "{}", String::from_utf8_lossy(&loaded.stderr));
    let json = |o: &Output| serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap();
    let (a, b) = (json(&saved), json(&loaded));
    assert_eq!(a["report"], b["report"]);
    assert!(b["run"]["precondition"]["loaded_from"].as_str().unwrap().ends_with("drive.snap"));
    assert!(b["wall_time"]["load_state_s"].as_f64().unwrap() > 0.0);
    assert_eq!(b["wall_time"]["steady_state_s"].as_f64(), Some(0.0));
    // Another FTL: refused with the key, exit 1.
    let other = run(&["--load-state", snap.to_str().unwrap(), "--ftl", "dftl"], "c");
    assert_eq!(other.status.code(), Some(1));
    let e = String::from_utf8_lossy(&other.stderr);
    assert!(e.contains("ftl.name") && e.contains("\"page\" there"), "{e}");
    // Loading replaces preconditioning: asking for both is an error.
    let both = run(&["--load-state", snap.to_str().unwrap(), "--steady-state"], "d");
    assert_eq!(both.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&both.stderr).contains("--steady-state"));
    // A power-cut run needs a snapshot whose pages carry program stamps.
    let cut = run(&["--load-state", snap.to_str().unwrap(), "--power-cut", "100"], "e");
    assert_eq!(cut.status.code(), Some(1));
    let e = String::from_utf8_lossy(&cut.stderr);
    assert!(e.contains("drive.snap") && e.contains("program stamps") && e.contains("--power-cut"), "{e}");
    let stamped = d.join("stamped.snap");
    let saved =
        run(&["--steady-state", "--save-state", stamped.to_str().unwrap(), "--power-cut", "100", "--verify"], "f");
    assert!(saved.status.success(), "{}", String::from_utf8_lossy(&saved.stderr));
    let cut = run(&["--load-state", stamped.to_str().unwrap(), "--power-cut", "100", "--verify"], "g");
    assert!(cut.status.success(), "{}", String::from_utf8_lossy(&cut.stderr));
    assert!(json(&cut)["report"]["power_cut"]["oracle_checked_pages"].as_u64().unwrap() > 0);
}

#[test]
fn power_cut_mistakes_exit_1_naming_the_option() {
    for bad in ["0", "soon", "random:0"] {
        let o = ftlsim(&["run", "--power-cut", bad, "--quiet"]);
        assert_eq!(o.status.code(), Some(1), "{bad}");
        assert!(String::from_utf8_lossy(&o.stderr).contains("--power-cut"), "{bad}");
    }
}

#[test]
fn summary_table_on_stdout() {
    let d = tmp("table");
    let cfg = small_config(&d, SMALL);
    let o = ftlsim(&[
        "run",
        "--config",
        &cfg,
        "--workload",
        "requests=500",
        "--quiet",
        "--out",
        d.join("o").to_str().unwrap(),
    ]);
    assert!(o.status.success());
    let s = String::from_utf8_lossy(&o.stdout);
    for want in ["response time (us)", "write amplification", "channel time", "IOPS"] {
        assert!(s.contains(want), "missing {want} in\n{s}");
    }
}

#[test]
fn bad_input_exits_1_with_a_clear_message() {
    let d = tmp("bad");
    let o = ftlsim(&["run", "--preset", "nope"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown preset `nope`"));

    let cfg = small_config(&d, &SMALL.replace("pages_per_block = 32", "pages_per_block = 1"));
    let o = ftlsim(&["run", "--config", &cfg]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("geometry.pages_per_block = 1"), "{:?}", o);

    let cfg = small_config(&d, SMALL);
    let o = ftlsim(&["run", "--config", &cfg, "--ftl", "nosuch"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown FTL; available: page"));

    let o = ftlsim(&["run", "--config", &cfg, "--workload", "read=7"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("invalid workload spec: read = `7`"));

    let o = ftlsim(&["run", "--config", "/nonexistent/x.toml"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot read config /nonexistent/x.toml"));
}

#[test]
fn presets_and_ftls_are_listed() {
    let o = ftlsim(&["presets"]);
    assert!(o.status.success());
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(s.contains("default") && s.contains("32 GiB"), "{s}");
    let o = ftlsim(&["ftls"]);
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("page"));
}

#[test]
fn run_replays_a_trace_and_records_how() {
    let d = tmp("trace-run");
    let cfg = small_config(&d, &SMALL.replace("blocks_per_plane = 64", "blocks_per_plane = 2048"));
    let o = ftlsim(&[
        "run",
        "--config",
        &cfg,
        "--trace",
        &small_trace("small.msr.csv"),
        "--overflow",
        "compact",
        "--repeat",
        "2",
        "--quiet",
        "--json",
        "--verify",
        "--out",
        d.join("o").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["report"]["host"]["requests"], 600);
    assert_eq!(v["run"]["trace"]["format"], "msr");
    assert_eq!(v["run"]["trace"]["detected"], true);
    assert_eq!(v["run"]["trace"]["options"]["overflow"], "compact");
    assert!(v["run"]["trace"]["compacted_pages"].as_u64().unwrap() > 0);
}

#[test]
fn bad_trace_lines_name_file_line_and_field() {
    let d = tmp("trace-bad");
    let t = d.join("bad.trace");
    std::fs::write(&t, "0 0 0 8 0\n10 0 8 eight 1\n").unwrap();
    let cfg = small_config(&d, SMALL);
    let o = ftlsim(&["run", "--config", &cfg, "--trace", t.to_str().unwrap(), "--format", "mqsim", "--quiet"]);
    assert_eq!(o.status.code(), Some(1));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("bad.trace:2: field size_sectors = `eight`"), "{e}");
    let o = ftlsim(&["run", "--config", &cfg, "--trace", t.to_str().unwrap(), "--format", "nosuch"]);
    assert_eq!(o.status.code(), Some(1), "a bad flag value is bad input");
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown trace format `nosuch`"));
}

#[test]
fn trace_stats_and_convert_round_trip() {
    let d = tmp("trace-tools");
    if let Some(tpcc) = shared_trace("tpcc-small.mqsim.trace") {
        let o = ftlsim(&["trace", "stats", &tpcc, "--json"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let s: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        // awk 'END {print NR}' -> 6999; awk '$5==1' | wc -l -> 4381 (as asserted in the parser tests).
        assert_eq!((s["requests"].as_u64(), s["reads"].as_u64()), (Some(6999), Some(4381)));
        assert_eq!(s["requests_per_device"].as_object().unwrap().len(), 16, "TPC-C spans 16 devices");
    }
    // Convert MSR to DiskSim, read it back: same requests.
    let out = d.join("msr.disksim");
    let o = ftlsim(&["trace", "convert", &small_trace("small.msr.csv"), out.to_str().unwrap(), "--to", "disksim"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let a = ftlsim(&["trace", "stats", &small_trace("small.msr.csv"), "--json"]);
    let b = ftlsim(&["trace", "stats", out.to_str().unwrap(), "--format", "disksim", "--json"]);
    let (a, b): (serde_json::Value, serde_json::Value) =
        (serde_json::from_slice(&a.stdout).unwrap(), serde_json::from_slice(&b.stdout).unwrap());
    for k in ["requests", "reads", "bytes_read", "bytes_written", "footprint_pages", "sequential_share"] {
        assert_eq!(a[k], b[k], "{k}");
    }
    let o = ftlsim(&["trace", "convert", &small_trace("small.msr.csv"), out.to_str().unwrap(), "--to", "msr"]);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn compare_runs_ftls_side_by_side_normalised_to_the_baseline() {
    let d = tmp("compare");
    let cfg = small_config(&d, &SMALL.replace("share = 0.1", "share = 0.3"));
    let out = d.join("cmp");
    let o = ftlsim(&[
        "compare",
        "--config",
        &cfg,
        "--ftl",
        "page,dftl,fast",
        "--workload",
        "requests=2000,qd=4",
        "--quiet",
        "--json",
        "--verify",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let t: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(t["sources"], serde_json::json!(["workload"]));
    let rows = t["rows"].as_array().unwrap();
    assert_eq!(rows.iter().map(|r| r["ftl"].as_str().unwrap()).collect::<Vec<_>>(), vec!["page", "dftl", "fast"]);
    assert_eq!(rows[0]["normalized_response_time"], 1.0);
    assert!(rows[1]["cache_hit_ratio"].is_number() && rows[0]["cache_hit_ratio"].is_null());
    for f in ["compare.csv", "compare.json", "page/results.json", "dftl/results.json", "fast/timeseries.csv"] {
        assert!(out.join(f).exists(), "{f}");
    }
    let o = ftlsim(&["compare", "--config", &cfg, "--ftl", "page,dftl", "--baseline", "fast"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--baseline"));
}

fn f64_of(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn close(a: f64, b: f64) -> bool {
    // Rows are rounded to 6 significant digits (docs/metrics.md).
    (a - b).abs() <= 1e-5 * a.abs().max(b.abs())
}

#[test]
fn compare_over_several_traces_gives_per_trace_nt_and_its_geomean() {
    let d = tmp("compare-multi");
    let cfg = small_config(&d, &SMALL.replace("blocks_per_plane = 64", "blocks_per_plane = 2048"));
    // Copied under names of their own: a trace's label is its file name up to the first dot.
    let traces = [("small.msr.csv", "msr-small.csv"), ("small.mqsim.trace", "mqsim-small.trace")].map(|(from, to)| {
        std::fs::copy(small_trace(from), d.join(to)).unwrap();
        d.join(to).to_str().unwrap().to_owned()
    });
    let mut tables = Vec::new();
    for jobs in ["1", "2"] {
        let out = d.join(format!("cmp{jobs}"));
        let o = ftlsim(&[
            "compare",
            "--config",
            &cfg,
            "--ftl",
            "page,dftl,scftl",
            "--trace",
            &traces[0],
            "--trace",
            &traces[1],
            "--overflow",
            "compact",
            "--max-requests",
            "200",
            "--jobs",
            jobs,
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let text = String::from_utf8_lossy(&o.stdout);
        for want in ["msr-small (NT relative to page)", "mqsim-small (NT", "geometric mean of NT over 2 traces"] {
            assert!(text.contains(want), "missing {want} in\n{text}");
        }
        let t: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("compare.json")).unwrap()).unwrap();
        let rows = t["rows"].as_array().unwrap();
        assert_eq!(rows.len(), 6, "2 traces x 3 FTLs");
        // Each row's NT is its mean response over the baseline's on the same trace, checked
        // against the runs' own results.json.
        for r in rows {
            let (trace, ftl) = (r["trace"].as_str().unwrap(), r["ftl"].as_str().unwrap());
            let mean_ns = |f: &str| {
                let p = out.join(trace).join(f).join("results.json");
                let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
                f64_of(&v["report"]["response_time"]["all"]["mean_ns"])
            };
            let want = mean_ns(ftl) / mean_ns("page");
            assert!(close(f64_of(&r["normalized_response_time"]), want), "{trace}/{ftl}: {r} vs {want}");
            assert_eq!(r["requests"], 200, "{trace}/{ftl}");
        }
        // The summary is the geometric mean of the per-trace NT rows.
        for s in t["summary"].as_array().unwrap() {
            let ftl = s["ftl"].as_str().unwrap();
            let nts: Vec<f64> =
                rows.iter().filter(|r| r["ftl"] == ftl).map(|r| f64_of(&r["normalized_response_time"])).collect();
            assert_eq!(nts.len(), 2);
            let g = (nts.iter().map(|x| x.ln()).sum::<f64>() / nts.len() as f64).exp();
            assert!(close(f64_of(&s["nt_geomean"]), g), "{ftl}: {s} vs {g}");
            assert_eq!(s["traces"], 2);
            assert!(close(f64_of(&s["nt_max"]), nts.iter().copied().fold(f64::MIN, f64::max)));
        }
        let dftl = rows.iter().find(|r| r["ftl"] == "dftl").unwrap();
        let classes: u64 = ["cache_hits", "cache_misses_no_penalty", "cache_misses_fetch", "cache_misses_write_back"]
            .iter()
            .map(|k| dftl[*k].as_u64().unwrap())
            .sum();
        assert_eq!(
            classes,
            dftl["cache_accesses"].as_u64().unwrap(),
            "the four classes partition the accesses: {dftl}"
        );
        let csv = std::fs::read_to_string(out.join("compare.csv")).unwrap();
        assert_eq!(csv.lines().count(), 1 + 6, "{csv}");
        assert!(csv.starts_with("trace,ftl,"), "{csv}");
        let summary = std::fs::read_to_string(out.join("compare-summary.csv")).unwrap();
        assert_eq!(summary.lines().count(), 1 + 3, "{summary}");
        tables.push(t);
    }
    assert_eq!(tables[0], tables[1], "the thread count must not change the results");
}

#[test]
fn compare_rejects_bad_input_before_simulating() {
    let d = tmp("compare-bad");
    let cfg = small_config(&d, SMALL);
    let out = d.join("cmp");
    let run = |extra: &[&str]| {
        let mut args = vec!["compare", "--config", &cfg, "--quiet", "--out", out.to_str().unwrap()];
        args.extend_from_slice(extra);
        let o = ftlsim(&args);
        assert_eq!(o.status.code(), Some(1), "{extra:?}: {o:?}");
        assert!(!out.join("compare.json").exists(), "{extra:?} wrote results");
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let e = run(&["--ftl", "page,nosuch"]);
    assert!(e.contains("nosuch") && e.contains("unknown FTL"), "{e}");
    let e = run(&["--ftl", "dftl,fast", "--baseline", "page"]);
    assert!(e.contains("--baseline = `page`") && e.contains("must be one of --ftl dftl,fast"), "{e}");
    let e = run(&["--ftl", "page,dftl", "--trace", &small_trace("small.msr.csv"), "--trace", "/nonexistent/t.csv"]);
    assert!(e.contains("trace /nonexistent/t.csv") && e.contains("check the path"), "{e}");
    let e = run(&["--trace", &small_trace("small.msr.csv"), "--trace", &small_trace("small.msr.csv")]);
    assert!(e.contains("label `small`"), "{e}");
    let e = run(&["--ftl", "page,page"]);
    assert!(e.contains("lists `page` twice"), "{e}");
    let e = run(&["--jobs", "0"]);
    assert!(e.contains("--jobs"), "{e}");
}

#[test]
fn set_overrides_config_keys_in_run_and_compare() {
    let d = tmp("set");
    let cfg = small_config(&d, SMALL);
    let out = d.join("run");
    let o = ftlsim(&[
        "run",
        "--config",
        &cfg,
        "--set",
        "ftl.gc_victim=fifo",
        "--set",
        "timing.t_r_ns=70000",
        "--workload",
        "requests=300",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let written = std::fs::read_to_string(out.join("config.toml")).unwrap();
    assert!(written.contains("gc_victim = \"fifo\"") && written.contains("t_r_ns = 70000"), "{written}");
    let o = ftlsim(&["run", "--config", &cfg, "--set", "ftl.gc_victimm=fifo", "--out", out.to_str().unwrap()]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("unknown field `gc_victimm`") && e.contains("--set ftl.gc_victimm=fifo"), "{e}");
    let o = ftlsim(&[
        "compare",
        "--config",
        &cfg,
        "--ftl",
        "page,dftl",
        "--set",
        "ftl.mapping_cache_bytes=4096",
        "--workload",
        "requests=300",
        "--quiet",
        "--out",
        d.join("cmp").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let written = std::fs::read_to_string(d.join("cmp").join("dftl").join("config.toml")).unwrap();
    assert!(written.contains("mapping_cache_bytes = 4096"), "{written}");
}

#[test]
fn sweep_and_report_without_the_python_package_say_how_to_get_it() {
    for cmd in ["sweep", "report"] {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_ftlsim"))
            .args([cmd, "x"])
            .env("FTLSIM_PYTHON", "/nonexistent/python")
            .output()
            .expect("ftlsim runs");
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{e}");
        assert!(e.contains("needs Python with the ftlsim package") && e.contains("FTLSIM_PYTHON"), "{e}");
    }
}

/// The `changwen` preset shrunk for tests: 72 blocks a plane, N_s 4.
const CHANGWEN_SMALL: [&str; 6] = [
    "--set",
    "geometry.blocks_per_plane=72",
    "--set",
    "overprovisioning.extra_blocks_per_plane=8",
    "--set",
    "multichannel.spare_threshold=4",
];

#[test]
fn a_multichannel_preset_runs_its_channel_system_and_refuses_what_it_lacks() {
    let d = tmp("mc");
    let out = d.join("out");
    let small = [&CHANGWEN_SMALL[..], &["--workload", "pattern=uniform,read=0.2,size=4k,requests=30000"]].concat();
    let mut args = vec!["run", "--preset", "changwen", "--out", out.to_str().unwrap()];
    args.extend(&small);
    let o = ftlsim(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("cf x 8 channels") && text.contains("IOPS") && text.contains("channel time"), "{text}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(v["run"]["multichannel"]["mode"], "cf");
    assert_eq!(v["report"]["drive"]["units"], 8);
    assert!(v["report"]["host"]["reads_ignored"].as_u64().unwrap() > 0, "reads are counted, not replayed");
    assert!(v["report"]["gc"]["cf_rounds"].as_u64().unwrap() > 0, "a full drive collects: {}", v["report"]["gc"]);
    // One cut at random times is not offered: the run ends at its cut.
    let mut args = vec!["run", "--preset", "changwen", "--power-cut", "random:3", "--out", out.to_str().unwrap()];
    args.extend(&small);
    let o = ftlsim(&args);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--power-cut"), "{}", String::from_utf8_lossy(&o.stderr));
    let cmp = d.join("cmp");
    let o = ftlsim(&[
        "compare",
        "--preset",
        "changwen",
        "--ftl",
        "fast,dftl",
        "--baseline",
        "fast",
        "--out",
        cmp.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("[multichannel]") && !cmp.join("compare.json").exists(), "refused before running: {e}");
}

#[test]
fn a_channel_system_ages_saves_loads_and_survives_a_power_cut_as_a_drive_does() {
    // Issue 35: the changwen preset gets the drive's steady state, snapshots and power cuts.
    let d = tmp("mc-engine");
    let snap = d.join("cs.snap");
    let run = |extra: &[&str], out: &str| {
        let out = d.join(out);
        let mut args = vec!["run", "--preset", "changwen"];
        args.extend(CHANGWEN_SMALL);
        args.extend([
            "--workload",
            "pattern=uniform,read=0,size=4k,requests=8000",
            "--quiet",
            "--json",
            "--out",
            out.to_str().unwrap(),
        ]);
        args.extend(extra);
        let o = ftlsim(&args);
        assert!(o.status.success(), "{extra:?}: {}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()
    };
    let saved = run(&["--steady-state", "--verify", "--save-state", snap.to_str().unwrap()], "a");
    let pre = &saved["report"]["precondition"];
    assert!(pre["overwrite_pages"].as_u64().unwrap() > 0 && pre["window_waf"].as_array().unwrap().len() >= 2, "{pre}");
    let loaded = run(&["--verify", "--load-state", snap.to_str().unwrap()], "b");
    assert_eq!(saved["report"], loaded["report"], "a loaded system runs as the preconditioned one");
    assert!(loaded["run"]["precondition"]["loaded_from"].as_str().unwrap().ends_with("cs.snap"));
    // A drive's snapshot is not a channel system's.
    let other = ftlsim(&["run", "--preset", "default", "--load-state", snap.to_str().unwrap(), "--quiet"]);
    assert_eq!(other.status.code(), Some(1));
    // A cut at the 3,000th request, with and without power-protected buffers.
    for (protected, out) in [("false", "c"), ("true", "d")] {
        let set = format!("host.buffer_power_protected={protected}");
        let cut = run(&["--power-cut", "3000", "--verify", "--set", &set], out);
        let pc = &cut["report"]["power_cut"];
        assert_eq!(pc["requests_completed"], 2999, "{pc}");
        assert!(pc["oracle_checked_pages"].as_u64().unwrap() > 0, "{pc}");
        assert!(pc["recovery_pages_read"].as_u64().unwrap() > 0, "{pc}");
        let lost = pc["lost_acknowledged_pages"]["write_buffer"].as_u64().unwrap();
        if protected == "true" {
            assert!(lost == 0 && pc["buffer_flushed_pages"].as_u64().unwrap() > 0, "{pc}");
        } else {
            assert!(lost > 0, "a volatile buffer loses what it held: {pc}");
        }
    }
    // A snapshot saved without --power-cut has no program stamps for recovery: refused.
    let mut args = vec!["run", "--preset", "changwen"];
    args.extend(CHANGWEN_SMALL);
    let snap_arg = snap.to_str().unwrap();
    args.extend(["--load-state", snap_arg, "--power-cut", "100", "--quiet"]);
    let o = ftlsim(&args);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("program stamps"), "{}", String::from_utf8_lossy(&o.stderr));
    // A cut at a time comes at that time; a cut past the last request does not come.
    let at = run(&["--power-cut", "700ms"], "t");
    assert_eq!(at["report"]["power_cut"]["at_ns"], 700_000_000);
    assert_eq!(at["report"]["performance"]["simulated_time_ns"], 700_000_000);
    let past = run(&["--power-cut", "8001"], "p");
    assert_eq!(past["run"]["power_cut_reached"], false);
    assert!(past["report"].get("power_cut").is_none());
    // A partly filled system from an offset, as a drive's --fill-offset.
    let off = run(&["--fill", "0.5", "--fill-offset", "0.25"], "e");
    assert_eq!(
        off["report"]["precondition"]["fill_pages"].as_u64(),
        Some(off["report"]["drive"]["logical_bytes"].as_u64().unwrap() / 4096 / 2)
    );
}

#[test]
fn a_flashnet_replayed_trace_is_detected_and_its_latency_summarised() {
    // Issue 36: FlashNet's replayer output, seven comma fields; the third row completed only
    // half its bytes, so its latency is left out.
    let d = tmp("flashnet");
    let trace = d.join("replayed.trace");
    std::fs::write(
        &trace,
        "0.000,120,1,4096,4923392,0.091,4096\n0.512,98,0,8192,1048576,0.6,8192\n1.024,250,1,8192,8192,1.1,4096\n",
    )
    .unwrap();
    let o = ftlsim(&["trace", "stats", trace.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("format         flashnet"), "{text}");
    assert!(text.contains("recorded lat.  2 requests") && text.contains("1 not completed"), "{text}");
    let o = ftlsim(&["trace", "stats", trace.to_str().unwrap(), "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let l = &v["recorded_latency"];
    assert_eq!((l["requests"].as_u64(), l["incomplete"].as_u64()), (Some(2), Some(1)), "{l}");
    assert_eq!(l["write"]["count"], 1);
    assert!((l["all"]["mean_ns"].as_u64().unwrap() as i64 - 109_000).abs() < 1_000, "{l}");
    assert_eq!(v["requests"], 3, "the incomplete request is still a request");
    // It replays like any trace.
    let out = d.join("out");
    let o = ftlsim(&["run", "--trace", trace.to_str().unwrap(), "--quiet", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// Issue 36: `trace locality` prints the update share, reuse and an LRU curve; its JSON has
/// every distribution, and a write buffer of 4 GiB absorbs every rewrite of a small trace.
#[test]
fn trace_locality_prints_the_update_share_and_the_miss_ratio_curve() {
    if let Some(t) = shared_trace("financial1-first10k.ssdsim.ascii") {
        let o = ftlsim(&["trace", "locality", &t]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(String::from_utf8_lossy(&o.stdout).contains("update share   69.9% of page writes"));
    }
    let t = small_trace("small.mqsim.trace");
    let o = ftlsim(&["trace", "locality", &t]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("update share") && text.contains("1 MiB") && text.contains("4 GiB"), "{text}");
    let o = ftlsim(&["trace", "locality", &t, "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for k in ["stack_distance", "write_stack_distance", "request_distance"] {
        assert!(v[k]["lower_bounds"].as_array().unwrap().len() == v[k]["counts"].as_array().unwrap().len(), "{k}");
    }
    let curve = v["miss_ratio_curve"].as_array().unwrap();
    assert_eq!(curve.len(), 13);
    assert_eq!(curve[12]["write_hit_ratio"], v["update_share"]);
}
