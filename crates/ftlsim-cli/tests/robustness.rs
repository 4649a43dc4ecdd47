//! Issue 12: nothing lost, nothing misleading. One test per case: the exact command, its exit
//! code, its message and the files it leaves behind.

use crate::common;

use common::{ftlsim, shared_trace, small_trace, tmp, SMALL};
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn files_in(d: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

fn assert_bad_input(o: &Output, needle: &str) {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains(needle), "`{needle}` not in: {e}");
    assert!(!e.contains("panicked"), "{e}");
}

#[test]
fn convert_refuses_its_own_input_and_never_leaves_a_partial_file() {
    let d = tmp("convert");
    let input = d.join("in.csv");
    std::fs::copy(small_trace("small.msr.csv"), &input).unwrap();
    let size = std::fs::metadata(&input).unwrap().len();
    std::os::unix::fs::symlink(&input, d.join("link.csv")).unwrap();
    std::fs::hard_link(&input, d.join("hard.csv")).unwrap();
    for out in ["in.csv", "link.csv", "hard.csv"] {
        let o = ftlsim(&["trace", "convert", input.to_str().unwrap(), d.join(out).to_str().unwrap(), "--to", "mqsim"]);
        assert_bad_input(&o, "is the input trace");
        assert_eq!(std::fs::metadata(&input).unwrap().len(), size, "the input is untouched");
    }
    // A convert that fails half way (a bad line after 200 good ones) leaves nothing behind.
    let text = std::fs::read_to_string(small_trace("small.disksim.ascii")).unwrap();
    let mut bad: String = text.lines().take(200).map(|l| format!("{l}\n")).collect();
    bad += "garbage line\n";
    std::fs::write(d.join("bad.ascii"), bad).unwrap();
    let before = files_in(&d);
    let out = d.join("out.mqsim");
    let o = ftlsim(&[
        "trace",
        "convert",
        d.join("bad.ascii").to_str().unwrap(),
        out.to_str().unwrap(),
        "--to",
        "mqsim",
        "--format",
        "disksim",
    ]);
    assert_bad_input(&o, "bad.ascii:201");
    assert_eq!(files_in(&d), before, "no output and no temporary file");
}

#[test]
fn a_failed_run_leaves_the_previous_results_untouched() {
    let d = tmp("atomic");
    let cfg = d.join("small.toml");
    std::fs::write(&cfg, SMALL).unwrap();
    let out = d.join("out");
    let run_ok = || {
        ftlsim(&[
            "run",
            "--config",
            cfg.to_str().unwrap(),
            "--workload",
            "requests=500",
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ])
    };
    let ok = run_ok();
    assert!(ok.status.success(), "{}", stderr(&ok));
    let read = |n: &str| std::fs::read(out.join(n)).unwrap();
    let before: Vec<Vec<u8>> = ["results.json", "timeseries.csv", "config.toml"].iter().map(|n| read(n)).collect();
    let bad = d.join("bad.mqsim");
    std::fs::write(&bad, "0 0 0 8 0\n1000 0 8 8 0\nnot a line\n").unwrap();
    let args = |o: &Path| {
        vec![
            "run".to_string(),
            "--config".into(),
            cfg.display().to_string(),
            "--trace".into(),
            bad.display().to_string(),
            "--format".into(),
            "mqsim".into(),
            "--quiet".into(),
            "--out".into(),
            o.display().to_string(),
        ]
    };
    let o = Command::new(env!("CARGO_BIN_EXE_ftlsim")).args(args(&out)).output().unwrap();
    assert_bad_input(&o, "bad.mqsim:3");
    let after: Vec<Vec<u8>> = ["results.json", "timeseries.csv", "config.toml"].iter().map(|n| read(n)).collect();
    assert_eq!(before, after, "previous results unchanged");
    assert_eq!(files_in(&out), vec!["config.toml", "results.json", "timeseries.csv"], "no staging left");
    // Staging that a killed run left (its process is gone) is cleared by the next run.
    std::fs::create_dir(out.join(".ftlsim-partial-4000000000-x")).unwrap();
    let ok = run_ok();
    assert!(ok.status.success(), "{}", stderr(&ok));
    assert_eq!(files_in(&out), vec!["config.toml", "results.json", "timeseries.csv"]);
    // Into a fresh directory: nothing that looks like a result.
    let fresh = d.join("fresh");
    let o = Command::new(env!("CARGO_BIN_EXE_ftlsim")).args(args(&fresh)).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(files_in(&fresh).is_empty(), "{:?}", files_in(&fresh));
}

#[test]
fn a_closed_pipe_ends_the_program_quietly() {
    use std::os::unix::process::ExitStatusExt;
    let mut child = Command::new(env!("CARGO_BIN_EXE_ftlsim"))
        .args(["trace", "stats", &small_trace("small.disksim.ascii"), "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // the reader goes away before anything is printed
    let o = child.wait_with_output().unwrap();
    let e = stderr(&o);
    assert!(!e.contains("panicked") && !e.contains("Broken pipe"), "{e}");
    assert!(o.status.success() || o.status.signal() == Some(libc::SIGPIPE), "{:?}: {e}", o.status);
    assert_ne!(o.status.code(), Some(134), "not an abort");
}

#[test]
fn a_drive_too_big_for_memory_is_refused_before_allocating() {
    let d = tmp("memory");
    let huge = SMALL
        .replace("channels = 2", "channels = 1")
        .replace("planes_per_die = 2", "planes_per_die = 1")
        .replace("blocks_per_plane = 64", "blocks_per_plane = 65535")
        .replace("pages_per_block = 32", "pages_per_block = 65535");
    let cfg = d.join("huge.toml");
    std::fs::write(&cfg, huge).unwrap();
    let o = ftlsim(&[
        "run",
        "--config",
        cfg.to_str().unwrap(),
        "--max-memory",
        "8g",
        "--out",
        d.join("o").to_str().unwrap(),
    ]);
    assert_bad_input(&o, "needs about 55.4 GiB of simulator memory");
    assert!(stderr(&o).contains("--max-memory"), "{}", stderr(&o));
    let o = ftlsim(&["run", "--max-memory", "100m", "--out", d.join("o").to_str().unwrap()]);
    assert_bad_input(&o, "more than the limit given (--max-memory), 100 MiB");
}

#[test]
fn the_memory_estimate_bounds_the_measured_peak_from_above() {
    let d = tmp("rss");
    for (ftl, verify) in [("page", false), ("dftl", true), ("block", false)] {
        let out = d.join(ftl);
        let mut args = vec!["run", "--ftl", ftl, "--fill", "1", "--workload", "requests=2000", "--quiet", "--json"];
        if verify {
            args.push("--verify");
        }
        args.extend(["--out", out.to_str().unwrap()]);
        let o = ftlsim(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let est = v["wall_time"]["memory_estimate_bytes"].as_f64().unwrap();
        let rss = v["wall_time"]["peak_rss_bytes"].as_f64().unwrap();
        assert!(rss <= est && rss >= 0.75 * est, "{ftl}: peak RSS {rss} vs estimate {est}");
    }
}

#[test]
fn a_trace_without_requests_is_an_error_that_says_why() {
    let d = tmp("empty");
    let empty = d.join("empty.csv");
    std::fs::write(&empty, "").unwrap();
    let o = ftlsim(&[
        "run",
        "--trace",
        empty.to_str().unwrap(),
        "--format",
        "msr",
        "--fill",
        "0",
        "--out",
        d.join("o").to_str().unwrap(),
    ]);
    assert_bad_input(&o, "no requests in 0 lines");
    let blk = std::fs::read_to_string(small_trace("small.blkparse.txt")).unwrap();
    let completions: String =
        blk.lines().filter(|l| l.split_whitespace().nth(5) == Some("C")).map(|l| format!("{l}\n")).collect();
    assert!(!completions.is_empty());
    let conly = d.join("c-only.txt");
    std::fs::write(&conly, completions).unwrap();
    let o = ftlsim(&["trace", "stats", conly.to_str().unwrap(), "--format", "blkparse"]);
    assert_bad_input(&o, "no D events; this file has only other events");
    assert!(stderr(&o).contains("--blkparse-queue"), "{}", stderr(&o));
    // D events, but none that moves data.
    let flushes = d.join("flushes.txt");
    std::fs::write(&flushes, "8,0 1 1 0.000001 100 D N [x]\n8,0 1 2 0.000002 100 D FN [x]\n").unwrap();
    assert_bad_input(
        &ftlsim(&["trace", "stats", flushes.to_str().unwrap(), "--format", "blkparse"]),
        "2 D events, none with data",
    );
    // SYSTOR'17 records of unknown type only.
    let blank = d.join("blank.csv");
    std::fs::write(&blank, "1.0,0.001,,0,4096,4096\n").unwrap();
    assert_bad_input(
        &ftlsim(&["trace", "stats", blank.to_str().unwrap(), "--format", "systor17"]),
        "all 1 records have a blank IOType",
    );
    // Requests there, but the options leave none.
    let o = ftlsim(&[
        "run",
        "--trace",
        &small_trace("small.msr.csv"),
        "--skip",
        "5000",
        "--fill",
        "0",
        "--overflow",
        "wrap",
        "--out",
        d.join("o").to_str().unwrap(),
    ]);
    assert_bad_input(&o, "no request was replayed");
}

#[test]
fn byte_unit_traces_are_read_as_bytes_and_ambiguous_samples_are_refused() {
    // The repository's own: 90 reads and 210 writes of 4 to 64 KiB (tools/make-test-traces).
    let o = ftlsim(&["trace", "stats", &small_trace("small.linnos.trace"), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["format"], "linnos");
    assert_eq!(v["units"], "time ms, offset and size bytes");
    assert_eq!((v["reads"].as_u64(), v["writes"].as_u64()), (Some(90), Some(210)));
    let total = v["bytes_read"].as_f64().unwrap() + v["bytes_written"].as_f64().unwrap();
    assert!((300.0 * 4096.0..300.0 * 65536.0).contains(&total), "{total}: bytes, not sectors");
    if let Some(slice) = shared_trace("msr-slice-bytes.trace") {
        let o = ftlsim(&["trace", "stats", &slice, "--json"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["format"], "linnos");
        assert_eq!((v["reads"].as_u64(), v["writes"].as_u64()), (Some(2020), Some(7980)), "the README's counts");
        // About 50 MB in all (README), not 512 times that.
        let total = v["bytes_read"].as_f64().unwrap() + v["bytes_written"].as_f64().unwrap();
        assert!((40e6..70e6).contains(&total), "{total}");
    }
    // Sizes that are multiples of 512 with offsets that are not: neither reading is plausible.
    let d = tmp("ambiguous");
    let f = d.join("amb.trace");
    std::fs::write(&f, "0.0 0 4096 4096 0\n1.0 0 100 512 1\n").unwrap();
    let o = ftlsim(&["trace", "stats", f.to_str().unwrap()]);
    assert_bad_input(&o, "disksim and linnos both fit");
    assert!(stderr(&o).contains("give --format"), "{}", stderr(&o));
    let o = ftlsim(&["trace", "stats", f.to_str().unwrap(), "--format", "disksim"]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Sector-unit traces stay what they were.
    let o = ftlsim(&["trace", "stats", &small_trace("small.disksim.ascii")]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("format         disksim"), "{}", stderr(&o));
}

#[test]
fn systor_records_with_a_blank_type_are_counted_not_fatal() {
    let d = tmp("systor");
    let f = d.join("s.csv");
    std::fs::write(&f, "Timestamp,Response,IOType,LUN,Offset,Size\n1.0,0.001,R,0,4096,4096\n1.1,0.001,,0,8192,4096\n1.2,0.001,W,0,0,4096\n").unwrap();
    let o = ftlsim(&["trace", "stats", f.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!((v["requests"].as_u64(), v["untyped_records_skipped"].as_u64()), (Some(2), Some(1)));
    // A type that is neither R, W nor blank is still an error.
    std::fs::write(&f, "1.0,0.001,X,0,4096,4096\n").unwrap();
    assert_bad_input(&ftlsim(&["trace", "stats", f.to_str().unwrap(), "--format", "systor17"]), "IOType");
}

#[test]
fn flags_name_the_rule_they_break() {
    let d = tmp("flags");
    let out = d.join("o");
    let o = ftlsim(&[
        "run",
        "--trace",
        &small_trace("small.msr.csv"),
        "--workload",
        "read=0.5",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_bad_input(&o, "'--trace <TRACE>' cannot be used with '--workload <WORKLOAD>'");
    assert_bad_input(
        &ftlsim(&["run", "--fill", "-0.1", "--out", out.to_str().unwrap()]),
        "precondition.fill = -0.1 (must be in [0, 1])",
    );
    let o = ftlsim(&[
        "run",
        "--trace",
        &small_trace("small.msr.csv"),
        "--speed",
        "inf",
        "--fill",
        "0",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_bad_input(&o, "--speed must be a finite number > 0");
}

/// PCFTL Fig. 8 on one plane (as crates/ftlsim-ftl/tests/pcftl.rs): 44 pages written, then
/// every page at an even offset rewritten. DLOOP, without PCFTL's fallback, stops with its
/// never-ending GC; the page FTL runs.
#[test]
fn compare_reports_the_runs_that_worked_and_marks_the_one_that_failed() {
    let d = tmp("compare-fail");
    let cfg = SMALL
        .replace("channels = 2", "channels = 1")
        .replace("planes_per_die = 2", "planes_per_die = 1")
        .replace("blocks_per_plane = 64", "blocks_per_plane = 18")
        .replace("pages_per_block = 32", "pages_per_block = 4")
        .replace("share = 0.1", "share = 0.38")
        + "[nand]\ncopyback_same_parity = true\n[ftl]\ngc_threshold_blocks = 2\n[host]\nwrite_buffer_bytes = 0\n";
    std::fs::write(d.join("fig8.toml"), cfg).unwrap();
    let pages = (0..44u32).chain((0..44).filter(|l| l % 4 == 0 || l % 4 == 2));
    let trace: String = pages.enumerate().map(|(i, l)| format!("{} 0 {} 8 0\n", i * 1000, l * 8)).collect();
    std::fs::write(d.join("fig8.trace"), trace).unwrap();
    let out = d.join("out");
    // An earlier invocation's results for DLOOP must not survive as if this run made them.
    std::fs::create_dir_all(out.join("dloop")).unwrap();
    std::fs::write(out.join("dloop").join("results.json"), "{}").unwrap();
    let o = ftlsim(&[
        "compare",
        "--config",
        d.join("fig8.toml").to_str().unwrap(),
        "--ftl",
        "page,dloop",
        "--baseline",
        "page",
        "--trace",
        d.join("fig8.trace").to_str().unwrap(),
        "--format",
        "mqsim",
        "--fill",
        "0",
        "--qd",
        "1",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(2), "an FTL that cannot go on is not bad input: {}", stderr(&o));
    assert!(text.contains("dloop    FAILED: ftl error: dloop: never-ending GC"), "{text}");
    assert!(text.lines().any(|l| l.starts_with("page ")), "{text}");
    assert!(stderr(&o).contains("1 of 2 runs failed"), "{}", stderr(&o));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("compare.json")).unwrap()).unwrap();
    assert_eq!(v["rows"].as_array().unwrap().len(), 1);
    assert_eq!(v["failed"][0]["ftl"], "dloop");
    assert!(!out.join("dloop").join("results.json").exists(), "stale results removed");
    assert!(out.join("page").join("results.json").exists());
    let failed = std::fs::read_to_string(out.join("compare-failed.csv")).unwrap();
    assert!(failed.starts_with("trace,ftl,error\nfig8,dloop,"), "{failed}");
}

/// Issue 14: on a full drive with one block per plane of room (the `pcftl` preset at
/// `--fill 1`), round-robin writes could leave a plane with nothing to reclaim; the page FTL
/// then let the host take its last free block, and GC, once victims appeared there, had
/// nowhere to relocate into: "plane 5 has no free block left" in the middle of the run.
#[test]
fn issue_14_page_ftl_keeps_a_block_for_gc_on_a_drive_without_slack() {
    let d = tmp("noslack");
    let o = ftlsim(&[
        "run",
        "--preset",
        "pcftl",
        "--ftl",
        "page",
        "--set",
        "geometry.blocks_per_plane=128",
        "--set",
        "overprovisioning.extra_blocks_per_plane=10",
        "--set",
        "ftl.gc_threshold_blocks=5",
        "--fill",
        "1",
        "--workload",
        "pattern=uniform,read=0,size=2k,requests=3e5",
        "--quiet",
        "--json",
        "--out",
        d.join("o").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let waf = v["report"]["write_amplification"]["total"].as_f64().unwrap();
    // One block of room in 118 usable per plane: greedy victims are ~95% valid.
    assert!(waf > 5.0 && waf < 40.0, "WAF {waf}");
}

// Issue 31: the newer features (trace fit, `file:` workloads, power cuts, multichannel,
// `--set`) lose nothing, never abort and never run something other than what was asked.

/// A fit of the MSR sample in `d`, its path.
fn fit_file(d: &Path) -> std::path::PathBuf {
    let w = d.join("W.toml");
    let o = ftlsim(&["trace", "fit", &small_trace("small.msr.csv"), "-o", w.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    w
}

/// `ftlsim run` on the small drive, empty, results into `d/o`; `args` come after.
fn run_small(d: &Path, args: &[&str]) -> Output {
    let cfg = d.join("small.toml");
    if !cfg.exists() {
        std::fs::write(&cfg, SMALL).unwrap();
    }
    let out = d.join("o");
    let mut all = vec!["run", "--config", cfg.to_str().unwrap(), "--fill", "0", "--out", out.to_str().unwrap()];
    all.extend_from_slice(args);
    ftlsim(&all)
}

#[test]
fn issue_31_trace_fit_never_writes_over_its_input() {
    let d = tmp("fit-same");
    let input = d.join("mix.trace");
    std::fs::copy(small_trace("small.msr.csv"), &input).unwrap();
    let before = std::fs::read(&input).unwrap();
    std::os::unix::fs::symlink(&input, d.join("link.trace")).unwrap();
    std::fs::hard_link(&input, d.join("hard.trace")).unwrap();
    for out in ["mix.trace", "link.trace", "hard.trace"] {
        let o = ftlsim(&["trace", "fit", input.to_str().unwrap(), "-o", d.join(out).to_str().unwrap()]);
        assert_bad_input(&o, "is the input trace");
        assert!(stderr(&o).contains("would destroy the input"), "{}", stderr(&o));
        assert_eq!(std::fs::read(&input).unwrap(), before, "{out}: the input is untouched");
    }
    assert_eq!(files_in(&d), vec!["hard.trace", "link.trace", "mix.trace"], "no output, no temporary file");
}

#[test]
fn issue_31_timing_out_of_range_is_refused_before_replay_never_an_abort() {
    let d = tmp("timing");
    let w = fit_file(&d);
    let w = w.to_str().unwrap();
    for (spec, needle) in [
        (format!("file:{w},requests=1000,rate=1e-300"), "rate = `1e-300`"),
        (format!("file:{w},requests=1000,speed=1e-300"), "beyond any finite simulated time"),
        (format!("file:{w},requests=1000,rate=0.00000000001"), "years of simulated time"),
        ("requests=1000,arrival=fixed:100000000000s".into(), "must be at most 2^62 ns"),
        ("requests=1000,arrival=poisson:100000000000s".into(), "must be at most 2^62 ns"),
        ("requests=3,arrival=fixed:100y".into(), "expected a duration"),
        ("requests=1000000,arrival=fixed:100000s".into(), "ftlsim simulates at most 2^62 ns"),
        ("requests=10,arrival=think:1:1:1e18ns".into(), "ftlsim simulates at most 2^62 ns"),
        ("size=1e30".into(), "must be at most 4 EiB"),
        ("size=4t".into(), "expected a size"),
        ("size=3000g".into(), "must be at most 2 TiB"),
    ] {
        let o = run_small(&d, &["--workload", &spec, "--quiet"]);
        assert_bad_input(&o, needle);
        assert_ne!(o.status.code(), Some(134), "{spec}: not an abort");
    }
    // The fit's own timing: a mean of inf is refused when the file is read.
    let text = std::fs::read_to_string(w).unwrap();
    let mean = text.lines().find(|l| l.starts_with("mean_ns")).unwrap();
    std::fs::write(d.join("inf.toml"), text.replace(mean, "mean_ns = inf")).unwrap();
    let o = run_small(&d, &["--workload", &format!("file:{},requests=1000", d.join("inf.toml").display())]);
    assert_bad_input(&o, "arrival.mean_ns = inf");
    // A trace replayed so slowly that it passes the limit: the line that does is named.
    let o = run_small(&d, &["--trace", &small_trace("small.msr.csv"), "--speed", "1e-300", "--overflow", "wrap"]);
    assert_bad_input(&o, "small.msr.csv:2: field time");
    assert!(stderr(&o).contains("past the simulated-time limit"), "{}", stderr(&o));
    // Far apart but inside the limit, without a time series: it runs, and the clock says so.
    let o = run_small(&d, &["--workload", "requests=3,arrival=fixed:1000000s,read=0", "--interval", "0", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["report"]["performance"]["simulated_time_ns"].as_f64().unwrap() >= 2e15);
}

#[test]
fn issue_31_a_fitted_workload_refuses_the_keys_it_does_not_use_and_records_what_ran() {
    let d = tmp("fitted-keys");
    let w = fit_file(&d);
    let w = w.to_str().unwrap();
    for spec in [
        format!("file:{w},requests=1000,pattern=zipf:0.9"),
        format!("pattern=zipf:0.9,file:{w},requests=1000"),
        format!("requests=1000,size=64k,file:{w}"),
        format!("file:{w},size=64k"),
        format!("file:{w},seq=0.5"),
    ] {
        let key = ["pattern", "size", "seq"].into_iter().find(|k| spec.contains(&format!("{k}="))).unwrap();
        assert_bad_input(&run_small(&d, &["--workload", &spec, "--quiet"]), &format!("{key} = `"));
    }
    // results.json records the fit's sizes, which are what ran, not the default 4 KiB.
    let o = run_small(&d, &["--workload", &format!("file:{w},requests=2000,span=0.5"), "--json", "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let sizes = v["run"]["workload"]["sizes"].as_array().unwrap();
    let fit: toml::Value = toml::from_str(&std::fs::read_to_string(w).unwrap()).unwrap();
    // Every size the fit keeps (reads, writes and the starts of re-referencing runs), once.
    let recorded: Vec<u64> = sizes.iter().map(|s| s[0].as_u64().unwrap()).collect();
    let mut fitted: Vec<u64> =
        [&fit["read_sizes"], &fit["write_sizes"], &fit["read_reuse"]["sizes"], &fit["write_reuse"]["sizes"]]
            .iter()
            .flat_map(|t| t["values"].as_array().unwrap().iter().map(|x| x.as_integer().unwrap() as u64))
            .collect();
    fitted.sort_unstable();
    fitted.dedup();
    assert_eq!(recorded, fitted);
    let mean =
        v["report"]["host"]["bytes_written"].as_f64().unwrap() + v["report"]["host"]["bytes_read"].as_f64().unwrap();
    assert!(mean / 2000.0 > 8192.0, "the fit's sizes ran (mean {} B)", mean / 2000.0);
}

#[test]
fn issue_31_hand_edited_fit_files_are_checked_strictly() {
    let d = tmp("fit-edit");
    let w = fit_file(&d);
    let text = std::fs::read_to_string(&w).unwrap();
    let line = |key: &str| text.lines().find(|l| l.starts_with(key)).unwrap().to_string();
    let weights = text.lines().find(|l| l.starts_with("weights")).unwrap().to_string();
    let zero_weights = format!("weights = [{}]", vec!["0"; weights.matches(',').count() + 1].join(", "));
    let values = text.lines().find(|l| l.starts_with("values")).unwrap().to_string();
    let huge = values.replacen("[4096,", "[1099511627776,", 1);
    for (from, to, needle) in [
        (line("mean_ns"), "mean_ns = -1".to_string(), "arrival.mean_ns = -1"),
        (line("mean_ns"), "mean_ns = nan".to_string(), "arrival.mean_ns = NaN"),
        (weights.clone(), zero_weights, "sizes: every weight is 0"),
        (values.clone(), huge, "larger than the addressed span"),
        (line("sequential_share"), "sequential_share = 5.0".to_string(), "sequential_share = 5"),
        (line("read_share"), "read_share = 0.9\nbogus_key = 1".to_string(), "unknown field `bogus_key`"),
        (line("update_share"), "update_share = -0.5".to_string(), "update_share = -0.5"),
    ] {
        assert!(text.contains(&from), "{from}");
        let edited = d.join("edited.toml");
        std::fs::write(&edited, text.replacen(&from, &to, 1)).unwrap();
        let o = run_small(&d, &["--workload", &format!("file:{},requests=100", edited.display()), "--quiet"]);
        assert_bad_input(&o, needle);
        assert!(stderr(&o).contains("edited.toml"), "the file is named: {}", stderr(&o));
    }
}

#[test]
fn issue_31_power_cut_runs_say_what_the_cut_did() {
    let d = tmp("cut-summary");
    let o = run_small(&d, &["--ftl", "dftl", "--workload", "requests=3000", "--power-cut", "1000", "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("o/results.json")).unwrap()).unwrap();
    let h = &v["report"]["host"];
    let dispatched = h["reads"].as_u64().unwrap() + h["writes"].as_u64().unwrap();
    let cut = &v["report"]["power_cut"];
    assert!(
        text.contains(&format!(
            "requests {} completed before the power cut, of {dispatched} dispatched",
            h["requests"]
        )),
        "{text}"
    );
    assert!(text.contains("power cut at request 1000 ("), "{text}");
    assert!(text.contains(&format!("{} in flight failed", cut["requests_in_flight"])), "{text}");
    assert!(text.contains(&format!("recovery: {} pages read", cut["recovery_pages_read"])), "{text}");
    let post = &v["post_recovery"]["host"]["requests"];
    assert!(text.contains(&format!("after recovery: {post} requests")), "{text}");
    assert_eq!(v["run"]["power_cut_reached"], true);
    // A cut the run never reaches is said, quiet or not, and recorded.
    let o = run_small(&d, &["--ftl", "dftl", "--workload", "requests=2000", "--power-cut", "99999999", "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("power cut at request 99999999: not reached (the run ended after 2000 requests"), "{text}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("o/results.json")).unwrap()).unwrap();
    assert_eq!(v["run"]["power_cut_reached"], false);
    assert!(v["report"].get("power_cut").is_none_or(|c| c.is_null()));
    // random:N: the means over the cuts.
    let o = run_small(&d, &["--ftl", "page", "--workload", "requests=1500", "--power-cut", "random:2", "--quiet"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("power cuts: 2 at seeded random instants"), "{text}");
    assert!(text.contains("recovery: read"), "{text}");
}

#[test]
fn issue_31_compare_with_a_power_cut_carries_recovery_and_the_run_after() {
    let d = tmp("cut-compare");
    std::fs::write(d.join("small.toml"), SMALL).unwrap();
    let out = d.join("out");
    let o = ftlsim(&[
        "compare",
        "--config",
        d.join("small.toml").to_str().unwrap(),
        "--ftl",
        "page,dftl",
        "--fill",
        "1",
        "--workload",
        "requests=3000",
        "--power-cut",
        "1000",
        "--quiet",
        "--jobs",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("power cut: the table above covers the requests before it"), "{text}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("compare.json")).unwrap()).unwrap();
    for row in v["rows"].as_array().unwrap() {
        let ftl = row["ftl"].as_str().unwrap();
        let run: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join(ftl).join("results.json")).unwrap()).unwrap();
        assert_eq!(row["power_cuts"], 1, "{ftl}");
        assert_eq!(row["recovery_time_us"], run["report"]["power_cut"]["recovery_time_us"], "{ftl}");
        assert_eq!(row["requests_in_flight_at_cut"], run["report"]["power_cut"]["requests_in_flight"], "{ftl}");
        let post = run["post_recovery"]["response_time"]["all"]["mean_ns"].as_f64().unwrap() / 1e3;
        assert!((row["post_recovery_mean_response_us"].as_f64().unwrap() / post - 1.0).abs() < 1e-5, "{ftl}");
    }
    assert_eq!(v["rows"][0]["post_recovery_normalized_response_time"], 1.0, "the baseline's own");
    let csv = std::fs::read_to_string(out.join("compare.csv")).unwrap();
    let header = csv.lines().next().unwrap();
    for col in ["power_cuts", "recovery_pages_read_ratio", "recovery_time_us", "lost_acknowledged_pages"] {
        assert!(header.contains(col), "{header}");
    }
}

#[test]
fn issue_31_minor_refusals_say_what_is_wrong() {
    let d = tmp("minor");
    // A snapshot path that is a directory is named as one.
    let o = ftlsim(&["run", "--load-state", d.to_str().unwrap(), "--quiet", "--out", d.join("o").to_str().unwrap()]);
    assert_bad_input(&o, "is a directory, not a snapshot file");
    // N_s at or above a unit's blocks is refused; under a mode that does not use it, said.
    let o = ftlsim(&[
        "run",
        "--preset",
        "changwen",
        "--set",
        "multichannel.spare_threshold=100000",
        "--quiet",
        "--out",
        d.join("o").to_str().unwrap(),
    ]);
    assert_bad_input(&o, "multichannel.spare_threshold = 100000");
    assert!(stderr(&o).contains("N_s must be below the"), "{}", stderr(&o));
    let o = ftlsim(&[
        "run",
        "--preset",
        "changwen",
        "--set",
        "multichannel.mode=fi",
        "--set",
        "multichannel.spare_threshold=7",
        "--set",
        "geometry.blocks_per_plane=72",
        "--set",
        "overprovisioning.extra_blocks_per_plane=8",
        "--fill",
        "0",
        "--workload",
        "read=0,requests=200",
        "--json",
        "--out",
        d.join("o").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("multichannel.spare_threshold = 7 is not used"), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["report"]["drive"]["spare_threshold"].is_null(), "{}", v["report"]["drive"]);
    // An empty --set removes a key, which must exist.
    assert_bad_input(&run_small(&d, &["--set", "ftl.bogus=", "--quiet"]), "ftl.bogus");
    assert_bad_input(&run_small(&d, &["--set", "bogus.table.key=", "--quiet"]), "unknown key");
    let ok = run_small(
        &d,
        &["--set", "ftl.gc_victim=", "--set", "host.write_buffer_bytes=", "--workload", "requests=10", "--quiet"],
    );
    assert!(ok.status.success(), "known keys, set or not, can be removed: {}", stderr(&ok));
    // A binary trace's control bytes are escaped in the error, not sent to the terminal.
    let bin = d.join("bin.trace");
    std::fs::write(&bin, b"0 0 0 8 0\n\x1b[31m\x07\x00 0 8 8 0\n").unwrap();
    let o = run_small(&d, &["--trace", bin.to_str().unwrap(), "--format", "mqsim", "--quiet"]);
    assert_bad_input(&o, "bin.trace:2");
    assert!(!stderr(&o).contains('\x1b') && !stderr(&o).contains('\x07'), "{:?}", stderr(&o));
    assert!(stderr(&o).contains("\\u{1b}[31m"), "{}", stderr(&o));
    // A time series of about 10^9 rows is refused up front, naming --interval.
    let w = fit_file(&d);
    let o = run_small(&d, &["--workload", &format!("file:{},rate=0.000001,requests=100", w.display()), "--quiet"]);
    assert_bad_input(&o, "time-series rows at this interval");
    assert!(stderr(&o).contains("--interval"), "{}", stderr(&o));
    let o = run_small(
        &d,
        &["--workload", &format!("file:{},rate=0.000001,requests=100", w.display()), "--interval", "0", "--quiet"],
    );
    assert!(o.status.success(), "without a time series it runs: {}", stderr(&o));
}

/// Issue 36: `timing.write_buffer_search_ns` charges every entry the write buffer holds to
/// each host page's lookup; without a buffer to search it is refused.
#[test]
fn issue_36_a_write_buffer_search_costs_the_entries_it_holds() {
    let d = tmp("buffer-search");
    // 100 one-page writes at QD 1 into a 16-page buffer: the i-th finds min(i, 16) entries,
    // 1,464 in all, so 1 us an entry adds 14.64 us to the mean response time.
    let mean = |search: &str| {
        let o = run_small(
            &d,
            &[
                "--workload",
                "requests=100,read=0,arrival=closed:1,pattern=uniform",
                "--set",
                "host.write_buffer_bytes=65536",
                "--set",
                &format!("timing.write_buffer_search_ns={search}"),
                "--json",
                "--quiet",
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["report"]["response_time"]["all"]["mean_ns"].as_f64().unwrap()
    };
    let added = mean("1000") - mean("0");
    assert!((added - 14_640.0).abs() < 1.0, "the search added {added} ns to the mean");
    let o = run_small(&d, &["--workload", "requests=10", "--set", "timing.write_buffer_search_ns=5", "--quiet"]);
    assert_bad_input(&o, "timing.write_buffer_search_ns = 5");
    assert!(stderr(&o).contains("host.write_buffer_bytes"), "{}", stderr(&o));
}
