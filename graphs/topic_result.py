"""How results show topics: the active topic by id and title, and every segment in full.

``TopicRef`` is the state's own (``keel.nodes.state.schema``); ``TopicSegment`` adds what the
topic table knows of a segment, and ``topic_segment`` reads it from a ``TopicRow``. The snapshot,
the turn result and the API's answer to a reopen use them; the API documents them as they are.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from keel.checkpoints.topics import TopicRow
from keel.nodes.state.schema import Topic, TopicRef
from keel.nodes.support.topic_names import readable_summary

ISO_TIME = "2026-11-22T10:00:00+00:00"


class TopicSegment(TopicRef):
    """A topic segment of the conversation, titled by a few words of its subject (or by a model)."""

    summary: Annotated[
        str | None,
        Field(
            description="What was asked and done in it (small talk left out), set when the "
            "topic ended.",
            examples=["Asked: Add buy milk. Done: Created task: buy milk"],
        ),
    ]
    started_at: Annotated[
        str, Field(description="When the topic started (ISO-8601, UTC).", examples=[ISO_TIME])
    ]
    ended_at: Annotated[
        str | None,
        Field(description="When it ended (ISO-8601, UTC), or null while active.", examples=[None]),
    ]
    is_active: Annotated[
        bool, Field(description="Whether it is the conversation's active topic.", examples=[True])
    ]


def topic_ref(topic: Topic | None) -> TopicRef | None:
    """The topic in state as results show it: id and title."""
    return {"id": topic["id"], "title": topic["title"]} if topic else None


def topic_segment(row: TopicRow) -> TopicSegment:
    """A row of the topic table as results show it."""
    return {
        "id": row.id,
        "title": row.title,
        "summary": readable_summary(row.summary) if row.summary else None,
        "started_at": row.started_at.isoformat(),
        "ended_at": row.ended_at.isoformat() if row.ended_at else None,
        "is_active": row.is_active,
    }
