"""One simulation run: :func:`run` and its :class:`Result`."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, NoReturn, Optional, Sequence, TypedDict, Union

import numpy as np
import numpy.typing as npt
import pandas as pd

from . import _args, _native, _outputs, _tenants
from ._config import Config, overrides_list

if TYPE_CHECKING:
    from tqdm.auto import tqdm

PathLike = Union[str, "os.PathLike[str]"]
#: A progress callback: ``f(stage, done, total)``.
ProgressCallback = Callable[[str, int, Optional[int]], None]

#: Lists and bulky values of results.json left out of the flat row (they have accessors).
_NOT_IN_ROW = ("report.histograms", "report.planes.programs_per_plane", "report.wear.erases_per_plane",
               "report.precondition.window_waf")


class RunDetail(TypedDict, total=False):
    """The per-run data the report's plots need (:meth:`Result.detail`), JSON-serialisable:
    the first four keys for a drive run, the last three for a channel-system run."""

    #: The time series by column (as timeseries.csv).
    timeseries: dict[str, list[Any]]
    #: ``report.histograms`` of results.json.
    histograms: dict[str, Any]
    #: ``report.planes.programs_per_plane``.
    programs_per_plane: list[int]
    #: ``report.wear.erases_per_plane``.
    erases_per_plane: list[int]
    #: ``report.channel_time``'s per-unit lists.
    channel_time: dict[str, list[int]]
    #: ``report.dirty_pages``.
    dirty_pages: dict[str, Any]
    #: ``report.gc.per_unit_mandatory_steps``.
    per_unit_mandatory_steps: list[int]


class Result:
    """The outcome of :func:`run`.

    Attributes:
        summary: results.json as a dict (``run``, ``report``, ``wall_time``), the same keys
            the CLI writes; docs/metrics.md defines each metric and its unit.
        config: the effective drive config (preset or file, overrides and FTL applied).
    """

    def __init__(self, summary: dict[str, Any], timeseries: dict[str, list[Any]], config: dict[str, Any],
                 files: Sequence[tuple[str, str]] = ()) -> None:
        self.summary = summary
        self.config = config
        self._timeseries = timeseries
        # The files the run read or saved, by role: :meth:`save` never overwrites them.
        self._files = list(files)

    def __repr__(self) -> str:
        r = self.summary["report"]
        if self.is_channel_system:
            d = r["drive"]
            return (f"<ftlsim.Result drive={d['name']} ftl={d['ftl']} mode={d['mode']} channels={d['channels']} "
                    f"requests={r['host']['requests']} iops={r['performance']['iops']:.1f} "
                    f"gc_share={r['channel_time']['gc_share']:.3f}>")
        return (f"<ftlsim.Result drive={r['drive']['name']} ftl={r['drive']['ftl']} "
                f"requests={r['host']['requests']} iops={r['performance']['iops']:.0f} "
                f"waf={r['write_amplification']['total']:.3f}>")

    @property
    def is_channel_system(self) -> bool:
        """A ``[multichannel]`` run (seed 004): ``report`` has the channel system's shape
        (docs/metrics.md, "Multichannel runs")."""
        return "multichannel" in self.summary["run"]

    @property
    def channel_time(self) -> pd.DataFrame:
        """A channel-system run's time per unit (seed 004 Fig. 9): columns ``unit``,
        ``host_write_s``, ``mandatory_gc_s``, ``early_gc_s``, ``idle_s``."""
        t = self.report["channel_time"]
        return pd.DataFrame({
            "unit": np.arange(len(t["per_unit_idle_ns"])),
            "host_write_s": np.asarray(t["per_unit_host_write_ns"]) / 1e9,
            "mandatory_gc_s": np.asarray(t["per_unit_mandatory_gc_ns"]) / 1e9,
            "early_gc_s": np.asarray(t["per_unit_early_gc_ns"]) / 1e9,
            "idle_s": np.asarray(t["per_unit_idle_ns"]) / 1e9,
        })

    @property
    def dirty_pages(self) -> pd.DataFrame:
        """A channel-system run's dirty pages per unit over time (seed 004 Fig. 3): column
        ``t_s`` and one column ``unit_N`` per unit."""
        d = self.report["dirty_pages"]
        df = pd.DataFrame({"t_s": np.asarray(d["time_ns"], dtype=np.float64) / 1e9})
        for i, series in enumerate(d["per_unit"]):
            df[f"unit_{i}"] = series
        return df

    @property
    def report(self) -> dict[str, Any]:
        """The ``report`` part of :attr:`summary`."""
        report: dict[str, Any] = self.summary["report"]
        return report

    @property
    def power_cut(self) -> Optional[dict[str, Any]]:
        """What the power cut cost (``report.power_cut``; None for a run without one), or for
        ``power_cut="random:N"`` the overview over the cuts (``power_cuts_overview``)."""
        cut: Optional[dict[str, Any]] = self.report.get("power_cut") or self.summary.get("power_cuts_overview")
        return cut

    @property
    def tenants(self) -> pd.DataFrame:
        """Each tenant's part of a run with tenants (``report.tenants``): one row per tenant,
        columns ``name``, ``class``, ``namespace.first_sector``, ``host.requests``,
        ``performance.iops``, ``response_time.all.p99_ns``, ``host_write_share`` ... (nested
        keys joined by dots, docs/metrics.md). ValueError for a run without tenants."""
        return _tenants.tenants_frame(self.report)

    @property
    def fdp(self) -> pd.DataFrame:
        """The Flexible Data Placement statistics per handle (``report.ftl_metrics.fdp``,
        docs/fdp.md): ``handle``, ``host_pages_written``, ``gc_pages_written``,
        ``write_amplification`` ... ValueError for a drive without ``[fdp]``."""
        return _tenants.fdp_frame(self.report)

    @property
    def post_recovery(self) -> Optional[dict[str, Any]]:
        """The report of the run after recovery (None without a cut or with no request left)."""
        post: Optional[dict[str, Any]] = self.summary.get("post_recovery")
        return post

    def row(self) -> dict[str, Any]:
        """One flat dict: ``config.*`` (every config field), ``run.*``, ``report.*`` and
        ``wall_time.*``, lists and histograms left out; each tenant's report as
        ``report.tenants.<name>.*`` and each FDP handle's as ``report.ftl_metrics.fdp.handles.<h>.*``
        (so a sweep's rows have them)."""
        nested = pd.json_normalize({"config": self.config, **self.summary}, sep=".").iloc[0]
        flat = {str(k): v for k, v in nested.items()}
        row = {k: v for k, v in flat.items()
               if not any(k == p or k.startswith(p + ".") for p in _NOT_IN_ROW) and not isinstance(v, list)}
        row.update(_tenants.row_columns(self.report))
        return row

    def to_pandas(self) -> pd.DataFrame:
        """:meth:`row` as a one-row DataFrame."""
        return pd.DataFrame([self.row()])

    @property
    def timeseries(self) -> pd.DataFrame:
        """The time series (one row per interval; columns as timeseries.csv, plus ``t_end_s``)."""
        df = pd.DataFrame(self._timeseries)
        for c in df.columns:
            if df[c].dtype == object:  # a column only some FTLs fill (None elsewhere) reads as NaN, as in the CSV
                df[c] = pd.to_numeric(df[c])
        df.insert(1, "t_end_s", df["t_end_ns"] / 1e9)
        return df

    @property
    def latency_histogram(self) -> pd.DataFrame:
        """Response-time distribution: columns ``op`` (all, read, write), ``upper_us`` (bucket
        upper bound; 20 log-spaced buckets per decade), ``count`` and ``cdf`` (share of that
        op's requests at or below ``upper_us``)."""
        return latency_frame(self.report["histograms"])

    @property
    def erase_counts(self) -> pd.DataFrame:
        """Blocks by erase count over the drive's life: columns ``erase_count``, ``blocks``."""
        return pd.DataFrame(self.report["histograms"]["erase_counts"], columns=["erase_count", "blocks"])

    @property
    def per_plane(self) -> dict[str, npt.NDArray[np.int64]]:
        """Per-plane arrays: ``programs`` (pages programmed in the run) and ``erases``
        (erases of the plane's blocks over the drive's life)."""
        return {
            "programs": np.asarray(self.report["planes"]["programs_per_plane"], dtype=np.int64),
            "erases": np.asarray(self.report["wear"]["erases_per_plane"], dtype=np.int64),
        }

    def detail(self) -> RunDetail:
        """The per-run data the report's plots need, JSON-serialisable (a sweep stores it)."""
        if self.is_channel_system:
            r = self.report
            return {
                "channel_time": {k: v for k, v in r["channel_time"].items() if k.startswith("per_unit")},
                "dirty_pages": r["dirty_pages"],
                "per_unit_mandatory_steps": r["gc"]["per_unit_mandatory_steps"],
            }
        return {
            "timeseries": self._timeseries,
            "histograms": self.report["histograms"],
            "programs_per_plane": self.report["planes"]["programs_per_plane"],
            "erases_per_plane": self.report["wear"]["erases_per_plane"],
        }

    def save(self, out: PathLike) -> Path:
        """Write results.json, timeseries.csv and config.json into directory ``out``, each
        whole or not at all; ``InputError`` if one of them is a file the run read or saved
        (its trace, config, snapshot) or is not a regular file."""
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        files = {
            "results.json": json.dumps(self.summary, indent=2, sort_keys=True),
            "timeseries.csv": self.timeseries.drop(columns=["t_end_s"]).to_csv(index=False),
            "config.json": json.dumps(self.config, indent=2, sort_keys=True),
        }
        _outputs.check([("out", out / name) for name in files], self._files)
        for name, text in files.items():
            _outputs.write(out / name, text)
        return out


def latency_frame(histograms: Mapping[str, Any]) -> pd.DataFrame:
    """The latency histogram of ``report.histograms`` as a long DataFrame with a CDF."""
    frames = []
    for op in ("all", "read", "write"):
        b = np.asarray(histograms[f"response_time_{op}"], dtype=np.float64).reshape(-1, 2)
        total = b[:, 1].sum()
        frames.append(pd.DataFrame({
            "op": op,
            "upper_us": b[:, 0] / 1e3,
            "count": b[:, 1].astype(np.int64),
            "cdf": np.cumsum(b[:, 1]) / total if total else np.zeros(len(b)),
        }))
    return pd.concat(frames, ignore_index=True)


def run(
    preset: Optional[str] = None,
    *,
    config: Union[Config, PathLike, None] = None,
    ftl: Optional[str] = None,
    workload: Optional[str] = None,
    trace: Optional[PathLike] = None,
    trace_options: Optional[Mapping[str, Any]] = None,
    fill: Optional[float] = None,
    fill_offset: float = 0.0,
    steady_state: bool = False,
    overwrite_span: float = 0.0,
    trim_to: Optional[float] = None,
    seed: int = 1,
    overrides: Optional[Mapping[str, Any]] = None,
    load_state: Optional[PathLike] = None,
    save_state: Optional[PathLike] = None,
    interval: Union[str, int] = "100ms",
    verify: bool = False,
    max_memory: Union[str, int, None] = None,
    power_cut: Union[str, int, None] = None,
    clean_shutdown: bool = True,
    tenants: Optional[Sequence[_tenants.TenantLike]] = None,
    arbitration: Optional[str] = None,
    progress: Union[bool, ProgressCallback] = False,
) -> Result:
    """Simulate a drive under a workload or trace, as ``ftlsim run`` does, in this process.

    Args:
        preset: drive preset (:func:`ftlsim.presets`); default ``"default"``.
        config: a :class:`Config` or a TOML file path, instead of a preset.
        ftl: FTL overriding the config's ``ftl.name`` (:func:`ftlsim.ftls`).
        workload: synthetic workload spec, e.g. ``"pattern=zipf:0.9,read=0.3,requests=1e5"``
            (keys in docs/workloads.md); default: the built-in default workload.
        trace: a trace file to replay instead (plain, .gz or .zst).
        trace_options: the CLI's trace flags by name: ``format``, ``device``, ``overflow``
            (error | wrap | compact), ``speed``, ``qd``, ``reorder_window``, ``skip``,
            ``max_requests``, ``time_window`` ("10s..20s"), ``repeat``, ``skip_bad_lines``,
            ``blkparse_queue``.
        fill, fill_offset, steady_state, overwrite_span: preconditioning, as ``--fill``,
            ``--fill-offset``, ``--steady-state``, ``--overwrite-span``; ``fill=None`` takes
            the config's ``precondition.fill`` (1 unless the preset says otherwise).
        trim_to: after the fill and overwrites, trim written pages at random until this
            share of the logical space is valid (``--trim-to``); None trims nothing.
        seed: seed of the workload and preconditioning.
        overrides: config keys to set, ``{"ftl.gc_victim": "fifo"}`` (the CLI's ``--set``),
            validated as the TOML file is.
        load_state, save_state: drive snapshots (``--load-state``, ``--save-state``).
        interval: time-series interval in simulated time ("10ms", or ns as an int; 0 = none).
        verify: check every read against a data oracle.
        max_memory: refuse a drive whose memory estimate exceeds this ("2g", or bytes).
        power_cut: cut the power and recover, as ``--power-cut``: a request count (5000),
            a simulated time ("250ms") or "random:N" (docs/power-loss.md); the results
            then hold ``report.power_cut`` and ``post_recovery`` (or ``power_cuts``).
        clean_shutdown: with ``power_cut``, shut the drive down cleanly after
            preconditioning (the FTL's mapping cache written to flash); False cuts the drive
            as preconditioning left it.
        tenants: several sources at once, each with its own submission queue and namespace
            (docs/tenants.md): ``--tenant`` texts or dicts, ``{"name": "db", "ns": (0, 0.5),
            "class": "high", "workload": "read=1,qd=4"}`` or ``{"name": "v0", "trace": path,
            "device": 0, "qd": 8}``; instead of ``workload`` or ``trace``.
            :attr:`Result.tenants` has each one's part.
        arbitration: how the controller picks among the tenants' queues, as
            ``--arbitration``: ``"rr"``, ``"rr:burst=4"`` or
            ``"wrr:high=8,medium=4,low=1,burst=2"``; with tenants only (default round robin).
        progress: True for a tqdm progress bar, or a callable ``f(stage, done, total)``
            called at each progress point (stage "precondition" or "replay").

    The GIL is released while the simulation runs; Ctrl-C stops it within a fraction of a
    second and raises KeyboardInterrupt. Errors in the config, workload or trace raise
    :class:`ftlsim.ConfigError`, :class:`ftlsim.WorkloadError` or :class:`ftlsim.TraceError`
    naming the key, file, line and field; an argument of the wrong type raises ``TypeError``
    and one out of range ``ValueError``, naming the argument. A bug in the simulator raises
    :class:`ftlsim.InternalError` (the interpreter lives on).
    """
    kwargs: dict[str, Any] = {}
    if isinstance(config, Config):
        if preset is not None:
            raise ValueError("give preset or config, not both")
        kwargs["config_toml"] = config.to_toml()
    elif config is not None:
        if preset is not None:
            raise ValueError("give preset or config, not both")
        kwargs["config_path"] = _args.path("config", config)
    else:
        kwargs["preset"] = _args.text("preset", preset)
    if workload is not None and trace is not None:
        raise ValueError("give workload or trace, not both")
    if not _args.flag("clean_shutdown", clean_shutdown) and power_cut is None:
        raise ValueError("clean_shutdown=False says how a power cut finds the drive: it needs power_cut")
    if not (isinstance(progress, bool) or callable(progress)):
        raise TypeError(f"progress must be True, False or a callable f(stage, done, total), not {progress!r}")
    options = _args.mapping("trace_options", trace_options, '{"speed": 2, "overflow": "wrap"}')
    native_args = dict(
        **kwargs,
        ftl=_args.text("ftl", ftl),
        overrides=overrides_list(_args.mapping("overrides", overrides, '{"ftl.gc_victim": "fifo"}')),
        workload=_args.text("workload", workload) or "",
        trace=_args.path("trace", trace),
        trace_options=dict(options) if options else None,
        seed=_args.seed(seed),
        fill=None if fill is None else _args.number("fill", fill),
        fill_offset=_args.number("fill_offset", fill_offset),
        steady_state=_args.flag("steady_state", steady_state),
        overwrite_span=_args.number("overwrite_span", overwrite_span),
        trim_to=None if trim_to is None else _args.number("trim_to", trim_to),
        load_state=_args.path("load_state", load_state),
        save_state=_args.path("save_state", save_state),
        interval=_args.count_or_text("interval", interval, '"10ms"'),
        verify=_args.flag("verify", verify),
        max_memory=_args.count_or_text("max_memory", max_memory, '"2g"'),
        power_cut=_args.count_or_text("power_cut", power_cut, '"250ms"'),
        clean_shutdown=bool(clean_shutdown),
        tenants=_tenants.tenants_list(tenants),
        arbitration=_args.text("arbitration", arbitration),
    )
    bar: Optional[_Bar] = None
    callback: Optional[ProgressCallback] = None
    if progress is True:
        bar = _Bar()
        callback = bar
    elif callable(progress):
        callback = progress
    try:
        summary, ts, cfg, files = _native.run(**native_args, progress=callback)
    finally:
        if bar is not None:
            bar.close()
    return Result(summary, ts, cfg, files)


class _Bar:
    """tqdm bars for the two stages of a run."""

    def __init__(self) -> None:
        from tqdm.auto import tqdm
        self._tqdm = tqdm
        self._bar: Optional[tqdm[NoReturn]] = None
        self._stage: Optional[str] = None

    def __call__(self, stage: str, done: int, total: Optional[int]) -> None:
        if stage != self._stage:
            self.close()
            unit = "page" if stage == "precondition" else "req"
            self._bar = self._tqdm(total=total, desc=stage, unit=unit, unit_scale=True, leave=False)
            self._stage = stage
        bar = self._bar
        assert bar is not None  # made above for this stage
        if total is not None and bar.total != total:
            bar.total = total
        bar.update(done - bar.n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
