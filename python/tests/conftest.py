"""Shared fixtures: a small drive (fast runs), the CLI binary, the sample traces."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
#: The default drive with 128 blocks per plane (4 GiB raw): full runs in well under a second.
SMALL = {"geometry.blocks_per_plane": 128}
TRACES = REPO.parent / "shared" / "traces"


@pytest.fixture(scope="session")
def cli() -> Path:
    """The ftlsim binary (FTLSIM_BIN, else the release or test build)."""
    for p in (os.environ.get("FTLSIM_BIN"), REPO / "target/release/ftlsim", REPO / "target/debug/ftlsim"):
        if p and Path(p).exists():
            return Path(p)
    pytest.fail("no ftlsim binary: run `cargo build` (make test does) or set FTLSIM_BIN")


@pytest.fixture(scope="session")
def traces() -> Path:
    if not TRACES.is_dir():
        pytest.fail(f"{TRACES} is missing: CI checks the project out with ../shared beside it")
    return TRACES


def run_cli(cli: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.setdefault("FTLSIM_PYTHON", sys.executable)
    p = subprocess.run([str(cli), *args], capture_output=True, text=True, env=env)
    if check and p.returncode != 0:
        raise AssertionError(f"ftlsim {' '.join(args)} exited {p.returncode}:\n{p.stderr}")
    return p
