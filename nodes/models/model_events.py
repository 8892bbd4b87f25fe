"""The events of the model path: a fallback, a turn out of time, the start of a model call.

Part of keel's event vocabulary (``keel.nodes.events`` makes the unions): a
``model_fallback`` says the provider's answer (or plan) was not used and why, a ``turn_timed_out``
that the turn's time budget ended it, and a ``round_started`` (streamed only) that a model call
begins, so a client replaces the text streamed so far with what follows. Each has one builder here.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field
from typing_extensions import TypedDict


def _tag(kind: str) -> Any:
    return Field(description="The event's type.", examples=[kind])


def _data(example: dict[str, Any]) -> Any:
    return Field(description="The event's payload.", examples=[example])


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


def model_fallback(
    reason: str, status: int | None, detail: str, step: Literal["answer", "plan"] = "answer"
) -> ModelFallbackEvent:
    """The event of the provider's answer (or plan) replaced by the offline one, for ``reason``."""
    data: ModelFallbackData = {"reason": reason, "status": status, "detail": detail, "step": step}
    return {"type": "model_fallback", "data": data}


def turn_timed_out(seconds: int, open_items: list[str]) -> TurnTimedOutEvent:
    """The event of a turn ended by its time budget, ``open_items`` left open."""
    return {"type": "turn_timed_out", "data": {"seconds": seconds, "open_items": open_items}}


def round_started(round_: int, attempt: int) -> RoundStartedEvent:
    """The event of a model call starting (round ``round_``, attempt ``attempt``)."""
    return {"type": "round_started", "data": {"round": round_, "attempt": attempt}}
