"""What every experiment script (experiments/*/run) shares, defined once: the launcher, where
things are, the log, Markdown tables, means, percentages with one meaning per function, and
the sweep's rows looked up by their tags.

A script starts with

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import common  # noqa: E402  (experiments/common.py)

    common.use_project_python(__file__)
    import ftlsim  # noqa: E402

Percentages: :func:`share` is a part of a whole (``share(1, 4) == 25.0``), :func:`change` is
how much larger ``a`` is than ``b`` (``change(5, 4) == 25.0``); both are numbers in percent,
formatted where a page prints them.
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
