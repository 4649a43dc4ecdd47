"""Tenants from Python (issue 39): dicts or texts, Result.tenants, fairness against runs alone,
the sweep's tenants axis, and the CLI's --tenant giving the same results."""

import json

import pytest

import ftlsim
from ftlsim._sweep import expand
from ftlsim._tenants import tenant_text

from conftest import SMALL, run_cli

WRITER = {"name": "writer", "ns": (0, 0.5), "workload": "read=0,qd=16,requests=4000"}
READER = {"name": "reader", "ns": (0.5, 1), "class": "high", "workload": "read=1,qd=2,requests=1000"}


def test_a_tenant_dict_is_the_clis_text():
    assert tenant_text(WRITER) == "name=writer,ns=0..0.5,read=0,qd=16,requests=4000"
    assert tenant_text({"name": "v", "trace": "t.csv", "device": 2, "qd": 8}) == "name=v,trace=t.csv,device=2,qd=8"
    with pytest.raises(ValueError, match="unknown keys"):
        tenant_text({"name": "x", "weight": 2})
    with pytest.raises(TypeError, match="tenants must be a list"):
        ftlsim.run(tenants="name=a", overrides=SMALL)


def test_each_tenants_part_adds_up_to_the_drives():
    r = ftlsim.run(tenants=[WRITER, READER], arbitration="wrr:high=4", overrides=SMALL, seed=3)
    t = r.tenants
    assert list(t["name"]) == ["writer", "reader"]
    assert list(t["class"]) == ["medium", "high"]
    assert list(t["host.requests"]) == [4000, 1000]
    for col in ("requests", "reads", "writes", "pages_written", "bytes_read"):
        assert t[f"host.{col}"].sum() == r.report["host"][col], col
    assert t["performance.iops"].sum() == pytest.approx(r.report["performance"]["iops"], rel=1e-5)
    assert t["host_write_share"].tolist() == [1.0, 0.0]
    assert r.summary["run"]["arbitration"]["weights"]["high"] == 4
    assert [x["name"] for x in r.summary["run"]["tenants"]] == ["writer", "reader"]
    # The reader's namespace starts halfway.
    half = r.report["drive"]["logical_bytes"] // 512 // 2
    assert abs(t["namespace.first_sector"].iloc[1] - half) <= 16
    with pytest.raises(ValueError, match="no tenants"):
        ftlsim.run(workload="requests=100", overrides=SMALL).tenants


def test_fairness_is_mqsims_min_over_max_slowdown():
    shared = ftlsim.run(tenants=[WRITER, READER], overrides=SMALL, seed=3)
    alone = {t["name"]: ftlsim.run(tenants=[t], overrides=SMALL, seed=3) for t in (WRITER, READER)}
    f = ftlsim.fairness(shared, alone)
    assert list(f["name"]) == ["writer", "reader"]
    assert (f["slowdown"] >= 0.999).all(), f
    assert f["fairness"].iloc[0] == pytest.approx(f["slowdown"].min() / f["slowdown"].max())
    assert 0 < f["fairness"].iloc[0] <= 1
    # The reader beside a writer waits behind its programs: it slows down most.
    assert f.set_index("name").loc["reader", "slowdown"] > f.set_index("name").loc["writer", "slowdown"]
    with pytest.raises(ValueError, match="no run alone"):
        ftlsim.fairness(shared, {"writer": alone["writer"]})


def test_a_bad_tenant_names_itself_and_its_key():
    with pytest.raises(ftlsim.WorkloadError, match="--tenant db: ns"):
        ftlsim.run(tenants=["name=db,ns=0..2"], overrides=SMALL)
    with pytest.raises(ftlsim.WorkloadError, match="--arbitration"):
        ftlsim.run(tenants=[WRITER], arbitration="fifo", overrides=SMALL)
    with pytest.raises(ftlsim.FtlsimError, match="not --workload"):
        ftlsim.run(tenants=[WRITER], workload="requests=10", overrides=SMALL)


def test_the_sweep_takes_a_tenant_list_as_one_value_and_a_list_of_lists_as_an_axis():
    one = expand({"tenants": [WRITER, READER], "seed": [1, 2]})
    assert len(one) == 2 and one[0]["tenants"] == [WRITER, READER]
    axis = expand({"tenants": [[WRITER], [WRITER, READER]]})
    assert [len(r["tenants"]) for r in axis] == [1, 2]


def test_the_cli_and_python_give_the_same_tenant_results(cli, tmp_path):
    py = ftlsim.run(tenants=[WRITER, READER], overrides=SMALL, seed=3, interval=0)
    run_cli(cli, "run", "--quiet", "--seed", "3", "--interval", "0", "--set", "geometry.blocks_per_plane=128",
            "--tenant", tenant_text(WRITER), "--tenant", tenant_text(READER), "--out", str(tmp_path))
    got = json.loads((tmp_path / "results.json").read_text())
    assert got["report"]["tenants"] == py.report["tenants"]
    assert got["run"]["tenants"] == py.summary["run"]["tenants"]


def test_fdp_handles_from_tenants_plids():
    over = {**SMALL, "fdp.handles": 2, "fdp.handle_type": "persistently_isolated"}
    tenants = [{**WRITER, "plids": [0]}, {"name": "log", "ns": (0.5, 1), "plids": 1,
                                           "workload": "pattern=sequential,read=0,size=64k,qd=4,requests=500"}]
    r = ftlsim.run(tenants=tenants, overrides=over, seed=3)
    f = r.fdp
    assert list(f["handle"]) == [0, 1]
    assert f["host_pages_written"].sum() == r.report["host"]["pages_written"]
    assert f["gc_pages_written"].sum() == r.report["gc"]["pages_moved"]
    assert r.report["ftl_metrics"]["fdp"]["mixed_blocks"] == 0
    with pytest.raises(ftlsim.WorkloadError, match="plids"):
        ftlsim.run(tenants=[{**WRITER, "plids": 5}], overrides=over)
    with pytest.raises(ValueError, match="no \\[fdp\\]"):
        ftlsim.run(workload="requests=100", overrides=SMALL).fdp


def test_writes_pick_their_handle_by_size_by_offset_or_at_random(tmp_path):
    over = {**SMALL, "fdp.handles": 3}
    # A flash cache's small and large objects: up to 16 KiB on handle 1, larger on handle 2.
    cache = {"name": "cache", "plids": [1, 2], "plid_select": "size", "plid_sizes": "16k",
             "workload": "read=0,size=4k@3|64k@1,qd=4,requests=2000"}
    r = ftlsim.run(tenants=[cache], overrides=over, seed=3, fill=0.5)
    f = r.fdp.set_index("handle")
    assert r.summary["run"]["tenants"][0]["placement"] == {"plid_select": "size", "plids": [1, 2], "plid_sizes": [16384]}
    small, large = f.loc[1, "host_pages_written"], f.loc[2, "host_pages_written"]
    assert small + large == r.report["host"]["pages_written"] and f.loc[0, "host_pages_written"] == 0
    # Three 4 KiB writes to one 64 KiB: 1 page to 16 of each size, so about 3:16.
    assert 0.12 < small / large < 0.26, (small, large)
    # fio's dp_scheme: the first half of the namespace on handle 1, the rest on handle 0 (no entry).
    scheme = tmp_path / "scheme"
    half = r.report["drive"]["logical_bytes"] // 2
    scheme.write_text(f"0,{half},1\n")
    w = {"name": "w", "dp_scheme": scheme, "workload": "read=0,size=4k,qd=4,requests=2000"}
    f = ftlsim.run(tenants=[w], overrides=over, seed=3, fill=0.5).fdp.set_index("handle")
    assert f.loc[1, "host_pages_written"] > 0 and f.loc[0, "host_pages_written"] > 0
    assert abs(f.loc[1, "host_pages_written"] / f.loc[0, "host_pages_written"] - 1) < 0.15
    r = ftlsim.run(tenants=[{**w, "dp_scheme": None, "plids": [0, 1, 2], "plid_select": "random"}], overrides=over,
                   seed=3, fill=0.5)
    assert (r.fdp["host_pages_written"] > 500).all()
    with pytest.raises(ftlsim.WorkloadError, match="plid_sizes"):
        ftlsim.run(tenants=[{**cache, "plid_sizes": None}], overrides=over)


def test_a_traces_device_column_picks_the_handle(tmp_path):
    # DiskSim ASCII (time_ms device block count flags; flags 0: write): device 0 writes 8
    # sectors a request, device 1 writes 16.
    lines = [f"{i * 0.5:.3f} {i % 2} {(i // 2) * 16} {8 * (1 + i % 2)} 0" for i in range(400)]
    trace = tmp_path / "two.disksim"
    trace.write_text("\n".join(lines) + "\n")
    over = {**SMALL, "fdp.handles": 2}
    t = {"name": "vols", "trace": trace, "format": "disksim", "plid_select": "device", "qd": 4}
    f = ftlsim.run(tenants=[t], overrides=over, seed=3, fill=0.0).fdp.set_index("handle")
    assert (f.loc[0, "host_pages_written"], f.loc[1, "host_pages_written"]) == (200, 400)
    with pytest.raises(ftlsim.FtlsimError, match="handle 1.*beyond the drive's 1"):
        ftlsim.run(tenants=[t], overrides={**SMALL, "fdp.handles": 1}, seed=3, fill=0.0)


def test_a_row_has_each_tenant_and_handle_by_name():
    over = {**SMALL, "fdp.handles": 2}
    r = ftlsim.run(tenants=[{**WRITER, "plids": 1}, READER], overrides=over, seed=3)
    row = r.row()
    assert row["report.tenants.writer.host.requests"] == 4000
    assert row["report.tenants.reader.response_time.read.count"] == 1000
    assert row["report.ftl_metrics.fdp.handles.1.host_pages_written"] == r.report["host"]["pages_written"]


def test_a_zoned_namespace_from_python_counts_what_it_refuses():
    zns = {"geometry.blocks_per_plane": 128, "overprovisioning.share": None, "overprovisioning.extra_blocks_per_plane": 8,
           "host.unmapped_read": "zero"}
    info = {f["name"]: f for f in ftlsim.ftls()}["zns"]
    assert info["zoned"] and info["recovers"] and not info["placement"]
    r = ftlsim.run(ftl="zns", overrides=zns, fill=0.0, workload="pattern=sequential,read=0,size=64k,qd=4,requests=3000")
    z = r.report["ftl_metrics"]["zns"]
    assert r.report["write_amplification"]["total"] == 1.0
    assert z["refused_total"] == 0 and z["zones_full"] > 0
    r = ftlsim.run(ftl="zns", overrides=zns, fill=0.0, workload="read=0,size=4k,qd=4,requests=500")
    refused = r.row()["report.ftl_metrics.zns.refused.zone_invalid_write"]
    assert refused > 0
    # Kept apart from the requests the drive completed (issue 58).
    h = r.report["host"]
    assert (h["refused"], h["refused_by_status"]["zone_invalid_write"], h["requests"] + h["refused"]) == (
        refused, refused, 500)
    with pytest.raises(ftlsim.FtlsimError, match="zone_invalid_write"):
        ftlsim.run(ftl="zns", overrides={**zns, "ftl.zns.on_refused": "stop"}, fill=0.0,
                   workload="read=0,size=4k,qd=4,requests=500")


def test_the_time_series_has_each_tenants_columns():
    r = ftlsim.run(tenants=[WRITER, READER], overrides=SMALL, seed=3, interval="10ms")
    ts = r.timeseries
    assert (ts["tenant.writer.requests"] + ts["tenant.reader.requests"] == ts["requests"]).all()
    assert ts["tenant.reader.requests"].sum() == 1000
    assert "tenant.reader.mean_latency_us" in ts
