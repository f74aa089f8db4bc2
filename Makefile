# ragmeter — the two commands a newcomer needs are `make demo` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP_CORE := $(VENV)/.core-installed
STAMP_ALL := $(VENV)/.all-installed

.PHONY: demo test lint bench clean system-deps mutation

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP_CORE): pyproject.toml setup.py src/ragmeter/_intern.c src/ragmeter/_trec_scan.c | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[judge,http,pipeline]'
	touch $@

# torch first, pinned to the local CPU build, so extras never pull a CUDA wheel.
$(STAMP_ALL): pyproject.toml setup.py src/ragmeter/_intern.c src/ragmeter/_trec_scan.c | $(BIN)/python
	$(BIN)/pip install --quiet 'torch==2.13.0'
	$(BIN)/pip install --quiet -e '.[all]'
	touch $@ $(STAMP_CORE)

demo: $(STAMP_CORE)
	$(BIN)/ragmeter run examples/suite.yaml --fresh
	$(BIN)/ragmeter run examples/compare.yaml --fresh

lint: $(STAMP_ALL)
	$(BIN)/ruff check src tests bench mutation setup.py
	$(BIN)/ruff format --check src tests bench mutation setup.py
	$(BIN)/mypy

system-deps:
	@bash .ci/system-deps.sh

test: $(STAMP_ALL) lint system-deps
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python -m pytest -n 2 --dist loadgroup -q

bench: $(STAMP_ALL)
	$(BIN)/python bench/check_outputs.py
	$(BIN)/python bench/run_bench.py
	$(BIN)/python bench/bench_trec_eval.py
	$(BIN)/python bench/bench_agentic.py --end-to-end
	$(BIN)/python bench/bench_ray.py

# Mutation testing of the core modules (slow; not part of `make test`): docs/mutation.md.
# MODULES="report/gate report/stats" runs some of them.
mutation: $(STAMP_ALL)
	$(BIN)/python mutation/run.py $(MODULES)

clean:
	rm -rf $(VENV) mutants build dist *.egg-info src/*.egg-info src/ragmeter/*.so .mypy_cache .ruff_cache .pytest_cache
