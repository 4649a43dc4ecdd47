"""ftlsim.report: the HTML page, its plot files, and the page in a real headless Chromium."""

import shutil
from pathlib import Path

import pandas as pd
import pytest

import ftlsim
from ftlsim import normalised
from conftest import SMALL, run_cli

PLOTS = ["latency_cdf", "iops_latency_time", "free_blocks_gc_time", "writes_per_plane", "erase_histogram",
         "cache_hit_classes", "normalised"]


@pytest.fixture(scope="module")
def sweep_df(tmp_path_factory):
    d = tmp_path_factory.mktemp("rep")
    grid = {"ftl": ["page", "dftl", "fast"], "workload": ["requests=20000", "requests=20000,pattern=zipf:0.9"],
            "overrides": SMALL, "fill": 0.9, "interval": "10ms"}
    return ftlsim.sweep(grid, out=d / "s.parquet", workers=2)


def test_normalised_is_per_source_with_a_geometric_mean(sweep_df):
    n = normalised(sweep_df, baseline="page")
    assert n.attrs["baseline"] == "page" and n.attrs["sources"] == 2
    base = n[n.ftl == "page"]
    assert (base["IOPS"] == 1.0).all() and (base["write amplification"] == 1.0).all()
    dftl = n[(n.ftl == "dftl") & (n.source != "geometric mean")]["mean response time"].to_numpy()
    gm = n[(n.ftl == "dftl") & (n.source == "geometric mean")]["mean response time"].iloc[0]
    assert gm == pytest.approx((dftl[0] * dftl[1]) ** 0.5)
    with pytest.raises(ValueError, match="baseline `nope`"):
        normalised(sweep_df, baseline="nope")


def test_report_files(sweep_df, tmp_path):
    out = ftlsim.report(sweep_df, tmp_path / "r.html", baseline="page")
    text = out.read_text()
    for link in ('href="http', 'src="http', "url(http", "<script src", "<link "):
        assert link not in text, f"no network needed to view it: {link}"
    for name in PLOTS:
        assert f'data-plot="{name}"' in text, name
        for ext in ("png", "svg"):
            f = tmp_path / "r_files" / f"{name}.{ext}"
            assert f.exists() and f.stat().st_size > 1000, f
    assert text.count("<tr>") >= 6 + 1
    again = ftlsim.report(sweep_df, tmp_path / "r2.html", baseline="page")
    assert again.read_text() == text, "the same data gives the same page"


def test_report_of_cli_run_directories(cli, tmp_path):
    for ftl in ("page", "dftl"):
        run_cli(cli, "run", "--ftl", ftl, "--set", "geometry.blocks_per_plane=128", "--workload", "requests=3000",
                "--out", str(tmp_path / ftl), "--quiet")
    p = run_cli(cli, "report", str(tmp_path / "page"), str(tmp_path / "dftl"), "-o", str(tmp_path / "cli.html"))
    assert "report:" in p.stdout
    text = (tmp_path / "cli.html").read_text()
    assert "Normalised to page" in text and 'data-plot="latency_cdf"' in text


def chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        pytest.fail("Debian's chromium is missing: `make browser` (part of `make test`) installs it")
    return path


def test_report_renders_in_headless_chromium(sweep_df, tmp_path):
    from playwright.sync_api import sync_playwright
    out = ftlsim.report(sweep_df, tmp_path / "r.html")
    errors, requests = [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), headless=True,
                                    args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        page = browser.new_page()
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("request", lambda r: requests.append(r.url))
        page.goto(out.as_uri())
        page.wait_for_load_state("load")
        for name in PLOTS:
            fig = page.locator(f'figure[data-plot="{name}"] svg')
            assert fig.count() == 1, name
            box = fig.bounding_box()
            assert box and box["width"] > 200 and box["height"] > 100, (name, box)
            # Drawn: lines, bars or steps, not an empty frame.
            drawn = page.locator(f'figure[data-plot="{name}"] svg path').count()
            assert drawn > 10, (name, drawn)
        rows = page.locator("table.summary tbody tr").count()
        page.screenshot(path=str(tmp_path / "shot.png"), full_page=True)
        browser.close()
    assert not errors, errors
    assert rows == len(sweep_df)
    assert all(u.startswith("file://") for u in requests), requests
    assert (tmp_path / "shot.png").stat().st_size > 10_000


def test_labels_cache_classes_and_runs_without_time_series(tmp_path):
    runs = [{"ftl": f, "workload": "requests=3000,pattern=zipf:0.9", "overrides": SMALL,
             "fill": 0.5, "interval": 0, "tag": f"T-{f}"} for f in ("page", "cdftl")]
    df = ftlsim.sweep(runs, out=tmp_path / "s.parquet", workers=2)
    assert (df.status == "ok").all(), df.error
    cd = df[df["param.ftl"] == "cdftl"].iloc[0]
    assert cd["report.ftl_metrics.cache_second_level_hits"] > 0, "CDFTL's second level is used"
    out = ftlsim.report(df, tmp_path / "r.html", label="param.tag")
    text = out.read_text()
    assert "T-cdftl" in text and "T-page" in text
    assert 'data-plot="iops_latency_time"' not in text, "no time series, no time plots"
    assert 'data-plot="cache_hit_classes"' in text
    from ftlsim._report import CACHE_CLASSES
    m = lambda k: float(cd[f"report.ftl_metrics.{k}"])
    assert sum(count(m) for _, count in CACHE_CLASSES) == pytest.approx(m("cache_accesses"))


def test_normalisation_keeps_configs_apart_and_refuses_ambiguity(tmp_path):
    base = ftlsim.Config.from_preset("default").with_overrides(SMALL)
    grid = {"config": [base, base.with_overrides({"timing.t_r_ns": 90000})], "ftl": ["page", "dftl"],
            "workload": "requests=2000,read=0.8", "fill": 0.5}
    df = ftlsim.sweep(grid, out=tmp_path / "c.parquet", workers=2)
    n = normalised(df, baseline="page")
    assert n.attrs["sources"] == 2, n
    slow = df[df["param.config"] == df["param.config"].iloc[-1]]
    with pytest.raises(ValueError, match="two runs of page on the same source"):
        normalised(pd.concat([df, slow.assign(run_id="x")]), baseline="page", source=lambda r: "one")


def test_geometric_mean_uses_the_same_sources_for_every_ftl():
    from ftlsim._report import Entry
    def row(ftl, src, erases):
        return Entry("", {"run.ftl": ftl, "param.workload": src, "report.flash.erases.total": erases,
                          "report.performance.iops": 1.0}, None)
    n = normalised([row("page", "a", 10), row("fast", "a", 0), row("page", "b", 10), row("fast", "b", 20),
                    row("page", "c", 0), row("fast", "c", 5)], baseline="page")
    gm = n[n.source == "geometric mean"].set_index("ftl")["erases"]
    assert gm["fast"] == 0.0 and gm["page"] == 1.0, n
