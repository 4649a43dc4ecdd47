"""ftlsim: a fast, deterministic NAND-flash SSD and FTL simulator, from Python.

The simulation runs in the Rust core (no subprocess): :func:`run` one drive and workload,
:func:`sweep` a grid of them on a local or remote Dask cluster, :func:`report` results as a
self-contained HTML page with plots. docs/python.md walks through an example.
"""

import os
from typing import Any, Optional, Union

from . import _args, _native
from ._config import Config
from ._native import (
    ConfigError,
    FtlsimError,
    InputError,
    InternalError,
    SimulationError,
    SnapshotError,
    TraceError,
    WorkloadError,
)
from ._report import figure_page, normalised, report
from ._run import Result, run
from ._sweep import build_id, expand, load_sweep_file, run_id, sweep
from ._tenants import fairness

__version__: str = _native.__version__

__all__ = [
    "Config",
    "ConfigError",
    "FtlsimError",
    "InputError",
    "InternalError",
    "Result",
    "SimulationError",
    "SnapshotError",
    "TraceError",
    "WorkloadError",
    "build_id",
    "expand",
    "fairness",
    "figure_page",
    "ftls",
    "load_sweep_file",
    "normalised",
    "presets",
    "report",
    "run",
    "run_id",
    "sweep",
    "fit_check",
    "trace_fit",
    "trace_locality",
    "trace_stats",
    "workload_locality",
]


def presets() -> list[dict[str, Any]]:
    """The built-in drive presets: name, geometry, raw and logical bytes, default FTL, source."""
    return _native.presets()


def ftls() -> list[dict[str, Any]]:
    """The registered FTLs, as the registry declares them: ``name``, ``description``,
    ``source`` (the paper), and capabilities: ``recovers`` (power-loss recovery),
    ``channel_unit`` (can be a unit of a ``[multichannel]`` drive), ``needs_reliability``
    (needs ``[reliability]``), ``placement`` (honours ``[fdp]``, docs/fdp.md), ``zoned`` (a
    zoned namespace, docs/zns.md), ``sections`` (the ``[ftl.<section>]`` option tables it
    reads) and ``invalid_tracking`` (the ``ftl.invalid_tracking`` modes it supports)."""
    return _native.ftls()


def trace_stats(
    path: Union[str, "os.PathLike[str]"],
    format: Optional[str] = None,
    page_size: int = 4096,
    skip_bad_lines: bool = False,
) -> dict[str, Any]:
    """Statistics of a trace file, as ``ftlsim trace stats --json`` prints them: requests,
    read share, sizes, footprint, sequentiality, timing, hot spots; the format is detected
    unless given."""
    return _native.trace_stats(os.fspath(path), format, _args.count("page_size", page_size), skip_bad_lines)


def trace_fit(path: "str | os.PathLike[str]", out: "str | os.PathLike[str] | None" = None,
              extent_bytes: int = 1 << 20, format: Optional[str] = None,
              update_share: Optional[float] = None, replay: Optional[str] = None,
              capacity_bytes: Optional[int] = None, seed: int = 1) -> dict[str, Any]:
    """A trace's shape as a synthetic workload, as ``ftlsim trace fit`` writes it: mix,
    sizes, per-extent popularity, sequential runs, reuse, inter-arrival quantiles and the
    trace's locality (docs/workloads.md). With ``out``, the TOML is written there, for
    ``run(workload=f"file:{out}")``: completely or not at all, and never over the input trace
    (``ValueError``). ``update_share`` (with ``replay``, the keys after ``file:``, and
    ``capacity_bytes``, the drive's logical bytes) imposes a share of page writes that rewrite
    a page written before on that replay; ``fitted["imposed"]["reached"]`` says what it got."""
    capacity = None if capacity_bytes is None else _args.count("capacity_bytes", capacity_bytes)
    _text, fitted = _native.trace_fit(os.fspath(path), _args.count("extent_bytes", extent_bytes), format,
                                      None if out is None else os.fspath(out),
                                      update_share, replay, capacity, _args.seed(seed))
    return fitted


def trace_locality(path: "str | os.PathLike[str]", format: Optional[str] = None) -> dict[str, Any]:
    """A trace's temporal locality at 4 KiB pages, as ``ftlsim trace locality --json`` prints
    it: ``update_share``, the stack and request distance distributions and
    ``miss_ratio_curve`` (LRU hit ratios from 1 MiB to 4 GiB, of a cache and of a write
    buffer)."""
    return _native.trace_locality(os.fspath(path), format)


def workload_locality(spec: str, capacity_bytes: int, seed: int = 1) -> dict[str, Any]:
    """The same for the requests a workload spec draws on a drive of ``capacity_bytes``."""
    return _native.workload_locality(spec, _args.count("capacity_bytes", capacity_bytes), _args.seed(seed))


def fit_check(fit: "str | os.PathLike[str]", requests: Optional[int] = None, seed: int = 1) -> dict[str, Any]:
    """A fitted shape replayed as long as its trace (or ``requests``) against the trace's
    locality it keeps: ``trace`` and ``fit`` (as :func:`trace_locality`) and ``distance``
    (Kolmogorov-Smirnov distances of the reuse distances, the largest hit-ratio differences
    and the update share's difference)."""
    n = None if requests is None else _args.count("requests", requests)
    return _native.fit_check(os.fspath(fit), n, _args.seed(seed))
