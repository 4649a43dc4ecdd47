"""Checks of the Python API's arguments: a wrong type is a ``TypeError`` and a value out of
range a ``ValueError``, each naming the argument, before anything reaches the Rust core (whose
own conversion errors would not say which argument, or would wrap a huge integer)."""

from __future__ import annotations

import numbers
import os
from typing import Any, Mapping, Optional

import numpy as np

#: Seeds are unsigned 64-bit integers in the core.
SEED_LIMIT = 2**64


def _type_name(v: Any) -> str:
    return type(v).__name__


def flag(name: str, v: Any) -> bool:
    """A True/False argument (``np.bool_`` too); ``"no"`` or ``1`` is a TypeError rather
    than silently true."""
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    raise TypeError(f"{name} must be True or False, not {_type_name(v)} {v!r}")


def number(name: str, v: Any) -> float:
    """A real number (not a bool); its range is the core's to check."""
    if isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_)):
        return float(v)
    raise TypeError(f"{name} must be a number, not {_type_name(v)} {v!r}")


def seed(v: Any) -> int:
    """A seed: a whole number in [0, 2^64)."""
    if not isinstance(v, numbers.Integral) or isinstance(v, (bool, np.bool_)):
        raise TypeError(f"seed must be a whole number, not {_type_name(v)} {v!r}")
    s = int(v)
    if not 0 <= s < SEED_LIMIT:
        raise ValueError(f"seed = {s}: must be a whole number in [0, 2^64)")
    return s


def count(name: str, v: Any, least: int = 1) -> int:
    """A whole number in [least, 2^64)."""
    if not isinstance(v, numbers.Integral) or isinstance(v, (bool, np.bool_)):
        raise TypeError(f"{name} must be a whole number, not {_type_name(v)} {v!r}")
    n = int(v)
    if not least <= n < SEED_LIMIT:
        raise ValueError(f"{name} = {n}: must be a whole number in [{least}, 2^64)")
    return n


def text(name: str, v: Any) -> Optional[str]:
    """A string or None."""
    if v is None or isinstance(v, str):
        return v
    raise TypeError(f"{name} must be a string, not {_type_name(v)} {v!r}")


def path(name: str, v: Any) -> Optional[str]:
    """A file path (str or os.PathLike) or None."""
    if v is None:
        return None
    if isinstance(v, (str, os.PathLike)):
        return os.fspath(v)
    raise TypeError(f"{name} must be a path (str or os.PathLike), not {_type_name(v)} {v!r}")


def mapping(name: str, v: Any, example: str) -> Optional[Mapping[str, Any]]:
    """A mapping or None: a list of pairs is a TypeError naming the argument."""
    if v is None or isinstance(v, Mapping):
        return v
    raise TypeError(f"{name} must be a mapping such as {example}, not {_type_name(v)} {v!r}")


def count_or_text(name: str, v: Any, example: str) -> Optional[str]:
    """A positive whole number or a string (``"250ms"``, ``"2g"``), as the core's text."""
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_)):
        if int(v) < 0:
            raise ValueError(f"{name} = {int(v)}: must be >= 0")
        return str(int(v))
    raise TypeError(f"{name} must be a whole number or a string such as {example}, not {_type_name(v)} {v!r}")
