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

test: lint
	$(BIN)/python -m pytest -q --cov --cov-report=term-missing:skip-covered
	$(BIN)/changeup calibrate challenges/* --out runs/calibration

test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -x -m "not slow"

bench: $(STAMP)
	$(BIN)/python benchmarks/engine.py
	$(BIN)/python benchmarks/latency.py
	$(BIN)/python benchmarks/replay.py

clean:
	rm -rf $(VENV) runs .pytest_cache .mypy_cache .ruff_cache .coverage
