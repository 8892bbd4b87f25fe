"""The run context: what a run of the graph works with, read by every node from ``runtime.context``.

``KeelContext`` is the graph's ``context_schema``: plain data a caller may give a run (the acting
user and the tunables), the same from keel's API, the LangGraph SDK, Studio's form or a notebook,
and, once the graph builder has prepared it (``keel.graphs.resources.prepared``), the process's
``Resources``: the stores, the chat models, the tools and the clock. A tunable left out (or None)
takes the process's setting (``KEEL_*``, ``keel.graphs.settings``, which declares them through
``Tunables``); unknown keys are ignored. Nothing here is checkpointed.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool
from langgraph.runtime import Runtime
from langgraph.types import StateSnapshot, StreamWriter
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    field_validator,
    model_validator,
)

from keel.checkpoints.backups import BackupStore
from keel.checkpoints.branches import BEGINNING
from keel.checkpoints.clock import Clock, utcnow
from keel.checkpoints.conversation_store import ConversationStore
from keel.checkpoints.messages import MessageLog
from keel.checkpoints.reminders import ReminderStore
from keel.checkpoints.times import FieldError, local_zone, zone_name
from keel.checkpoints.topics import TopicStore
from keel.checkpoints.users import LOCAL_USER
from keel.nodes.context.embeddings import Embedder
from keel.nodes.models.chat import DEFAULT_MAX_TOKENS, AgentModel
from keel.nodes.models.declared import Declaring
from keel.nodes.models.markers import DEFAULT_DONE_MARKER
from keel.nodes.support.planner import PlanMethod
from keel.tools.tasks.store import TaskStore


class MissingResources(RuntimeError):
    """A node was given a context without the process's resources."""


class MissingThread(RuntimeError):
    """The graph was run without a thread (no checkpointer, or no ``thread_id`` in the config)."""


def conversation_id(runtime: Runtime[Any]) -> str:
    """The conversation (thread) the running graph serves."""
    info = runtime.execution_info
    if info is None or info.thread_id is None:
        raise MissingThread("keel's graph runs on a thread: give a checkpointer and a thread_id")
    return info.thread_id


class Tunables(BaseModel):
    """The settings a run may override: declared once, read by ``Settings`` and ``KeelContext``."""

    done_marker: str = Field(
        default=DEFAULT_DONE_MARKER, description="Regex of the line that says a task is done."
    )
    loop_limit: int = Field(default=6, ge=1, description="RESPONSE -> ASSISTANT loops in one turn.")
    context_token_budget: int = Field(
        default=100_000,
        ge=1,
        description="Estimated tokens the window may hold before a resume opens a fresh one.",
    )
    topic_gap_seconds: int = Field(
        default=3600,
        ge=0,
        description="Silence after which the next message starts a new topic.",
    )
    resume_template: str = Field(
        default="Continue from step {step}: {description}",
        description="The continuation prompt of a resume ({step} and {description} filled in).",
    )
    max_tokens: int = Field(
        default=DEFAULT_MAX_TOKENS,
        ge=1,
        description="The most tokens one model answer may have (sent with every model call).",
    )
    turn_seconds: int = Field(
        default=120,
        ge=1,
        description="A turn's time budget: past it the turn ends with what it has (not complete).",
    )
    timezone: str = Field(
        default_factory=local_zone,
        description="The user's time zone (IANA, such as Europe/Berlin): dates such as \"friday "
        "at 5pm\" are read and shown in it. By default the machine's own.",
    )

    @model_validator(mode="before")
    @classmethod
    def _none_is_unset(cls, data: Any) -> Any:
        """A tunable given as None (a form's empty field) is left to the process's setting."""
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if v is not None or k not in TUNABLES}
        return data

    @field_validator("done_marker")
    @classmethod
    def _a_regex(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a regular expression: {exc}") from None
        return value

    @field_validator("timezone")
    @classmethod
    def _a_zone(cls, value: str) -> str:
        try:
            return zone_name(value)  # its file is read off the event loop (graphs.resources)
        except FieldError as exc:
            raise ValueError(exc.message) from None

    @field_validator("resume_template")
    @classmethod
    def _a_template(cls, value: str) -> str:
        try:
            value.format(step=1, description="")
        except (KeyError, IndexError, ValueError) as exc:
            raise ValueError(f"fills only {{step}} and {{description}}: {exc!r}") from None
        return value


TUNABLES = tuple(Tunables.model_fields)


@dataclass
class Resources:
    """What a process opens once and every run uses: stores, chat models, tools and settings."""

    store: TaskStore
    """The todo task store."""
    conversations: ConversationStore
    """Who owns which conversation."""
    messages: MessageLog
    """The conversation message log."""
    topics: TopicStore
    """The topic segments."""
    reminders: ReminderStore
    """The reminders that fell due, and their deliveries."""
    model: AgentModel = field(repr=False)
    """The chat model with the tools bound."""
    tools: list[BaseTool] = field(repr=False)
    """The tools the model may call (MCP serves them too): the one list every layer reads."""
    fallback_model: AgentModel | None = field(default=None, repr=False)
    """The offline model that answers when ``model``'s provider fails (None: nothing does)."""
    prompt: str = ""
    """The system prompt, made from the tools."""
    declaring: Declaring | None = field(default=None, repr=False)
    """Each turn's tools and prompt for a small model (``KEEL_TOOL_SCHEMAS=lean``); None: the
    model is shown every tool and ``prompt``."""
    settings: Tunables = field(default_factory=Tunables)
    """The process's tunables: what a run's context leaves unset."""
    backups: BackupStore | None = None
    """Where a resume backs the conversation up; None skips the backup (with a warning)."""
    title_model: BaseChatModel | None = field(default=None, repr=False)
    """A model that titles new topics; None titles them with their first words."""
    plan_model: BaseChatModel | None = field(default=None, repr=False)
    """A model that plans missions (structured output); None plans by the tools' phrasings."""
    plan_method: PlanMethod = "json_schema"
    """How ``plan_model`` is asked for a plan (``KEEL_PLAN_METHOD``)."""
    token_model: str | None = None
    """Model name whose tokenizer counts the budget (tiktoken); None uses the estimate."""
    embedder: Embedder | None = field(default=None, repr=False)
    """Sentence embeddings for the semantic topic signal; None: topic changes by phrases only."""
    shift_threshold: float = 0.4
    """The semantic signal's score from which a message starts a new topic."""
    return_threshold: float = 0.35
    """The similarity to a closed topic's summary from which a shift goes back to it."""
    clock: Clock = field(default=utcnow, repr=False)
    """What time it is (the stores share it)."""
    pause_at: str | None = None
    """Crash tests only: the named point where the process stops for good."""

    def context(self, user_id: str = LOCAL_USER, **tunables: Any) -> KeelContext:
        """A run context for ``user_id`` on these resources (``tunables``: overrides)."""
        return KeelContext(user_id=user_id, **tunables).using(self)


def _unset_is_the_servers(schema: dict[str, Any]) -> None:
    """In the context's JSON schema (Studio's form), a tunable may be left empty (null)."""
    for name in TUNABLES:
        field_ = schema["properties"][name]
        kept = {k: v for k, v in field_.items() if k not in ("title", "description", "default")}
        field_.clear()
        field_.update(
            anyOf=[kept, {"type": "null"}],
            default=None,
            description=f"{Tunables.model_fields[name].description} Empty: the server's setting.",
        )


@dataclass(frozen=True)
class TurnStart:
    """Where a turn starts, as keel's runner knows it: the checkpoint, and how things stand."""

    checkpoint_id: str | None = BEGINNING
    """The checkpoint the turn runs from: the conversation's newest (``BEGINNING`` before its
    first), an earlier one for an edited message (``forked``), or, to finish a turn a crash cut
    off, the one before that turn's input (None: no longer kept). Where an edit of its message
    runs from."""
    cut_off: bool = False
    """A turn a crash (or a failure) cut off stands at the checkpoint, no question waiting: it is
    finished first, LangGraph running it on from there. In a run's context: the run finishes it,
    so its tool calls may have run already."""
    request_key: str | None = None
    """The idempotency key of the last message that reached the checkpoint."""
    forked: bool = False
    """It runs from an earlier checkpoint than the newest (an edited message, a branch)."""

    @property
    def first_run(self) -> bool:
        """None of the turn's tool calls can have run before."""
        return not self.cut_off

    @classmethod
    def of(cls, snap: StateSnapshot) -> TurnStart:
        """Where the conversation stands, read from its state."""
        checkpoint_id = (snap.config.get("configurable") or {}).get("checkpoint_id") or BEGINNING
        cut_off = bool(snap.tasks) and not snap.interrupts
        return cls(checkpoint_id, cut_off, snap.values.get("request_key"))


class KeelContext(Tunables):
    """The run context: who acts and the tunables (a caller's), and the process's resources."""

    model_config = ConfigDict(extra="ignore", json_schema_extra=_unset_is_the_servers)

    user_id: str = Field(
        default=LOCAL_USER, min_length=1, description="The acting user: every task is theirs."
    )
    _resources: Resources | None = PrivateAttr(default=None)
    _given: frozenset[str] | None = PrivateAttr(default=None)
    _stop: asyncio.Event | None = PrivateAttr(default=None)
    _deadline: float | None = PrivateAttr(default=None)
    _turn: TurnStart | None = PrivateAttr(default=None)
    _writer: StreamWriter | None = PrivateAttr(default=None)

    def stopping_on(self, stop: asyncio.Event | None, deadline: float | None) -> KeelContext:
        """This context with the event a caller sets to stop the turn (the API's cancel), and
        the time (``time.time()``) its budget runs out, counted from when the caller ran it.
        """  # noqa: D205
        context = self.model_copy()
        context._stop, context._deadline = stop, deadline
        return context

    def run_by_keel(self, turn: TurnStart) -> KeelContext:
        """This context for a run of keel's runner, which holds the turn lock (owner checked)."""
        context = self.model_copy()
        context._turn = turn
        return context

    def writing_to(self, writer: StreamWriter) -> KeelContext:
        """This context for a run inside a node of another graph, whose events ``writer`` (that
        node's stream writer) carries to the stream of the graph around: a caller that streams it
        without subgraphs gets them too (a run's own writer reaches only a caller that streams
        subgraphs).
        """  # noqa: D205
        context = self.model_copy()
        context._writer = writer
        return context

    @property
    def writer(self) -> StreamWriter | None:
        """The stream writer of the graph around this run's, when there is one."""
        return self._writer

    @property
    def turn(self) -> TurnStart | None:
        """The turn keel's runner runs (None: Studio, the SDK, a notebook)."""
        return self._turn

    @property
    def deadline(self) -> float | None:
        """When the caller's turn runs out of time; None: the state's (from its message)."""
        return self._deadline

    @property
    def stop_event(self) -> asyncio.Event | None:
        """Set when the caller stops the turn: a model call in flight is cancelled."""
        return self._stop

    def using(self, resources: Resources) -> KeelContext:
        """This context on ``resources``: what its caller left unset takes their settings.

        Callers in keel's own process (the API, the chat, tests) give their resources this way; a
        context without them (Studio, the SDK) is given the process's shared ones.
        """
        given = self._given if self._given is not None else frozenset(self.model_fields_set)
        unset = {n: getattr(resources.settings, n) for n in TUNABLES if n not in given}
        context = self.model_copy(update=unset)
        context._resources, context._given = resources, given
        return context

    @property
    def prepared(self) -> bool:
        """The context has its resources."""
        return self._resources is not None

    @property
    def resources(self) -> Resources:
        """The process's stores, models and tools (``using``); MissingResources without them."""
        if self._resources is None:
            raise MissingResources("the run context has no resources: call using(resources)")
        return self._resources

    @property
    def store(self) -> TaskStore:
        """The task store, reading and showing dates in the user's time zone."""
        return self.resources.store.in_zone(self.timezone)
