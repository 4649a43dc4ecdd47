//! The `ftlsim` binary end to end: exit codes, error messages, result files, determinism.

use std::path::PathBuf;
use std::process::{Command, Output};

fn ftlsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ftlsim")).args(args).output().expect("ftlsim runs")
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ftlsim-cli-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

const SMALL: &str = r#"
name = "small"
source = "cli test"
[geometry]
channels = 2
chips_per_channel = 1
dies_per_chip = 1
planes_per_die = 2
blocks_per_plane = 64
pages_per_block = 32
page_size_bytes = 4096
spare_bytes_per_page = 128
spare_usable_bytes = 32
[overprovisioning]
share = 0.1
[timing]
channel_mb_per_s = 200.0
t_r_ns = 50000
t_prog_ns = 500000
t_bers_ns = 3000000
"#;

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
        v.as_object_mut().unwrap().remove("wall_time_s");
        jsons.push(v);
    }
    assert_eq!(jsons[0], jsons[1]);
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
