# The two set-up commands (README): `make run` and `make test`. Everything installs from
# crates.io through Cargo; Rust itself comes from rustup (https://rustup.rs).
CARGO ?= cargo
FTLSIM := target/release/ftlsim

.PHONY: build run test bench clean

build:
	$(CARGO) build --release --locked

# The main job: the `default` preset, page FTL, filled and preconditioned to steady state,
# then the built-in default workload. Results land in out/.
run: build
	$(FTLSIM) run --steady-state --out out

# The whole suite: unit, property, integration and CLI tests.
test:
	$(CARGO) test --workspace --locked

# The standard benchmark (issue 2): requests per wall second and peak RSS.
bench: build
	$(FTLSIM) bench
	$(FTLSIM) bench --scaling
	$(FTLSIM) bench --parse ../shared/traces

clean:
	$(CARGO) clean
	rm -rf out
