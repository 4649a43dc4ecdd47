"""``python -m ftlsim sweep|report``: the Python half of the command line. ``ftlsim sweep``
and ``ftlsim report`` (the Rust binary) hand over to it."""

from __future__ import annotations

import argparse
import sys


def main(argv: "list[str] | None" = None) -> int:
    p = argparse.ArgumentParser(prog="ftlsim", description="ftlsim sweeps and reports")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sweep", help="run a sweep described in TOML into a Parquet file")
    s.add_argument("file", help="sweep description (docs/python.md, 'Sweep files')")
    s.add_argument("--out", default="sweep.parquet", help="Parquet file (default: sweep.parquet)")
    s.add_argument("--scheduler", metavar="ADDRESS",
                   help="a Dask scheduler (tcp://host:8786); default: a local cluster")
    s.add_argument("--workers", type=int, help="local processes (default: one per core)")
    s.add_argument("--no-retry-failed", action="store_true", help="keep failed rows instead of re-running them")
    s.add_argument("--quiet", action="store_true", help="no progress bar")
    r = sub.add_parser("report", help="write an HTML report with plots")
    r.add_argument("results", nargs="+", help="run directories, results.json or sweep .parquet files")
    r.add_argument("-o", "--out", default="report.html", help="HTML file (default: report.html)")
    r.add_argument("--baseline", help="FTL the comparison is normalised to (default: page, else the first)")
    r.add_argument("--title", default="ftlsim report")
    try:
        a = p.parse_args(argv)
    except SystemExit as e:  # bad flags are bad input: 1, as in the rest of the CLI
        return 1 if e.code == 2 else int(e.code or 0)

    from . import FtlsimError
    try:
        if a.cmd == "sweep":
            from ._sweep import load_sweep_file, sweep
            grid = load_sweep_file(a.file)
            client = None
            if a.scheduler:
                from distributed import Client
                # distributed.Client.__init__ is not annotated.
                client = Client(a.scheduler)  # type: ignore[no-untyped-call]
            df = sweep(grid, client=client, out=a.out, workers=a.workers,
                       retry_failed=not a.no_retry_failed, progress=not a.quiet)
            failed = int((df["status"] != "ok").sum()) if len(df) else 0
            print(f"{len(df)} rows in {a.out} ({failed} failed)")
            return 1 if failed else 0
        from ._report import report
        out = report(a.results, a.out, baseline=a.baseline, title=a.title)
        print(f"report: {out} (plots in {out.with_name(out.stem + '_files')})")
        return 0
    except (FtlsimError, ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
