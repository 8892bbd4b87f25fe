"""Request bodies, the checkpoint listing, the error envelope and the streamed frames of the API.

The results of turns, snapshots and resets are ``keel.graphs.result``'s, used as they are; the
schema of a streamed event is derived from the graph's event union
(``keel.nodes.event_types.StreamEvent``), its parts added to the OpenAPI components.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, TypeAdapter, field_validator

from keel.checkpoints.conversation_store import search_words
from keel.checkpoints.text_rules import storable
from keel.checkpoints.times import FieldError, zone_named
from keel.graphs.result import TopicSegment
from keel.nodes.event_types import StreamEvent

KEY_PATTERN = r"^[\x21-\x7e]+$"
"""An idempotency key: 1 to 200 visible ASCII characters."""


def _storable(value: str | None) -> str | None:
    return None if value is None else storable(value)


Storable = AfterValidator(_storable)
"""For ``Annotated`` text that reaches the database: no NUL, no lone surrogate (422 otherwise)."""


def _searchable(value: str | None) -> str | None:
    if value is not None:
        search_words(value)
    return value


Searchable = AfterValidator(_searchable)
"""For a search's words: not more different ones than a search looks for (422 otherwise)."""

STREAM_FRAME: dict[str, Any] = TypeAdapter(StreamEvent).json_schema(
    ref_template="#/components/schemas/{model}"
)
"""The data of the ``event`` and ``token`` frames of a streamed turn (SSE, WebSocket)."""
STREAM_PARTS: dict[str, Any] = STREAM_FRAME.pop("$defs")
"""The schemas ``STREAM_FRAME`` refers to, by name: OpenAPI components."""

LegacyFlag = (
    bool
    | Annotated[int, Field(ge=-(2**63), le=2**63 - 1)]
    | Annotated[str, Field(max_length=100)]
    | None
)
"""A flag as the older system stored it: a boolean, or a number or short text read as one."""


class LegacySession(BaseModel):
    """A session record of the older system; keel reads its two progress flags."""

    model_config = ConfigDict(extra="ignore")

    completed: LegacyFlag = Field(
        default=None, description="The session's task was complete.", examples=[True]
    )
    processing: LegacyFlag = Field(
        default=None, description="The session was working on a task.", examples=[False]
    )


class NewConversation(BaseModel):
    """The body of POST /v1/conversations: empty, or a legacy session to carry over."""

    model_config = ConfigDict(extra="forbid")

    legacy_session: LegacySession | None = Field(
        default=None,
        description="A session of the older system: the conversation starts in the state its "
        "flags map to (completed: response and complete; processing: assistant; neither: "
        "user_input).",
        examples=[{"completed": True, "processing": False}],
    )


class Conversation(BaseModel):
    """A created conversation."""

    conversation_id: str = Field(
        description="Its id.", examples=["6f1c1a9e-0c57-4d3e-9a52-2f9b0f0c3b11"]
    )
    created_at: str = Field(description="ISO-8601 UTC.", examples=["2026-11-22T10:00:00+00:00"])


class NewMessage(BaseModel):
    """A user message."""

    model_config = ConfigDict(extra="forbid")

    content: str = Field(description="What the user says.", examples=["Add buy milk"])
    checkpoint_id: Annotated[str | None, Storable] = Field(
        default=None,
        min_length=1,
        max_length=64,
        description="Run the message from this checkpoint instead of the conversation's newest: "
        "a message's own `checkpoint_id` edits it (the new text starts a branch of its own, and "
        "the earlier branch stays in the log, listed by `/messages/{id}/branches`), a branch tip "
        "continues that branch, any id of `/checkpoints` travels back in time. Tasks that tools "
        "created, renamed, completed or deleted since stay as they are: only the conversation "
        "goes back. A checkpoint no longer kept gets 404 `checkpoint_not_found`.",
        examples=[None],
    )

    timezone: str | None = Field(
        default=None,
        max_length=64,
        description="The user's time zone (IANA, such as `Europe/Berlin`): dates in the message "
        '("friday at 5pm") are read in it, and due times shown in it. Null: the server\'s '
        "`KEEL_TIMEZONE`.",
        examples=["Europe/Berlin"],
    )

    @field_validator("content")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("content must not be empty")
        return storable(value)

    @field_validator("timezone")
    @classmethod
    def _a_zone(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            return str(zone_named(value))
        except FieldError as exc:
            raise ValueError(exc.message) from None


class LoggedMessageOut(BaseModel):
    """One entry of the message log."""

    id: int = Field(description="Its id.", examples=[1])
    role: Literal["user", "assistant", "tool", "command"] = Field(
        description="Who wrote it: user, assistant or tool; `command` marks where the "
        "conversation was reset (its content the reset's reply), no message of it.",
        examples=["user"],
    )
    content: str = Field(description="The text.", examples=["Add buy milk"])
    topic_id: str | None = Field(
        description="The topic segment it belongs to.", examples=["0b6c5d1e-…"]
    )
    created_at: str = Field(
        description="When it was written (ISO-8601, UTC).", examples=["2026-11-22T10:00:00+00:00"]
    )
    tool_name: str | None = Field(
        description="For a tool result: the tool that produced it.",
        default=None,
        examples=["create_todo_task"],
    )
    tool_calls: list[dict[str, Any]] | None = Field(
        description="For an assistant message that called tools: each call's name, args and id.",
        default=None,
        examples=[[{"name": "create_todo_task", "args": {"title": "buy milk"}, "id": "call_1"}]],
    )
    text: str | None = Field(
        description="For a tool result: what the tool did, in the short sentence the turn's "
        "tool_call event gave (null: nothing to tell, as when the user said no to it).",
        default=None,
        examples=["Created task 1: buy milk"],
    )
    checkpoint_id: str | None = Field(
        default=None,
        description="For a message that opened a turn: the checkpoint its turn started from "
        "(`beginning` before the conversation's first), where an edit of it runs from (send it "
        "as the new message's `checkpoint_id`); null on other rows and on turns not run by the "
        "service.",
        examples=["1f0c…"],
    )
    branch_count: int | None = Field(
        default=None,
        description="For a message that opened a turn: how many messages were sent from the same "
        "checkpoint (its edits, and the one it edited); above 1, `/messages/{id}/branches` lists "
        "them.",
        examples=[2],
    )
    branch_index: int | None = Field(
        default=None,
        description="This message's place among them, from 1, oldest first.",
        examples=[2],
    )


class BranchOut(BaseModel):
    """One of the messages sent from the same checkpoint: a branch of the conversation."""

    message_id: int = Field(description="The message's id in the log.", examples=[7])
    content: str = Field(description="Its text.", examples=["Add buy oat milk"])
    created_at: str = Field(
        description="When it was sent (ISO-8601, UTC).", examples=["2026-11-22T10:00:00+00:00"]
    )
    checkpoint_id: str | None = Field(
        description="The newest kept checkpoint of its branch: view it with "
        "`GET /messages?checkpoint_id=`, continue it by sending a message with it. Null when "
        "none of that branch's checkpoints is kept any more (its messages stay in the log).",
        examples=["1f0c…"],
    )
    viewed: bool = Field(
        description="The branch the conversation is on (its newest checkpoint), or the one "
        "`checkpoint_id` named in the request.",
        examples=[True],
    )


class CheckpointOut(BaseModel):
    """One checkpoint of the conversation's thread (for time travel)."""

    checkpoint_id: str = Field(description="The checkpoint's id in the thread.", examples=["1f0c…"])
    step: int | None = Field(description="LangGraph step number.", examples=[4])
    created_at: str | None = Field(
        description="When it was written (ISO-8601, UTC).", examples=["2026-11-22T10:00:00+00:00"]
    )
    next: list[str] = Field(description="Nodes that would run next.", examples=[["turn"]])
    agent_state: str | None = Field(
        description="The state machine's position in that checkpoint.", examples=["assistant"]
    )


class ErrorDetail(BaseModel):
    """What went wrong."""

    code: str = Field(
        description="A stable machine-readable code.", examples=["conversation_not_found"]
    )
    message: str = Field(
        description="What went wrong, for people.", examples=["conversation 6f1c… not found"]
    )


class ErrorOut(BaseModel):
    """Every error answer."""

    error: ErrorDetail = Field(
        description="The error's code and message.",
        examples=[{"code": "conversation_not_found", "message": "conversation … not found"}],
    )


class ConversationListed(BaseModel):
    """One of the caller's conversations, as the list shows it."""

    conversation_id: str = Field(
        description="Its id.", examples=["6f1c1a9e-0c57-4d3e-9a52-2f9b0f0c3b11"]
    )
    created_at: str = Field(description="ISO-8601 UTC.", examples=["2026-11-22T10:00:00+00:00"])
    last_message_at: str | None = Field(
        description="When its latest message was written (ISO-8601 UTC), null before any.",
        examples=["2026-11-22T10:05:00+00:00"],
    )
    title: str | None = Field(
        description="Its name: the one it was given (PATCH), else the start of its first user "
        "message (at most 100 characters); the one name every client shows.",
        examples=["Add buy milk"],
    )
    name: str | None = Field(
        default=None,
        description="The name it was given, or null when it is named by its first message.",
        examples=[None],
    )
    preview: str | None = Field(
        description="The start of its latest message (at most 100 characters).",
        examples=["Created task: buy milk"],
    )


class ConversationRename(BaseModel):
    """A new name for a conversation."""

    model_config = ConfigDict(extra="forbid")

    name: Annotated[str | None, Storable] = Field(
        max_length=200,
        description="The new name, on one line: line breaks and tabs read as spaces, control "
        "characters and direction overrides are dropped; null or blank names it by its first "
        "message again. A NUL is refused (422).",
        examples=["Groceries"],
    )


class TaskOut(BaseModel):
    """One of the caller's todo tasks, with any attribute a tool stores on tasks beside these."""

    model_config = ConfigDict(extra="allow")

    id: int = Field(description="The task's number (each user's count from 1).", examples=[1])
    title: str = Field(description="What is to be done.", examples=["buy milk"])
    completed: bool = Field(description="Whether it is done.", examples=[False])
    created_at: str | None = Field(
        description="When it was created (ISO-8601, UTC).", examples=["2026-11-22T10:00:00+00:00"]
    )
    due: str | None = Field(
        default=None,
        description="When it is due, in the user's time zone: a day (`2026-12-04`), or a day and "
        "time (`2026-12-04T17:00+01:00`); null when it has no date.",
        examples=["2026-12-04T17:00+01:00"],
    )
    overdue: bool = Field(
        default=False, description="Still open past when it was due.", examples=[False]
    )
    list: str = Field(
        default="todo",
        description='The list it is on ("todo": the one a task is on when none is named).',
        examples=["shopping"],
    )
    repeat: str | None = Field(
        default=None,
        description="How often it repeats, in the words it was set with (null: it does not). "
        "Completing it moves it to its next time.",
        examples=["every monday"],
    )


class ListOut(BaseModel):
    """One of the caller's lists."""

    list: str = Field(description="Its name.", examples=["shopping"])
    tasks: int = Field(description="How many tasks are on it.", examples=[3])
    open: int = Field(description="How many of them are still open.", examples=[2])


class ReopenAnswer(BaseModel):
    """The answer to reopening an earlier topic."""

    topic: TopicSegment = Field(
        description="The topic now active: id, title, summary, started_at, ended_at, is_active.",
        examples=[{"id": "0b6c5d1e-…", "title": "Add buy milk", "is_active": True}],
    )
    previous_topic_id: str | None = Field(
        description="The topic that was active before (null when it already was this one).",
        examples=["9a1f…"],
    )
    message: str = Field(
        description="What to tell the user.", examples=["Back to the topic: Add buy milk"]
    )


class CancelAnswer(BaseModel):
    """The answer to a request to stop the running turn."""

    running: bool = Field(description="A turn runs on the conversation.", examples=[True])
    cancel_requested: bool = Field(
        description="The turn was asked to stop: if it reaches another safe point (before it "
        "runs more tool calls) it ends there and its result says it was stopped; a turn that "
        "calls no more tools, or that asks for a confirmation, ends as it would have.",
        examples=[True],
    )
