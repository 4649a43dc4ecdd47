"""Shared fixtures: a small drive (fast runs), the CLI binary, the repository's small traces and
the real samples (skipped, with a line, when they are not beside the repository)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
#: The default drive with 128 blocks per plane (4 GiB raw): full runs in well under a second.
SMALL = {"geometry.blocks_per_plane": 128}
#: The real sample traces, kept outside the repository: FTLSIM_TRACES, else ../shared/traces.
TRACES = Path(os.environ.get("FTLSIM_TRACES") or REPO.parent / "shared" / "traces")
#: The repository's own small traces, one per format (tools/make-test-traces).
SMALL_TRACES = REPO / "tests" / "traces"


@pytest.fixture(scope="session")
def cli() -> Path:
    """The ftlsim binary (FTLSIM_BIN, else the release or test build)."""
    for p in (os.environ.get("FTLSIM_BIN"), REPO / "target/release/ftlsim", REPO / "target/debug/ftlsim"):
        if p and Path(p).exists():
            return Path(p)
    pytest.fail("no ftlsim binary: run `cargo build` (make test does) or set FTLSIM_BIN")


def real_sample(name: str) -> Path:
    """The real sample trace `name`; the calling test is skipped, saying where the samples come
    from, when it is absent."""
    path = TRACES / name
    if not path.is_file():
        pytest.skip(f"the real sample trace {name} is not in {TRACES} (the samples of ../shared/traces, "
                    "not part of the repository; set FTLSIM_TRACES to their directory)")
    return path


def run_cli(cli: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.setdefault("FTLSIM_PYTHON", sys.executable)
    p = subprocess.run([str(cli), *args], capture_output=True, text=True, env=env)
    if check and p.returncode != 0:
        raise AssertionError(f"ftlsim {' '.join(args)} exited {p.returncode}:\n{p.stderr}")
    return p
