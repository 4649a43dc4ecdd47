"""Issue 59, item 8: the repository stands alone. Its small traces, one in each format the
simulator reads, are what tools/make-test-traces writes (byte for byte), and each is read as
its format, by name and when detected."""

import filecmp
import subprocess
import sys

import pytest

import ftlsim
from conftest import REPO, SMALL_TRACES

COMMITTED = sorted(p.name for p in SMALL_TRACES.glob("small.*"))


def test_the_committed_traces_are_what_the_generator_writes(tmp_path):
    subprocess.run([sys.executable, str(REPO / "tools" / "make-test-traces"), str(tmp_path)], check=True,
                   capture_output=True)
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == COMMITTED
    _, mismatch, errors = filecmp.cmpfiles(SMALL_TRACES, tmp_path, written, shallow=False)
    assert not mismatch and not errors, f"regenerate with tools/make-test-traces: {mismatch or errors}"


@pytest.mark.parametrize("name", COMMITTED)
def test_each_small_trace_reads_as_its_format(name):
    # small.<format>[-<variant>].<ext>; ssdsim's text is mqsim's and is detected as that.
    named = name.split(".")[1].split("-")[0]
    by_name = ftlsim.trace_stats(SMALL_TRACES / name, format=named)
    detected = ftlsim.trace_stats(SMALL_TRACES / name)
    assert detected["format"] == ("mqsim" if named == "ssdsim" else named)
    for stats in (by_name, detected):
        assert (stats["requests"], stats["reads"]) == (300, 90), name
