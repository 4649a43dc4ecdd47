"""ftlsim.sweep: grids, Parquet rows, resuming, failures, shared preconditioning, Dask."""

import json
import os
import signal
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

import ftlsim
from ftlsim import expand, run_id
from conftest import SMALL, run_cli

#: Three quarters of SMALL for the runs that precondition to steady state (a drive's worth
#: of pages and about half again before each run): what they test does not depend on the
#: drive's size (DFTL refuses 80 blocks a plane: its GC could not make progress at the
#: default over-provisioning). The four tests on it: 104 s -> 69 s.
STEADY = {"geometry.blocks_per_plane": 96}

GRID = {
    "ftl": ["page", "dftl"],
    "workload": ["requests=3000", "requests=3000,read=0.7"],
    "seed": [1, 2],
    "overrides": {**SMALL, "ftl.gc_victim": ["greedy", "fifo"]},
}


def test_expand_is_a_cartesian_product_or_a_list():
    runs = expand(GRID)
    assert len(runs) == 16
    assert runs[0] == {"ftl": "page", "workload": "requests=3000", "seed": 1,
                       "overrides": {"geometry.blocks_per_plane": 128, "ftl.gc_victim": "greedy"}}
    assert len({run_id(r) for r in runs}) == 16
    explicit = [{"ftl": "page"}, {"ftl": "dftl", "seed": 3}]
    assert expand(explicit) == explicit
    with pytest.raises(ValueError, match="unknown sweep keys"):
        expand({"ftll": ["page"]})
    with pytest.raises(ValueError, match="workload or trace"):
        expand([{"workload": "requests=1", "trace": "x"}])


def test_local_sweep_rows_resume_and_failures(tmp_path):
    out = tmp_path / "s.parquet"
    grid = {"ftl": ["page", "dftl"], "workload": ["requests=2000", "read=2"], "overrides": SMALL, "fill": 0.5}
    df = ftlsim.sweep(grid, out=out, workers=2)
    assert len(df) == 4 and out.exists()
    disk = pd.read_parquet(out)
    assert sorted(disk.run_id) == sorted(df.run_id)
    ok = disk[disk.status == "ok"]
    bad = disk[disk.status == "error"]
    assert len(ok) == 2 and len(bad) == 2, disk[["param.ftl", "param.workload", "status", "error"]]
    assert bad.error.str.contains("WorkloadError: invalid workload spec: read = `2`").all()
    assert (ok["report.host.requests"] == 2000).all()
    assert (ok["config.geometry.blocks_per_plane"] == 128).all()
    assert (ok["ftlsim_version"] == ftlsim.__version__).all()
    # The row equals a direct run's, and carries what the report plots.
    direct = ftlsim.run(ftl="dftl", workload="requests=2000", overrides=SMALL, fill=0.5).row()
    row = ok[ok["param.ftl"] == "dftl"].iloc[0]
    for k, v in direct.items():
        if not k.startswith("wall_time."):
            assert row[k] == v or (pd.isna(row[k]) and v is None), k
    assert set(json.loads(row["detail"])) == {"timeseries", "histograms", "programs_per_plane", "erases_per_plane"}
    # Resuming: successful rows are kept as they are, failed ones run again.
    again = ftlsim.sweep(grid, out=out, workers=2)
    assert len(again) == 4
    kept = again.set_index("run_id").loc[ok.run_id]
    assert (kept["sweep.wall_s"].to_numpy() == ok.set_index("run_id")["sweep.wall_s"].to_numpy()).all()
    assert (again.status == "error").sum() == 2
    # Growing the grid runs only the new points.
    grid["ftl"].append("fast")
    grown = ftlsim.sweep(grid, out=out, workers=2, retry_failed=False)
    assert len(grown) == 6 and (grown["param.ftl"] == "fast").sum() == 2


def test_runs_sharing_a_drive_precondition_once_with_identical_results(tmp_path):
    grid = {"ftl": "page", "workload": ["requests=2000", "requests=2000,read=0.9"], "overrides": STEADY,
            "steady_state": True, "seed": 5}
    shared = ftlsim.sweep(grid, out=tmp_path / "a.parquet", workers=2)
    alone = ftlsim.sweep(grid, out=tmp_path / "b.parquet", workers=2, share_preconditioning=False)
    assert shared.snapshot_used.all() and not alone.snapshot_used.any()
    assert not (tmp_path / "a.parquet.snapshots").exists(), "snapshots are removed afterwards"
    metrics = [c for c in shared.columns if c.startswith("report.") and not c.startswith("report.precondition")]
    a = shared.set_index("run_id").sort_index()[metrics]
    b = alone.set_index("run_id").sort_index()[metrics]
    pd.testing.assert_frame_equal(a, b)


def test_runs_at_other_wear_do_not_share_a_drive(tmp_path):
    # Block wear is flash state: FastGC at 0 and 4,500 P/E cycles precondition apart (a sweep
    # once handed both the first one's drive) and behave as alone.
    grid = {"ftl": "fastgc", "workload": "requests=20000", "overrides": {**STEADY, "reliability.pe_cycles": [0, 4500]},
            "steady_state": True, "seed": 5}
    shared = ftlsim.sweep(grid, out=tmp_path / "a.parquet", workers=2)
    alone = ftlsim.sweep(grid, out=tmp_path / "b.parquet", workers=2, share_preconditioning=False)
    assert (shared.status == "ok").all(), shared.error.tolist()
    cb = shared.set_index("param.overrides.reliability.pe_cycles")["report.ftl_metrics.gc_copybacks"]
    assert cb[4500] == 0 < cb[0], "FastGC copies back at 0 cycles, not at 4,500"
    col = "report.ftl_metrics.gc_copybacks"
    assert sorted(shared[col]) == sorted(alone[col])


def test_power_cut_runs_sharing_a_drive_recover_as_if_preconditioned_alone(tmp_path):
    # The shared snapshot must carry program stamps (a demand FTL's recovery needs them), and a
    # cut run from it must recover exactly as one that preconditioned itself.
    grid = {"ftl": "dftl", "workload": "requests=2000", "overrides": STEADY, "steady_state": True, "seed": 5,
            "power_cut": ["700", "1300"], "clean_shutdown": [True, False], "verify": True}
    shared = ftlsim.sweep(grid, out=tmp_path / "a.parquet", workers=2)
    alone = ftlsim.sweep(grid, out=tmp_path / "b.parquet", workers=2, share_preconditioning=False)
    assert (shared.status == "ok").all(), shared.error.tolist()
    assert shared.snapshot_used.all()
    cols = [c for c in shared.columns if c.startswith(("report.power_cut.", "post_recovery.host."))]
    assert "report.power_cut.recovery_pages_read" in cols
    a = shared.set_index("run_id").sort_index()[cols]
    b = alone.set_index("run_id").sort_index()[cols]
    pd.testing.assert_frame_equal(a, b)


def test_cli_sweep_file(cli, tmp_path):
    f = tmp_path / "sweep.toml"
    f.write_text('ftl = ["page", "fast"]\nworkload = "requests=1500"\nfill = 0.5\n'
                 '[overrides]\n"geometry.blocks_per_plane" = 128\n')
    p = run_cli(cli, "sweep", str(f), "--out", str(tmp_path / "s.parquet"), "--quiet")
    assert "2 rows" in p.stdout
    df = pd.read_parquet(tmp_path / "s.parquet")
    assert sorted(df["param.ftl"]) == ["fast", "page"] and (df.status == "ok").all()
    f2 = tmp_path / "list.toml"
    f2.write_text('[[run]]\nftl = "page"\nworkload = "read=3"\n')
    p = run_cli(cli, "sweep", str(f2), "--out", str(tmp_path / "t.parquet"), "--quiet", check=False)
    assert p.returncode == 1 and "1 failed" in p.stdout


@pytest.fixture
def cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40) as c, distributed.Client(c) as client:
        yield client


def test_dask_sweep_survives_a_killed_worker(cluster, tmp_path):
    client = cluster
    grid = {"ftl": ["page", "dftl", "fast"], "workload": ["requests=400000", "requests=400000,read=0.6"],
            "overrides": SMALL, "fill": 0.8}
    pid_of = client.run(os.getpid)  # worker address -> pid
    assert len(pid_of) == 2
    victim, victim_pid = sorted(pid_of.items())[0]
    lost = []

    def kill_a_busy_worker():
        # Once the victim is running a task, kill it: that run is lost and Dask reschedules it.
        deadline = time.time() + 60
        while time.time() < deadline:
            busy = client.processing().get(victim, ())
            if busy:
                time.sleep(0.2)
                lost.extend(busy)
                os.kill(victim_pid, signal.SIGKILL)
                return
            time.sleep(0.02)

    t = threading.Thread(target=kill_a_busy_worker)
    t.start()
    df = ftlsim.sweep(grid, client=client, out=tmp_path / "d.parquet")
    t.join()
    assert lost, "a worker was killed while it ran a task"
    assert len(df) == 6 and (df.status == "ok").all(), df[["param.ftl", "status", "error"]]
    # Same rows as a local sweep: where a run ran does not change its numbers.
    local = ftlsim.sweep(grid, out=tmp_path / "l.parquet", workers=2)
    cols = ["report.performance.iops", "report.write_amplification.total", "report.response_time.all.p99_ns"]
    pd.testing.assert_frame_equal(df.set_index("run_id").sort_index()[cols], local.set_index("run_id").sort_index()[cols])


def test_cli_sweep_on_a_dask_scheduler(cluster, cli, tmp_path):
    f = tmp_path / "sweep.toml"
    f.write_text('ftl = ["page", "dftl"]\nworkload = "requests=1500"\nfill = 0.5\n'
                 '[overrides]\n"geometry.blocks_per_plane" = 128\n')
    addr = cluster.scheduler.address
    p = run_cli(cli, "sweep", str(f), "--scheduler", addr, "--out", str(tmp_path / "s.parquet"), "--quiet")
    assert "2 rows" in p.stdout and "(0 failed)" in p.stdout
    tasks = cluster.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.task_prefixes))
    assert "ftlsim-run" in tasks, tasks


def test_tags_ride_along_and_rows_of_another_build_run_again(tmp_path):
    out = tmp_path / "t.parquet"
    runs = [{"ftl": "page", "workload": "requests=1000", "overrides": SMALL, "fill": 0.3, "tag": "first"},
            {"ftl": "fast", "workload": "requests=1000", "overrides": SMALL, "fill": 0.3, "tag": "second"}]
    df = ftlsim.sweep(runs, out=out, workers=1)
    assert sorted(df["param.tag"]) == ["first", "second"] and (df.ftlsim_build == ftlsim.build_id()).all()
    # The file's rows as an earlier build of the simulator left them.
    df["ftlsim_build"] = "an-earlier-build"
    ftlsim._sweep._write(out, df, [])
    first = df.set_index("run_id")["sweep.wall_s"]
    kept = ftlsim.sweep(runs, out=out, workers=1, reuse_other_builds=True)
    assert (kept.ftlsim_build == "an-earlier-build").all(), "reused as asked"
    assert (kept.set_index("run_id")["sweep.wall_s"] == first).all()
    rerun = ftlsim.sweep(runs, out=out, workers=1)
    assert (rerun.ftlsim_build == ftlsim.build_id()).all(), "run again under this build"


def test_dask_sweep_shares_preconditioning_through_a_task(cluster, tmp_path):
    grid = {"ftl": "page", "workload": ["requests=2000", "requests=2000,read=0.9"], "overrides": STEADY,
            "steady_state": True, "seed": 5}
    df = ftlsim.sweep(grid, client=cluster, out=tmp_path / "d.parquet")
    assert df.snapshot_used.all() and (df.status == "ok").all()
    tasks = cluster.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.task_prefixes))
    assert "ftlsim-prepare" in tasks, tasks
    local = ftlsim.sweep(grid, out=tmp_path / "l.parquet", workers=2, share_preconditioning=False)
    cols = [c for c in df.columns if c.startswith("report.")]
    pd.testing.assert_frame_equal(df.set_index("run_id").sort_index()[cols],
                                  local.set_index("run_id").sort_index()[cols])


def test_ctrl_c_stops_a_local_sweep_and_keeps_the_finished_rows(tmp_path, monkeypatch):
    out = tmp_path / "c.parquet"
    runs = [{"ftl": "page", "workload": f"requests={n}", "overrides": SMALL, "fill": 0.2, "tag": i}
            for i, n in enumerate([1000, 1000, 50_000_000, 50_000_000, 50_000_000])]
    # Each finished row is written at once, so Ctrl-C can come once the two short runs are done.
    monkeypatch.setattr(ftlsim._sweep, "_SAVE_EVERY_S", 0)
    sent = []

    def interrupt_after_the_short_runs():
        deadline = time.time() + 120
        while time.time() < deadline:
            try:
                if len(pd.read_parquet(out)) >= 2:
                    break
            except Exception:
                pass  # not written yet
            time.sleep(0.05)
        sent.append(time.time())
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt_after_the_short_runs, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        ftlsim.sweep(runs, out=out, workers=2)
    assert time.time() - sent[0] < 3, "queued runs were cancelled and the workers stopped"
    df = pd.read_parquet(out)
    assert sorted(df["param.tag"]) == [0, 1] and (df.status == "ok").all()


@pytest.mark.parametrize("spawned", [False, True], ids=["new-interpreters", "spawned-as-on-windows"])
def test_a_cluster_whose_workers_were_killed_closes_cleanly(spawned):
    # Closing asks psutil for the children of each worker process that asyncio has not seen
    # exit; one killed and reaped meanwhile made that fail about half the time (CI, stop 55).
    from distributed import Client
    for _ in range(5 if not spawned else 2):
        with ftlsim._sweep._local_cluster(2, spawned=spawned) as cluster, Client(cluster) as client:
            busy = [client.submit(time.sleep, 60, pure=False) for _ in range(2)]
            client.wait_for_workers(2)
            time.sleep(0.3)
            ftlsim._sweep._kill_workers(cluster)
        assert all(f.status != "finished" for f in busy)


_REAL_RUN_TASK = ftlsim._sweep.run_task


def _crash_on_tag(run, snapshot=None):
    if run.get("tag") == "crash":
        os._exit(1)  # what a Rust panic (abort) does to the worker
    return _REAL_RUN_TASK(run, snapshot)


def test_a_crashing_worker_costs_only_its_run(tmp_path, monkeypatch):
    monkeypatch.setattr(ftlsim._sweep, "run_task", _crash_on_tag)
    # The workers are new interpreters: they import the patched function from this module.
    here = str(Path(__file__).resolve().parent)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH")) if p))
    runs = [{"ftl": "page", "workload": "requests=2000", "overrides": SMALL, "fill": 0.3, "tag": t}
            for t in ("a", "b", "crash", "c", "d")]
    runs += [{"ftl": "page", "workload": f"requests=1000,read={r}", "overrides": SMALL, "steady_state": True,
              "tag": f"s{r}"} for r in (0.1, 0.9)]
    df = ftlsim.sweep(runs, out=tmp_path / "x.parquet", workers=2)
    assert len(df) == len(runs)
    by_tag = df.set_index("param.tag")
    assert by_tag.loc["crash", "status"] == "error" and "died running it alone" in by_tag.loc["crash", "error"]
    assert (by_tag.drop(index="crash").status == "ok").all(), by_tag[["status", "error"]]


def test_bad_points_verify_and_numpy_values_are_rows_not_exceptions(tmp_path):
    import numpy as np
    grid = {"ftl": "page", "workload": ["requests=1000", "requests=1000,read=0.9"], "seed": 5,
            "overrides": {**SMALL, "ftl.gc_victim": ["greedy", "nope"],
                          "ftl.mapping_cache_bytes": list(np.array([16384]))},
            "steady_state": True, "verify": True}
    df = ftlsim.sweep(grid, out=tmp_path / "v.parquet", workers=2)
    assert len(df) == 4
    ok, bad = df[df.status == "ok"], df[df.status == "error"]
    assert len(ok) == 2 and ok.snapshot_used.all(), df[["status", "error"]]
    assert len(bad) == 2 and bad.error.str.contains("ftl.gc_victim").all()
    df = ftlsim.sweep([{"ftl": "page", "workload": "requests=500", "overrides": SMALL, "fill": 0.2,
                        "tag": {"i": np.int64(3)}}], out=tmp_path / "n.parquet", workers=1)
    assert df.loc[0, "status"] == "ok" and json.loads(df.loc[0, "param.tag"]) == {"i": 3}
