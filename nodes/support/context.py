"""What a run of the graph works with: the caller's context, and the run it resolves to.

``KeelContext`` is the graph's ``context_schema``: plain data a caller may give a run (the acting
user and the tunables), the same from keel's API, the LangGraph SDK, Studio's form or a notebook.
A field left out (or None) takes the process's setting (``KEEL_*``, see ``keel.graphs.settings``);
unknown keys are ignored.

``KeelRun`` is what the nodes see as ``runtime.context``: the context resolved against the
process's settings, with the stores, the chat models and the clock. The graph builder resolves it
once per run (``keel.graphs.resources``); nothing here is checkpointed.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from langchain_core.language_models import BaseChatModel
from langgraph.runtime import Runtime
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from keel.checkpoints.backups import BackupStore
from keel.checkpoints.clock import Clock, utcnow
from keel.checkpoints.conversations import ConversationStore
from keel.checkpoints.messages import MessageLog
from keel.checkpoints.retention import DEFAULT_KEEP
from keel.checkpoints.topics import TopicStore
from keel.nodes.support.markers import DEFAULT_DONE_MARKER
from keel.nodes.support.models import AgentModel
from keel.tools.next_step import record_next_step
from keel.tools.store import TaskStore
from keel.tools.todo import TODO_TOOLS

AGENT_TOOLS = [*TODO_TOOLS, record_next_step]
DEFAULT_RESUME_TEMPLATE = "Continue from step {step}: {description}"

DEFAULT_LOOP_LIMIT = 6
DEFAULT_CONTEXT_TOKEN_BUDGET = 100_000
DEFAULT_TOPIC_GAP_SECONDS = 3600
LOCAL_USER = "local"


class MissingStore(RuntimeError):
    """The graph was run without one of its stores."""

    def __init__(self, name: str) -> None:
        """Say what is missing."""
        super().__init__(f"KeelRun.{name} is not set; the run has no database")


class MissingThread(RuntimeError):
    """The graph was run without a thread (no checkpointer, or no ``thread_id`` in the config)."""


def conversation_id(runtime: Runtime[Any]) -> str:
    """The conversation (thread) the running graph serves."""
    info = runtime.execution_info
    if info is None or info.thread_id is None:
        raise MissingThread("keel's graph runs on a thread: give a checkpointer and a thread_id")
    return info.thread_id


@dataclass
class KeelRun:
    """Settings and clients for one run of the graph: ``runtime.context`` inside the nodes."""

    user_id: str = LOCAL_USER
    """The acting user: every tool call is scoped to this user."""
    store: TaskStore | None = None
    """The todo task store."""
    conversations: ConversationStore | None = None
    """Who owns which conversation."""
    messages: MessageLog | None = None
    """The conversation message log."""
    topics: TopicStore | None = None
    """The topic segments."""
    backups: BackupStore | None = None
    """Where a resume backs the conversation up; None skips the backup (with a warning)."""
    model: AgentModel | None = field(default=None, repr=False)
    """The chat model with the tools bound."""
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
    """What time it is (the stores share it)."""
    pause_at: str | None = None
    """Crash tests only: the named point where the process stops for good."""

    def context(self, user_id: str = LOCAL_USER, **tunables: Any) -> KeelContext:
        """A run context for ``user_id`` on this run (``tunables``: KeelContext fields)."""
        return KeelContext(user_id=user_id, **tunables).using(self)

    def task_store(self) -> TaskStore:
        """The task store, or MissingStore."""
        if self.store is None:
            raise MissingStore("store")
        return self.store

    def conversation_store(self) -> ConversationStore:
        """The conversation store, or MissingStore."""
        if self.conversations is None:
            raise MissingStore("conversations")
        return self.conversations

    def message_log(self) -> MessageLog:
        """The message log, or MissingStore."""
        if self.messages is None:
            raise MissingStore("messages")
        return self.messages

    def topic_store(self) -> TopicStore:
        """The topic store, or MissingStore."""
        if self.topics is None:
            raise MissingStore("topics")
        return self.topics

    def agent_model(self) -> AgentModel:
        """The chat model with the todo tools bound."""
        if self.model is None:
            raise MissingStore("model")
        return self.model


class KeelContext(BaseModel):
    """The run context a caller may give: who acts, and tunables (unset: the process's)."""

    model_config = ConfigDict(extra="ignore")

    user_id: str = Field(
        default=LOCAL_USER, min_length=1, description="The acting user: every task is theirs."
    )
    done_marker: str | None = Field(
        default=None, description="Regex of the line that says a task is done (KEEL_DONE_MARKER)."
    )
    loop_limit: int | None = Field(
        default=None, ge=1, description="RESPONSE -> ASSISTANT loops in one turn (KEEL_LOOP_LIMIT)."
    )
    context_token_budget: int | None = Field(
        default=None,
        ge=1,
        description="Tokens the window may hold before a resume (KEEL_CONTEXT_TOKEN_BUDGET).",
    )
    topic_gap_seconds: int | None = Field(
        default=None, ge=0, description="Silence that starts a new topic (KEEL_TOPIC_GAP_SECONDS)."
    )
    resume_template: str | None = Field(
        default=None, description="The continuation prompt of a resume (KEEL_RESUME_TEMPLATE)."
    )
    checkpoint_keep: int | None = Field(
        default=None, ge=1, description="Checkpoints kept per conversation (KEEL_CHECKPOINT_KEEP)."
    )
    _base: KeelRun | None = PrivateAttr(default=None)
    _resolved: tuple[KeelRun, KeelRun] | None = PrivateAttr(default=None)

    def using(self, base: KeelRun) -> KeelContext:
        """This context over ``base``: a run already opened in this process (stores, models).

        Callers in keel's own process (the API, the chat, tests) pass their open run this way;
        a context without one (Studio, the SDK) runs on the process's shared run.
        """
        context = self.model_copy()
        context._base, context._resolved = base, None
        return context

    @property
    def base(self) -> KeelRun | None:
        """The run given with ``using``, if any."""
        return self._base

    def resolve(self, base: KeelRun) -> KeelRun:
        """``base`` with this context's user and the tunables it sets (cached per context)."""
        if self._resolved is None or self._resolved[0] is not base:
            tunables = self.model_dump(exclude_none=True, exclude={"user_id"})
            self._resolved = (base, replace(base, user_id=self.user_id, **tunables))
        return self._resolved[1]
