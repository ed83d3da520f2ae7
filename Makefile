# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-fast test-agents agents lint bench clean

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

# After the suite, each benchmark runs once with tiny parameters (a few seconds each), so none
# can rot: a crash fails the target; a missed goal does not (it only matters at full size).
# The suite includes the real_cli tests: the real agent CLIs against the scripted model server.
test: lint agents
	$(BIN)/python -m pytest -q --durations=25 --cov --cov-report=term-missing:skip-covered
	$(BIN)/python benchmarks/engine.py --events 20000
	$(BIN)/python benchmarks/replay.py --events 2000 --repeat 1
	$(BIN)/python benchmarks/latency.py --trials 1 --warmup 0
	$(BIN)/python benchmarks/snapshot.py --files 200 --rounds 1 --copies 1
	$(BIN)/python benchmarks/concurrency.py --sessions 3 --single 1
	$(BIN)/python benchmarks/cli_start.py --runs 1 --command=--help
	$(BIN)/changeup calibrate challenges/* --out runs/calibration

test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -x -m "not slow and not real_cli"

# The real agent CLIs alone: install the pins, run the tests marked real_cli.
test-agents: agents
	$(BIN)/python -m pytest -q -m real_cli tests/realcli

bench: $(STAMP)
	$(BIN)/python benchmarks/engine.py
	$(BIN)/python benchmarks/latency.py
	$(BIN)/python benchmarks/replay.py
	$(BIN)/python benchmarks/snapshot.py
	$(BIN)/python benchmarks/concurrency.py
	$(BIN)/python benchmarks/cli_start.py

clean:
	rm -rf $(VENV) runs .agents .pytest_cache .mypy_cache .ruff_cache .coverage
