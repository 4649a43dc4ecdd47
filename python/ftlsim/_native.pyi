"""Type stubs of the native module (crates/ftlsim-py): the Rust core seen from Python.
Use the typed wrappers in the ftlsim package; these are its building blocks."""

from typing import Any, Callable, Optional

__version__: str

class FtlsimError(Exception):
    """Base class of every ftlsim error."""

class ConfigError(FtlsimError):
    """A drive config that does not load or breaks a rule."""

    key: Optional[str]

class WorkloadError(FtlsimError):
    """A workload spec or run option out of range."""

    key: str

class TraceError(FtlsimError):
    """A trace file or line that cannot be used."""

    file: str
    line: int
    field: str

class InputError(FtlsimError):
    """A bad request in a trace or generator, or a file or option that cannot be used."""

class SnapshotError(FtlsimError):
    """A drive snapshot that cannot be saved or loaded."""

class SimulationError(FtlsimError):
    """The simulation failed: an FTL or flash-model bug, or an impossible drive."""

class InternalError(FtlsimError):
    """A bug in ftlsim: the Rust core panicked. Raised in place of ending the interpreter."""

def run(
    *,
    preset: Optional[str] = None,
    config_toml: Optional[str] = None,
    config_path: Optional[str] = None,
    ftl: Optional[str] = None,
    overrides: list[tuple[str, str]] = ...,
    workload: str = "",
    trace: Optional[str] = None,
    trace_options: Optional[dict[str, Any]] = None,
    seed: int = 1,
    fill: Optional[float] = None,
    fill_offset: float = 0.0,
    steady_state: bool = False,
    overwrite_span: float = 0.0,
    trim_to: Optional[float] = None,
    load_state: Optional[str] = None,
    save_state: Optional[str] = None,
    interval: str = "100ms",
    verify: bool = False,
    max_memory: Optional[str] = None,
    power_cut: Optional[str] = None,
    clean_shutdown: bool = True,
    tenants: list[str] = ...,
    arbitration: Optional[str] = None,
    progress: Optional[Callable[[str, int, Optional[int]], None]] = None,
) -> tuple[dict[str, Any], dict[str, list[Any]], dict[str, Any], list[tuple[str, str]]]:
    """Run one simulation with the GIL released: (results.json as a dict, the time series by
    column, the effective config, the files it read or saved as (role, path))."""

def presets() -> list[dict[str, Any]]: ...
def preset_toml(name: str) -> str: ...
def ftls() -> list[dict[str, Any]]: ...
def check_config(
    text: str, origin: str = "config", overrides: list[tuple[str, str]] = ...
) -> tuple[str, dict[str, Any]]: ...
def trace_stats(
    path: str, format: Optional[str] = None, page_size: int = 4096, skip_bad_lines: bool = False
) -> dict[str, Any]: ...
def trace_fit(path: str, extent_bytes: int = 1048576, format: Optional[str] = None,
              out: Optional[str] = None, update_share: Optional[float] = None,
              replay: Optional[str] = None, capacity_bytes: Optional[int] = None,
              seed: int = 1) -> tuple[str, dict[str, Any]]: ...
def trace_locality(path: str, format: Optional[str] = None) -> dict[str, Any]: ...
def workload_locality(spec: str, capacity_bytes: int, seed: int = 1) -> dict[str, Any]: ...
def fit_check(fit: str, requests: Optional[int] = None, seed: int = 1) -> dict[str, Any]: ...
def _panic_for_test(message: str) -> None: ...
def check_outputs(inputs: list[tuple[str, str]], outputs: list[tuple[str, str]]) -> None:
    """Raise InputError if an output (role, path), replaced whole, is an input or another output."""
def state_shaping(text: str) -> str:
    """The config parts that shape a drive's state (what a snapshot must match), as JSON."""
def tenant_keys() -> list[str]: ...
def run_defaults() -> dict[str, Any]:
    """RunSpec::default() by Python's argument names."""
