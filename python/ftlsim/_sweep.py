"""Parameter sweeps: the Cartesian product (or an explicit list) of runs, on a local process
pool or on any Dask cluster, into one Parquet file with a row per run.

A run's row holds its parameters (``param.*``), every config field (``config.*``), every
metric (``report.*``), the wall time (``wall_time.*``), the software version, its status and
error, and ``detail`` (JSON: time series and histograms, for :func:`ftlsim.report`). A
failed run is a row with ``status == "error"`` and the error; rows already in the file are
skipped when the sweep runs again (failed ones are retried), so an interrupted sweep resumes
where it stopped. Runs that share a drive, FTL, preconditioning and seed precondition it once:
the first builds a snapshot (docs/performance.md, "Snapshots") and the others load it.
"""

from __future__ import annotations

import concurrent.futures as cf
import functools
import hashlib
import itertools
import json
import multiprocessing
import os
import shutil
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence, Union

import pandas as pd

from . import _native
from ._config import Config

#: Keys a run description may have: the keyword arguments of :func:`ftlsim.run`, and
#: ``tag``, any JSON value kept in the row as ``param.tag`` (a label, an index) and not run.
RUN_KEYS = ("preset", "config", "ftl", "workload", "trace", "trace_options", "fill", "fill_offset",
            "steady_state", "seed", "overrides", "interval", "verify", "max_memory", "tag")
#: Config sections that shape a drive's state: runs agreeing on them can share a snapshot.
_STATE_SHAPING = ("geometry", "overprovisioning", "nand", "ftl")
#: Seconds between rewrites of the Parquet file while the sweep runs.
_SAVE_EVERY_S = 10.0

#: A run description: keyword arguments of :func:`ftlsim.run` (:data:`RUN_KEYS`).
Run = dict[str, Any]
#: A row of the Parquet file: column name to value.
Row = dict[str, Any]


def expand(grid: Union[Mapping[str, Any], Sequence[Mapping[str, Any]]]) -> list[Run]:
    """The runs of a grid. A mapping is a Cartesian product: every list value is an axis
    (``"ftl": ["page", "dftl"]``, ``"seed": [1, 2]``), and ``overrides`` maps each config key
    to one value or a list of them. ``trace_options`` is one dict (or a list of dicts). A
    list of mappings is taken as the explicit list of runs."""
    if not isinstance(grid, Mapping):
        runs = [dict(r) for r in grid]
    else:
        unknown = set(grid) - set(RUN_KEYS)
        if unknown:
            raise ValueError(f"unknown sweep keys {sorted(unknown)} (known: {', '.join(RUN_KEYS)})")
        axes: list[tuple[str, list[Any]]] = []
        for k, v in grid.items():
            if k == "overrides":
                for ok, ov in (v or {}).items():
                    axes.append((f"overrides.{ok}", list(ov) if isinstance(ov, (list, tuple)) else [ov]))
            elif k == "trace_options":
                axes.append((k, list(v) if isinstance(v, (list, tuple)) else [v]))
            else:
                axes.append((k, list(v) if isinstance(v, (list, tuple)) else [v]))
        runs = []
        for combo in itertools.product(*(vals for _, vals in axes)):
            r: dict[str, Any] = {}
            for (k, _), val in zip(axes, combo):
                if k.startswith("overrides."):
                    r.setdefault("overrides", {})[k[len("overrides."):]] = val
                else:
                    r[k] = val
            runs.append(r)
    for r in runs:
        unknown = set(r) - set(RUN_KEYS)
        if unknown:
            raise ValueError(f"unknown run keys {sorted(unknown)} (known: {', '.join(RUN_KEYS)})")
        if "workload" in r and "trace" in r:
            raise ValueError(f"run {r}: give workload or trace, not both")
    return runs


def _canonical(run: Mapping[str, Any]) -> dict[str, Any]:
    """A run as plain JSON data (a Config by its TOML, paths as strings)."""
    out: dict[str, Any] = {}
    for k in sorted(run):
        v = run[k]
        if isinstance(v, Config):
            v = {"toml": v.to_toml()}
        elif isinstance(v, os.PathLike):
            v = os.fspath(v)
        out[k] = v
    return out


def run_id(run: Mapping[str, Any]) -> str:
    """A stable id of a run description (16 hex digits): the same parameters, the same id."""
    text = json.dumps(_canonical(run), sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@functools.lru_cache(maxsize=1)
def build_id() -> str:
    """The build of the simulator this process runs (16 hex digits of the native library's
    SHA-256): rows from another build are run again when a sweep resumes."""
    with open(_native.__file__, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:16]


def _params(run: Mapping[str, Any]) -> dict[str, Any]:
    """The run's parameters as ``param.*`` columns."""
    out: dict[str, Any] = {}
    for k, v in _canonical(run).items():
        if k == "overrides":
            for ok, ov in v.items():
                out[f"param.overrides.{ok}"] = ov
        elif k == "config" and isinstance(v, dict):
            out["param.config"] = "(Config)"
        elif isinstance(v, (dict, list)):
            out[f"param.{k}"] = json.dumps(v, sort_keys=True)
        else:
            out[f"param.{k}"] = v
    return out


def _effective_config(run: Mapping[str, Any]) -> dict[str, Any]:
    """The config a run will use (preset or file, overrides, FTL), checked."""
    cfg = run.get("config")
    if isinstance(cfg, Config):
        c = cfg
    elif cfg is not None:
        c = Config.from_file(cfg)
    else:
        c = Config.from_preset(run.get("preset") or "default")
    ov = dict(run.get("overrides") or {})
    if run.get("ftl"):
        ov["ftl.name"] = run["ftl"]
    return c.with_overrides(ov).to_dict() if ov else c.to_dict()


def _snapshot_key(run: Mapping[str, Any]) -> Optional[str]:
    """Runs with the same key leave preconditioning in the same state; None when the run
    preconditions nothing worth sharing: a sequential fill alone is redone faster than a
    snapshot is saved and loaded (12 M pages/s against about 1 s for 8 GiB; python/bench.py),
    so only steady-state preconditioning is shared."""
    if float(run.get("fill", 1.0)) <= 0.0 or not run.get("steady_state", False):
        return None
    cfg = _effective_config(run)
    key = {
        "config": {k: cfg[k] for k in _STATE_SHAPING},
        "fill": float(run.get("fill", 1.0)),
        "fill_offset": float(run.get("fill_offset", 0.0)),
        "steady_state": bool(run.get("steady_state", False)),
        "seed": int(run.get("seed", 1)),
    }
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]


def _prepare(run: Mapping[str, Any], path: str) -> Optional[str]:
    """Precondition the run's drive and save it to ``path``; None if that failed (its runs
    then precondition for themselves and report their own error)."""
    from ._run import run as run_one
    kw = {k: v for k, v in run.items() if k in ("preset", "config", "ftl", "fill", "fill_offset",
                                                "steady_state", "seed", "overrides", "max_memory")}
    try:
        if os.path.exists(path):
            return path
        tmp = f"{path}.{os.getpid()}.tmp"
        run_one(**kw, workload="requests=1", interval=0, save_state=tmp)
        os.replace(tmp, path)
        return path
    except Exception:
        return None


def _identity() -> dict[str, str]:
    return {"ftlsim_version": _native.__version__, "ftlsim_build": build_id()}


def run_task(run: Mapping[str, Any], snapshot: Optional[str] = None) -> Row:
    """Run one sweep point; returns its row. Never raises for a failed run: the row then
    has ``status == "error"`` and the error text."""
    from ._run import run as run_one
    row: Row = {"run_id": run_id(run), **_identity(), **_params(run)}
    t0 = time.time()
    try:
        kw = {k: v for k, v in run.items() if k != "tag"}
        if snapshot is not None:
            for k in ("fill", "fill_offset", "steady_state"):
                kw.pop(k, None)
            kw["load_state"] = snapshot
        r = run_one(**kw)
        if snapshot is not None:
            # The row reads as the direct run's: the preconditioning the snapshot was made by.
            pre = r.summary["run"]["precondition"]
            r.summary["run"]["precondition"] = pre["saved_with"]["precondition"]
        row.update(r.row())
        row["status"] = "ok"
        row["error"] = None
        row["snapshot_used"] = snapshot is not None
        row["detail"] = json.dumps(r.detail(), separators=(",", ":"))
    except Exception as e:  # every failure becomes a row: a sweep never loses a run
        row["status"] = "error"
        row["error"] = f"{type(e).__name__}: {e}"
        row["error_traceback"] = traceback.format_exc(limit=5)
    row["sweep.wall_s"] = time.time() - t0
    return row


def _read(out: Path) -> pd.DataFrame:
    if out.exists():
        return pd.read_parquet(out)
    return pd.DataFrame()


def _write(out: Path, old: pd.DataFrame, rows: list[Row]) -> pd.DataFrame:
    """Old rows not re-run plus the new ones, written atomically (temp file, rename)."""
    new = pd.DataFrame(rows)
    if len(old) and len(new):
        old = old[~old["run_id"].isin(new["run_id"])]
    df = pd.concat([d for d in (old, new) if len(d)], ignore_index=True) if len(old) or len(new) else new
    for c in df.columns:
        # One type per column: mixed Python objects (numbers beside strings) become strings.
        if df[c].dtype == object:
            kinds = {type(v) for v in df[c] if v is not None and not (isinstance(v, float) and pd.isna(v))}
            if len(kinds) > 1:
                df[c] = df[c].map(lambda v: None if v is None or (isinstance(v, float) and pd.isna(v)) else str(v))
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    df.to_parquet(tmp, index=False)
    os.replace(tmp, out)
    return df


def sweep(
    grid: Union[Mapping[str, Any], Sequence[Mapping[str, Any]]],
    client: Any = None,
    out: Union[str, "os.PathLike[str]"] = "sweep.parquet",
    *,
    workers: Optional[int] = None,
    retry_failed: bool = True,
    reuse_other_builds: bool = False,
    share_preconditioning: bool = True,
    keep_snapshots: bool = False,
    progress: bool = False,
) -> pd.DataFrame:
    """Run every point of ``grid`` (see :func:`expand`) and return the Parquet file's rows.

    Args:
        grid: a mapping of run keyword arguments (lists are axes of a Cartesian product) or
            an explicit list of runs.
        client: a ``dask.distributed.Client``: every run becomes a Dask task, so the sweep
            runs wherever the client's cluster does (LocalCluster, dask-jobqueue on Slurm,
            Kubernetes). None: a local process pool of ``workers`` processes (default: one
            per core).
        out: the Parquet file; rows already in it are skipped (failed ones retried when
            ``retry_failed``; rows of another simulator build, :func:`build_id`, run again
            unless ``reuse_other_builds``), and it is rewritten every few seconds as runs
            finish.
        share_preconditioning: precondition once per (drive, FTL, preconditioning, seed)
            shared by two or more runs, through a snapshot in ``<out>.snapshots/``
            (removed afterwards unless ``keep_snapshots``).
        progress: a tqdm bar of runs finished.
    """
    out = Path(out)
    runs = expand(grid)
    old = _read(out)
    done: set[str] = set()
    if len(old):
        keep = old if not retry_failed else old[old["status"] == "ok"]
        if not reuse_other_builds and "ftlsim_build" in keep:
            keep = keep[keep["ftlsim_build"] == build_id()]
        done = set(keep["run_id"])
    todo = [r for r in runs if run_id(r) not in done]
    ids = [run_id(r) for r in todo]
    if len(set(ids)) != len(ids):
        raise ValueError("the grid lists the same run twice")
    snapdir = out.with_name(out.name + ".snapshots")
    groups: dict[str, list[int]] = {}
    if share_preconditioning:
        for i, r in enumerate(todo):
            if "load_state" in r:
                continue
            key = _snapshot_key(r)
            if key is not None:
                groups.setdefault(key, []).append(i)
        groups = {k: v for k, v in groups.items() if len(v) > 1}
        if groups:
            snapdir.mkdir(parents=True, exist_ok=True)
    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=len(todo), desc="sweep", unit="run")
    rows: list[Row] = []
    last_save = time.time()

    def finished(row: Row) -> None:
        nonlocal last_save, old
        rows.append(row)
        if bar is not None:
            bar.update(1)
        if time.time() - last_save > _SAVE_EVERY_S:
            _write(out, old, rows)
            last_save = time.time()

    try:
        if client is None:
            _run_local(todo, groups, snapdir, workers, finished)
        else:
            _run_dask(client, todo, groups, snapdir, finished)
    finally:
        if bar is not None:
            bar.close()
        if rows or not out.exists():
            df = _write(out, old, rows)
        else:
            df = old
        if groups and not keep_snapshots:
            shutil.rmtree(snapdir, ignore_errors=True)
    return df


def _run_local(todo: list[Run], groups: dict[str, list[int]], snapdir: Path, workers: Optional[int],
               finished: Callable[[Row], None]) -> None:
    grouped = {i for v in groups.values() for i in v}
    # Processes, not threads: a simulator bug aborts only its worker, and the run is still a
    # row. Fork where the platform has it (Linux), so that a script calling sweep() needs no
    # `if __name__ == "__main__"` guard; spawn elsewhere (macOS, Windows: the guard is needed).
    method = "fork" if sys.platform.startswith("linux") else "spawn"
    ctx = multiprocessing.get_context(method)
    with cf.ProcessPoolExecutor(max_workers=workers or os.cpu_count() or 1, mp_context=ctx) as pool:
        # A future's kind, and its run ("run") or the indices in todo of its group ("prepare").
        pending: dict[cf.Future[Any], tuple[str, Any]] = {}
        for i, r in enumerate(todo):
            if i not in grouped:
                pending[pool.submit(run_task, r)] = ("run", r)
        for key, members in groups.items():
            path = str(snapdir / f"{key}.snap")
            pending[pool.submit(_prepare, todo[members[0]], path)] = ("prepare", members)
        while pending:
            ready, _ = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
            for f in ready:
                kind, what = pending.pop(f)
                if kind == "prepare":
                    snap = f.result() if f.exception() is None else None
                    for i in what:
                        pending[pool.submit(run_task, todo[i], snap)] = ("run", todo[i])
                    continue
                if f.exception() is None:
                    finished(f.result())
                else:  # the worker process died: the run is still a row
                    finished({"run_id": run_id(what), **_params(what), **_identity(),
                              "status": "error", "error": f"worker failed: {f.exception()!r}"})


def _run_dask(client: Any, todo: list[Run], groups: dict[str, list[int]], snapdir: Path,
              finished: Callable[[Row], None]) -> None:
    from distributed import as_completed
    grouped = {i for v in groups.values() for i in v}
    futures: dict[Any, Run] = {}  # distributed.Future -> its run
    for i, r in enumerate(todo):
        if i not in grouped:
            futures[client.submit(run_task, r, pure=False, key=f"ftlsim-run-{run_id(r)}")] = r
    for key, members in groups.items():
        path = str(snapdir / f"{key}.snap")
        prep = client.submit(_prepare, todo[members[0]], path, pure=False, key=f"ftlsim-prepare-{key}")
        for i in members:
            r = todo[i]
            futures[client.submit(run_task, r, prep, pure=False, key=f"ftlsim-run-{run_id(r)}")] = r
    # distributed.as_completed is not annotated.
    for f in as_completed(list(futures)):  # type: ignore[no-untyped-call]
        r = futures[f]
        try:
            finished(f.result())
        except Exception as e:  # lost more often than the scheduler allows, or cancelled
            finished({"run_id": run_id(r), **_params(r), **_identity(),
                      "status": "error", "error": f"dask task failed: {type(e).__name__}: {e}"})


def load_sweep_file(path: Union[str, "os.PathLike[str]"]) -> Union[dict[str, Any], list[dict[str, Any]]]:
    """A sweep description from TOML: top-level keys are the grid (lists are axes), an
    ``[overrides]`` table maps config keys to values or lists; or ``[[run]]`` tables list the
    runs explicitly."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # Python < 3.11
        import tomli as tomllib
    data = tomllib.loads(Path(path).read_text())
    if "run" in data:
        if set(data) != {"run"}:
            raise ValueError(f"{path}: give [[run]] tables or grid keys, not both")
        return list(data["run"])
    return data

