"""The run context of the graph: who is acting and with what, read by nodes through ``Runtime``.

``KeelContext`` is the graph's ``context_schema``. Callers (the CLI, the API, tests) build one per
turn; ``from_env`` fills the tunables from ``KEEL_*`` environment variables. Nothing here is
checkpointed: clients and stores travel here, never in state.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.config import get_config

from checkpoints.backups import BackupStore
from checkpoints.clock import Clock, utcnow
from checkpoints.database import Database
from checkpoints.messages import MessageLog
from checkpoints.retention import DEFAULT_KEEP
from checkpoints.topics import TopicStore
from nodes.done_marker import DEFAULT_DONE_MARKER
from nodes.models import DEFAULT_OPENAI_MODEL, AgentModel, build_agent_model, build_title_model
from nodes.next_step import record_next_step
from tools.store import TaskStore
from tools.todo import TODO_TOOLS

AGENT_TOOLS = [*TODO_TOOLS, record_next_step]
DEFAULT_RESUME_TEMPLATE = "Continue from step {step}: {description}"

DEFAULT_LOOP_LIMIT = 6
DEFAULT_CONTEXT_TOKEN_BUDGET = 100_000
DEFAULT_TOPIC_GAP_SECONDS = 3600


class MissingStore(RuntimeError):
    """The graph was run without one of its stores in its context."""

    def __init__(self, name: str) -> None:
        """Say what to pass."""
        super().__init__(
            f"KeelContext.{name} is not set; build the context with KeelContext.for_database(db)"
        )


def conversation_id() -> str:
    """The conversation (thread) the running graph serves."""
    return str(get_config()["configurable"]["thread_id"])


@dataclass
class KeelContext:
    """Settings and clients for one run of the graph."""

    user_id: str = "local"
    """The acting user: every tool call is scoped to this user."""
    store: TaskStore | None = None
    """The todo task store."""
    log: MessageLog | None = None
    """The conversation message log."""
    topics: TopicStore | None = None
    """The topic segments."""
    backups: BackupStore | None = None
    """Where a resume backs the conversation up; None skips the backup (with a warning)."""
    model: AgentModel | None = field(default=None, repr=False)
    """The chat model with tools bound; None builds one from the environment."""
    done_marker: str = DEFAULT_DONE_MARKER
    """Regex that marks the line saying the task is done."""
    loop_limit: int = DEFAULT_LOOP_LIMIT
    """RESPONSE -> ASSISTANT loops allowed in one turn."""
    context_token_budget: int = DEFAULT_CONTEXT_TOKEN_BUDGET
    """Estimated tokens the window may hold before a resume opens a fresh one."""
    token_model: str | None = None
    """Model name whose tokenizer counts the budget (tiktoken); None uses the estimate."""
    resume_template: str = DEFAULT_RESUME_TEMPLATE
    """The continuation prompt of a resume; ``{step}`` and ``{description}`` are filled in."""
    topic_gap_seconds: int = DEFAULT_TOPIC_GAP_SECONDS
    """Silence after which the next message starts a new topic."""
    title_model: BaseChatModel | None = field(default=None, repr=False)
    """A model that titles new topics; None titles them with their first words."""
    checkpoint_keep: int = DEFAULT_KEEP
    """Checkpoints kept per conversation after each turn (older ones are pruned)."""
    clock: Clock = field(default=utcnow, repr=False)
    """What time it is (the stores of ``for_database`` share it)."""

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
        if keep := os.environ.get("KEEL_CHECKPOINT_KEEP"):
            values["checkpoint_keep"] = int(keep)
        if gap := os.environ.get("KEEL_TOPIC_GAP_SECONDS"):
            values["topic_gap_seconds"] = int(gap)
        if template := os.environ.get("KEEL_RESUME_TEMPLATE"):
            values["resume_template"] = template
        if os.environ.get("OPENAI_API_KEY"):
            values["token_model"] = os.environ.get("OPENAI_MODEL") or DEFAULT_OPENAI_MODEL
        values["title_model"] = build_title_model()
        values.update(overrides)
        return cls(**values)  # type: ignore[arg-type]

    @classmethod
    def for_database(
        cls,
        db: Database,
        saver: BaseCheckpointSaver | None = None,
        **overrides: object,
    ) -> KeelContext:
        """A context from the environment with every store opened on ``db``.

        With the graph's ``saver``, a resume backs the conversation up first.
        """
        clock: Clock = overrides.get("clock", utcnow)  # type: ignore[assignment]
        stores = {
            "store": TaskStore(db),
            "log": MessageLog(db, clock),
            "topics": TopicStore(db, clock),
            "backups": BackupStore(saver, db) if saver is not None else None,
        }
        return cls.from_env(**{**stores, **overrides})

    def task_store(self) -> TaskStore:
        """The task store, or MissingStore."""
        if self.store is None:
            raise MissingStore("store")
        return self.store

    def message_log(self) -> MessageLog:
        """The message log, or MissingStore."""
        if self.log is None:
            raise MissingStore("log")
        return self.log

    def topic_store(self) -> TopicStore:
        """The topic store, or MissingStore."""
        if self.topics is None:
            raise MissingStore("topics")
        return self.topics

    def agent_model(self) -> AgentModel:
        """The chat model with the todo tools bound (built once from the environment)."""
        if self.model is None:
            self.model = build_agent_model(AGENT_TOOLS)
        return self.model
