# flashback — every way in. `make demo` and `make test` bootstrap everything they need.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(abspath $(VENV))/bin
export VIRTUAL_ENV := $(abspath $(VENV))
export PATH := $(BIN):$(PATH)
CARGO := cargo
MANIFEST := native/Cargo.toml

SYS_STAMP := $(VENV)/.system-deps
BUILD_STAMP := $(VENV)/.built
RUST_SRC := $(shell find native/src -name '*.rs' 2>/dev/null) native/Cargo.toml native/Cargo.lock

.PHONY: setup demo test test-rust test-python test-slow bench lab fmt lint typecheck clean readme-figure

setup: $(BUILD_STAMP)

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q maturin==1.16.0

# Debian packages: fio (agreement tests, benchmarks, fio import), chromium (HTML report
# and JupyterLab checks), fdisk's sfdisk and e2fsprogs (safety tests), hdparm (ATA secure
# erase / sanitize for purge) and smartmontools (SMART snapshots). Installed when missing;
# needs root (as CI is).
$(SYS_STAMP): Makefile | $(BIN)/python
	@missing=""; for p in fio:fio chromium:chromium sfdisk:fdisk mkfs.ext4:e2fsprogs hdparm:hdparm smartctl:smartmontools; do \
	  command -v $${p%%:*} >/dev/null || missing="$$missing $${p##*:}"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing Debian packages:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  else echo "flashback: missing$$missing; install them with: sudo apt-get install$$missing" >&2; fi; \
	fi
	@touch $@

# pip's and cargo's lines go to .venv/build.log (shown if the build fails): a fresh build
# printed ~340 lines of "Requirement already satisfied", then nothing for minutes
$(BUILD_STAMP): $(BIN)/python $(SYS_STAMP) $(RUST_SRC) pyproject.toml
	@echo "building the native engine and installing Python packages (Rust, release: a few minutes on 2 cores; log: $(VENV)/build.log)"
	@cd $(CURDIR) && $(BIN)/maturin develop --release --extras dev --quiet > $(VENV)/build.log 2>&1 \
	  || { tail -n 40 $(VENV)/build.log; echo "flashback: the build failed; the whole log is $(VENV)/build.log" >&2; exit 1; }
	@echo "built: $$($(BIN)/python -c 'import flashback._native as n; print("flashback", n.__version__)')"
	@touch $@

demo: setup
	$(BIN)/flashback report -o out

# The README's picture (data/readme/report-puget.png), its Vega-Lite spec and its inputs,
# from Puget's loop replayed at the demo's scale; offline (vl-convert). tests/test_readme_figure.py
# fails when the committed picture is no longer what this makes.
readme-figure: setup
	$(BIN)/python -m flashback.report.readme data/readme

test: setup test-rust test-python

test-rust:
	$(CARGO) test --manifest-path $(MANIFEST) --quiet

test-python: setup
	$(BIN)/python -m pytest tests -q -m "not slow"

# The slow tests: 10k fuzz cases per parser, long change-point and coverage studies.
test-slow: setup
	$(BIN)/python -m pytest tests -q -m slow

# perf (Debian's linux-perf) counts the completions and CPU of the page-cache t/io_uring rows
# (tests/bench/engine_ring.py); without it those rows are skipped with the reason printed
bench: setup
	@command -v perf >/dev/null || { if [ "$$(id -u)" = 0 ]; then \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq linux-perf >/dev/null; \
	  else echo "flashback: perf is missing; install it with: sudo apt-get install linux-perf" >&2; fi; }
	$(CARGO) build --release --manifest-path $(MANIFEST) --examples --quiet
	$(BIN)/python tests/bench/run.py

# JupyterLab on notebooks/. As root (where `make demo` installs apt packages) it needs
# --allow-root; LAB_ARGS passes more, e.g. make lab LAB_ARGS="--no-browser --ip=0.0.0.0"
LAB_ARGS ?=
lab: setup
	$(BIN)/jupyter lab --notebook-dir=notebooks $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS)

fmt: setup
	$(CARGO) fmt --manifest-path $(MANIFEST)
	$(BIN)/ruff format toolkit tests notebooks

lint: setup
	$(CARGO) clippy --manifest-path $(MANIFEST) --all-targets --features python -- -D warnings
	$(BIN)/ruff check toolkit tests
	$(BIN)/ruff format --check toolkit tests notebooks
	cd toolkit && $(BIN)/python -m mypy.stubtest flashback._native --allowlist ../native/stubtest-allowlist.txt

# mypy on the package, no module excused (configuration: pyproject.toml's [tool.mypy]); the
# native module is checked through its committed stub
typecheck: setup
	$(BIN)/python -m mypy

clean:
	rm -rf $(VENV) native/target out
