"""The caller's tasks and lists as the API shows them, and the error envelope of every route.

``TaskOut``, ``ListOut`` and ``ReminderOut`` are what ``keel.api.routers.tasks`` answers
(read-only); ``ErrorOut`` is the body of every error answer, as ``keel.api.errors`` writes it,
which each router names in its OpenAPI responses.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


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


class ReminderOut(BaseModel):
    """A reminder of one of the caller's tasks that fell due."""

    id: str = Field(description="The reminder's id.", examples=["5f0c…"])
    task_id: int = Field(description="The task's number.", examples=[3])
    title: str = Field(
        description="The task's title when it fell due.", examples=["take out trash"]
    )
    conversation_id: str | None = Field(
        description="The conversation it is said in (where its time was set); none: said nowhere, "
        "only read here.",
        examples=["0b6c5d1e-7a2f-4d0e-9c1b-2f4a6e8d0c3b"],
    )
    remind_at: str = Field(
        description="When it fell due (ISO 8601, UTC).", examples=["2026-11-29T17:00:00+00:00"]
    )
    delivered_at: str | None = Field(
        description="When keel said it (none: on its way, as when keel was down at its time).",
        examples=["2026-11-29T17:00:01+00:00"],
    )
    outcome: str | None = Field(
        description="delivered, or none while on its way.", examples=["delivered"]
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
