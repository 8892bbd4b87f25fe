"""The conversations as the API takes and lists them: created, listed, renamed, a topic reopened.

The body that creates a conversation (empty, or a session of the older system carried over), a
conversation as the list shows it, a new name, the answers to reopening a topic and to stopping
the running turn, and the check on a search's words. Used by ``keel.api.routers.conversations``;
the results of turns, snapshots and resets are ``keel.graphs.result``'s, used as they are.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from keel.api.message_schemas import Storable
from keel.checkpoints.conversation_store import search_words
from keel.graphs.result import TopicSegment


def _searchable(value: str | None) -> str | None:
    if value is not None:
        search_words(value)
    return value


Searchable = AfterValidator(_searchable)
"""For a search's words: not more different ones than a search looks for (422 otherwise)."""

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
