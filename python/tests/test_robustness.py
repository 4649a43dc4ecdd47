"""Issue 31: the Python API loses nothing, never takes the interpreter down and never runs
something other than what was asked. One test per case: the call, the exception type, its
message and the files left."""

import os
import subprocess
import sys

import pandas as pd
import pytest

import ftlsim
from conftest import SMALL, SMALL_TRACES

TRACE = SMALL_TRACES / "small.msr.csv"


def test_trace_fit_never_writes_over_its_input(tmp_path):
    src = tmp_path / "mix.trace"
    src.write_bytes(TRACE.read_bytes())
    before = src.read_bytes()
    (tmp_path / "link.trace").symlink_to(src)
    os.link(src, tmp_path / "hard.trace")
    for out in ("mix.trace", "link.trace", "hard.trace"):
        with pytest.raises(ftlsim.InputError, match="is the input trace .*would destroy the input"):
            ftlsim.trace_fit(src, tmp_path / out)
        assert src.read_bytes() == before, out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hard.trace", "link.trace", "mix.trace"]
    fitted = ftlsim.trace_fit(src, tmp_path / "W.toml")
    assert (tmp_path / "W.toml").read_text().startswith("version = ")
    assert fitted["requests"] == 300


def test_a_panic_in_the_core_is_an_exception_and_the_interpreter_lives_on():
    # In a child interpreter: were the extension built to abort on panic, the test run itself
    # would die with it.
    code = ("import ftlsim\n"
            "from ftlsim import _native\n"
            "try:\n"
            "    _native._panic_for_test('broken invariant x')\n"
            "except ftlsim.InternalError as e:\n"
            "    assert isinstance(e, ftlsim.FtlsimError) and isinstance(e, Exception)\n"
            "    print('caught:', e)\n"
            "print('alive')\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "caught: internal error (a bug in ftlsim" in p.stdout and "broken invariant x" in p.stdout
    assert p.stdout.rstrip().endswith("alive")


def test_timing_out_of_range_is_a_workload_error_not_a_crash(tmp_path):
    w = tmp_path / "W.toml"
    ftlsim.trace_fit(TRACE, w)
    for spec, needle in [(f"file:{w},requests=1000,rate=1e-300", "rate"),
                         (f"file:{w},requests=1000,speed=1e-300", "speed"),
                         ("requests=1000,arrival=fixed:100000000000s", "arrival")]:
        with pytest.raises(ftlsim.WorkloadError, match="2\\^62 ns|finite time") as e:
            ftlsim.run(workload=spec, overrides=SMALL, fill=0)
        assert e.value.key == needle
    with pytest.raises(ftlsim.WorkloadError, match="pattern"):
        ftlsim.run(workload=f"file:{w},pattern=zipf:0.9,requests=10", overrides=SMALL, fill=0)


GRID_A = {"workload": ["requests=500", "requests=600"], "overrides": SMALL, "fill": 0.0}
GRID_B = {"workload": ["requests=700"], "overrides": SMALL, "fill": 0.0}


def test_a_sweep_returns_its_own_grid_and_refuses_empty_ones(tmp_path):
    out = tmp_path / "s.parquet"
    a = ftlsim.sweep(GRID_A, out=out, workers=1)
    assert list(a["param.workload"]) == ["requests=500", "requests=600"]
    b = ftlsim.sweep(GRID_B, out=out, workers=1)
    assert list(b["param.workload"]) == ["requests=700"], "grid A's rows are not grid B's"
    assert len(pd.read_parquet(out)) == 3, "the file keeps both grids"
    again = ftlsim.sweep(GRID_A, out=out, workers=1)
    assert list(again.run_id) == list(a.run_id), "resumed, in the grid's order"
    with pytest.raises(ValueError, match="the grid lists no run"):
        ftlsim.sweep([], out=out)
    with pytest.raises(ValueError, match="axis seed is an empty list"):
        ftlsim.sweep({**GRID_A, "seed": []}, out=out)
    with pytest.raises(TypeError, match="grid must be"):
        ftlsim.sweep("requests=5", out=out)


def test_a_sweep_checks_out_before_running_anything(tmp_path):
    d = tmp_path / "dir.parquet"
    d.mkdir()
    with pytest.raises(ValueError, match="is a directory"):
        ftlsim.sweep({**GRID_A, "workload": "requests=2e9"}, out=d, workers=1)  # would take hours
    assert list(d.iterdir()) == [] and sorted(p.name for p in tmp_path.iterdir()) == ["dir.parquet"]
    # Files the sweep did not write: refused, and left as they were.
    foreign = tmp_path / "foreign.parquet"
    pd.DataFrame({"run_id": ["x"], "status": ["ok"], "value": [1]}).to_parquet(foreign)
    other = tmp_path / "plain.parquet"
    pd.DataFrame({"a": [1, 2]}).to_parquet(other)
    text = tmp_path / "notes.parquet"
    text.write_text("not parquet at all\n")
    empty = tmp_path / "empty.parquet"
    empty.write_bytes(b"")
    for f, needle in [(foreign, "did not write"), (other, "did not write"), (text, "is not a Parquet file"),
                      (empty, "is not a Parquet file")]:
        before = f.read_bytes()
        with pytest.raises(ValueError, match=needle):
            ftlsim.sweep(GRID_B, out=f, workers=1)
        assert f.read_bytes() == before, f.name
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")], "no temporary file"


def test_run_arguments_of_the_wrong_type_or_range_name_the_argument():
    base = {"overrides": SMALL, "fill": 0.0, "workload": "requests=10"}
    for kwargs, exc, needle in [
        ({"overrides": [("ftl.gc_victim", "fifo")]}, TypeError, "overrides must be a mapping"),
        ({"seed": -1}, ValueError, "seed = -1: must be a whole number in \\[0, 2\\^64\\)"),
        ({"seed": 2**70}, ValueError, "seed = 1180591620717411303424"),
        ({"seed": "1"}, TypeError, "seed must be a whole number"),
        ({"seed": 1.5}, TypeError, "seed must be a whole number"),
        ({"clean_shutdown": False}, ValueError, "clean_shutdown=False .* needs power_cut"),
        ({"steady_state": "no"}, TypeError, "steady_state must be True or False"),
        ({"verify": 1}, TypeError, "verify must be True or False"),
        ({"fill": "half"}, TypeError, "fill must be a number"),
        ({"trace_options": [("speed", 2)]}, TypeError, "trace_options must be a mapping"),
        ({"progress": "yes"}, TypeError, "progress must be"),
        ({"interval": -5}, ValueError, "interval = -5"),
        ({"ftl": 3}, TypeError, "ftl must be a string"),
    ]:
        with pytest.raises(exc, match=needle):
            ftlsim.run(**{**base, **kwargs})
    # Integers that fit, NumPy's among them, still run.
    import numpy as np
    r = ftlsim.run(**base, seed=np.uint64(2**64 - 1), max_memory=2**31, interval=0)
    assert r.summary["run"]["seed"] == 2**64 - 1


def test_report_refuses_a_frame_without_runs(tmp_path):
    with pytest.raises(ValueError, match="no run columns"):
        ftlsim.report(pd.DataFrame({"a": [1], "b": [2]}), tmp_path / "r.html")
    bad = tmp_path / "x.parquet"
    bad.write_text("nope")
    with pytest.raises(ValueError, match="cannot read it as a Parquet file"):
        ftlsim.report(bad, tmp_path / "r.html")
    assert not (tmp_path / "r.html").exists()


# Issue 58: no output replaces an input, another output or a device, by any name.

SMALL_TOML = """
name = "small"
source = "python test"
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
"""


def test_save_state_never_replaces_an_input_nor_a_file_a_failed_run_had(tmp_path):
    cfg = tmp_path / "small.toml"
    cfg.write_text(SMALL_TOML)
    os.link(cfg, tmp_path / "same.toml")
    for snap in (cfg, tmp_path / "same.toml"):
        with pytest.raises(ftlsim.InputError, match="save-state .* is the --config .*would destroy the input"):
            ftlsim.run(config=cfg, workload="requests=10", save_state=snap)
        assert cfg.read_text() == SMALL_TOML
    snap = tmp_path / "old.snap"
    snap.write_text("the previous snapshot")
    bad = tmp_path / "bad.csv"
    bad.write_text("0 0 100 8 0\n1000 0 200 x 0\n")
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(ftlsim.TraceError):
        ftlsim.run(config=cfg, trace=bad, trace_options={"format": "mqsim"}, save_state=snap)
    assert snap.read_text() == "the previous snapshot"
    assert sorted(p.name for p in tmp_path.iterdir()) == before, "no temporary file left"
    ftlsim.run(config=cfg, workload="requests=10", save_state=snap)
    assert snap.read_bytes().startswith(b"FTLSIM-SNAPSHOT")


def test_result_save_report_and_sweep_never_replace_what_the_run_read(tmp_path):
    cfg = tmp_path / "small.toml"
    cfg.write_text(SMALL_TOML)
    d = tmp_path / "in1"
    d.mkdir()
    trace = d / "results.json"
    trace.write_text("0 0 100 8 0\n1000 0 200 8 1\n")
    r = ftlsim.run(config=cfg, trace=trace, trace_options={"format": "mqsim"})
    with pytest.raises(ftlsim.InputError, match="results.json is the --trace"):
        r.save(d)
    assert trace.read_text().startswith("0 0 100")
    # A FIFO where a result goes is refused: the file is replaced whole.
    fifo_dir = tmp_path / "fifo"
    fifo_dir.mkdir()
    os.mkfifo(fifo_dir / "timeseries.csv")
    with pytest.raises(ftlsim.InputError, match="timeseries.csv is a FIFO"):
        r.save(fifo_dir)
    assert (fifo_dir / "timeseries.csv").is_fifo()
    saved = r.save(tmp_path / "out")
    with pytest.raises(ftlsim.InputError, match="is the data .*results.json"):
        ftlsim.report(saved, saved / "results.json")
    with pytest.raises(ftlsim.InputError, match="is the trace"):
        ftlsim.sweep({"config": str(cfg), "trace": str(trace)}, out=trace)
    assert trace.read_text().startswith("0 0 100")


def test_addresses_near_2_64_bytes_are_scaled_without_overflow(tmp_path):
    top = 2**64 - 4096
    trace = tmp_path / "far.flashnet"
    trace.write_text("".join(f"{i}.0,100,0,4096,{top},{i}.0,4096\n" for i in range(3)))
    loc = ftlsim.trace_locality(trace)
    assert (loc["page_accesses"], loc["update_share"]) == (3, 0.666667)
    assert ftlsim.trace_stats(trace)["footprint_pages"] == 1
    fitted = ftlsim.trace_fit(trace, tmp_path / "far.toml")
    assert fitted["locality"]["update_share"] == 0.666667
    check = ftlsim.fit_check(tmp_path / "far.toml")
    assert check["requests"] == 3


def test_python_arguments_that_would_be_ignored_or_misread_are_refused_naming_them(tmp_path):
    with pytest.raises(ValueError, match=r"tenants = \[\]"):
        ftlsim.run(tenants=[])
    with pytest.raises(ValueError, match="requests = 0"):
        ftlsim.fit_check(tmp_path / "x.toml", requests=0)
    for call, name in [(lambda: ftlsim.workload_locality("requests=10", -1), "capacity_bytes"),
                       (lambda: ftlsim.workload_locality("requests=10", 0), "capacity_bytes"),
                       (lambda: ftlsim.workload_locality("requests=10", 1 << 20, seed=-1), "seed")]:
        with pytest.raises(ValueError, match=name):
            call()
    with pytest.raises(TypeError, match="shared must be the ftlsim.Result"):
        ftlsim.fairness(pd.DataFrame({"a": [1]}), {})
    with pytest.raises(TypeError, match="overrides must be a mapping"):
        ftlsim.expand({"overrides": [("ftl.gc_victim", "fifo")]})
    with pytest.raises(ftlsim.FtlsimError, match="--arbitration: only with --tenant"):
        ftlsim.run(overrides=SMALL, workload="requests=10", arbitration="rr")
    with pytest.raises(ValueError, match="trace_options are a trace's"):
        ftlsim.run(overrides=SMALL, workload="requests=10", trace_options={"speed": 2})
    with pytest.raises(ftlsim.WorkloadError, match="part 2 of the mixture is empty"):
        ftlsim.workload_locality("requests=500;", 1 << 30)
