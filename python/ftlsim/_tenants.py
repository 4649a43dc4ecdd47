"""Tenants of a run (issue 39, docs/tenants.md): the text each one is given to the core in,
the per-tenant results as a DataFrame, and MQSim's fairness over runs alone."""

from __future__ import annotations

import os
from typing import Any, Mapping, Optional, Protocol, Sequence, Union

import pandas as pd

from . import _native

#: A tenant: the CLI's ``--tenant`` text, or a dict of its keys (``workload`` holding the
#: workload spec, ``ns`` a ``(start, end)`` pair or ``"0..0.5"``).
TenantLike = Union[str, Mapping[str, Any]]

#: The keys a tenant dict takes, besides ``workload``: the core's tenant keys (from Rust, so
#: the two never part) and ``qd``, a trace tenant's queue depth (a workload's own key else).
_KEYS = (*_native.tenant_keys(), "qd")


def tenant_text(t: TenantLike) -> str:
    """The ``--tenant`` text of a tenant given as text or as a dict."""
    if isinstance(t, str):
        return t
    if not isinstance(t, Mapping):
        raise TypeError(f"a tenant must be a string or a dict, not {type(t).__name__} {t!r}")
    unknown = set(t) - set(_KEYS) - {"workload"}
    if unknown:
        raise ValueError(f"tenant {t.get('name')!r}: unknown keys {sorted(unknown)} "
                         f"(keys: {', '.join(_KEYS)}, workload)")
    items = []
    for k in _KEYS:
        if k not in t or t[k] is None:
            continue
        v = t[k]
        if k == "ns" and isinstance(v, (tuple, list)):
            if len(v) != 2:
                raise ValueError(f"tenant {t.get('name')!r}: ns must be (start, end), not {v!r}")
            v = f"{v[0]}..{v[1]}"
        elif k in ("trace", "dp_scheme"):
            v = os.fspath(v)
        elif k in ("plids", "plid_sizes") and isinstance(v, (tuple, list)):
            v = ":".join(str(p) for p in v)
        items.append(f"{k}={v}")
    workload = t.get("workload")
    if workload:
        if not isinstance(workload, str):
            raise TypeError(f"tenant {t.get('name')!r}: workload must be a string, not {workload!r}")
        items.append(workload)
    return ",".join(items)


def tenants_list(tenants: Optional[Sequence[TenantLike]]) -> list[str]:
    """The tenants' texts (``[]`` for none)."""
    if tenants is None:
        return []
    if isinstance(tenants, (str, Mapping)) or not isinstance(tenants, Sequence):
        raise TypeError(f"tenants must be a list of tenants (strings or dicts), not {tenants!r}")
    if not tenants:
        raise ValueError("tenants = []: no tenant given; leave tenants out for a run of one source (workload= or "
                         "trace=)")
    return [tenant_text(t) for t in tenants]


def tenants_frame(report: Mapping[str, Any]) -> pd.DataFrame:
    """``report.tenants`` as one row per tenant, its nested keys joined by dots
    (``host.requests``, ``response_time.read.p99_ns``), as :meth:`Result.row` names them."""
    tenants = report.get("tenants")
    if tenants is None:
        raise ValueError("this run has no tenants (give tenants=[...] to ftlsim.run)")
    return pd.json_normalize(tenants, sep=".")


class RunResult(Protocol):
    """What fairness reads of an ftlsim.Result: its report (its summary marks it as one)."""

    @property
    def report(self) -> dict[str, Any]: ...

    @property
    def summary(self) -> dict[str, Any]: ...


def _is_result(x: Any) -> bool:
    """Whether `x` is a run's result: an ftlsim.Result (by what it holds: its report and its
    summary)."""
    return isinstance(getattr(x, "report", None), Mapping) and isinstance(getattr(x, "summary", None), Mapping)


def fairness(shared: RunResult, alone: Mapping[str, RunResult],
             metric: str = "response_time.all.mean_ns") -> pd.DataFrame:
    """Each tenant's slowdown in ``shared`` against its run alone, and the run's fairness, as
    MQSim defines them (Tavakkol et al., FAST'18, Sec. 5; src/ssd/TSU_FLIN.cpp): slowdown =
    ``metric`` shared / ``metric`` alone (mean response time unless told), fairness = the
    smallest slowdown over the largest (1 is perfectly fair).

    ``alone`` maps each tenant's name to the result of a run of that tenant by itself, on
    the same drive and preconditioning. Returns one row per tenant: ``name``, ``shared``,
    ``alone``, ``slowdown``, ``fairness`` (the same in every row)."""
    # Read through each result's report (as Result.tenants does), so that this module, which
    # _run imports, needs nothing of _run's.
    if not _is_result(shared):
        raise TypeError(f"shared must be the ftlsim.Result of a run with tenants, not {type(shared).__name__}")
    if not isinstance(alone, Mapping) or not all(_is_result(r) for r in alone.values()):
        raise TypeError("alone must map each tenant's name to the ftlsim.Result of its run alone, not "
                        f"{type(alone).__name__}")
    t = tenants_frame(shared.report).set_index("name")
    rows = []
    for name in t.index:
        if name not in alone:
            raise ValueError(f"no run alone of tenant {name!r} (alone has {sorted(alone)})")
        a = tenants_frame(alone[name].report).set_index("name")
        if name not in a.index:
            raise ValueError(f"alone[{name!r}] is a run without tenant {name!r}")
        s_v, a_v = float(t.loc[name, metric]), float(a.loc[name, metric])
        rows.append({"name": name, "shared": s_v, "alone": a_v, "slowdown": s_v / a_v if a_v else float("nan")})
    df = pd.DataFrame(rows)
    df["fairness"] = df["slowdown"].min() / df["slowdown"].max()
    return df


def fdp_frame(report: Mapping[str, Any]) -> pd.DataFrame:
    """``report.ftl_metrics.fdp.handles`` as one row per placement handle."""
    fdp = report.get("ftl_metrics", {}).get("fdp")
    if fdp is None:
        raise ValueError("this run's drive has no [fdp] section (overrides={'fdp.handles': N})")
    return pd.DataFrame(fdp["handles"])


def row_columns(report: Mapping[str, Any]) -> dict[str, Any]:
    """The tenants' and FDP handles' lists of ``report`` as flat columns keyed by tenant name
    and handle number: ``report.tenants.db.performance.iops``,
    ``report.ftl_metrics.fdp.handles.1.write_amplification``."""
    out: dict[str, Any] = {}
    for t in report.get("tenants") or []:
        flat = pd.json_normalize(t, sep=".").iloc[0]
        out.update({f"report.tenants.{t['name']}.{k}": v for k, v in flat.items() if k != "name"})
    fdp = (report.get("ftl_metrics") or {}).get("fdp")
    for h in (fdp or {}).get("handles", []):
        out.update({f"report.ftl_metrics.fdp.handles.{h['handle']}.{k}": v for k, v in h.items() if k != "handle"})
    return out
