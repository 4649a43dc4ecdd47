"""Issue 38: experiments/common.py defines once what every experiment script shares, and the
scripts use it instead of their own copies."""

import ast
import json
import math
import sys

import pandas as pd
import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "experiments"))
import common  # noqa: E402

SCRIPTS = sorted((REPO / "experiments").glob("*/run"))
#: Helpers common.py owns; a script defining one of these names has a copy of its own.
OWNED = {"log", "table", "md_table", "mean", "avg", "geomean", "pct", "share_pct", "Rows",
         "m", "fm", "f2", "f3", "fmt", "signed", "metric", "metric_or", "fixed", "signed_percent"}


def _on_tagged_rows(node):
    """A class built on common.TaggedRows (a script's lookups with its own defaults)."""
    return isinstance(node, ast.ClassDef) and any(ast.unparse(b) == "common.TaggedRows" for b in node.bases)


def test_percentages_have_one_meaning_each():
    assert common.share(1, 4) == 25.0 and common.share(None, 4) is None and common.share(1, 0) is None
    assert common.change(5, 4) == 25.0 and common.change(3, 4) == -25.0
    assert common.change(5, 0) is None and common.change(None, 4) is None


def test_means_skip_what_is_missing():
    assert common.mean([1, None, 3]) == 2 and common.mean([]) is None
    assert math.isclose(common.geomean([1, 4, None, 0]), 2.0) and common.geomean([None]) is None


def test_md_table():
    assert common.md_table(["a", "b"], [(1, 2.5)]) == "| a | b |\n|---|---|\n| 1 | 2.5 |"


def test_tagged_rows_index_a_sweep_by_its_tags():
    tags = [["main", "Fin1", 2, {"b": 1, "a": 2}], ["main", "Fin1", 4, {}]]
    df = pd.DataFrame({"param.tag": [json.dumps(t, sort_keys=True) for t in tags], "report.waf": [1.5, 2.0],
                       "report.erases": [10, 20]})
    rows = common.TaggedRows(df, ["setting", "workload", "gb", "options"])
    assert list(rows.frame.index.names) == ["setting", "workload", "gb", "options"]
    r = rows.get("main", "Fin1", 4, {})
    assert r["report.waf"] == 2.0 and type(r["report.erases"]) is int
    # A dict field matches whatever the order of its keys.
    assert rows.get("main", "Fin1", 2, {"a": 2, "b": 1})["report.erases"] == 10
    assert ("main", "Fin1", 8, {}) not in rows
    with pytest.raises(KeyError, match="no run tagged"):
        rows.get("main", "Fin2", 2, {})
    with pytest.raises(ValueError, match="same tag"):
        common.TaggedRows(pd.concat([df, df]), ["setting", "workload", "gb", "options"])


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.parent.name for s in SCRIPTS])
def test_every_experiment_uses_common_and_keeps_no_copy(script):
    tree = ast.parse(script.read_text())
    defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and not _on_tagged_rows(n)}
    assert not defined & OWNED, f"{script} defines its own {sorted(defined & OWNED)}: use experiments/common.py"
    imports = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert "common" in imports, f"{script} does not import experiments/common.py"
    calls = {n.func.attr for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
             and isinstance(n.func.value, ast.Name) and n.func.value.id == "common"}
    assert "use_project_python" in calls, f"{script} does not start through common.use_project_python"
    assert "execv" not in script.read_text(), f"{script} has a launcher of its own"
