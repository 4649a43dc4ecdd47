"""ftlsim.run, Result, Config, presets/ftls/trace_stats: the package against the CLI."""

import json
import os
import signal
import threading
import time

import numpy as np
import pandas as pd
import pytest

import ftlsim
from conftest import SMALL, SMALL_TRACES, real_sample, run_cli


def small_run(**kw):
    kw.setdefault("overrides", SMALL)
    kw.setdefault("workload", "requests=5000")
    return ftlsim.run(**kw)


def without_wall_time(summary):
    return {k: v for k, v in summary.items() if k != "wall_time"}


def test_run_returns_every_view():
    r = small_run(ftl="dftl", interval="5ms")
    rep = r.summary["report"]
    assert rep["host"]["requests"] == 5000 and rep["drive"]["ftl"] == "dftl"
    assert set(r.summary) == {"run", "report", "wall_time"}
    row = r.to_pandas()
    assert row.shape[0] == 1
    assert row.loc[0, "report.performance.iops"] == rep["performance"]["iops"]
    assert row.loc[0, "config.geometry.blocks_per_plane"] == 128
    assert row.loc[0, "config.ftl.name"] == "dftl"
    ts = r.timeseries
    assert len(ts) >= 2 and ts.requests.sum() == 5000
    steps = np.diff(ts.t_end_ns)
    assert (steps[:-1] == 5_000_000).all() and 0 < steps[-1] <= 5_000_000, "the last interval ends at the run's end"
    lat = r.latency_histogram
    for op, n in (("all", 5000), ("read", rep["host"]["reads"]), ("write", rep["host"]["writes"])):
        sub = lat[lat.op == op]
        assert sub["count"].sum() == n
        assert sub["cdf"].is_monotonic_increasing and sub["cdf"].iloc[-1] == pytest.approx(1.0)
    # The p99 lies in the bucket where the CDF crosses 0.99.
    sub = lat[lat.op == "all"]
    p99_us = rep["response_time"]["all"]["p99_ns"] / 1e3
    crossing = sub[sub.cdf >= 0.99].upper_us.iloc[0]
    assert p99_us <= crossing * 1.001 and p99_us > crossing / 1.13
    pp = r.per_plane
    assert pp["programs"].shape == (32,) and pp["programs"].sum() == rep["flash"]["programs"]["total"] + rep["flash"]["copybacks"]["total"]
    assert pp["erases"].sum() == (r.erase_counts.erase_count * r.erase_counts.blocks).sum()
    assert r.erase_counts.blocks.sum() == 32 * 128


def test_same_inputs_same_numbers():
    a, b = small_run(seed=7), small_run(seed=7)
    assert without_wall_time(a.summary) == without_wall_time(b.summary)
    c = small_run(seed=8)
    assert c.summary["report"] != a.summary["report"]


def test_matches_the_cli_byte_for_byte(cli, tmp_path):
    args = ["--set", "geometry.blocks_per_plane=128", "--ftl", "page", "--workload", "requests=4000,read=0.5",
            "--seed", "3", "--steady-state", "--interval", "10ms"]
    run_cli(cli, "run", *args, "--out", str(tmp_path), "--quiet")
    want = json.loads((tmp_path / "results.json").read_text())
    got = ftlsim.run(ftl="page", workload="requests=4000,read=0.5", seed=3, steady_state=True, interval="10ms",
                     overrides=SMALL)
    assert without_wall_time(got.summary) == without_wall_time(want)
    ts = pd.read_csv(tmp_path / "timeseries.csv")
    pd.testing.assert_frame_equal(got.timeseries.drop(columns="t_end_s"), ts, check_dtype=False)


def test_trace_run_and_trace_stats_match_the_cli(cli, tmp_path):
    trace = SMALL_TRACES / "small.msr.csv"
    run_cli(cli, "run", "--trace", str(trace), "--set", "geometry.blocks_per_plane=128", "--max-requests", "500",
            "--overflow", "wrap", "--out", str(tmp_path), "--quiet")
    want = json.loads((tmp_path / "results.json").read_text())
    got = ftlsim.run(trace=trace, trace_options={"max_requests": 500, "overflow": "wrap"}, overrides=SMALL)
    assert without_wall_time(got.summary) == without_wall_time(want)
    assert got.summary["run"]["trace"]["format"] == "msr"
    stats = json.loads(run_cli(cli, "trace", "stats", str(trace), "--json").stdout)
    assert ftlsim.trace_stats(trace) == stats


def test_errors_name_the_key_file_and_line(tmp_path):
    with pytest.raises(ftlsim.ConfigError) as e:
        small_run(overrides={"ftl.gc_victim": "bogus"})
    assert e.value.key == "ftl.gc_victim" and "greedy" in str(e.value)
    with pytest.raises(ftlsim.ConfigError) as e:
        small_run(overrides={"geometry.blocks_per_plane": 128, "ftl.gc_victimm": "fifo"})
    assert e.value.key == "ftl.gc_victimm" and "unknown field" in str(e.value)
    with pytest.raises(ftlsim.ConfigError) as e:
        small_run(overrides={"geometry.pages_per_block": 0})
    assert e.value.key == "geometry.pages_per_block"
    with pytest.raises(ftlsim.ConfigError, match="unknown preset"):
        ftlsim.run("nope")
    with pytest.raises(ftlsim.ConfigError, match="unknown FTL|ftl.name"):
        small_run(ftl="nope")
    with pytest.raises(ftlsim.WorkloadError) as e:
        small_run(workload="read=2")
    assert e.value.key == "read"
    bad = tmp_path / "bad.csv"
    bad.write_text("128166372003061629,hm,0,Write,9552896,4096,414\n128166372003061630,hm,0,Write,x,4096,414\n")
    with pytest.raises(ftlsim.TraceError) as e:
        small_run(workload=None, trace=bad, trace_options={"format": "msr"})
    assert (e.value.file, e.value.line) == (str(bad), 2) and e.value.field
    with pytest.raises(ValueError, match="unknown key `speedd`"):
        small_run(workload=None, trace=bad, trace_options={"speedd": 2})
    assert issubclass(ftlsim.ConfigError, ftlsim.FtlsimError)


def test_config_round_trips_and_validates(tmp_path):
    c = ftlsim.Config.from_preset("pcftl")
    assert ftlsim.Config.from_toml(c.to_toml()) == c
    d = c.to_dict()
    assert ftlsim.Config.from_dict(d) == c
    c2 = c.with_overrides({"ftl.gc_victim": "fifo", "timing.t_r_ns": 30000})
    assert c2["ftl.gc_victim"] == "fifo" and c2["timing.t_r_ns"] == 30000 and c["ftl.gc_victim"] != "fifo"
    d["geometry"]["channels"] = 0
    with pytest.raises(ftlsim.ConfigError) as e:
        ftlsim.Config.from_dict(d)
    assert e.value.key == "geometry.channels"
    p = tmp_path / "c.toml"
    p.write_text(c.with_overrides(SMALL).to_toml())
    a = ftlsim.run(config=p, workload="requests=2000")
    b = ftlsim.run(config=ftlsim.Config.from_file(p), workload="requests=2000")
    assert without_wall_time(a.summary) == without_wall_time(b.summary)
    assert [p["name"] for p in ftlsim.presets()][:3] == ["default", "pcftl", "thesis"]
    assert {"page", "dftl", "fast", "pcftl"} <= {f["name"] for f in ftlsim.ftls()}


def test_progress_callback_sees_both_stages():
    seen = []
    small_run(workload="requests=140000", progress=lambda stage, done, total: seen.append((stage, done, total)))
    stages = [s for s, _, _ in seen]
    assert "precondition" in stages and "replay" in stages
    replay = [(d, t) for s, d, t in seen if s == "replay"]
    assert replay[-1] == (140000, 140000) and [d for d, _ in replay] == sorted(d for d, _ in replay)


def test_a_failing_progress_callback_stops_the_run():
    def boom(stage, done, total):
        raise RuntimeError("stop here")
    with pytest.raises(RuntimeError, match="stop here"):
        small_run(progress=boom)


def test_the_gil_is_released_during_a_run():
    ticks = 0
    stop = threading.Event()

    def count():
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            time.sleep(0.001)

    t = threading.Thread(target=count)
    t.start()
    t0 = time.time()
    ftlsim.run(workload="requests=300000", fill=0.5)
    elapsed = time.time() - t0
    stop.set()
    t.join()
    # Holding the GIL for the whole run would leave the counter near zero.
    assert elapsed > 0.3 and ticks > 0.3 * elapsed / 0.001 * 0.2, (ticks, elapsed)


@pytest.mark.parametrize("stage", ["precondition", "replay"])
def test_ctrl_c_interrupts_a_run(stage):
    kw = dict(steady_state=True) if stage == "precondition" else dict(fill=0.2, overrides=SMALL)
    seen = []
    sent = []

    def progress(s, done, total):
        seen.append(s)
        if s == stage and not sent:
            sent.append(time.time())
            os.kill(os.getpid(), signal.SIGINT)

    with pytest.raises(KeyboardInterrupt):
        ftlsim.run(workload="requests=50000000", progress=progress, **kw)
    assert seen[-1] == stage
    assert sent and time.time() - sent[0] < 1.0, "the interrupt took effect within a second"


def test_trace_fit_replays_the_trace_shape(tmp_path):
    out = tmp_path / "w.toml"
    w = ftlsim.trace_fit(SMALL_TRACES / "small.msr.csv", out)
    assert w["requests"] == 300 and w["read_share"] == pytest.approx(0.3) and out.exists()
    r = ftlsim.run(workload=f"file:{out},requests=3000", overrides=SMALL, fill=0.5)
    assert r.summary["run"]["workload"]["pattern"]["fitted"]["file"] == str(out)
    reads = r.report["host"]["reads"] / 3000
    assert abs(reads - w["read_share"]) < 0.05
    with pytest.raises(ftlsim.WorkloadError, match="rate and speed apply to a fitted workload"):
        ftlsim.run(workload="rate=10", overrides=SMALL)


def test_locality_of_a_trace_its_fit_and_a_workload(tmp_path):
    """Issue 36: the trace's locality as the fit keeps it, the fit's replay against it, a
    synthetic workload's, and an update share imposed on a replay."""
    financial1 = real_sample("financial1-first10k.ssdsim.ascii")
    loc = ftlsim.trace_locality(financial1)
    assert loc["requests"] == 10000 and 0.6 < loc["update_share"] < 0.8
    curve = loc["miss_ratio_curve"]
    assert curve[0]["cache_bytes"] == 1 << 20 and curve[-1]["cache_bytes"] == 4 << 30
    hits = [p["write_hit_ratio"] for p in curve]
    assert hits == sorted(hits) and hits[-1] == pytest.approx(loc["update_share"], abs=1e-6)
    out = tmp_path / "w.toml"
    w = ftlsim.trace_fit(financial1, out)
    assert w["locality"]["update_share"] == loc["update_share"]
    check = ftlsim.fit_check(out, seed=3)
    assert check["requests"] == 10000 and check["trace"]["update_share"] == loc["update_share"]
    assert 0 <= check["distance"]["stack_distance_ks"] < 0.3
    # A uniform workload over a span much larger than what it writes rewrites almost nothing.
    u = ftlsim.workload_locality("requests=2000,read=0,pattern=uniform", 1 << 30, seed=1)
    assert u["page_writes"] == 2000 and u["update_share"] < 0.01
    imposed = ftlsim.trace_fit(financial1, tmp_path / "i.toml", update_share=0.5,
                               replay="requests=20000,read=0.2", capacity_bytes=1 << 30, seed=2)
    assert imposed["imposed"]["update_share"] == 0.5 and abs(imposed["imposed"]["reached"] - 0.5) < 0.03
    for alone in [{"update_share": 0.5}, {"replay": "requests=10"}, {"capacity_bytes": 1 << 30}]:
        with pytest.raises(ValueError, match="go together"):
            ftlsim.trace_fit(financial1, **alone)


def test_a_power_cut_run_recovers_verifies_and_goes_on():
    r = small_run(ftl="dftl", workload="requests=3000", power_cut=1500, verify=True)
    cut = r.power_cut
    assert cut["requests_completed"] + cut["requests_in_flight"] == 1500
    assert cut["oracle_checked_pages"] > 0 and cut["recovery_pages_read"] > 0
    assert 0 < cut["recovery_pages_read_ratio"] < 1 and cut["recovery_time_us"] > 0
    post = r.post_recovery
    assert post["host"]["requests"] == 3000 - 1500
    assert r.summary["run"]["power_cut"] == {"request": 1500} and r.summary["run"]["clean_shutdown"] is True
    # The flat row carries both reports.
    row = r.row()
    assert row["report.power_cut.recovery_pages_read"] == cut["recovery_pages_read"]
    assert row["post_recovery.host.requests"] == 1500


def test_random_power_cuts_summarise_every_cut_and_the_pcftl_write_buffer_loses_pages():
    r = small_run(ftl="pcftl", workload="requests=3000,read=0", power_cut="random:3")
    assert "power_cut" not in r.report  # the reference run is uncut
    cuts = r.summary["power_cuts"]
    assert len(cuts) == 3 and r.power_cut["cuts"] == 3
    assert r.power_cut["lost_acknowledged_pages_total"] > 0, "its 2 MiB write buffer is volatile"
    protected = small_run(ftl="pcftl", workload="requests=3000,read=0", power_cut="random:3",
                          overrides={**SMALL, "host.buffer_power_protected": True})
    assert protected.power_cut["lost_acknowledged_pages_total"] == 0


def test_a_bad_power_cut_names_the_option():
    with pytest.raises(ftlsim.WorkloadError, match="power_cut"):
        small_run(power_cut="soon")


def test_trim_to_precondition_leaves_the_share_valid_and_a_sweep_keeps_it(tmp_path):
    r = small_run(fill=1.0, steady_state=True, trim_to=0.3, workload="requests=100")
    pre = r.summary["report"]["precondition"]
    logical = pre["fill_pages"]  # fill 1: every logical page
    assert pre["trimmed_pages"] == logical - int(logical * 0.3)
    assert r.summary["run"]["precondition"]["trim_to"] == 0.3
    with pytest.raises(ftlsim.ConfigError, match="precondition.trim_to"):
        small_run(trim_to=1.5)
    # The sweep passes it on (and shares a snapshot only with runs trimmed alike).
    df = ftlsim.sweep([{"overrides": SMALL, "workload": "requests=100", "fill": 1.0, "trim_to": t} for t in (0.3, 0.6)],
                      out=tmp_path / "sweep.parquet", workers=1)
    assert sorted(df["report.precondition.trimmed_pages"]) == sorted(
        [logical - int(logical * t) for t in (0.6, 0.3)])
