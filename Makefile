# The README's commands:
#   make demo   set up (Python virtual environment, Rust build) and run the demo
#   make test   set up and run every check and test, as CI does (.ci/run)
#   make bench  the engine's speed and memory on the standard scenarios
#   make browser  install Debian's Chromium if missing (the HTML report tests
#                 open reports in a real headless browser)
#   make xenalyze install Debian's xenalyze (xen-utils) if missing (a test reads
#                 a --xentrace output with it)
#   make fuzz   a long fuzzing run: libFuzzer on the Rust parsers (tools/fuzz.sh)
#               and Hypothesis on the Python loader and CLI
# `make test` installs Chromium and xenalyze only where it may (as root, or
# with sudo without a password); elsewhere the tests that need them skip with a
# notice, and everything else runs.
# Setup is idempotent: the package is (re)installed only when the Rust sources
# or the packaging changed since the last install.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# What the installed extension module is built from.
BUILD_INPUTS := pyproject.toml Cargo.toml Cargo.lock \
	$(shell find crates -type f \( -name '*.rs' -o -name '*.toml' \) -not -path '*/target/*')

.PHONY: demo test bench setup browser xenalyze fuzz optional-tools

demo: setup
	$(BIN)/vmsched run scenarios/credit-three-vms.toml --out results/demo
	$(BIN)/vmsched run scenarios/web-through-dom0.toml --out results/demo/web
	@if [ -d python/vmsched/alert ]; then \
		echo "$(BIN)/vmsched alert --scheduler credit --quick --out results/demo/alert"; \
		$(BIN)/vmsched alert --scheduler credit --quick --out results/demo/alert; \
	fi

test: setup optional-tools
	cargo fmt --all --check
	cargo clippy --workspace --all-targets --locked -- -D warnings
	cargo test --release --locked -p vmsched-core
	$(BIN)/ruff check python tests tools
	$(BIN)/ruff format --check python tests tools
	$(BIN)/pytest -q

bench: setup
	$(BIN)/vmsched bench --out results/bench

# The package's bytecode is written once here: an editable install is not
# compiled by pip, and where PYTHONDONTWRITEBYTECODE is set every command
# would otherwise compile vmsched's modules again at start-up (tens of ms).
# compileall skips the modules whose bytecode is up to date.
setup: $(VENV)/.installed
	@$(BIN)/python -m compileall -q python/vmsched

# apt-get needs root: sudo when not root (and sudo exists).
SUDO := $(shell [ "$$(id -u)" = 0 ] || command -v sudo)
# Can this user install packages without being asked for a password?
CAN_INSTALL := $(shell [ "$$(id -u)" = 0 ] || sudo -n true 2>/dev/null && echo yes)

optional-tools:
ifeq ($(CAN_INSTALL),yes)
	$(MAKE) browser xenalyze
else
	@echo "not installing chromium or xenalyze (needs root or sudo): the tests that use them skip"
endif

xenalyze:
	@command -v xenalyze >/dev/null 2>&1 || ls /usr/lib/xen-*/bin/xenalyze >/dev/null 2>&1 || { \
		echo "installing xen-utils-common (xenalyze, to read the --xentrace test output)"; \
		$(SUDO) apt-get update && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive \
			apt-get install -y --no-install-recommends xen-utils-common; }

fuzz: setup
	tools/fuzz.sh all 1000000
	VMSCHED_FUZZ_EXAMPLES=20000 $(BIN)/pytest -q tests/test_fuzz_input.py

browser:
	@command -v chromium >/dev/null 2>&1 || { \
		echo "installing chromium (headless browser for the HTML report tests)"; \
		$(SUDO) apt-get update && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive \
			apt-get install -y --no-install-recommends chromium; }

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Editable: Python changes need no reinstall; this rule rebuilds the Rust
# extension when its inputs change.
$(VENV)/.installed: $(BIN)/python $(BUILD_INPUTS)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $@
