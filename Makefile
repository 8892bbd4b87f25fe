# Two entry points for a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: run chat studio notebooks test lint typecheck venv dev clean

$(BIN)/keel: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e .
	@touch $@

$(VENV)/.dev: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	@touch $@

venv: $(BIN)/keel
dev: $(VENV)/.dev

run: $(BIN)/keel
	$(BIN)/keel serve

chat: $(BIN)/keel
	$(BIN)/keel chat

studio: dev
	$(BIN)/langgraph dev

notebooks: dev
	$(BIN)/pip install --quiet 'jupyterlab>=4,<5'
	$(BIN)/jupyter lab notebooks/

lint: dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

typecheck: dev
	$(BIN)/mypy

test: lint typecheck
	$(BIN)/pytest

clean:
	rm -rf $(VENV) .keel .langgraph_api .pytest_cache .mypy_cache .ruff_cache
