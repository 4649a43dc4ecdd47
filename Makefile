# The two set-up commands (README): `make run` and `make test`. Rust comes from rustup
# (https://rustup.rs) and crates.io; the Python package and its test tools from PyPI into
# .venv; the browser of the report test from Debian's packages (`chromium`).
CARGO ?= cargo
PYTHON ?= python3
FTLSIM := target/release/ftlsim
VENV := .venv
VPY := $(VENV)/bin/python
# maturin, installed into the venv, must be on PATH for pip's build.
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)

.PHONY: build run test results python browser bench crash-test clean

build:
	$(CARGO) build --release --locked -p ftlsim-cli

# The main job: the `default` preset, page FTL, filled and preconditioned to steady state,
# then the built-in default workload. Results land in out/.
run: build
	$(FTLSIM) run --steady-state --out out

# The suite CI runs: Rust unit, property, integration and CLI tests, then the Python
# package's tests (pytest; the report test drives a headless Chromium), then both again
# without the real sample traces. About 12 minutes on a
# fresh clone on 2 cores (docs/performance.md; the machine's speed varies by the hour); the
# results pages' regenerations are `make results`.
PYTEST := FTLSIM_BIN=$(CURDIR)/target/debug/ftlsim FTLSIM_PYTHON=$(CURDIR)/$(VPY) $(VPY) -m pytest -q python/tests
# The suite's build is CI's, from a clean tree: line tables are all a failing test's backtrace
# needs, and incremental compilation's bookkeeping only pays off in an edit-compile loop (plain
# `cargo test` keeps both). A fresh clone's test build on 2 cores: 7 min 33 s -> 6 min 0 s.
SUITE_BUILD := CARGO_INCREMENTAL=0 CARGO_PROFILE_TEST_DEBUG=line-tables-only CARGO_PROFILE_DEV_DEBUG=line-tables-only
# pytest runs the Python extension of the same build as `cargo test`, not maturin's release
# build of it (`make python`), which compiled the workspace a second time. Its features must
# resolve as `cargo test --workspace`'s did, dev-dependencies included, or its dependencies
# compile again: hence the whole workspace's targets. It goes where an editable install puts
# it (python/ftlsim, found through a .pth), beside the package's dependencies from
# pyproject.toml, installed by uv without building the package.
# The cdylib under its Linux name.
SUITE_NATIVE := target/debug/lib_native.so
# One pytest process. A test past 300 s (the slowest takes about 40) prints every thread's stack
# and ends the run (a forked sweep worker once wedged CI until its 90 minutes ran out; they are
# new interpreters now, docs/performance.md). The packages' bytecode is compiled at install:
# with PYTHONDONTWRITEBYTECODE set (CI sets it) each sweep worker otherwise compiled pandas and
# distributed from source, 3.3 s for `import distributed` against 1.2 s, and pytest took 9 min.
PYTEST_TIMEOUT := --timeout 300 --timeout-method thread
# The suite runs a second time with the real sample traces (../shared/traces, outside the
# repository) set to an empty directory: a clone without them must pass too, its tests that
# want a sample skipped with a line saying which (issue 59). About 3 minutes more.
NO_SAMPLES := $(CURDIR)/target/no-samples
test: $(VENV)/.tools browser
	$(VENV)/bin/uv pip install --quiet --compile-bytecode --python $(VPY) -r pyproject.toml --extra test
	$(SUITE_BUILD) $(CARGO) test --workspace --locked
	$(SUITE_BUILD) $(CARGO) build --workspace --all-targets --profile test --locked
	cp $(SUITE_NATIVE) python/ftlsim/_native.abi3.so
	echo $(CURDIR)/python > "$$($(VPY) -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/ftlsim.pth"
	$(PYTEST) -m "not slow" $(PYTEST_TIMEOUT)
	rm -rf $(NO_SAMPLES) && mkdir -p $(NO_SAMPLES)
	FTLSIM_TRACES=$(NO_SAMPLES) $(SUITE_BUILD) $(CARGO) test --workspace --locked -q
	FTLSIM_TRACES=$(NO_SAMPLES) $(PYTEST) -m "not slow" -rs $(PYTEST_TIMEOUT)

# Every docs/results page regenerated from its script and compared with the committed page
# (pytest -m slow): about 40 minutes on 2 cores. Run it before committing a change that may
# move a simulated figure (docs/results/CHANGES.md says which pages moved and why).
results: python
	$(SUITE_BUILD) $(CARGO) build --locked -p ftlsim-cli
	$(PYTEST) -m slow

# The Python package `ftlsim` (Rust core + python/ftlsim), built by maturin into .venv.
python: $(VENV)/.tools
	$(VPY) -m pip install --quiet --no-build-isolation -e '.[test]'

$(VENV)/.tools: Makefile
	$(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install --quiet --upgrade pip 'maturin>=1.7,<2' 'uv>=0.5,<1'
	touch $@

# Debian's Chromium for the report's browser test, unless it is already there.
browser:
	@command -v chromium >/dev/null || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium >/dev/null; }

# The standard benchmark (issue 2): requests per wall second and peak RSS; then the Python
# package's overhead against the CLI and the speed-up of a local sweep.
bench: build python
	$(FTLSIM) bench
	$(FTLSIM) bench --scaling
	$(FTLSIM) bench --tenants 4
	$(FTLSIM) bench --parse ../shared/traces
	$(VPY) python/bench.py

# Crash-consistency fuzzing at length (issue 15): N power cuts per configuration of each FTL
# that recovers (docs/power-loss.md); the suite runs 40.
N ?= 100000
crash-test:
	FTLSIM_CRASH_CASES=$(N) $(CARGO) test --release --locked -p ftlsim-ftl --test integration cut_anywhere -- --nocapture

clean:
	$(CARGO) clean
	rm -rf out $(VENV)
