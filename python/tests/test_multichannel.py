"""Issue 19: a [multichannel] config runs its channel system from Python, with the channel
system's report and its per-unit views, and in a sweep."""

import ftlsim

SMALL = {"geometry.blocks_per_plane": 72, "overprovisioning.extra_blocks_per_plane": 8,
         "multichannel.spare_threshold": 4}
WORKLOAD = "pattern=uniform,read=0,size=4k,requests=20000"


def test_a_channel_system_run_reports_per_unit_views():
    r = ftlsim.run("changwen", workload=WORKLOAD, overrides={**SMALL, "multichannel.mode": "gca"})
    assert r.is_channel_system
    assert "mode=gca" in repr(r)
    rep = r.report
    assert rep["drive"]["units"] == 8 and rep["host"]["requests"] == 20000
    assert rep["performance"]["iops"] > 0
    assert abs(rep["performance"]["response_inverse_iops_us"] * rep["performance"]["iops"] - 1e6) < 1
    ct = r.channel_time
    assert list(ct.unit) == list(range(8))
    total = ct[["host_write_s", "mandatory_gc_s", "early_gc_s", "idle_s"]].sum(axis=1)
    assert (abs(total - rep["performance"]["simulated_time_ns"] / 1e9) < 1e-6).all()
    d = r.dirty_pages
    assert list(d.columns) == ["t_s"] + [f"unit_{i}" for i in range(8)]
    assert (d.drop(columns="t_s").sum(axis=1) <= 8).all(), "a 32 KB buffer holds 8 pages"
    assert "report.performance.iops" in r.row()


def test_a_sweep_runs_channel_systems(tmp_path):
    runs = [{"preset": "changwen", "workload": WORKLOAD, "overrides": {**SMALL, "multichannel.mode": m}, "tag": m}
            for m in ("fi", "cf")]
    df = ftlsim.sweep(runs, out=tmp_path / "s.parquet", workers=1)
    assert list(df.status) == ["ok", "ok"]
    by = {r["param.tag"]: r for r in df.to_dict(orient="records")}
    assert by["fi"]["report.gc.cf_rounds"] == 0 and by["cf"]["report.gc.cf_rounds"] > 0
