"""The run context of the graph: who is acting and with what, read by nodes through ``Runtime``.

``KeelContext`` is the graph's ``context_schema``. Callers (the CLI, the API, tests) build one per
turn; ``from_env`` fills the tunables from ``KEEL_*`` environment variables. Nothing here is
checkpointed: clients and stores travel here, never in state.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from nodes.done_marker import DEFAULT_DONE_MARKER
from nodes.models import AgentModel, build_agent_model
from tools.store import TaskStore
from tools.todo import TODO_TOOLS

DEFAULT_LOOP_LIMIT = 6
DEFAULT_CONTEXT_TOKEN_BUDGET = 100_000


class MissingStore(RuntimeError):
    """The graph was run without a task store in its context."""

    def __init__(self) -> None:
        """Say what to pass."""
        super().__init__("KeelContext.store is not set; pass context=KeelContext(store=...)")


@dataclass
class KeelContext:
    """Settings and clients for one run of the graph."""

    user_id: str = "local"
    """The acting user: every tool call is scoped to this user."""
    store: TaskStore | None = None
    """The todo task store."""
    model: AgentModel | None = field(default=None, repr=False)
    """The chat model with tools bound; None builds one from the environment."""
    done_marker: str = DEFAULT_DONE_MARKER
    """Regex that marks the line saying the task is done."""
    loop_limit: int = DEFAULT_LOOP_LIMIT
    """RESPONSE -> ASSISTANT loops allowed in one turn."""
    context_token_budget: int = DEFAULT_CONTEXT_TOKEN_BUDGET
    """Estimated tokens the window may hold before a resume opens a fresh one."""

    @classmethod
    def from_env(cls, **overrides: object) -> KeelContext:
        """A context with the ``KEEL_*`` tunables read from the environment."""
        values: dict[str, object] = {}
        if marker := os.environ.get("KEEL_DONE_MARKER"):
            values["done_marker"] = marker
        if limit := os.environ.get("KEEL_LOOP_LIMIT"):
            values["loop_limit"] = int(limit)
        if budget := os.environ.get("KEEL_CONTEXT_TOKEN_BUDGET"):
            values["context_token_budget"] = int(budget)
        values.update(overrides)
        return cls(**values)  # type: ignore[arg-type]

    def task_store(self) -> TaskStore:
        """The task store, or MissingStore."""
        if self.store is None:
            raise MissingStore()
        return self.store

    def agent_model(self) -> AgentModel:
        """The chat model with the todo tools bound (built once from the environment)."""
        if self.model is None:
            self.model = build_agent_model(TODO_TOOLS)
        return self.model
