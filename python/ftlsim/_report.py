"""Reports: one self-contained HTML file (plots inline as SVG, no network needed to view it)
with the summary table and the plots, and a PNG and an SVG of each plot beside it."""

from __future__ import annotations

import html
import io
import json
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional, Union, cast

import numpy as np
import pandas as pd

from . import _outputs
from ._config import Config
from ._run import Result, RunDetail, latency_frame

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: A run's flat row (:meth:`ftlsim.Result.row`, a sweep's Parquet row).
Row = dict[str, Any]
#: What names a run, or what it ran on: a column of its row or a function of the row.
RowKey = Union[str, Callable[[Row], str], None]

#: Runs drawn in one per-run plot by default; more are listed in the table but left out of
#: the plots (``max_runs``).
MAX_RUNS_PER_PLOT = 12
#: Every plot a report may draw, by file name.
PLOTS = ("latency_cdf", "iops_latency_time", "free_blocks_gc_time", "writes_per_plane", "erase_histogram",
         "cache_hit_classes", "normalised")
#: Metrics normalised to the baseline FTL: (column, label, higher is better).
NORMALISED = (
    ("report.response_time.all.mean_ns", "mean response time", False),
    ("report.performance.iops", "IOPS", True),
    ("report.write_amplification.total", "write amplification", False),
    ("report.flash.erases.total", "erases", False),
)
#: Cache outcome classes of the demand FTLs (report.ftl_metrics; docs/metrics.md): name and
#: count. `cache_hits` includes CDFTL's second-level hits, shown apart. Each count is a
#: function of ``m``, which gives a metric of report.ftl_metrics by name.
CACHE_CLASSES: tuple[tuple[str, Callable[[Callable[[str], float]], float]], ...] = (
    ("hit", lambda m: m("cache_hits") - m("cache_second_level_hits")),
    ("second-level hit", lambda m: m("cache_second_level_hits")),
    ("miss, no flash access", lambda m: m("cache_misses_no_penalty")),
    ("miss, translation read", lambda m: m("cache_misses_fetch")),
    ("miss, read + write-back", lambda m: m("cache_misses_write_back")),
)


@dataclass
class Entry:
    """One run in a report."""

    label: str
    row: Row
    detail: Optional[RunDetail]

    @property
    def ok(self) -> bool:
        status: object = self.row.get("status", "ok")
        return status == "ok"


def _load_dir(path: Path) -> Result:
    """A run directory written by ``ftlsim run`` (results.json, timeseries.csv, config.toml)."""
    summary = json.loads((path / "results.json").read_text())
    ts_path = path / "timeseries.csv"
    # A CSV file's column names are strings.
    ts = (cast("dict[str, list[Any]]", pd.read_csv(ts_path).to_dict(orient="list"))
          if ts_path.exists() and ts_path.stat().st_size else {})
    cfg_path = path / "config.toml"
    # The same dict as Result.config: the config as the core reads it, defaults filled in.
    cfg = Config.from_file(cfg_path).to_dict() if cfg_path.exists() else {}
    return Result(summary, ts, cfg)


#: Parameters that say which FTL ran, or label a run, rather than what it ran on.
_NOT_SOURCE = ("param.ftl", "param.tag", "param.overrides.ftl.name", "param.trace", "param.workload")


def _source_parts(row: Row) -> list[tuple[str, str]]:
    """What a run ran on, the FTL aside: its trace or workload, then every other parameter
    of a sweep row (`param.*`), or for a single run the config fields other than the FTL's."""
    trace = row.get("param.trace") or row.get("run.trace.file")
    if isinstance(trace, str) and trace:
        parts = [("trace", os.path.basename(trace))]
    else:
        parts = [("workload", str(row.get("param.workload") or row.get("run.workload_spec") or "default workload"))]
    params = [k for k in row if k.startswith("param.")]
    if params:
        keys = [k for k in sorted(params) if k not in _NOT_SOURCE]
        prefix = "param."
    else:
        keys = [k for k in sorted(row) if k.startswith("config.") and not k.startswith("config.ftl.name")]
        prefix = "config."
    for k in keys:
        v = row[k]
        if v is not None and not _is_nan(v):
            name = k[len(prefix):]
            parts.append((name[len("overrides."):] if name.startswith("overrides.") else name, str(v)))
    return parts


def _describe(parts: list[tuple[str, str]], common: set[tuple[str, str]]) -> str:
    """The parts not shared by every run, as text."""
    return ", ".join(f"{k}={v}" if k not in ("trace", "workload") else v for k, v in parts if (k, v) not in common)


def _common(parts: list[list[tuple[str, str]]]) -> set[tuple[str, str]]:
    return set(parts[0]).intersection(*map(set, parts[1:])) if parts else set()


def _is_nan(v: Any) -> bool:
    return isinstance(v, float) and math.isnan(v)


def _ftl_of(row: Row) -> str:
    return str(row.get("run.ftl") or row.get("param.ftl") or row.get("config.ftl.name") or "?")


def _entries(data: Any) -> list[Entry]:
    """Whatever :func:`report` was given, as entries."""
    if isinstance(data, pd.DataFrame):
        if "status" not in data.columns and not any(str(c).startswith("report.") for c in data.columns):
            raise ValueError("the DataFrame has no run columns (report.*, status): give the frame of "
                             "ftlsim.sweep, rows of Result.to_pandas(), or a sweep's Parquet file; columns found: "
                             f"{', '.join(map(str, data.columns[:8]))}{' ...' if len(data.columns) > 8 else ''}")
        out: list[Entry] = []
        # The columns of a sweep's frame are strings.
        for rec in cast("list[Row]", data.to_dict(orient="records")):
            rec = {k: (None if _is_nan(v) else v) for k, v in rec.items()}
            detail = json.loads(rec["detail"]) if isinstance(rec.get("detail"), str) else None
            out.append(Entry("", rec, detail))
        return out
    if isinstance(data, Result):
        return [Entry("", data.row(), data.detail())]
    if isinstance(data, (str, os.PathLike)):
        p = Path(data)
        if p.is_dir():
            return _entries(_load_dir(p))
        if p.suffix == ".parquet":
            try:
                frame = pd.read_parquet(p)
            except (OSError, ValueError) as e:
                raise ValueError(f"{p}: cannot read it as a Parquet file ({e})") from None
            return _entries(frame)
        if p.name == "results.json":
            return _entries(_load_dir(p.parent))
        raise ValueError(f"{p}: not a run directory (results.json), results.json or .parquet file")
    if isinstance(data, Iterable):
        return [e for d in data for e in _entries(d)]
    raise TypeError(f"cannot report on {type(data).__name__}: give a DataFrame, Result, path or a list")


def _label(entries: list[Entry], label: RowKey) -> None:
    """Labels: ``label`` (a column or a function of the row) if given, else the FTL and what
    differs between the runs' sources; made unique."""
    if label is not None:
        seen_given: dict[str, int] = {}
        for e in entries:
            base = str(label(e.row) if callable(label) else e.row.get(label))
            n = seen_given.get(base, 0)
            seen_given[base] = n + 1
            e.label = base if n == 0 else f"{base} #{n + 1}"
        return
    parts = [_source_parts(e.row) for e in entries]
    common = _common(parts)
    seen: dict[str, int] = {}
    for e, ps in zip(entries, parts):
        differ = _describe(ps, common)
        base = " | ".join([_ftl_of(e.row), *([differ] if differ else [])])
        n = seen.get(base, 0)
        seen[base] = n + 1
        e.label = base if n == 0 else f"{base} #{n + 1}"


def _svg_and_files(fig: Figure, name: str, files: Path) -> str:
    """The figure as inline SVG text; PNG and SVG files written beside the report."""
    buf = io.StringIO()
    # No date or creator: the same data gives the same files.
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None, "Creator": None})
    svg = re.sub(r"<metadata>.*?</metadata>", "", buf.getvalue(), flags=re.S)
    (files / f"{name}.svg").write_text(svg)
    fig.savefig(files / f"{name}.png", format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
    import matplotlib.pyplot as plt
    plt.close(fig)
    # Inline: drop the XML prolog and DOCTYPE, keep the <svg> element.
    return svg[svg.index("<svg"):]


def figure_page(title: str, figures: Iterable[tuple[str, str, "Figure"]], out: Union[str, "os.PathLike[str]"],
                note: str = "") -> Path:
    """A self-contained HTML page of matplotlib figures, for an experiment's own plots: each
    ``(name, caption, figure)`` inlined as SVG and also written as PNG and SVG into
    ``<out stem>_files/`` (reproducible bytes: no dates); ``note`` a closing paragraph. Returns
    the page's path."""
    out = Path(out)
    files = out.with_name(out.stem + "_files")
    files.mkdir(parents=True, exist_ok=True)
    parts = "".join(f"<figure>{_svg_and_files(fig, name, files)}<figcaption>{html.escape(caption)}</figcaption>"
                    "</figure>" for name, caption, fig in figures)
    _outputs.write(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                   f"<title>{html.escape(title)}</title></head><body><h1>{html.escape(title)}</h1>{parts}"
                   + (f"<p>{html.escape(note)}</p>" if note else "") + "</body></html>\n")
    return out


def _plots(entries: list[Entry], norm: Optional[pd.DataFrame], max_runs: int) -> list[tuple[str, str, Figure]]:
    """(name, caption, figure) of every plot the data supports."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "ftlsim", "font.size": 9, "axes.grid": True,
                         "grid.alpha": 0.3})
    runs = [e for e in entries if e.ok and e.detail][:max_runs]
    plots: list[tuple[str, str, Figure]] = []
    if runs:
        fig, ax = plt.subplots(figsize=(7, 4))
        for e in runs:
            assert e.detail is not None  # runs have their detail
            lat = latency_frame(e.detail["histograms"])
            lat = lat[lat.op == "all"]
            ax.step(lat.upper_us, lat.cdf, where="post", label=_mpl(e.label))
        ax.set_xscale("log")
        ax.set_xlabel("response time (us)")
        ax.set_ylabel("share of requests (CDF)")
        ax.legend(fontsize=7)
        plots.append(("latency_cdf", "Response-time CDF, all requests (20 log buckets per decade).", fig))

        if any(e.detail is not None and len(e.detail["timeseries"].get("t_end_ns", ())) for e in runs):
            plots.append(("iops_latency_time", "IOPS and mean response time per interval.",
                          _over_time(plt, runs, ("iops", "IOPS"), ("mean_latency_us", "mean response (us)"))))
            plots.append(("free_blocks_gc_time", "Free blocks at each interval's end and victims collected in it.",
                          _over_time(plt, runs, ("free_blocks", "free blocks"),
                                     ("gc_collections", "GC collections / interval"))))

        fig, ax = plt.subplots(figsize=(7, 4))
        for e in runs:
            assert e.detail is not None
            p = np.asarray(e.detail["programs_per_plane"])
            ax.plot(np.arange(len(p)), p, marker=".", label=_mpl(e.label))
        ax.set_xlabel("plane")
        ax.set_ylabel("pages programmed in the run")
        ax.legend(fontsize=7)
        plots.append(("writes_per_plane", "Pages programmed per plane (host, GC and mapping).", fig))

        fig, ax = plt.subplots(figsize=(7, 4))
        for e in runs:
            assert e.detail is not None
            h = np.asarray(e.detail["histograms"]["erase_counts"]).reshape(-1, 2)
            ax.step(h[:, 0], h[:, 1], where="mid", label=_mpl(e.label))
        ax.set_xlabel("erase count")
        ax.set_ylabel("blocks")
        ax.legend(fontsize=7)
        plots.append(("erase_histogram", "Blocks by erase count over the drive's life.", fig))

    cached = [e for e in entries if e.ok and e.row.get("report.ftl_metrics.cache_accesses")]
    if cached:
        cached = cached[:max_runs]
        fig, ax = plt.subplots(figsize=(7, 0.5 + 0.45 * len(cached)))
        left = np.zeros(len(cached))
        total = np.array([float(e.row["report.ftl_metrics.cache_accesses"]) for e in cached])
        for name, count in CACHE_CLASSES:
            vals = np.array([count(_ftl_metric(e)) for e in cached])
            if vals.sum() == 0:
                continue
            share = vals / total
            ax.barh([_mpl(e.label) for e in cached], share, left=left, label=name)
            left += share
        ax.set_xlabel("share of mapping-cache accesses")
        ax.invert_yaxis()
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.08 - 0.5 / len(cached)), ncol=3)
        plots.append(("cache_hit_classes", "Mapping-cache accesses by outcome (demand FTLs).", fig))

    if norm is not None and len(norm):
        metrics = [m for m in norm.columns if m not in ("source", "ftl")]
        fig, axes = plt.subplots(1, len(metrics), figsize=(3.2 * len(metrics), 3.6), squeeze=False)
        gm = norm[norm.source == "geometric mean"]
        for ax, m in zip(axes[0], metrics):
            vals = gm[m].to_numpy(dtype=float)
            shown = np.where(np.isfinite(vals), vals, 0.0)
            bars = ax.bar(gm.ftl, shown, color="tab:blue")
            ax.bar_label(bars, labels=[f"{v:.2f}" if np.isfinite(v) else "n/a" for v in vals], fontsize=7)
            ax.axhline(1.0, color="black", lw=0.8)
            if np.nanmax(np.where(np.isfinite(vals), vals, np.nan), initial=1.0) > 20:
                ax.set_yscale("log")
            ax.set_title(m, fontsize=9)
            ax.tick_params(axis="x", rotation=45)
        axes[0][0].set_ylabel(f"normalised to {norm.attrs['baseline']}")
        plots.append(("normalised", f"Geometric mean over {norm.attrs['sources']} source(s) of each metric "
                      f"normalised to {norm.attrs['baseline']} (NT, as the thesis averages it); n/a where the "
                      "baseline's value is 0.", fig))
    return plots


def _ftl_metric(e: Entry) -> Callable[[str], float]:
    """The run's metrics of report.ftl_metrics by name (0 where missing)."""
    return lambda k: float(e.row.get(f"report.ftl_metrics.{k}") or 0)


def _mpl(label: str) -> str:
    """A label as matplotlib shows it literally: `$` is not maths, a leading `_` not hidden."""
    label = label.replace("$", r"\$")
    return " " + label if label.startswith("_") else label


def _over_time(plt: ModuleType, runs: list[Entry], top: tuple[str, str], bottom: tuple[str, str]) -> Figure:
    """Two time-series columns of every run, one above the other, over simulated time."""
    fig: Figure
    fig, axes = plt.subplots(2, 1, figsize=(7, 5), sharex=True)
    for e in runs:
        assert e.detail is not None
        ts = pd.DataFrame(e.detail["timeseries"])
        if len(ts):
            for ax, (col, _) in zip(axes, (top, bottom)):
                ax.plot(ts.t_end_ns / 1e9, ts[col], label=_mpl(e.label))
    for ax, (_, name) in zip(axes, (top, bottom)):
        ax.set_ylabel(name)
    axes[1].set_xlabel("simulated time (s)")
    axes[0].legend(fontsize=7)
    return fig


def normalised(entries_or_data: Any, baseline: Optional[str] = None,
               source: RowKey = None) -> Optional[pd.DataFrame]:
    """Each metric of :data:`NORMALISED` divided by the baseline FTL's on the same source,
    one row per (source, FTL), plus ``geometric mean`` rows over the sources where every FTL
    ran. A run's source is ``source`` (a column or a function of its row) if given, else its
    trace or workload and parameters, those every run shares left out. None when there is
    one FTL or no baseline run."""
    entries: list[Entry] = entries_or_data if isinstance(entries_or_data, list) and all(
        isinstance(e, Entry) for e in entries_or_data) else _entries(entries_or_data)
    ok = [e for e in entries if e.ok]
    ftls = sorted({_ftl_of(e.row) for e in ok})
    if len(ftls) < 2:
        return None
    base = baseline or ("page" if "page" in ftls else ftls[0])
    if base not in ftls:
        raise ValueError(f"baseline `{base}` ran nowhere (FTLs: {', '.join(ftls)})")
    by_source: dict[str, dict[str, Row]] = {}
    parts = [_source_parts(e.row) for e in ok]
    common = _common(parts)
    for e, ps in zip(ok, parts):
        if source is None:
            src = _describe(ps, common) or "all runs"
        else:
            src = str(source(e.row) if callable(source) else e.row.get(source))
        runs_of = by_source.setdefault(src, {})
        ftl = _ftl_of(e.row)
        if ftl in runs_of:
            raise ValueError(f"two runs of {ftl} on the same source `{src}`: tell them apart with "
                             "source= (a column or a function of the row), or report them separately")
        runs_of[ftl] = e.row
    rows: list[dict[str, Union[str, float]]] = []
    for src, runs in by_source.items():
        if base not in runs:
            continue
        for f, r in runs.items():
            rec: dict[str, Union[str, float]] = {"source": src, "ftl": f}
            for col, name, _ in NORMALISED:
                b = r.get(col)
                bb = runs[base].get(col)
                rec[name] = (float(b) / float(bb)) if b is not None and bb else float("nan")
            rows.append(rec)
    df = pd.DataFrame(rows)
    if df.empty:
        return None
    complete = [s for s, runs in by_source.items() if set(runs) >= set(ftls)]
    gm_rows: list[dict[str, Union[str, float]]] = [{"source": "geometric mean", "ftl": f} for f in ftls]
    for _, name, _ in NORMALISED:
        # One set of sources for every FTL: those where each FTL's ratio is defined (the
        # baseline's value is not 0). A ratio of 0 makes the mean 0, as it should.
        table = df[df.source.isin(complete)].pivot(index="source", columns="ftl", values=name).astype(float)
        table = table.loc[np.isfinite(table.to_numpy()).all(axis=1)]
        for rec in gm_rows:
            v = table[rec["ftl"]].to_numpy(dtype=float) if len(table) else np.array([])
            if not len(v):
                rec[name] = float("nan")
            elif (v == 0).any():
                rec[name] = 0.0
            else:
                rec[name] = float(np.exp(np.log(v).mean()))
    df = pd.concat([df, pd.DataFrame(gm_rows)], ignore_index=True)
    df.attrs["baseline"] = base
    df.attrs["sources"] = len(complete)
    return df


#: Columns of the summary table: (column, heading, format).
TABLE = (
    ("report.host.requests", "requests", "{:,.0f}"),
    ("report.performance.iops", "IOPS", "{:,.0f}"),
    ("report.response_time.all.mean_ns", "mean (us)", "ns->us"),
    ("report.response_time.all.p99_ns", "p99 (us)", "ns->us"),
    ("report.response_time.all.p999_ns", "p99.9 (us)", "ns->us"),
    ("report.write_amplification.total", "WAF", "{:.3f}"),
    ("report.gc.collections", "GC", "{:,.0f}"),
    ("report.flash.erases.total", "erases", "{:,.0f}"),
    ("report.planes.sdwpp", "SDWPP", "{:.1f}"),
    ("report.mapping_sram_bytes", "SRAM (B)", "{:,.0f}"),
)


def _cell(v: Any, fmt: str) -> str:
    if v is None or _is_nan(v):
        return ""
    if fmt == "ns->us":
        return f"{float(v) / 1e3:,.1f}"
    return fmt.format(v)


def _table(entries: list[Entry]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for _, h, _ in TABLE)
    body = []
    for e in entries:
        if e.ok:
            cells = "".join(f"<td>{_cell(e.row.get(c), f)}</td>" for c, _, f in TABLE)
        else:
            cells = f'<td colspan="{len(TABLE)}" class="error">{html.escape(str(e.row.get("error")))}</td>'
        body.append(f"<tr><td>{html.escape(e.label)}</td>{cells}</tr>")
    return f'<table class="summary"><thead><tr><th>run</th>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'


def _norm_table(norm: pd.DataFrame) -> str:
    cols = [c for c in norm.columns if c not in ("source", "ftl")]
    head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
    body = "".join(
        "<tr>" + f"<td>{html.escape(str(r['source']))}</td><td>{html.escape(str(r['ftl']))}</td>"
        + "".join(f"<td>{'' if not np.isfinite(r[c]) else f'{r[c]:.3f}'}</td>" for c in cols) + "</tr>"
        for _, r in norm.iterrows())
    return (f'<table class="normalised"><thead><tr><th>source</th><th>ftl</th>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table>")


_CSS = """
body{font-family:system-ui,sans-serif;margin:2em;max-width:1100px;color:#222}
table{border-collapse:collapse;font-size:13px;margin:1em 0}
th,td{border:1px solid #ccc;padding:3px 8px;text-align:right}
td:first-child,th:first-child{text-align:left}
td.error{color:#a00;text-align:left}
figure.plot{margin:1.5em 0}
figure.plot svg{max-width:100%;height:auto}
figcaption{font-size:13px;color:#555}
"""


def report(
    data: Any,
    out: Union[str, "os.PathLike[str]"] = "report.html",
    *,
    baseline: Optional[str] = None,
    title: str = "ftlsim report",
    label: RowKey = None,
    source: RowKey = None,
    max_runs: int = MAX_RUNS_PER_PLOT,
) -> Path:
    """Write a self-contained HTML report of ``data`` to ``out`` and each plot as PNG and SVG
    into ``<out stem>_files/``; returns the HTML file's path.

    ``data``: a sweep DataFrame (or its Parquet file), a :class:`ftlsim.Result`, a run
    directory written by ``ftlsim run``, or a list of these. Comparisons are normalised to
    ``baseline`` (default: ``page`` if it ran, else the first FTL by name), with the
    geometric mean over the sources where every FTL ran. ``label`` names each run: a column
    (``"param.tag"``) or a function of its row; default: the FTL and what differs between
    the runs. ``source`` says what a run ran on, for the normalisation (see
    :func:`normalised`). The per-run plots draw the first ``max_runs`` runs.
    """
    entries = _entries(data)
    if not entries:
        raise ValueError("nothing to report: no runs given")
    _label(entries, label)
    out = Path(out)
    _outputs.check([("out", out)], _input_files(data))
    files = out.with_name(out.stem + "_files")
    files.mkdir(parents=True, exist_ok=True)
    for old in files.iterdir():
        # An earlier report's plot that this one does not draw must not stay beside it.
        if old.suffix in (".png", ".svg") and old.stem in PLOTS:
            old.unlink()
    norm = normalised(entries, baseline, source)
    sections = []
    for name, caption, fig in _plots(entries, norm, max_runs):
        svg = _svg_and_files(fig, name, files)
        sections.append(f'<figure class="plot" id="{name}" data-plot="{name}">{svg}'
                        f"<figcaption>{html.escape(caption)}</figcaption></figure>")
    failed = sum(not e.ok for e in entries)
    parts = [
        "<!DOCTYPE html>",
        f'<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>',
        f"<style>{_CSS}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f"<p>{len(entries)} run(s){f', {failed} failed' if failed else ''}; "
        f"ftlsim {html.escape(str(entries[0].row.get('ftlsim_version', '')) or _version())}. "
        "Metrics and units: docs/metrics.md.</p>",
        "<h2>Summary</h2>",
        _table(entries),
    ]
    if norm is not None:
        parts += [f"<h2>Normalised to {html.escape(norm.attrs['baseline'])}</h2>", _norm_table(norm)]
    parts += ["<h2>Plots</h2>", *sections, "</body></html>"]
    _outputs.write(out, "\n".join(parts))
    return out


def _input_files(data: Any) -> list[tuple[str, str]]:
    """The files a report reads from ``data`` (run directories' files, Parquet files), by role."""
    items = data if isinstance(data, (list, tuple)) else [data]
    files = []
    for d in items:
        if isinstance(d, (str, os.PathLike)):
            p = Path(d)
            names = [p / n for n in ("results.json", "timeseries.csv", "config.toml")] if p.is_dir() else [p]
            files += [("data", os.fspath(n)) for n in names if n.exists()]
    return files


def _version() -> str:
    from . import _native
    return _native.__version__

