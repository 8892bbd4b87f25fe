# Two entry points for a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# The five folders as the ``keel`` package, for the tools that read files rather than import them.
LINT_VIEW := build/lint
PACKAGES := api checkpoints graphs nodes tools

# keel's five folders are mapped into one package, so setuptools installs it editable through an
# import finder and says so in a notice on every install; nothing in it needs acting on.
EDITABLE := PYTHONWARNINGS="ignore:Editable installation" $(BIN)/pip install --quiet -e

.PHONY: run chat studio notebooks telegram-try test test-heavy lint typecheck venv dev clean lint-view system screenshot docs

$(BIN)/keel: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(EDITABLE) .
	@touch $@

$(VENV)/.dev: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(EDITABLE) '.[dev]'
	@touch $@

venv: $(BIN)/keel
dev: $(VENV)/.dev

run: $(BIN)/keel
	$(BIN)/keel serve

chat: $(BIN)/keel
	$(BIN)/keel chat

studio: dev
	$(BIN)/langgraph dev

# The Telegram bot against a local Bot API server: write as a Telegram user, no token needed.
telegram-try: $(BIN)/keel
	$(EDITABLE) '.[telegram]'
	$(BIN)/python -m tests.try_telegram

notebooks: dev
	$(BIN)/pip install --quiet 'jupyterlab>=4,<5'
	$(BIN)/jupyter lab notebooks/

lint-view:
	@mkdir -p $(LINT_VIEW)/keel
	@for package in $(PACKAGES); do ln -sfn ../../../$$package $(LINT_VIEW)/keel/$$package; done

lint: dev lint-view
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	PYTHONPATH=$(LINT_VIEW) $(BIN)/lint-imports

typecheck: dev lint-view
	$(BIN)/mypy

# PostgreSQL, Graphviz and Chromium for the suite (apt-get, only what is missing).
system:
	bash tests/system_packages.sh

# The suite in TEST_WORKERS processes; a module's tests share one process and its servers.
TEST_WORKERS ?= 4
test: system lint typecheck
	$(BIN)/pytest -n $(TEST_WORKERS) --dist loadscope

# The tests behind the ``heavy`` marker (a large download first): Agent Chat UI in Chromium.
test-heavy: dev system
	$(BIN)/pytest -m heavy

# The tool table in docs/api.md, made from the tools' declarations.
docs: dev
	$(BIN)/python -c "from pathlib import Path; from keel.tools.spec import with_tool_table; \
	from keel.tools.tasks.todo import TODO_TOOLS; p = Path('docs/api.md'); \
	p.write_text(with_tool_table(p.read_text(), TODO_TOOLS))"

# The chat page's picture in the README, taken from a real session in Chromium.
screenshot: dev system
	$(BIN)/python -m tests.e2e.screenshot docs/web-page.png
	$(BIN)/python -m tests.e2e.screenshot docs/web-page-phone.png --phone
	$(BIN)/python -m tests.e2e.screenshot docs/web-page-edit.png --edit

clean:
	rm -rf $(VENV) build .langgraph_api .pytest_cache .mypy_cache .ruff_cache
