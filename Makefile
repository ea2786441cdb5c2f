# Two entry points: `make demo` and `make test`. Each creates .venv when missing and installs
# the core, the first-party plugins and every extra; a stamp keeps re-runs fast.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PLUGINS := $(wildcard plugins/*/pyproject.toml)

.PHONY: demo test test-fast test-durations lint typecheck pytest bench bench-check bench-goals bench-memory bench-skills bench-turn bench-understand bench-load bench-recall bench-validate bench-startup install clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# llama-cpp-python compiles from source and pip caches the wheel: build it for any x86-64 with
# AVX2 (not -march=native), so a wheel built on one machine also runs on another (a native
# build on a CPU with AMX died with "Illegal instruction" where AMX cannot be used)
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON

$(STAMP): $(BIN)/python pyproject.toml $(PLUGINS)
	$(BIN)/python -m pip install --quiet --upgrade pip
	CMAKE_ARGS="$${CMAKE_ARGS:-$(LLAMA_CMAKE_ARGS)}" $(BIN)/python -m pip install --quiet \
		-e '.[dev]' $(foreach p,$(dir $(PLUGINS)),-e ./$(p))
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/charter demo

lint: $(STAMP)
	$(BIN)/ruff check framework plugins tests benchmarks
	$(BIN)/ruff format --check framework plugins tests benchmarks

typecheck: $(STAMP)
	$(BIN)/mypy framework/charter plugins/charter-zh/charter_zh plugins/charter-skills/charter_skills \
		plugins/charter-llamacpp/charter_llamacpp

# The suite runs on every core (pytest-xdist; the work-stealing scheduler keeps both cores busy
# to the end). Two tiers: `slow` (sweeps, fuzz at full size, pip/pre-commit environments, the
# browser, benchmark smoke) and the rest. `make test` runs both with the `ci` Hypothesis profile
# and prints the 30 slowest tests and the time per directory; `make test-fast` is the inner
# loop: the default tier, a tenth of the Hypothesis examples. docs/testing.md says where a new
# slow test goes.
PYTEST_WORKERS ?= auto
PYTEST := $(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist worksteal

pytest: $(STAMP)
	$(PYTEST) --durations=30

test: lint typecheck pytest

test-fast: $(STAMP)
	$(PYTEST) -m "not slow" --hypothesis-profile=dev

test-durations: $(STAMP)
	$(PYTEST) --durations=30 -q

bench: bench-check bench-goals bench-memory bench-skills bench-turn

bench-check: $(STAMP)
	$(BIN)/python benchmarks/bench_check.py

bench-goals: $(STAMP)
	$(BIN)/python benchmarks/bench_goals.py

bench-memory: $(STAMP)
	$(BIN)/python benchmarks/bench_memory.py

bench-skills: $(STAMP)
	$(BIN)/python benchmarks/bench_skills.py

bench-turn: $(STAMP)
	$(BIN)/python benchmarks/bench_turn.py

bench-understand: $(STAMP)
	$(BIN)/python benchmarks/bench_understand.py

bench-load: $(STAMP)
	$(BIN)/python benchmarks/bench_load.py

bench-recall: $(STAMP)
	$(BIN)/python benchmarks/bench_recall.py

bench-validate: $(STAMP)
	$(BIN)/python benchmarks/bench_validate.py

bench-startup: $(STAMP)
	$(BIN)/python benchmarks/bench_startup.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build *.egg-info
