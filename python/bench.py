#!/usr/bin/env python3
"""Benchmark of the Python package (`make bench`; docs/performance.md, "Python").

1. Overhead per run: the same run through the CLI (`ftlsim run`, a process of its own) and
   through `ftlsim.run` in this process, interleaved, median of N each. The target is at most
   5% more wall time in Python.
2. Sweep speed-up: 48 runs one after another with `ftlsim.run`, then as `ftlsim.sweep` on a
   local pool of 2 workers (preconditioning not shared, so only parallelism counts), and
   again with it shared. The target is at most 0.6x the serial time on 2 workers.

Usage: .venv/bin/python python/bench.py [--repeat N] [--cli PATH]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import ftlsim

ROOT = Path(__file__).resolve().parents[1]
#: The run of the overhead comparison: make run's (default drive and workload, steady state).
RUN = {"preset": "default", "ftl": "page", "fill": 1.0, "steady_state": True, "seed": 1}
#: 48 runs of about a second: 4 FTLs x 3 workloads x 4 seeds on the default drive with a quarter
#: of its blocks (8 GiB raw), filled to 90%.
SWEEP = {
    "ftl": ["page", "dftl", "cdftl", "fast"],
    "workload": ["requests=200000", "requests=200000,pattern=zipf:0.9", "requests=200000,read=0.7"],
    "seed": [1, 2, 3, 4],
    "overrides": {"geometry.blocks_per_plane": 256},
    "fill": 0.9,
}
#: Steady-state runs sharing a drive: 2 FTLs x 6 workloads, where a snapshot saves the most.
SHARED = {
    "ftl": ["page", "fast"],
    "workload": [f"requests=50000,read={r}" for r in (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)],
    "overrides": {"geometry.blocks_per_plane": 256},
    "steady_state": True,
}


def timed(f) -> float:
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


def overhead(cli: Path, repeat: int) -> None:
    out = tempfile.mkdtemp(prefix="ftlsim-bench-")
    args = [str(cli), "run", "--preset", "default", "--ftl", "page", "--fill", "1", "--steady-state",
            "--seed", "1", "--quiet", "--out", out]
    cli_s, py_s = [], []
    for _ in range(repeat):
        cli_s.append(timed(lambda: subprocess.run(args, check=True, stdout=subprocess.DEVNULL)))
        py_s.append(timed(lambda: ftlsim.run(**RUN)))
    c, p = statistics.median(cli_s), statistics.median(py_s)
    print(f"overhead: `make run`'s run (default preset, page FTL, steady state, 200,000 requests), median of {repeat}")
    print(f"  CLI process        {c:7.3f} s   (runs: {', '.join(f'{x:.3f}' for x in cli_s)})")
    print(f"  ftlsim.run         {p:7.3f} s   (runs: {', '.join(f'{x:.3f}' for x in py_s)})")
    print(f"  Python overhead    {100 * (p - c) / c:+7.1f} %   (target <= +5%)")


def speedup() -> None:
    runs = ftlsim.expand(SWEEP)
    serial = timed(lambda: [ftlsim.run(**r) for r in runs])
    with tempfile.TemporaryDirectory() as d:
        par = timed(lambda: ftlsim.sweep(SWEEP, out=Path(d) / "a.parquet", workers=2))
        alone = timed(lambda: ftlsim.sweep(SHARED, out=Path(d) / "b.parquet", workers=2,
                                           share_preconditioning=False))
        shared = timed(lambda: ftlsim.sweep(SHARED, out=Path(d) / "c.parquet", workers=2))
    print(f"sweep: {len(runs)} runs ({', '.join(SWEEP['ftl'])} x 3 workloads x 4 seeds; 200,000 requests each)")
    print(f"  serial (ftlsim.run in a loop)   {serial:7.1f} s")
    print(f"  sweep, 2 local workers          {par:7.1f} s   {par / serial:.2f}x serial (target <= 0.6x)")
    n = len(ftlsim.expand(SHARED))
    print(f"steady-state sweep: {n} runs, 2 FTLs x 6 workloads on one aged drive each, 2 workers")
    print(f"  each run preconditions          {alone:7.1f} s")
    print(f"  preconditioning shared          {shared:7.1f} s   {shared / alone:.2f}x")
    print(f"  cores: {os.cpu_count()}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--cli", type=Path, default=ROOT / "target" / "release" / "ftlsim")
    a = ap.parse_args()
    if not a.cli.exists():
        sys.exit(f"error: {a.cli} is missing: `make build` (make bench does it)")
    overhead(a.cli, a.repeat)
    speedup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
