"""Parameter sweeps: the Cartesian product (or an explicit list) of runs, on a local Dask
cluster or on any other, into one Parquet file with a row per run.

A run's row holds its parameters (``param.*``), every config field (``config.*``), every
metric (``report.*``), the wall time (``wall_time.*``), the software version, its status and
error, and ``detail`` (JSON: time series and histograms, for :func:`ftlsim.report`). A
failed run is a row with ``status == "error"`` and the error; rows already in the file are
skipped when the sweep runs again (failed ones are retried), so an interrupted sweep resumes
where it stopped. The file may hold the rows of several grids; a sweep returns its own grid's.
It carries a mark in its Parquet metadata, and a sweep refuses to touch a file without it. Runs that share a drive, FTL, preconditioning and seed precondition it once:
the first builds a snapshot (docs/performance.md, "Snapshots") and the others load it.
"""

from __future__ import annotations

import asyncio
import collections
import functools
import hashlib
import inspect
import itertools
import json
import logging
import os
import shutil
import sys
import time
import traceback
import uuid
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence, Union

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from . import _args, _native, _outputs
from ._config import Config
from ._run import run as run_one

#: The preconditioning keys: a snapshot stands for them.
_PRECONDITION_KEYS = ("fill", "fill_offset", "steady_state", "overwrite_span", "trim_to")
#: Keyword arguments of :func:`ftlsim.run` that a sweep manages itself: the snapshots it
#: shares, and its own progress bar.
_SWEEP_MANAGED = ("load_state", "save_state", "progress")
#: Keys a run description may have: the keyword arguments of :func:`ftlsim.run` (read from its
#: signature, so an option added there is a sweep key too), less those the sweep manages, and
#: ``tag``, any JSON value kept in the row as ``param.tag`` (a label, an index) and not run.
RUN_KEYS = (*(k for k in inspect.signature(run_one).parameters if k not in _SWEEP_MANAGED), "tag")
#: Seconds between rewrites of the Parquet file while the sweep runs.
_SAVE_EVERY_S = 10.0
#: The Parquet metadata key that marks a file the sweep wrote (value: JSON with the format).
_MARK = b"ftlsim.sweep"
#: Version of the file's layout (columns as described above).
_FORMAT = 1

#: A run description: keyword arguments of :func:`ftlsim.run` (:data:`RUN_KEYS`).
Run = dict[str, Any]
#: A row of the Parquet file: column name to value.
Row = dict[str, Any]


def expand(grid: Union[Mapping[str, Any], Sequence[Mapping[str, Any]]]) -> list[Run]:
    """The runs of a grid. A mapping is a Cartesian product: every list value is an axis
    (``"ftl": ["page", "dftl"]``, ``"seed": [1, 2]``), and ``overrides`` maps each config key
    to one value or a list of them. ``trace_options`` is one dict (or a list of dicts).
    ``tenants`` is one list of tenants, or a list of such lists (an axis). A list of mappings
    is taken as the explicit list of runs."""
    if isinstance(grid, (str, bytes)) or not isinstance(grid, (Mapping, Sequence)):
        raise TypeError(f"grid must be a mapping of run arguments or a list of runs, not {type(grid).__name__}")
    if not isinstance(grid, Mapping):
        for given in grid:
            if not isinstance(given, Mapping):
                raise TypeError(f"a run of an explicit grid must be a mapping of run arguments, not {given!r}")
        runs = [dict(given) for given in grid]
        if not runs:
            raise ValueError("the grid lists no run")
    else:
        unknown = set(grid) - set(RUN_KEYS)
        if unknown:
            raise ValueError(f"unknown sweep keys {sorted(unknown)} (known: {', '.join(RUN_KEYS)})")
        axes: list[tuple[str, list[Any]]] = []
        for k, v in grid.items():
            if k == "overrides":
                _args.mapping("overrides", v, '{"ftl.gc_victim": ["greedy", "fifo"]}')
                for ok, ov in (v or {}).items():
                    axes.append((f"overrides.{ok}", list(ov) if isinstance(ov, (list, tuple)) else [ov]))
            elif k == "tenants":
                lists = bool(v) and all(isinstance(x, (list, tuple)) for x in v)
                axes.append((k, [list(x) for x in v] if lists else [v]))
            else:
                axes.append((k, list(v) if isinstance(v, (list, tuple)) else [v]))
        empty = [k for k, vals in axes if not vals]
        if empty:
            raise ValueError(f"the grid has no run: axis {', '.join(empty)} is an empty list")
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
                out[f"param.overrides.{ok}"] = _scalar(ov)
        elif k == "config" and isinstance(v, dict):
            # A Config object by the hash of its TOML: two configs stay two sources.
            out["param.config"] = "Config:" + hashlib.sha256(v["toml"].encode()).hexdigest()[:12]
        else:
            out[f"param.{k}"] = _scalar(v)
    return out


def _scalar(v: Any) -> Any:
    """A parameter as one Parquet cell: lists and dicts as JSON text, NumPy numbers as
    Python's, so a column keeps one type when a sweep resumes."""
    if isinstance(v, (dict, list, tuple)):
        return json.dumps(v, sort_keys=True, default=_plain)
    return _plain(v) if type(v).__module__ == "numpy" else v


def _plain(v: Any) -> Any:
    """NumPy scalars as Python numbers; anything else as its text."""
    item = getattr(v, "item", None)
    return item() if callable(item) else str(v)


def _effective_config(run: Mapping[str, Any]) -> Config:
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
    return c.with_overrides(ov) if ov else c


def _snapshot_key(run: Mapping[str, Any]) -> Optional[str]:
    """Runs with the same key leave preconditioning in the same state (:func:`_snapshot_fields`,
    hashed); None when the run preconditions nothing worth sharing."""
    fields = _snapshot_fields(run)
    if fields is None:
        return None
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:16]


def _snapshot_fields(run: Mapping[str, Any]) -> Optional[dict[str, Any]]:
    """What a run's preconditioning depends on: the config's parts a snapshot must match (as
    the core checks them), the preconditioning, the seed, the build; None when the run
    preconditions nothing worth sharing: a sequential fill alone is redone faster than a
    snapshot is saved and loaded (12 M pages/s against about 1 s for 8 GiB; python/bench.py),
    so only steady-state preconditioning is shared."""
    if not run.get("steady_state", False):
        return None
    try:
        cfg = _effective_config(run)
    except Exception:  # a bad point: it runs alone and its row says why
        return None
    fill = run.get("fill")
    fill = float(cfg.to_dict()["precondition"]["fill"] if fill is None else fill)
    if fill <= 0.0:
        return None
    return {
        # What a snapshot must match, as the core checks it when loading one.
        "config": json.loads(_native.state_shaping(cfg.to_toml())),
        "fill": fill,
        "fill_offset": float(run.get("fill_offset", 0.0)),
        "steady_state": bool(run.get("steady_state", False)),
        "overwrite_span": float(run.get("overwrite_span", 0.0)),
        "trim_to": None if run.get("trim_to") is None else float(run["trim_to"]),
        "seed": int(run.get("seed", 1)),
        # A snapshot made with the data oracle is needed by runs that verify.
        "verify": bool(run.get("verify", False)),
        # Power-cut runs need their pages stamped from the start (docs/power-loss.md).
        "program_stamps": run.get("power_cut") is not None,
        "build": build_id(),
    }


def _prepare(run: Mapping[str, Any], path: str) -> Optional[str]:
    """Precondition the run's drive and save it to ``path``; None if that failed (its runs
    then precondition for themselves and report their own error)."""
    kw = {k: v for k, v in run.items() if k in ("preset", "config", "ftl", *_PRECONDITION_KEYS, "seed", "overrides",
                                                "max_memory", "verify")}
    try:
        if os.path.exists(path):
            return path
        tmp = f"{path}.{os.getpid()}.tmp"
        if run.get("power_cut") is not None:
            # Stamp the pages as the power-cut runs loading it need, with a cut never reached.
            kw["power_cut"] = str(2**64 - 1)
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
    from ._native import SnapshotError
    row: Row = {"run_id": run_id(run), **_identity()}
    t0 = time.time()
    try:
        row.update(_params(run))
        kw = {k: v for k, v in run.items() if k != "tag"}
        r = None
        if snapshot is not None:
            try:
                r = run_one(**{k: v for k, v in kw.items() if k not in _PRECONDITION_KEYS}, load_state=snapshot)
            except SnapshotError:
                # Not readable here (a worker without the shared file system): precondition.
                snapshot = None
        if r is None:
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


def _check_out(out: Path, runs: Sequence[Mapping[str, Any]] = ()) -> None:
    """Refuse an ``out`` the sweep cannot use, before anything runs: a directory, a file that
    is not Parquet, a Parquet file the sweep did not write (its rows would be merged and the
    file rewritten), one of the files ``runs`` read or save (by identity), a device or FIFO,
    or a place where the file cannot be written."""
    if out.is_dir():
        raise ValueError(f"out = {out} is a directory: give the Parquet file's path, such as {out / 'sweep.parquet'}")
    parent_exists = next(p for p in (out.parent, *out.parent.parents) if p.exists()) == out.parent
    if parent_exists:
        files = [(k, os.fspath(r[k])) for r in runs for k in ("trace", "config", "load_state", "save_state")
                 if isinstance(r.get(k), (str, os.PathLike))]
        _outputs.check([("out", out)], files)
    if out.exists():
        try:
            meta = pq.read_schema(out).metadata or {}
        except (OSError, pa.ArrowException) as e:
            raise ValueError(f"out = {out} exists and is not a Parquet file ({e}); the sweep writes its own file "
                             "there: choose another path, or remove it") from None
        if _MARK not in meta:
            raise ValueError(f"out = {out} is a Parquet file that ftlsim.sweep did not write (no {_MARK.decode()} mark "
                             "in its metadata): its rows would be mixed with the sweep's; choose another path, or "
                             "remove it")
        mark = json.loads(meta[_MARK])
        if mark.get("format") != _FORMAT:
            raise ValueError(f"out = {out} was written by a sweep of file format {mark.get('format')} (this ftlsim "
                             f"writes format {_FORMAT}): run the sweep into another file")
    parent = out.parent
    existing = next(p for p in (parent, *parent.parents) if p.exists())
    if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        raise ValueError(f"out = {out}: cannot create or write into {existing}")


def _read(out: Path) -> pd.DataFrame:
    """The rows of a file :func:`_check_out` accepted (none when it does not exist)."""
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
    table = pa.Table.from_pandas(df, preserve_index=False)
    mark = json.dumps({"format": _FORMAT, "ftlsim_version": _native.__version__}).encode()
    table = table.replace_schema_metadata({**(table.schema.metadata or {}), _MARK: mark})
    try:
        pq.write_table(table, tmp)
        os.replace(tmp, out)
    finally:
        if tmp.exists():
            tmp.unlink()
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
    """Run every point of ``grid`` (see :func:`expand`) and return its rows, one per run in
    the grid's order (rows of other grids in the same file are kept there, not returned).

    Args:
        grid: a mapping of run keyword arguments (lists are axes of a Cartesian product) or
            an explicit list of runs.
        client: a ``dask.distributed.Client``: every run becomes a Dask task, so the sweep
            runs wherever the client's cluster does (LocalCluster, dask-jobqueue on Slurm,
            Kubernetes). None: a local Dask cluster of ``workers`` one-thread worker
            processes (default: one per core), each a new interpreter, closed when the sweep
            ends (:func:`_run_local`).
        out: the Parquet file; rows already in it are skipped (failed ones retried when
            ``retry_failed``; rows of another simulator build, :func:`build_id`, run again
            unless ``reuse_other_builds``), and it is rewritten every few seconds as runs
            finish. Checked before anything runs: a directory, a file that is not Parquet or
            a Parquet file a sweep did not write is a ``ValueError``.
        share_preconditioning: precondition once per (drive, FTL, preconditioning, seed)
            shared by two or more runs, through a snapshot in ``<out>.snapshots/``
            (removed afterwards unless ``keep_snapshots``).
        progress: a tqdm bar of runs finished.
    """
    out = Path(out)
    runs = expand(grid)
    _check_out(out, runs)
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
    return _grid_rows(df, runs)


def _grid_rows(df: pd.DataFrame, runs: list[Run]) -> pd.DataFrame:
    """The rows of ``runs`` in ``df``, in the grid's order."""
    order = {run_id(r): i for i, r in enumerate(runs)}
    mine = df[df["run_id"].isin(order)]
    return mine.iloc[mine["run_id"].map(order).argsort()].reset_index(drop=True)


def _run_local(todo: list[Run], groups: dict[str, list[int]], snapdir: Path, workers: Optional[int],
               finished: Callable[[Row], None]) -> None:
    """Run the sweep on a local Dask cluster of ``workers`` one-thread worker processes.

    Processes, not threads: a simulator bug aborts only its worker, and the run is still a
    row. A worker is given one run at a time (``in_flight``), so the run under way when a
    worker dies is the one that killed it: the scheduler gives it up at once
    (``allowed_failures`` 0) and it becomes an error row, while the nanny starts a new worker
    for the rest. No memory limit: a run's memory is the drive's, checked by ``max_memory``,
    and a worker restarted for its memory would lose the run. Ctrl-C kills the workers
    (closing the cluster would wait for the runs under way); the finished rows are written by
    :func:`sweep`.

    Each worker is a new interpreter (``python -m dask spec``: a nanny and its worker),
    started as a subprocess, not forked from this process. A fork copies the locks that this
    process's other threads hold (the cluster's event loop runs in one; a notebook's kernel
    runs several), and a child that needs one waits forever: ``make test`` hung so at a
    cluster's start (docs/performance.md). A new interpreter imports nothing of the calling
    script either, so a script needs no ``if __name__ == "__main__"`` guard. Windows has no
    such workers in Dask: there nannies in this process spawn them, and the guard is needed."""
    from distributed import Client
    n = workers or os.cpu_count() or 1
    with _local_cluster(n) as cluster, Client(cluster) as client:  # type: ignore[no-untyped-call]
        try:
            _run_dask(client, todo, groups, snapdir, finished, in_flight=n,
                      crash="the worker process died running it alone (a crash in the simulator)")
        except BaseException:
            _kill_workers(cluster)
            raise


def _local_cluster(n: int, spawned: bool = sys.platform == "win32") -> Any:
    """A cluster of ``n`` one-thread worker processes on this machine, its scheduler in this
    process (see :func:`_run_local`). ``spawned``: nannies in this process spawn the workers
    (Windows, where Dask has no subprocess workers) instead of each nanny and its worker being
    a new interpreter."""
    from distributed import Nanny, Scheduler, SpecCluster
    nanny = {"host": "127.0.0.1", "nthreads": 1, "memory_limit": 0, "silence_logs": logging.CRITICAL}
    worker: dict[str, Any]
    if spawned:
        worker = {"cls": Nanny, "options": nanny}
    else:
        from distributed.deploy.subprocess import SubprocessWorker
        worker = {"cls": SubprocessWorker, "options": {"worker_class": "distributed.Nanny", "worker_kwargs": nanny}}
    # No dashboard, and the scheduler's HTTP routes (health, metrics) on a free port.
    scheduler = {"cls": Scheduler,
                 "options": {"host": "127.0.0.1", "dashboard": False, "dashboard_address": ":0", "allowed_failures": 0}}
    # SpecCluster is not annotated.
    return SpecCluster(workers={i: worker for i in range(n)}, scheduler=scheduler,  # type: ignore[no-untyped-call]
                       worker=worker, silence_logs=logging.CRITICAL, name="ftlsim-sweep")


def _kill_workers(cluster: Any) -> None:
    """Kill every worker process of ``cluster`` and the processes they started, at once."""
    import psutil
    for w in cluster.workers.values():
        process = getattr(w, "process", None)
        pid: Optional[int]
        if isinstance(process, asyncio.subprocess.Process):  # a subprocess worker's nanny
            pid = process.pid
        else:  # a nanny in this process, which has its worker's pid
            process, pid = None, getattr(w, "pid", None)
        if pid is None:
            continue
        try:
            proc = psutil.Process(pid)
            for p in [*proc.children(recursive=True), proc]:
                p.kill()
        except psutil.NoSuchProcess:
            pass
        if process is not None:
            # Closing the cluster asks psutil for the children of each process that asyncio has
            # not yet seen exit, and fails if it has gone meanwhile (CI, stop 55): wait until
            # asyncio has reaped it.
            cluster.sync(process.wait)


def _error_row(run: Run, error: str) -> Row:
    """The row of a run that produced none."""
    row: Row = {"run_id": run_id(run), **_identity(), "status": "error", "error": error}
    try:
        row.update(_params(run))
    except Exception:
        pass  # the run id and the error are what matter
    return row


def _run_dask(client: Any, todo: list[Run], groups: dict[str, list[int]], snapdir: Path,
              finished: Callable[[Row], None], crash: Optional[str] = None,
              in_flight: Optional[int] = None) -> None:
    """Run the sweep as Dask tasks on ``client``'s cluster: a preparation task per shared
    drive, the runs of that drive depending on it. A run whose task fails (its worker died
    more often than the scheduler's ``allowed-failures``, or it was cancelled) is an error
    row, with ``crash`` as its error when a worker died and that is given.

    ``in_flight``: at most this many tasks submitted and not finished (a local cluster's
    workers), the next submitted as one finishes. The scheduler hands a worker more tasks
    than it runs at once when it has them, and a worker that dies fails every task it holds:
    one task a worker, only the run that killed it is lost."""
    from distributed import KilledWorker, as_completed
    group_of = {i: key for key, members in groups.items() for i in members}
    # Each shared drive's preparation goes just before its first run.
    work: collections.deque[tuple[str, Any]] = collections.deque()
    for i in range(len(todo)):
        key = group_of.get(i)
        if key is not None and groups[key][0] == i:
            work.append(("prepare", key))
        work.append(("run", i))
    preparations: dict[str, Any] = {}  # group key -> its distributed.Future
    runs: dict[Any, Run] = {}  # distributed.Future -> its run
    # Task keys are unique to this sweep: a re-run on the same client computes afresh.
    token = uuid.uuid4().hex[:8]
    # distributed.as_completed is not annotated.
    done = as_completed()  # type: ignore[no-untyped-call]
    pending = 0

    def submit() -> None:
        nonlocal pending
        while work and (in_flight is None or pending < in_flight):
            what, x = work.popleft()
            if what == "prepare":
                path = str(snapdir / f"{x}.snap")
                f = client.submit(_prepare, todo[groups[x][0]], path, pure=False, key=f"ftlsim-prepare-{x}-{token}")
                preparations[x] = f
            else:
                r = todo[x]
                prep = (preparations[group_of[x]],) if x in group_of else ()
                f = client.submit(run_task, r, *prep, pure=False, key=f"ftlsim-run-{run_id(r)}-{token}")
                runs[f] = r
            done.add(f)  # type: ignore[no-untyped-call]
            pending += 1

    submit()
    for f in done:
        pending -= 1
        r = runs.pop(f, None)
        if r is not None:  # a run's task; a preparation's failure shows in its runs
            try:
                finished(f.result())
            except KilledWorker as e:
                finished(_error_row(r, crash or f"dask task failed: {type(e).__name__}: {e}"))
            except Exception as e:  # cancelled, or the cluster went away
                finished(_error_row(r, f"dask task failed: {type(e).__name__}: {e}"))
        submit()


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

