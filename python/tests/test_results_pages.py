"""Issue 14: every docs/results page regenerates from its script as committed: the numbers
and sentences come from the run that writes the page (only the stated wall time differs)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

#: (script, environment variable of its page, of its output directory, the committed page).
PAGES = [
    ("experiments/trace-fit/run", "TRACE_FIT_DOC", "TRACE_FIT_OUT", "docs/results/trace-fit.md"),
    ("experiments/thesis-ch5/run", "THESIS_CH5_DOC", "THESIS_CH5_OUT", "docs/results/thesis-ch5.md"),
    ("experiments/pcftl/run", "PCFTL_DOC", "PCFTL_OUT", "docs/results/pcftl.md"),
    ("experiments/power-loss/run", "POWER_LOSS_DOC", "POWER_LOSS_OUT", "docs/results/power-loss.md"),
    ("experiments/waftl/run", "WAFTL_DOC", "WAFTL_OUT", "docs/results/waftl.md"),
    ("experiments/thesis-ch6-8/run", "THESIS_CH68_DOC", "THESIS_CH68_OUT", "docs/results/thesis-ch6-8.md"),
    ("experiments/rcftl/run", "RCFTL_DOC", "RCFTL_OUT", "docs/results/rcftl.md"),
    ("experiments/chang-wen/run", "CHANG_WEN_DOC", "CHANG_WEN_OUT", "docs/results/chang-wen.md"),
    ("experiments/placement/run", "PLACEMENT_DOC", "PLACEMENT_OUT", "docs/results/placement.md"),
]


def without_wall_time(text: str) -> str:
    """The page with its wall-clock figures (`40 s`) blanked: they are the run's, not the
    simulation's."""
    return re.sub(r"\b\d+ s\b", "N s", text)


@pytest.mark.slow
@pytest.mark.parametrize("script,doc_var,out_var,page", PAGES, ids=[p[0].split("/")[1] for p in PAGES])
def test_results_page_regenerates_as_committed(script, doc_var, out_var, page, tmp_path):
    doc = tmp_path / Path(page).name
    env = dict(os.environ, **{doc_var: str(doc), out_var: str(tmp_path / "out")})
    p = subprocess.run([sys.executable, str(REPO / script)], env=env, capture_output=True, text=True, cwd=REPO)
    assert p.returncode == 0, p.stderr[-3000:]
    if not doc.exists() and "skipped: " in p.stderr:
        pytest.skip(p.stderr[p.stderr.index("skipped: ") + len("skipped: "):].strip())
    got, want = without_wall_time(doc.read_text()), without_wall_time((REPO / page).read_text())
    if got != want:
        diff = [f"- {a}\n+ {b}" for a, b in zip(want.splitlines(), got.splitlines()) if a != b]
        pytest.fail(f"{page} differs from what {script} writes now:\n" + "\n".join(diff[:10]))


#: A Python replacement field left in a page's text: `{name}`, `{a.b[0]:,}`, `{lbns * SCALE:,}` (a
#: string piece of a script that lost its `f` prefix, issue 58).
_FIELD = re.compile(r"\{[A-Za-z_][\w.]*(\[[^\]{}]*\])*(\s*[-+*/%]\s*[\w.]+)*(![rsa])?(:[^{}]*)?\}")


@pytest.mark.parametrize("page", sorted((REPO / "docs" / "results").glob("*.md")), ids=lambda p: p.name)
def test_no_results_page_holds_an_unformatted_field(page):
    # Code spans may show braces on purpose (`compare.{csv,json}`).
    text = re.sub(r"`[^`\n]*`", "", page.read_text())
    fields = [m.group(0) for m in _FIELD.finditer(text)]
    assert not fields, f"{page.name} holds text its script did not format: {fields[:5]}"


def test_the_field_pattern_finds_a_lost_f_prefix():
    assert _FIELD.search("a full-size drive ({lbns * SCALE:,} logical blocks a channel)")
    assert _FIELD.search("rcFTL at {pe} ({x:.3f})")
    assert not _FIELD.search("JSON {\"a\": 1} and sets {1, 2}")
