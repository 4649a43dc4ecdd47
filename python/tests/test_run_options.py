"""Issue 38: a run's options are defined once, by `RunSpec` (crates/ftlsim-run/src/lib.rs);
every front (the CLI, the native module and its stub, `ftlsim.run`, the sweep's keys) must
offer each of them, under the name this table gives, and nothing else. Adding an option
without a front fails here."""

import ast
import inspect
import re
import subprocess

import ftlsim
from ftlsim import _native
from ftlsim._sweep import RUN_KEYS

from conftest import REPO

#: RunSpec field -> its name in Python (`ftlsim.run`, the sweep), in the native module, and the
#: CLI's flags. A field absent here has the same name everywhere (the CLI's in kebab case).
ALIASES = {
    "drive": (("preset", "config"), ("preset", "config_toml", "config_path"), ("--preset", "--config")),
    "sets": (("overrides",), ("overrides",), ("--set",)),
    "source": (("workload", "trace", "trace_options"), ("workload", "trace", "trace_options"),
               ("--workload", "--trace")),
    "interval_ns": (("interval",), ("interval",), ("--interval",)),
    "clean_shutdown": (("clean_shutdown",), ("clean_shutdown",), ("--no-clean-shutdown",)),
    "tenants": (("tenants",), ("tenants",), ("--tenant",)),
}
#: What a front has beyond the run's options.
EXTRA_PY = {"progress"}
EXTRA_SWEEP = {"tag"}
#: The sweep manages drive snapshots itself.
NOT_IN_SWEEP = {"load_state", "save_state"}


def runspec_fields():
    text = (REPO / "crates/ftlsim-run/src/lib.rs").read_text()
    body = text[text.index("pub struct RunSpec {"):]
    body = body[:body.index("\n}")]
    return re.findall(r"^\s*pub (\w+):", body, re.M)


def names(field):
    py, native, cli = ALIASES.get(field, ((field,), (field,), ("--" + field.replace("_", "-"),)))
    return set(py), set(native), set(cli)


def test_every_front_offers_every_run_option_and_nothing_else(cli):
    fields = runspec_fields()
    assert "trim_to" in fields and "power_cut" in fields, fields
    py_want, native_want, cli_want = set(), set(), set()
    for f in fields:
        py, native, flags = names(f)
        py_want |= py
        native_want |= native
        cli_want |= flags
    py_have = set(inspect.signature(ftlsim.run).parameters) - EXTRA_PY
    assert py_have == py_want, ("ftlsim.run", py_have ^ py_want)
    native_have = set(inspect.signature(_native.run).parameters) - EXTRA_PY
    assert native_have == native_want, ("_native.run", native_have ^ native_want)
    stub = ast.parse((REPO / "python/ftlsim/_native.pyi").read_text())
    run_stub = next(n for n in stub.body if isinstance(n, ast.FunctionDef) and n.name == "run")
    stub_have = {a.arg for a in run_stub.args.kwonlyargs} - EXTRA_PY
    assert stub_have == native_want, ("_native.pyi", stub_have ^ native_want)
    sweep_have = set(RUN_KEYS) - EXTRA_SWEEP
    assert sweep_have == py_want - NOT_IN_SWEEP, ("RUN_KEYS", sweep_have ^ (py_want - NOT_IN_SWEEP))
    help_text = subprocess.run([str(cli), "run", "--help"], capture_output=True, text=True, check=True).stdout
    flags = set(re.findall(r"^\s+(--[a-z][a-z-]*)", help_text, re.M))
    missing = cli_want - flags
    assert not missing, ("ftlsim run --help lacks", missing)
