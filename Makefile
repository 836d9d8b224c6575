# PRISM Experiments. `make help` lists the targets.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TORCH_VERSION := 2.13.0
EXPERIMENT ?= ranking_modes
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.DEFAULT_GOAL := help
.PHONY: help setup run sweep compare ui reproduce test test-fast bench bench-quick clean

help: ## Show this help
	@grep -hE '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  \033[36m%-12s\033[0m %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# The CPU wheel first: anything that depends on torch must not pull a CUDA build.
	$(BIN)/pip install --quiet torch==$(TORCH_VERSION)
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP) ## Create .venv and install the project (re-runs only when pyproject.toml changes)

run: $(STAMP) ## Run one experiment with the default config (extra Hydra overrides: ARGS="ranking=x_algo seed=3")
	$(BIN)/python -m prism_experiments $(ARGS)

test: $(STAMP) ## Run every test, the real-stack integration tests included
	$(BIN)/python -m pytest $(ARGS)

test-fast: $(STAMP) ## Run the unit tests only (no model, no Chroma, no MLflow)
	$(BIN)/python -m pytest -m "not integration and not slow" $(ARGS)

clean: ## Remove caches and outputs under runs/ (keeps runs/README.md)
	find runs -mindepth 1 ! -name README.md -prune -exec rm -rf {} +
