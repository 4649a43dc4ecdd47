"""Drive configs: :class:`Config`, validated by the Rust core exactly as the CLI validates a
TOML file, and the ``overrides`` mapping turned into the CLI's ``--set KEY=VALUE`` pairs."""

from __future__ import annotations

import json
import numbers
import os
from pathlib import Path
from typing import Any, Mapping, Optional, Union

import numpy as np

from . import _native


def _toml_value(v: Any) -> str:
    """A Python value as the VALUE of ``--set KEY=VALUE`` (a TOML value)."""
    if isinstance(v, np.ndarray):
        v = v.tolist()
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    if isinstance(v, numbers.Integral):
        return str(int(v))
    if isinstance(v, numbers.Real):
        return repr(float(v))
    if isinstance(v, str):
        # A bare word is read as a string by the core; quoting keeps e.g. "1" a string.
        return json.dumps(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if v is None:
        return ""  # removes the key, as an empty --set VALUE does
    raise TypeError(f"override value {v!r} is not a bool, number, string, list or None")


def overrides_list(overrides: Optional[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """``{"ftl.gc_victim": "fifo"}`` as ``[("ftl.gc_victim", '"fifo"')]``, in key order."""
    if not overrides:
        return []
    return [(str(k), _toml_value(v)) for k, v in overrides.items()]


def _dict_to_toml(d: Mapping[str, Any], prefix: str = "") -> str:
    """A nested dict as TOML text (scalars first, then sub-tables)."""
    lines: list[str] = []
    tables: list[tuple[str, Mapping[str, Any]]] = []
    for k, v in d.items():
        if isinstance(v, Mapping):
            tables.append((k, v))
        elif v is not None:
            lines.append(f"{k} = {_toml_value(v)}")
    out = "\n".join(lines) + ("\n" if lines else "")
    for k, v in tables:
        name = f"{prefix}{k}"
        out += f"\n[{name}]\n" + _dict_to_toml(v, name + ".")
    return out


class Config:
    """A validated drive config.

    Build one with :meth:`from_preset`, :meth:`from_toml`, :meth:`from_file` or
    :meth:`from_dict`; :meth:`with_overrides` derives another. Every constructor checks the
    config as ``ftlsim run --config`` does and raises :class:`ftlsim.ConfigError` naming the
    key and the rule it breaks (``err.key``).
    """

    def __init__(self, toml_text: str, data: dict[str, Any]) -> None:
        self._toml = toml_text
        self._data = data

    @classmethod
    def from_toml(cls, text: str, origin: str = "config") -> "Config":
        """Parse and check TOML text (``origin`` names it in errors)."""
        toml_text, data = _native.check_config(text, origin)
        return cls(toml_text, data)

    @classmethod
    def from_file(cls, path: Union[str, "os.PathLike[str]"]) -> "Config":
        """Read and check a TOML file."""
        p = Path(path)
        return cls.from_toml(p.read_text(), str(p))

    @classmethod
    def from_preset(cls, name: str) -> "Config":
        """A built-in preset (:func:`ftlsim.presets`)."""
        return cls.from_toml(_native.preset_toml(name), name)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], origin: str = "dict") -> "Config":
        """A config from nested dicts with the TOML file's tables and keys."""
        return cls.from_toml(_dict_to_toml(d), origin)

    def with_overrides(self, overrides: Mapping[str, Any]) -> "Config":
        """This config with dotted keys set (``{"ftl.gc_victim": "fifo"}``), checked."""
        toml_text, data = _native.check_config(self._toml, self.name, overrides_list(overrides))
        return Config(toml_text, data)

    @property
    def name(self) -> str:
        name: str = self._data["name"]
        return name

    def to_dict(self) -> dict[str, Any]:
        """Every field, defaults filled in, as nested dicts."""
        data: dict[str, Any] = json.loads(json.dumps(self._data))
        return data

    def to_toml(self) -> str:
        """The complete config as TOML (loadable by ``ftlsim run --config``)."""
        return self._toml

    def __getitem__(self, key: str) -> Any:
        """A field by dotted key: ``cfg["geometry.channels"]``."""
        v: Any = self._data
        for part in key.split("."):
            v = v[part]
        return v

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Config) and other._data == self._data

    def __repr__(self) -> str:
        g = self._data["geometry"]
        return (f"<ftlsim.Config {self.name}: {g['channels']} ch x {g['chips_per_channel']} chips, "
                f"ftl {self._data['ftl']['name']}>")
