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


def _ns(text):
    """A duration as ftlsim.run takes it ("100ms") in ns."""
    value, unit = re.fullmatch(r"([\d.]+)\s*(ns|us|ms|s)", text).groups()
    return round(float(value) * {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[unit])


def test_every_front_defaults_as_runspec_does(cli):
    # Issue 59: the defaults are RunSpec::default()'s; ftlsim.run, _native.run and the CLI
    # may not drift from them.
    want = _native.run_defaults()
    keys = ("seed", "fill_offset", "steady_state", "overwrite_span", "verify", "clean_shutdown")
    p = inspect.signature(ftlsim.run).parameters
    got = {k: p[k].default for k in keys}
    assert got == {k: want[k] for k in keys}, ("ftlsim.run", got)
    assert _ns(p["interval"].default) == want["interval_ns"] and p["preset"].default is None
    # The native run's defaults are in its pyo3 signature (Python sees `...` for them), and
    # its stub's.
    lib = (REPO / "crates/ftlsim-py/src/lib.rs").read_text()
    sig = re.search(r"#\[pyo3\(signature = \(\*, preset=None,(.*?)\)\)\]\s*#\[allow[^\n]*\n\s*fn run\(", lib, re.S)
    native = dict(re.findall(r"(\w+)=([^,()]+(?:\([^)]*\))?)", sig.group(1)))
    stub = ast.parse((REPO / "python/ftlsim/_native.pyi").read_text())
    run_stub = next(n for n in stub.body if isinstance(n, ast.FunctionDef) and n.name == "run")
    stub_defaults = {a.arg: d for a, d in zip(run_stub.args.kwonlyargs, run_stub.args.kw_defaults)}
    def rust(v):
        return str(v).lower() if isinstance(v, bool) else str(v)
    for k in keys:
        assert native[k].strip() == rust(want[k]), (k, native[k])
        assert ast.literal_eval(stub_defaults[k]) == want[k], ("_native.pyi", k)
    assert _ns(native["interval"].split('"')[1]) == want["interval_ns"]
    help_text = subprocess.run([str(cli), "run", "--help"], capture_output=True, text=True, check=True).stdout
    for flag, value in [("--seed", str(want["seed"])), ("--preset", want["preset"]),
                        ("--fill-offset", "0"), ("--overwrite-span", "0")]:
        assert re.search(rf"{flag} <[A-Z_]+>.*?\[default: {re.escape(value)}\]", help_text, re.S), flag
    assert _ns(re.search(r"--interval <INTERVAL>.*?\[default: (\w+)\]", help_text, re.S).group(1)) == \
        want["interval_ns"]


def test_a_sweeps_snapshot_key_is_the_cores_state_shaping_for_fdp_and_channel_systems():
    # Issue 59: the sweep's key compares what the core compares when it loads a snapshot;
    # runs that differ only in [fdp] or a channel system's mode shared one key before, failed
    # to load the snapshot and preconditioned again.
    from ftlsim import _sweep
    small = {"geometry.blocks_per_plane": 128}
    pairs = [({"preset": "default", "steady_state": True, "overrides": small},
              {"preset": "default", "steady_state": True, "overrides": {**small, "fdp.handles": 2}}),
             ({"preset": "changwen", "steady_state": True},
              {"preset": "changwen", "steady_state": True, "overrides": {"multichannel.mode": "gca"}})]
    for a, b in pairs:
        assert _sweep._snapshot_key(a) != _sweep._snapshot_key(b), (a, b)
    fdp = _sweep._snapshot_fields(pairs[0][1])["config"]
    assert fdp["fdp"]["handles"] == 2 and fdp["geometry"]["blocks_per_plane"] == 128, fdp
    assert _sweep._snapshot_fields(pairs[1][1])["config"]["multichannel"] == "gca"
