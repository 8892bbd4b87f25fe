"""A message as the API takes it, the message log and its checkpoints, and the streamed frames.

The body of a message sent (``NewMessage``, over HTTP, WebSocket and Telegram, with the idempotency
key's pattern and the check on text that reaches the database), the entries of the message log, a
message's branches and the conversation's checkpoints (``keel.api.routers.history``). The results
of turns are ``keel.graphs.result``'s, used as they are; the schema of a streamed event is derived
from the graph's event union (``keel.nodes.event_types.StreamEvent``), its parts added to the
OpenAPI components.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, TypeAdapter, field_validator

from keel.checkpoints.text_rules import storable
from keel.checkpoints.times import FieldError, zone_named
from keel.nodes.event_types import StreamEvent

KEY_PATTERN = r"^[\x21-\x7e]+$"
"""An idempotency key: 1 to 200 visible ASCII characters."""


def _storable(value: str | None) -> str | None:
    return None if value is None else storable(value)


Storable = AfterValidator(_storable)
"""For ``Annotated`` text that reaches the database: no NUL, no lone surrogate (422 otherwise)."""

STREAM_FRAME: dict[str, Any] = TypeAdapter(StreamEvent).json_schema(
    ref_template="#/components/schemas/{model}"
)
"""The data of the ``event`` and ``token`` frames of a streamed turn (SSE, WebSocket)."""
STREAM_PARTS: dict[str, Any] = STREAM_FRAME.pop("$defs")
"""The schemas ``STREAM_FRAME`` refers to, by name: OpenAPI components."""


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
