"""The package's writers under the core's output check (crates/ftlsim-core/src/outputs.rs): no
output may be an input or another output, by identity (device and inode, symlinks followed), and
none replaces a device or FIFO; each file is written beside itself and renamed into place when
complete, so a failure leaves the old file."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Union

from . import _native

PathLike = Union[str, "os.PathLike[str]"]


def check(outputs: Iterable[tuple[str, PathLike]], inputs: Iterable[tuple[str, PathLike]] = ()) -> None:
    """Refuse ``outputs`` (``(role, path)``, each replaced whole) that are one of ``inputs`` or
    of each other: ``ftlsim.InputError`` naming both."""
    _native.check_outputs([(r, os.fspath(p)) for r, p in inputs], [(r, os.fspath(p)) for r, p in outputs])


def write(path: PathLike, data: Union[str, bytes]) -> None:
    """Write ``path`` completely or not at all (a checked output: see :func:`check`). A symlink's
    target is replaced, the link kept."""
    target = Path(os.path.realpath(path)) if os.path.islink(path) else Path(path)
    tmp = target.with_name(f".ftlsim-partial-{os.getpid()}-{target.name}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            tmp.unlink()
