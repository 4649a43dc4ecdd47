"""ftlsim: a fast, deterministic NAND-flash SSD and FTL simulator, from Python.

The simulation runs in the Rust core (no subprocess): :func:`run` one drive and workload,
:func:`sweep` a grid of them on a process pool or a Dask cluster, :func:`report` results as a
self-contained HTML page with plots. docs/python.md walks through an example.
"""

import os
from typing import Any, Optional, Union

from . import _native
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
    "figure_page",
    "ftls",
    "load_sweep_file",
    "normalised",
    "presets",
    "report",
    "run",
    "run_id",
    "sweep",
    "trace_fit",
    "trace_stats",
]


def presets() -> list[dict[str, Any]]:
    """The built-in drive presets: name, geometry, raw and logical bytes, default FTL, source."""
    return _native.presets()


def ftls() -> list[dict[str, Any]]:
    """The registered FTLs, as the registry declares them: ``name``, ``description``,
    ``source`` (the paper), and capabilities: ``recovers`` (power-loss recovery),
    ``channel_unit`` (can be a unit of a ``[multichannel]`` drive), ``needs_reliability``
    (needs ``[reliability]``), ``sections`` (the ``[ftl.<section>]`` option tables it reads)
    and ``invalid_tracking`` (the ``ftl.invalid_tracking`` modes it supports)."""
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
    return _native.trace_stats(os.fspath(path), format, page_size, skip_bad_lines)


def trace_fit(path: "str | os.PathLike[str]", out: "str | os.PathLike[str] | None" = None,
              extent_bytes: int = 1 << 20, format: Optional[str] = None) -> dict[str, Any]:
    """A trace's shape as a synthetic workload, as ``ftlsim trace fit`` writes it: mix,
    sizes, per-extent popularity, sequential runs, inter-arrival quantiles (docs/workloads.md).
    With ``out``, the TOML is written there, for ``run(workload=f"file:{out}")``: completely
    or not at all, and never over the input trace (``ValueError``)."""
    _text, fitted = _native.trace_fit(os.fspath(path), extent_bytes, format,
                                      None if out is None else os.fspath(out))
    return fitted
