"""The package type-checks under ``mypy --strict`` (STYLE.md, "Python layer"): the public API,
the native module's stub (_native.pyi) and the code between them agree. mypy and the stubs it
needs (pandas-stubs, types-tqdm) are in the ``test`` extra."""

import os
from pathlib import Path

from mypy import api

REPO = Path(__file__).resolve().parents[2]


def test_mypy_strict() -> None:
    stdout, stderr, status = api.run([
        "--strict",
        "--config-file", str(REPO / "pyproject.toml"),
        # No cache: a fresh check each time, and nothing written into the checkout.
        "--no-incremental",
        "--cache-dir", os.devnull,
        str(REPO / "python" / "ftlsim"),
    ])
    assert status == 0, f"mypy --strict found errors:\n{stdout}{stderr}"
    assert "Success: no issues found" in stdout, stdout
