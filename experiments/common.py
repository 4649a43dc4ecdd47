"""What every experiment script (experiments/*/run) shares, defined once: the launcher, where
things are, the sweep run afresh, the log, Markdown tables, means, percentages with one meaning
per function, a run's metrics, numbers as a page prints them, the sweep's rows looked up by
their tags, and pyplot for the reports.

A script starts with

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import common  # noqa: E402  (experiments/common.py)

    common.use_project_python(__file__)
    import ftlsim  # noqa: E402

Percentages: :func:`share` is a part of a whole (``share(1, 4) == 25.0``), :func:`change` is
how much larger ``a`` is than ``b`` (``change(5, 4) == 25.0``); both are numbers in percent,
formatted where a page prints them (:func:`signed_percent` gives the sign).

A run's metrics: :func:`metric` is a sweep row's ``report.<key>``, :func:`metric_or` the same
with a stand-in where the run has none. Numbers on a page: :func:`fixed` (a set number of
decimals, "-" where there is none).
"""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence

#: The repository.
ROOT = Path(__file__).resolve().parents[1]
#: The shared directory beside it (traces, seeds); FTLSIM_SHARED overrides.
SHARED = Path(os.environ.get("FTLSIM_SHARED", ROOT.parent / "shared"))
#: The real sample traces, kept outside the repository: FTLSIM_TRACES, else SHARED/traces.
TRACES = Path(os.environ.get("FTLSIM_TRACES") or SHARED / "traces")


def trace(name: str) -> Path:
    """The real sample trace `name`. An experiment that wants one it cannot find is skipped:
    it says which trace is missing and where the samples come from, and exits without error
    and without writing its page (so that `make results` goes on in a clone without them)."""
    path = TRACES / name
    if not path.is_file():
        script = Path(sys.argv[0]).resolve()
        where = script.parent.name if script.name == "run" else script.name
        print(f"skipped: experiments/{where} needs the real sample trace {name}, which is not in {TRACES} "
              "(the samples of ../shared/traces, not part of the repository; set FTLSIM_TRACES to their "
              "directory)", file=sys.stderr)
        sys.exit(0)
    return path


def use_project_python(script: str) -> None:
    """Run ``script`` again under the project's .venv (made by ``make python``) when this
    interpreter cannot import ftlsim; otherwise return, and let ImportError say why when there
    is no .venv either."""
    try:
        import ftlsim  # noqa: F401
    except ImportError:
        venv = ROOT / ".venv" / "bin" / "python"
        if venv.exists() and Path(sys.executable) != venv:
            os.execv(venv, [str(venv), script, *sys.argv[1:]])
        raise


def paths(env_prefix: str, name: str) -> tuple[Path, Path, Path]:
    """(page, output directory, HTML report) of experiment ``name``: docs/results/<name>.md,
    experiments/<name>/out and docs/results/<name>-report.html (plots in <name>-report_files/),
    the first two overridden by <env_prefix>_DOC and <env_prefix>_OUT."""
    doc = Path(os.environ.get(f"{env_prefix}_DOC", ROOT / "docs" / "results" / f"{name}.md"))
    out = Path(os.environ.get(f"{env_prefix}_OUT", ROOT / "experiments" / name / "out"))
    return doc, out, doc.with_name(doc.stem + "-report.html")


def log(msg: str) -> None:
    """A progress line on stderr (the page is the output)."""
    print(msg, file=sys.stderr, flush=True)


def sweep_afresh(runs: Sequence[dict[str, Any]], out: Path, workers: int) -> Any:
    """The rows of every run of ``runs`` (``ftlsim.sweep`` on ``workers`` processes into the
    Parquet file ``out``), none resumed: ``out`` is removed first, so that the page states what
    this build gives. A failed run ends the script (:func:`exit_on_failed_runs`)."""
    import ftlsim
    out.unlink(missing_ok=True)
    df = ftlsim.sweep(runs, out=out, workers=workers)
    exit_on_failed_runs(df)
    return df


def exit_on_failed_runs(df: Any) -> None:
    """End the script naming each run of the sweep's rows ``df`` that failed (its tag and its
    error): a page is written from every run or not at all."""
    bad = df[df.status != "ok"]
    if len(bad):
        sys.exit("runs failed:\n" + "\n".join(f"{r['param.tag']}: {r['error']}" for _, r in bad.iterrows()))


def pyplot() -> Any:
    """matplotlib's pyplot drawing into files (the Agg backend), its SVG ids salted alike in every
    run so that a report's SVG files are the same from one run to the next."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.rcParams["svg.hashsalt"] = "ftlsim"
    return plt


def md_table(header: Sequence[Any], rows: Iterable[Sequence[Any]]) -> str:
    """A Markdown table, cells as ``str`` gives them."""
    out = ["| " + " | ".join(str(c) for c in header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def mean(xs: Iterable[Optional[float]]) -> Optional[float]:
    """The arithmetic mean of the values given (None skipped); None when there is none."""
    vals = [x for x in xs if x is not None]
    return sum(vals) / len(vals) if vals else None


def geomean(xs: Iterable[Optional[float]]) -> Optional[float]:
    """The geometric mean of the positive values given (None, zero and NaN skipped); None when
    there is none."""
    vals = [x for x in xs if x is not None and x > 0]
    return math.exp(sum(math.log(x) for x in vals) / len(vals)) if vals else None


def share(part: Optional[float], whole: Optional[float]) -> Optional[float]:
    """``part`` as a percentage of ``whole``; None when either is missing or ``whole`` is 0."""
    if part is None or not whole:
        return None
    return 100.0 * part / whole


def change(a: Optional[float], b: Optional[float]) -> Optional[float]:
    """How much larger ``a`` is than ``b``, in percent (negative: smaller); None when either
    is missing or ``b`` is 0."""
    if a is None or not b:
        return None
    return 100.0 * (a / b - 1.0)


def signed_percent(x: Optional[float], digits: int = 0) -> str:
    """A percentage with its sign, whole or with ``digits`` decimals (``signed_percent(4.23)
    == "+4%"``, ``signed_percent(4.23, 1) == "+4.2%"``); "n/a" when there is none."""
    return "n/a" if x is None else f"{x:+.{digits}f}%"


def fixed(x: Optional[float], digits: int, *, grouped: bool = False, nan: str = "-") -> str:
    """``x`` with ``digits`` decimals, its thousands separated by commas when ``grouped``; "-"
    when there is none. A NaN (a metric the run does not have) prints as ``nan``: "-" as well
    by default; the pages that have always printed Python's "nan" pass ``nan="nan"``, so that
    they stay as they are."""
    if x is None:
        return "-"
    if x != x:
        return nan
    return f"{x:{',' if grouped else ''}.{digits}f}"


def metric(row: dict[str, Any], key: str) -> Any:
    """Metric ``key`` of a sweep's row (its ``report.<key>`` column), as the row has it (NaN
    where the run has no such metric); KeyError when no run of the sweep has it."""
    return row["report." + key]


def metric_or(row: dict[str, Any], key: str, missing: Any = None) -> Any:
    """Metric ``key`` of a sweep's row, ``missing`` where the run has none: the column absent,
    or NaN (the frame's hole where another run of the sweep has the metric)."""
    v = row.get("report." + key)
    return missing if v is None or v != v else v


def _level(field: Any) -> Any:
    """A tag field as an index value: lists and dicts as their JSON text (keys sorted, as the
    sweep stores them)."""
    return json.dumps(field, sort_keys=True) if isinstance(field, (list, dict)) else field


class TaggedRows:
    """A sweep's rows indexed by their tags: each run's ``tag`` is a list of fields (a sweep
    keeps it as JSON text in ``param.tag``), and ``rows.get(*fields)`` is that run's row as a
    dict of column to value (Python numbers, NaN where the run has no such metric). The frame,
    with one index level per field named by ``names``, is ``rows.frame``."""

    def __init__(self, df: Any, names: Sequence[str]) -> None:
        import pandas as pd
        tags = [tuple(_level(f) for f in json.loads(t)) for t in df["param.tag"]]
        self.frame = df.set_index(pd.MultiIndex.from_tuples(tags, names=list(names)))
        if not self.frame.index.is_unique:
            raise ValueError("two runs of the sweep have the same tag")
        # Rows as dicts once: a page looks thousands up, and `.loc` on a frame of thousands of
        # columns costs milliseconds each.
        self._records = dict(zip(tags, df.to_dict(orient="records")))

    def key(self, fields: Sequence[Any]) -> tuple[Any, ...]:
        return tuple(_level(f) for f in fields)

    def get(self, *fields: Any) -> dict[str, Any]:
        row = self._records.get(self.key(fields))
        if row is None:
            raise KeyError(f"no run tagged {list(fields)}")
        return dict(row)

    def __contains__(self, fields: Any) -> bool:
        return self.key(fields) in self._records
