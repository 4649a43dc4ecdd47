//! Issue 12: nothing lost, nothing misleading. One test per case: the exact command, its exit
//! code, its message and the files it leaves behind.

mod common;

use common::{ftlsim, shared_trace, tmp, SMALL};
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
    std::fs::copy(shared_trace("msr-hm0-first1k.csv"), &input).unwrap();
    let size = std::fs::metadata(&input).unwrap().len();
    std::os::unix::fs::symlink(&input, d.join("link.csv")).unwrap();
    std::fs::hard_link(&input, d.join("hard.csv")).unwrap();
    for out in ["in.csv", "link.csv", "hard.csv"] {
        let o = ftlsim(&["trace", "convert", input.to_str().unwrap(), d.join(out).to_str().unwrap(), "--to", "mqsim"]);
        assert_bad_input(&o, "is the input trace");
        assert_eq!(std::fs::metadata(&input).unwrap().len(), size, "the input is untouched");
    }
    // A convert that fails half way (a bad line after 3,000 good ones) leaves nothing behind.
    let text = std::fs::read_to_string(shared_trace("disksim-validate.ascii")).unwrap();
    let mut bad: String = text.lines().take(3000).map(|l| format!("{l}\n")).collect();
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
    assert_bad_input(&o, "bad.ascii:3001");
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
        .args(["trace", "stats", &shared_trace("disksim-validate.ascii"), "--json"])
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
    let blk = std::fs::read_to_string(shared_trace("ycsb-f2fs.blkparse.txt")).unwrap();
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
        &shared_trace("msr-hm0-first1k.csv"),
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
    let o = ftlsim(&["trace", "stats", &shared_trace("msr-slice-bytes.trace"), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["format"], "linnos");
    assert_eq!(v["units"], "time ms, offset and size bytes");
    assert_eq!((v["reads"].as_u64(), v["writes"].as_u64()), (Some(2020), Some(7980)), "the README's counts");
    // About 50 MB in all (README), not 512 times that.
    let total = v["bytes_read"].as_f64().unwrap() + v["bytes_written"].as_f64().unwrap();
    assert!((40e6..70e6).contains(&total), "{total}");
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
    let o = ftlsim(&["trace", "stats", &shared_trace("disksim-validate.ascii")]);
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
        &shared_trace("msr-hm0-first1k.csv"),
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
        &shared_trace("msr-hm0-first1k.csv"),
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
