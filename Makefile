# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test suite benchmarks calibration test-fast test-agents agents lint bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/changeup run challenges/export-time --agent scripted --out runs --quiet

lint: $(STAMP)
	$(BIN)/ruff check triggers orchestrator tests benchmarks
	$(BIN)/ruff format --check triggers orchestrator tests benchmarks
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache

# The real agent CLIs, at their pinned versions, into .agents/ (npm under its own prefix, a venv
# per PyPI CLI; never global). Already-installed pins are left alone. OpenHands is too large for
# the suite's time: AGENTS=--all installs it too (its real_cli tests skip, saying why, without).
AGENTS ?=
agents: $(STAMP)
	$(BIN)/python -m tests.realcli.install $(AGENTS)

# The suite runs in WORKERS processes (pytest-xdist): most of a test's time is spent waiting on
# the subprocesses it starts, so more workers than cores keep both cores busy. A file's tests run
# on one worker, one after another (--dist loadfile: module fixtures such as the Ray cluster are
# made once, and tests that look for each other's traces machine-wide do not overlap; loadgroup's
# xdist_group is ignored under pytest 9.2, which no longer reads the node id xdist 3.8 rewrites);
# a test that measures something machine-wide is marked `alone` (tests/conftest.py).
# --durations=25 names the slowest.
# The suite includes the real_cli tests: the real agent CLIs against the scripted model server.
WORKERS ?= 3
PYTEST := $(BIN)/python -m pytest -n $(WORKERS) --dist loadfile

# `make test` needs nothing else; `make -j4 --output-sync=target test` (as .ci/run does) runs the
# steps that do not wait on each other at once: the lint, the agents' install (mostly download),
# the calibration and the benchmarks; the suite starts once the agents are installed and the
# calibration is done, so that its tests do not share the cores with them.
test: lint agents benchmarks calibration suite

suite: $(STAMP) agents calibration
	$(PYTEST) -q --durations=25 --cov --cov-report=term-missing:skip-covered

# Each benchmark runs once with tiny parameters (a few seconds each), so none can rot: a crash
# fails the target; a missed goal does not (it only matters at full size).
benchmarks: $(STAMP)
	$(BIN)/python benchmarks/engine.py --events 20000
	$(BIN)/python benchmarks/replay.py --events 2000 --repeat 1
	$(BIN)/python benchmarks/latency.py --trials 1 --warmup 0
	$(BIN)/python benchmarks/snapshot.py --files 200 --rounds 1 --copies 1
	$(BIN)/python benchmarks/concurrency.py --sessions 3 --single 1
	$(BIN)/python benchmarks/cli_start.py --runs 1 --command=--help
	$(BIN)/python benchmarks/view.py --events 2000 --trials 3

calibration: $(STAMP)
	@start=$$(date +%s); $(BIN)/changeup calibrate challenges/* --out runs/calibration \
	  && echo "calibration took $$(( $$(date +%s) - start )) s"

test-fast: $(STAMP)
	$(PYTEST) -q -x -m "not slow and not real_cli"

# The real agent CLIs alone: install the pins, run the tests marked real_cli.
test-agents: agents
	$(PYTEST) -q -m real_cli tests/realcli

bench: $(STAMP)
	$(BIN)/python benchmarks/engine.py
	$(BIN)/python benchmarks/latency.py
	$(BIN)/python benchmarks/replay.py
	$(BIN)/python benchmarks/snapshot.py
	$(BIN)/python benchmarks/concurrency.py
	$(BIN)/python benchmarks/cli_start.py
	$(BIN)/python benchmarks/view.py

clean:
	rm -rf $(VENV) runs .agents .pytest_cache .mypy_cache .ruff_cache .coverage
