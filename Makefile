# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-fast lint bench clean

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

# After the suite, each benchmark runs once with tiny parameters (a few seconds each), so none
# can rot: a crash fails the target; a missed goal does not (it only matters at full size).
test: lint
	$(BIN)/python -m pytest -q --cov --cov-report=term-missing:skip-covered
	$(BIN)/python benchmarks/engine.py --events 20000
	$(BIN)/python benchmarks/replay.py --events 2000 --repeat 1
	$(BIN)/python benchmarks/latency.py --trials 1 --warmup 0
	$(BIN)/python benchmarks/snapshot.py --files 200 --rounds 1 --copies 1
	$(BIN)/changeup calibrate challenges/* --out runs/calibration

test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -x -m "not slow"

bench: $(STAMP)
	$(BIN)/python benchmarks/engine.py
	$(BIN)/python benchmarks/latency.py
	$(BIN)/python benchmarks/replay.py
	$(BIN)/python benchmarks/snapshot.py

clean:
	rm -rf $(VENV) runs .pytest_cache .mypy_cache .ruff_cache .coverage
