//! Issue 58, robustness's third pass: each case as the issue gave it (the command, its exit
//! code, its message and the files it leaves), fixed at its cause.

use crate::common;

use common::{ftlsim, tmp, SMALL};
use std::path::{Path, PathBuf};
use std::process::Output;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn assert_refused(o: &Output, needles: &[&str]) {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    for n in needles {
        assert!(e.contains(n), "`{n}` not in: {e}");
    }
    assert!(!e.contains("panicked"), "{e}");
}

fn files_in(d: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

/// A scratch directory with the small drive's config and a three-line MQSim trace.
fn setup(name: &str) -> (common::Scratch, PathBuf, PathBuf) {
    let d = tmp(name);
    let cfg = d.join("small.toml");
    std::fs::write(&cfg, SMALL).unwrap();
    let trace = d.join("t.csv");
    std::fs::write(&trace, TRACE).unwrap();
    (d, cfg, trace)
}

const TRACE: &str = "0 0 100 8 0\n1000 0 200 8 1\n2000 0 300 8 0\n";

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn issue_58_save_state_never_replaces_an_input_nor_a_file_a_failed_run_had() {
    let (d, cfg, trace) = setup("save-state");
    let out = d.join("out");
    // The trace, and the config, named as the snapshot: refused before anything runs.
    let o = ftlsim(&["run", "--config", s(&cfg), "--trace", s(&trace), "--save-state", s(&trace), "--out", s(&out)]);
    assert_refused(&o, &["--save-state", "is the --trace", "t.csv"]);
    assert_eq!(std::fs::read_to_string(&trace).unwrap(), TRACE);
    let o =
        ftlsim(&["run", "--config", s(&cfg), "--save-state", s(&cfg), "--workload", "requests=10", "--out", s(&out)]);
    assert_refused(&o, &["is the --config"]);
    assert_eq!(std::fs::read_to_string(&cfg).unwrap(), SMALL);
    // By another name: a hard link of the config.
    std::fs::hard_link(&cfg, d.join("same.toml")).unwrap();
    let o = ftlsim(&[
        "run",
        "--config",
        s(&cfg),
        "--save-state",
        s(&d.join("same.toml")),
        "--workload",
        "requests=10",
        "--out",
        s(&out),
    ]);
    assert_refused(&o, &["is the --config"]);
    assert_eq!(std::fs::read_to_string(&cfg).unwrap(), SMALL);
    // A run that fails after preconditioning (a bad trace line) keeps the old snapshot file
    // and leaves no temporary file beside it.
    let snap = d.join("old.snap");
    std::fs::write(&snap, "the previous snapshot").unwrap();
    let bad = d.join("bad.csv");
    std::fs::write(&bad, format!("{TRACE}3000 0 400 x 0\n")).unwrap();
    let before = files_in(&d);
    let o = ftlsim(&[
        "run",
        "--config",
        s(&cfg),
        "--trace",
        s(&bad),
        "--format",
        "mqsim",
        "--save-state",
        s(&snap),
        "--out",
        s(&out),
        "--quiet",
    ]);
    assert_refused(&o, &["bad.csv:4"]);
    assert_eq!(std::fs::read_to_string(&snap).unwrap(), "the previous snapshot");
    assert_eq!(files_in(&d), before, "no temporary file left");
    // A run that succeeds replaces it.
    let o =
        ftlsim(&["run", "--config", s(&cfg), "--save-state", s(&snap), "--workload", "requests=10", "--out", s(&out)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(std::fs::read(&snap).unwrap().starts_with(b"FTLSIM-SNAPSHOT"));
    assert_eq!(files_in(&d), before);
}

#[test]
fn issue_58_out_never_replaces_an_input_nor_another_output() {
    let (d, cfg, _) = setup("out");
    // The trace is the run's timeseries.csv.
    let in1 = d.join("in1");
    std::fs::create_dir(&in1).unwrap();
    let trace = in1.join("timeseries.csv");
    std::fs::write(&trace, TRACE).unwrap();
    let o = ftlsim(&["run", "--config", s(&cfg), "--trace", s(&trace), "--out", s(&in1)]);
    assert_refused(&o, &["--out", "timeseries.csv", "is the --trace"]);
    assert_eq!(std::fs::read_to_string(&trace).unwrap(), TRACE);
    // The snapshot is the run's results.json, before either exists.
    let o_dir = d.join("o");
    let o = ftlsim(&[
        "run",
        "--config",
        s(&cfg),
        "--save-state",
        s(&o_dir.join("results.json")),
        "--out",
        s(&o_dir),
        "--workload",
        "requests=10",
    ]);
    assert_refused(&o, &["results.json is also the output --save-state"]);
    assert!(!o_dir.join("results.json").exists());
    // compare: its tables and each run's files are checked against its traces.
    let cmp = d.join("cmp");
    std::fs::create_dir(&cmp).unwrap();
    let t = cmp.join("compare.json");
    std::fs::write(&t, TRACE).unwrap();
    let o = ftlsim(&["compare", "--config", s(&cfg), "--ftl", "page,dftl", "--trace", s(&t), "--out", s(&cmp)]);
    assert_refused(&o, &["compare.json", "is the --trace"]);
    assert_eq!(std::fs::read_to_string(&t).unwrap(), TRACE);
}

/// Make a FIFO at `path`.
fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(s(path)).unwrap();
    // SAFETY: a NUL-terminated path and a mode.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo {}", path.display());
}

fn is_fifo(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::symlink_metadata(path).unwrap().file_type().is_fifo()
}

#[test]
fn issue_58_devices_and_fifos_are_written_through_or_refused_never_replaced() {
    use std::os::unix::fs::FileTypeExt;
    let (d, cfg, trace) = setup("devices");
    // A character device: written through, still the device after.
    let o = ftlsim(&["trace", "fit", s(&trace), "-o", "/dev/null"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device());
    let o = ftlsim(&[
        "run",
        "--config",
        s(&cfg),
        "--save-state",
        "/dev/null",
        "--workload",
        "requests=10",
        "--out",
        s(&d.join("o")),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device());
    // A FIFO: the converted trace streams through it to its reader.
    let fifo = d.join("fifo");
    mkfifo(&fifo);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    let o = ftlsim(&["trace", "convert", s(&trace), s(&fifo), "--to", "ssdsim"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(reader.join().unwrap().lines().count(), 3);
    assert!(is_fifo(&fifo), "still a FIFO");
    // --out's files are renamed into place: a FIFO there would be replaced, so it is refused.
    let out = d.join("out");
    std::fs::create_dir(&out).unwrap();
    mkfifo(&out.join("results.json"));
    let o = ftlsim(&["run", "--config", s(&cfg), "--workload", "requests=10", "--out", s(&out)]);
    assert_refused(&o, &["results.json is a FIFO", "remove it"]);
    assert!(is_fifo(&out.join("results.json")));
    // A directory is no file to write.
    let o = ftlsim(&["trace", "fit", s(&trace), "-o", s(&d)]);
    assert_refused(&o, &["is a directory"]);
}

#[test]
fn issue_58_power_cuts_under_every_scheduling_mode_recover_and_go_on() {
    let (d, cfg, _) = setup("cuts");
    let out = d.join("o");
    for (mode, cut) in [
        ("timing.transaction_order=read_first", "300"),
        ("timing.transaction_order=read_first", "5ms"),
        ("timing.transaction_order=read_first", "random:2"),
        ("ftl.gc_preemption=reads", "300"),
        ("ftl.gc_preemption=writes", "300"),
    ] {
        for ftl in ["page", "dftl"] {
            let mut args = vec![
                "run",
                "--config",
                s(&cfg),
                "--ftl",
                ftl,
                "--set",
                mode,
                "--power-cut",
                cut,
                "--workload",
                "requests=1000,read=0.5",
                "--steady-state",
                "--verify",
                "--out",
                s(&out),
            ];
            if ftl == "page" {
                args.extend(["--set", "host.write_buffer_bytes=65536"]);
            }
            let o = ftlsim(&args);
            let what = format!("{ftl}, {mode}, --power-cut {cut}");
            assert_eq!(o.status.code(), Some(0), "{what}: {}", stderr(&o));
            assert!(stdout(&o).contains("power cut"), "{what}: {}", stdout(&o));
        }
    }
}

/// `ftlsim ARGS` with its address space limited to `bytes`: what it allocates past that fails.
fn ftlsim_within(bytes: u64, args: &[&str]) -> Output {
    use std::os::unix::process::CommandExt;
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_ftlsim"));
    c.args(args);
    // SAFETY: setrlimit is async-signal-safe; the child only limits itself before exec.
    unsafe {
        c.pre_exec(move || {
            let lim = libc::rlimit { rlim_cur: bytes, rlim_max: bytes };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    c.output().expect("ftlsim runs")
}

#[test]
fn issue_58_one_huge_request_is_read_in_memory_that_follows_the_requests_or_refused() {
    let (d, cfg, _) = setup("huge");
    // One 2 TiB write, as DiskSim's format allows.
    let huge = d.join("huge.disksim");
    std::fs::write(&huge, "0 0 0 4294967295 0\n").unwrap();
    let limit = 1 << 30;
    let o = ftlsim_within(limit, &["trace", "stats", s(&huge), "--format", "disksim", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["footprint_pages"], 536_870_912u64, "every 4 KiB page of 2 TiB, one run");
    for cmd in [&["trace", "locality"][..], &["trace", "fit", "-o", s(&d.join("huge.toml"))][..]] {
        let mut args = cmd.to_vec();
        args.extend([s(&huge), "--format", "disksim"]);
        let o = ftlsim_within(limit, &args);
        assert_refused(&o, &["huge.disksim:1", "size", "more than 1024 MiB"]);
    }
    for overflow in ["compact", "wrap", "error"] {
        let o = ftlsim_within(
            limit,
            &[
                "run",
                "--config",
                s(&cfg),
                "--trace",
                s(&huge),
                "--format",
                "disksim",
                "--overflow",
                overflow,
                "--out",
                s(&d.join("o")),
            ],
        );
        assert_refused(&o, &["huge.disksim:1", "larger than the drive's whole logical space", "no --overflow mode"]);
        assert!(!stderr(&o).contains("use --overflow wrap"), "{overflow}: advice that cannot work: {}", stderr(&o));
    }
    // A footprint larger than the drive, compacted, stops at the drive's pages.
    let many: String = (0..20_000u64).map(|i| format!("{i} 0 {} 8 0\n", i * 1_000_000)).collect();
    std::fs::write(d.join("wide.disksim"), many).unwrap();
    let o = ftlsim_within(
        limit,
        &[
            "run",
            "--config",
            s(&cfg),
            "--trace",
            s(&d.join("wide.disksim")),
            "--format",
            "disksim",
            "--overflow",
            "compact",
            "--out",
            s(&d.join("o")),
        ],
    );
    assert_refused(&o, &["wide.disksim:", "footprint passes the drive's"]);
    // A record ending past sector 2^64 is a bad line, named.
    std::fs::write(d.join("end.disksim"), format!("0 0 {} 8 0\n", u64::MAX - 3)).unwrap();
    let o = ftlsim(&["trace", "stats", s(&d.join("end.disksim")), "--format", "disksim"]);
    assert_refused(&o, &["end.disksim:1", "2^64"]);
}

#[test]
fn issue_58_addresses_near_2_64_bytes_are_scaled_without_overflow() {
    let (d, cfg, _) = setup("far");
    // Three FlashNet writes of the last 4 KiB below 2^64 bytes: two of them rewrite.
    let top = u64::MAX - 4095;
    let flashnet: String = (0..3).map(|i| format!("{i}.0,100,0,4096,{top},{i}.0,4096\n")).collect();
    let fnet = d.join("far.flashnet");
    std::fs::write(&fnet, flashnet).unwrap();
    let o = ftlsim(&["trace", "locality", s(&fnet), "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!((v["page_accesses"].as_u64(), v["update_share"].as_f64()), (Some(3), Some(0.666667)));
    // Two MQSim writes 2^55 sectors (2^64 bytes) apart: two pages, no rewrite.
    let mq = d.join("far.mqsim");
    std::fs::write(&mq, format!("0 0 0 8 0\n1000 0 {} 8 0\n", 1u64 << 55)).unwrap();
    let o = ftlsim(&["trace", "locality", s(&mq), "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!((v["page_accesses"].as_u64(), v["update_share"].as_f64()), (Some(2), Some(0.0)), "{v}");
    let o = ftlsim(&["trace", "stats", s(&mq), "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["footprint_pages"], 2);
    // The fit sees both extents, and what it writes loads (issue 58, case 11).
    for (trace, extents) in [(&mq, "2 extents"), (&fnet, "1 extents")] {
        let fit = d.join("far.toml");
        let o = ftlsim(&["trace", "fit", s(trace), "-o", s(&fit)]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(stdout(&o).contains(extents), "{}", stdout(&o));
        let w = format!("file:{},requests=200", fit.display());
        let o = ftlsim(&["run", "--config", s(&cfg), "--workload", &w, "--out", s(&d.join("o"))]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
}

#[test]
fn issue_58_refused_zoned_commands_are_counted_apart_from_completed_requests() {
    let d = tmp("zns-refused");
    let out = d.join("o");
    let o = ftlsim(&[
        "run",
        "--ftl",
        "zns",
        "--set",
        "overprovisioning.share=",
        "--set",
        "overprovisioning.extra_blocks_per_plane=72",
        "--set",
        "host.unmapped_read=zero",
        "--set",
        "geometry.blocks_per_plane=128",
        "--fill",
        "0",
        "--workload",
        "pattern=uniform,read=0,requests=500",
        "--out",
        s(&out),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    for needle in [
        "requests 0 (reads 0, writes 0, trims 0)",
        "refused 500 commands (zone_invalid_write 500)",
        "IOPS 0 |",
        "write amplification - (no host page written)",
    ] {
        assert!(text.contains(needle), "`{needle}` not in:\n{text}");
    }
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let r = &v["report"];
    assert_eq!((r["host"]["requests"].as_u64(), r["host"]["refused"].as_u64()), (Some(0), Some(500)));
    assert_eq!(r["host"]["refused_by_status"]["zone_invalid_write"], 500);
    assert_eq!((r["performance"]["iops"].as_f64(), r["response_time"]["all"]["count"].as_u64()), (Some(0.0), Some(0)));
}

#[test]
fn issue_58_a_channel_system_says_what_its_power_cut_did() {
    let d = tmp("mc-cut");
    let small = [
        "--set",
        "geometry.blocks_per_plane=72",
        "--set",
        "overprovisioning.extra_blocks_per_plane=8",
        "--set",
        "multichannel.spare_threshold=4",
        "--workload",
        "pattern=uniform,read=0,size=4k,requests=2000",
    ];
    let run = |cut: &str| {
        let mut args = vec!["run", "--preset", "changwen", "--power-cut", cut, "--verify", "--quiet", "--out"];
        let out = d.join(format!("o{cut}"));
        args.push(s(&out));
        args.extend(small);
        let o = ftlsim(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
        (stdout(&o), v)
    };
    // Past the run's end: nothing cut, and the summary says so even with --quiet.
    let (text, _) = run("2001");
    assert!(text.contains("power cut at request 2001: not reached"), "{text}");
    // A cut: its instant, recovery and the acknowledged pages the volatile buffer lost.
    let (text, v) = run("1000");
    let lost = v["report"]["power_cut"]["lost_acknowledged_pages"]["write_buffer"].as_u64().unwrap();
    assert!(lost > 0, "the buffer held acknowledged pages: {}", v["report"]["power_cut"]);
    for needle in [
        "power cut at request 1000".to_string(),
        "recovery:".to_string(),
        format!("acknowledged pages lost: {lost} (write buffer {lost}"),
        "a channel-system run ends at its cut".to_string(),
    ] {
        assert!(text.contains(&needle), "`{needle}` not in:\n{text}");
    }
}

#[test]
fn issue_58_what_would_be_ignored_or_misread_is_refused_naming_it() {
    let (d, cfg, trace) = setup("refusals");
    let out = d.join("o");
    let run = |args: &[&str]| {
        let mut all = vec!["run", "--config", s(&cfg), "--quiet", "--out", s(&out)];
        all.extend(args);
        ftlsim(&all)
    };
    let cases: &[(&[&str], &[&str])] = &[
        // Case 12: empty mixture parts, arbitration without tenants or given twice, a tenant
        // that gives no request.
        (&["--workload", "requests=500;"], &["part 2 of the mixture is empty"]),
        (&["--workload", "requests=500;;size=8k"], &["part 2 of the mixture is empty"]),
        (&["--arbitration", "wrr:high=4"], &["--tenant"]),
        (&["--tenant", "name=a,requests=10", "--arbitration", "wrr:high=4,high=8"], &["high given twice"]),
        (
            &["--tenant", "name=b,requests=10", "--tenant", "name=v7,trace=TRACE,device=7,qd=2"],
            &["--tenant v7: no request was replayed", "device=7"],
        ),
        // Case 14: errors that name what is wrong.
        (&["--workload", "align=1g"], &["align = `1073741824`", "larger than the"]),
        (&["--workload", "shift=-512"], &["shift", "must be >= 0"]),
        (&["--tenant", "name=a,ns=0.5..1GiB,requests=10"], &["ns = `0.5..1GiB`", "one end is a share"]),
        // Case 15: a trace flag without a trace.
        (&["--speed", "4", "--workload", "requests=10"], &["--speed is a trace replay flag"]),
        (&["--qd", "4"], &["--qd is a trace replay flag"]),
    ];
    for (args, needles) in cases {
        let args: Vec<String> = args.iter().map(|a| a.replace("TRACE", s(&trace))).collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = run(&args);
        assert_refused(&o, needles);
    }
    // shift=0 is no shift, as the docs say.
    let o = run(&["--workload", "requests=10,shift=0"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // A channel system has no queue for reads to overtake: read_first is refused, not ignored.
    let o = ftlsim(&["run", "--preset", "changwen", "--set", "timing.transaction_order=read_first", "--out", s(&out)]);
    assert_refused(&o, &["timing.transaction_order", "[multichannel]"]);
    // trace fit's imposed share names --capacity and --replay, not the output file.
    let msr = d.join("big.trace");
    std::fs::write(&msr, "0 0 0 128 0\n1000000000 0 256 128 1\n").unwrap();
    let fit = |extra: &[&str]| {
        let mut a = vec!["trace", "fit", s(&msr), "--format", "mqsim", "-o", "/dev/null", "--update-share", "0.5"];
        a.extend(extra);
        ftlsim(&a)
    };
    let o = fit(&["--replay", "requests=100", "--capacity", "4k"]);
    assert_refused(&o, &["--capacity = `4096`", "give a larger --capacity"]);
    let o = fit(&["--replay", "requests=1e12", "--capacity", "1g"]);
    assert_refused(&o, &["--replay = `requests=1e12`", "146 years"]);
    assert!(!stderr(&o).contains("file ="), "{}", stderr(&o));
}
