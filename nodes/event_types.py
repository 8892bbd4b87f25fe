"""What the graph reports, typed: every event's shape, and the unions a turn streams and keeps.

An event is ``{"type": ..., "data": {...}}``, a TypedDict tagged by its ``type``; ``Event`` is
their union (``StreamEvent`` adds the model's tokens and the start of each model call, which are
streamed but not kept). The API's schemas are derived from these types; each event is made by
its one builder in ``keel.nodes.events``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired

from pydantic import Field
from typing_extensions import TypedDict

TopicReason = Literal["phrase", "time_gap", "user_reset", "semantic", "returned"]
"""Why a topic changed: a switch or correction phrase, a silence, ``/reset``, a message that no
longer follows the topic (the semantic signal), or a return to an earlier topic."""

TOPIC_ID = "0b6c5d1e-…"


def _tag(kind: str) -> Any:
    """The ``type`` field of an event of type ``kind``, documented."""
    return Field(description="The event's type.", examples=[kind])


def _data(example: dict[str, Any]) -> Any:
    """The ``data`` field of an event, documented with an example payload."""
    return Field(description="The event's payload.", examples=[example])


class TopicChangedData(TypedDict):
    """The data of a ``topic_changed`` event (and of the audit entry of a reopened topic)."""

    previous_topic_id: Annotated[
        str | None, Field(description="The topic that ended.", examples=["9a1f…"])
    ]
    new_topic_id: Annotated[str, Field(description="The topic now active.", examples=[TOPIC_ID])]
    reason: Annotated[
        TopicReason,
        Field(description="phrase, time_gap, user_reset or returned.", examples=["phrase"]),
    ]
    phrase: Annotated[
        str | None, Field(description="The phrase that switched, if one did.", examples=[None])
    ]
    title: Annotated[str, Field(description="The new topic's title.", examples=["Add buy milk"])]


class TopicChangedEvent(TypedDict):
    """A new topic replaced the active one."""

    type: Annotated[Literal["topic_changed"], _tag("topic_changed")]
    data: Annotated[TopicChangedData, _data({"reason": "phrase", "title": "Add buy milk"})]


class MissionResetData(TypedDict):
    """The data of the ``state_updated`` event of a mission reset, and its audit detail."""

    mission_reset: Annotated[
        bool, Field(description="The mission and todolist were cleared.", examples=[True])
    ]
    reason: Annotated[
        str,
        Field(
            description="completed_todolist_detected, unfinished_turn_abandoned (the last turn "
            "ended without finishing its plan), user_requested or topic_reopened (the user went "
            "back to another topic).",
            examples=["completed_todolist_detected"],
        ),
    ]
    previous_todolist_id: Annotated[
        str | None, Field(description="The plan that was cleared.", examples=["3c2d…"])
    ]


class StateUpdatedEvent(TypedDict):
    """The mission and its todolist were cleared."""

    type: Annotated[Literal["state_updated"], _tag("state_updated")]
    data: Annotated[MissionResetData, _data({"mission_reset": True, "reason": "user_requested"})]


class ToolCallData(TypedDict):
    """A tool call made during the turn, with what it returned."""

    name: Annotated[str, Field(description="The tool's name.", examples=["create_todo_task"])]
    args: Annotated[
        dict[str, Any],
        Field(description="The arguments the model gave.", examples=[{"title": "buy milk"}]),
    ]
    result: Annotated[
        Any,
        Field(
            description="What the tool returned (JSON), or its error text.",
            examples=[{"id": 1, "title": "buy milk", "completed": False}],
        ),
    ]
    text: NotRequired[
        Annotated[
            str | None,
            Field(
                description="What it did, in a short sentence for people (null: nothing to tell, "
                "as when the user said no to it).",
                examples=["Created task 1: buy milk"],
            ),
        ]
    ]


class ToolCallEvent(TypedDict):
    """A tool ran."""

    type: Annotated[Literal["tool_call"], _tag("tool_call")]
    data: Annotated[ToolCallData, _data({"name": "list_todo_tasks", "args": {}, "result": {}})]


class ResumedData(TypedDict):
    """The data of a ``resumed`` event."""

    step: Annotated[
        int, Field(description="The step the fresh window continues from.", examples=[2])
    ]
    description: Annotated[str, Field(description="What that step is.", examples=["Add buy milk"])]
    reason: Annotated[
        str,
        Field(description="token_budget or context_length_error.", examples=["token_budget"]),
    ]
    backup_id: Annotated[
        str | None, Field(description="The backup of the old window, if made.", examples=[None])
    ]


class ResumedEvent(TypedDict):
    """A fresh context window was opened."""

    type: Annotated[Literal["resumed"], _tag("resumed")]
    data: Annotated[ResumedData, _data({"step": 2, "reason": "token_budget"})]


class LoopLimitData(TypedDict):
    """The data of a ``loop_limit`` event."""

    loops: Annotated[int, Field(description="Rounds the turn took.", examples=[8])]
    limit: Annotated[int, Field(description="The loop limit.", examples=[8])]
    open_items: Annotated[
        list[str], Field(description="The plan's steps still open.", examples=[["Add buy milk"]])
    ]


class LoopLimitEvent(TypedDict):
    """The turn ended at the loop limit."""

    type: Annotated[Literal["loop_limit"], _tag("loop_limit")]
    data: Annotated[LoopLimitData, _data({"loops": 8, "limit": 8, "open_items": []})]


class TurnStoppedData(TypedDict):
    """The data of a ``turn_stopped`` event."""

    loops: Annotated[int, Field(description="Rounds the turn took.", examples=[1])]


class TurnStoppedEvent(TypedDict):
    """The caller stopped the turn."""

    type: Annotated[Literal["turn_stopped"], _tag("turn_stopped")]
    data: Annotated[TurnStoppedData, _data({"loops": 1})]


class ModelFallbackData(TypedDict):
    """The data of a ``model_fallback`` event."""

    reason: Annotated[
        str,
        Field(
            description="timeout, connection_error, http_<status>, empty_answer, bad_tool_name, "
            "bad_tool_call or structured_output_refused.",
            examples=["http_500"],
        ),
    ]
    status: Annotated[
        int | None, Field(description="The provider's HTTP status, if any.", examples=[500])
    ]
    detail: Annotated[
        str, Field(description="A preview of the provider's error.", examples=["upstream down"])
    ]
    step: Annotated[
        Literal["answer", "plan"],
        Field(description="What fell back: the answer or the plan.", examples=["answer"]),
    ]


class ModelFallbackEvent(TypedDict):
    """The provider failed; the offline model (or the phrasings, for a plan) took over."""

    type: Annotated[Literal["model_fallback"], _tag("model_fallback")]
    data: Annotated[ModelFallbackData, _data({"reason": "http_500", "step": "answer"})]


class TurnTimedOutData(TypedDict):
    """The data of a ``turn_timed_out`` event."""

    seconds: Annotated[int, Field(description="The turn's time budget.", examples=[120])]
    open_items: Annotated[
        list[str], Field(description="The plan's steps still open.", examples=[["Add buy milk"]])
    ]


class TurnTimedOutEvent(TypedDict):
    """The turn ran out of its time budget and ended with what it had."""

    type: Annotated[Literal["turn_timed_out"], _tag("turn_timed_out")]
    data: Annotated[TurnTimedOutData, _data({"seconds": 120, "open_items": []})]


class RoundStartedData(TypedDict):
    """The data of a ``round_started`` event."""

    round: Annotated[int, Field(description="The round of the turn (0 first).", examples=[0])]
    attempt: Annotated[
        int, Field(description="The attempt within the round (0 first, 1 a retry).", examples=[0])
    ]


class RoundStartedEvent(TypedDict):
    """A model call starts: its text replaces the previous round's (streamed only, never kept)."""

    type: Annotated[Literal["round_started"], _tag("round_started")]
    data: Annotated[RoundStartedData, _data({"round": 0, "attempt": 0})]


class TokenData(TypedDict):
    """The data of a ``token`` event."""

    text: Annotated[str, Field(description="The model's next text.", examples=["Created"])]


class TokenEvent(TypedDict):
    """Text of the model's reply as it is written (streamed only, never kept)."""

    type: Annotated[Literal["token"], _tag("token")]
    data: Annotated[TokenData, _data({"text": "Created"})]


_Reported = (
    TopicChangedEvent
    | StateUpdatedEvent
    | ToolCallEvent
    | ResumedEvent
    | LoopLimitEvent
    | TurnStoppedEvent
    | ModelFallbackEvent
    | TurnTimedOutEvent
)

Event = Annotated[_Reported, Field(discriminator="type")]
"""Something a node reported during a turn (or a reset), told apart by its ``type``."""

StreamEvent = Annotated[_Reported | TokenEvent | RoundStartedEvent, Field(discriminator="type")]
"""What a turn streams as it runs: its events and, among them, the model's tokens and the start
of each model call (``round_started``: a client replaces the text streamed so far in the turn's
reply with what follows)."""

STREAMED_ONLY = frozenset({"token", "round_started"})
"""Event types that are streamed but not kept in the turn's result."""
