"""What reading a conversation gives back: every result shape, typed once, and how it is read.

The turn result (``TurnResult``), the snapshot of a conversation (``Snapshot``) and the answer to
a reset (``ResetAnswer``, read from the reset command's turn result) are defined here and nowhere
else: the API uses them as its response models, the CLI and the tests read them. Their parts are
the graph's own types, used as they are: the events (``keel.nodes.event_types``), the
confirmation and the active topic (``TopicRef``, ``keel.nodes.state.schema``). A topic segment
in full (``TopicSegment``, read from a ``TopicRow``) is typed here for the snapshot and the API's
answer to a reopen. ``turn_result`` and ``snapshot_of`` build them from the graph's values and
interrupts; ``pending_confirmation`` and ``agent_state_of`` read a ``StateSnapshot``. The snapshot
and the reset answer are TypedDicts, read as mappings like the graph's own state; the turn result
is a model.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, NotRequired

from langchain_core.messages import AIMessage
from langgraph.types import Interrupt, StateSnapshot
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from keel.checkpoints.topics import TopicRow
from keel.nodes.event_types import Event, ToolCallData
from keel.nodes.state.confirmation import Confirmation, confirmation_of, is_approval_request
from keel.nodes.state.machine import AgentState
from keel.nodes.state.schema import Todolist, Topic, TopicRef
from keel.nodes.support.topic_names import readable_summary

CONVERSATION_ID = "6f1c1a9e-0c57-4d3e-9a52-2f9b0f0c3b11"
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


class TurnResult(BaseModel):
    """What one turn produced."""

    conversation_id: str = Field(
        description="The conversation's id (UUID).", examples=[CONVERSATION_ID]
    )
    reply: str = Field(
        description="The text shown to the user.", examples=["Created task: buy milk"]
    )
    agent_state: str = Field(description="Where the state machine stopped.", examples=["response"])
    complete: bool = Field(
        description="The task is done (DONE marker, nothing open).", examples=[True]
    )
    awaiting_confirmation: Confirmation | None = Field(
        default=None,
        description="A destructive action waiting for the user's yes/no; answer it by posting "
        "the next message.",
        examples=[None],
    )
    mission: str | None = Field(
        description="What the user asked for in the current plan.",
        default=None,
        examples=["Add buy milk"],
    )
    todolist: dict[str, Any] | None = Field(
        default=None,
        description="The plan: id, items (id, description, tool, status), steps_completed.",
        examples=[{"id": "…", "items": [], "steps_completed": []}],
    )
    topic: TopicRef | None = Field(
        default=None,
        description="The active topic: id and title.",
        examples=[{"id": "…", "title": "Add buy milk"}],
    )
    events: list[Event] = Field(
        description="What the nodes reported during the turn, in order.",
        default_factory=list,
        examples=[[{"type": "topic_changed", "data": {"reason": "phrase"}}]],
    )
    tool_calls: list[ToolCallData] = Field(
        description="The tool calls of the turn with their results.",
        default_factory=list,
        examples=[[{"name": "list_todo_tasks", "args": {}, "result": {"tasks": []}}]],
    )
    recovered_reply: str | None = Field(
        default=None,
        description="The reply of an earlier turn that was cut off (the process died) and was "
        "finished before this message was handled.",
        examples=[None],
    )
    replayed: bool = Field(
        default=False,
        description="This is the answer to an earlier request with the same Idempotency-Key: "
        "the message was not run again.",
        examples=[False],
    )


def confirmation_in(interrupts: Sequence[Interrupt]) -> Confirmation | None:
    """The confirmation among ``interrupts``, if one of them asks for one."""
    for intr in interrupts:
        if is_approval_request(intr.value):
            return confirmation_of(intr.value)
    return None


def pending_confirmation(snap: StateSnapshot) -> Confirmation | None:
    """The confirmation the conversation is paused on, if any."""
    return confirmation_in(snap.interrupts)


def agent_state_of(snap: StateSnapshot) -> str:
    """The state machine's position; a paused turn waits inside TOOL_EXECUTION (the one node
    that asks), which counts as entered.
    """  # noqa: D205
    if any(task.interrupts for task in snap.tasks):
        return AgentState.TOOL_EXECUTION.value
    return str(snap.values.get("agent_state", AgentState.USER_INPUT.value))


def _reply(values: dict[str, Any]) -> str:
    last = next((m for m in reversed(values.get("window", [])) if isinstance(m, AIMessage)), None)
    text = last.text.strip() if last is not None else ""
    note = values.get("turn_note")
    return "\n".join(part for part in (text, note) if part)


def _complete(values: dict[str, Any], waiting: Confirmation | None) -> bool:
    """The task ended complete (DONE marker, nothing open) and no confirmation is waiting."""
    return bool(values.get("complete")) and waiting is None


def turn_result(
    conversation_id: str,
    values: dict[str, Any],
    interrupts: Sequence[Interrupt],
    events: list[Event],
) -> TurnResult:
    """Build the TurnResult of a conversation from its state and interrupts after a turn."""
    waiting = confirmation_in(interrupts)
    todolist: Todolist | None = values.get("todolist")
    return TurnResult(
        conversation_id=conversation_id,
        reply=waiting["prompt"] if waiting else _reply(values),
        agent_state=AgentState.TOOL_EXECUTION.value  # the node that asks waits inside
        if waiting
        else str(values.get("agent_state", AgentState.USER_INPUT.value)),
        complete=_complete(values, waiting),
        awaiting_confirmation=waiting,
        mission=values.get("mission"),
        todolist=dict(todolist) if todolist else None,
        topic=topic_ref(values.get("topic")),
        events=events,
        tool_calls=[e["data"] for e in events if e["type"] == "tool_call"],
    )


class Snapshot(TypedDict):
    """Where a conversation stands."""

    conversation_id: Annotated[
        str, Field(description="The conversation's id (UUID).", examples=[CONVERSATION_ID])
    ]
    agent_state: Annotated[
        str,
        Field(
            description="user_input, assistant, tool_execution or response.", examples=["response"]
        ),
    ]
    complete: Annotated[bool, Field(description="The last task ended complete.", examples=[True])]
    mission: Annotated[
        str | None,
        Field(
            description="What the user asked for in the current plan.", examples=["Add buy milk"]
        ),
    ]
    todolist: Annotated[dict[str, Any] | None, Field(description="The plan.", examples=[None])]
    topic: Annotated[TopicRef | None, Field(description="The active topic.", examples=[None])]
    pending_confirmation: Annotated[
        Confirmation | None,
        Field(
            description="A destructive action waiting for yes/no: action, task_id and prompt.",
            examples=[None],
        ),
    ]
    stats: Annotated[
        dict[str, Any],
        Field(description="turns, tool_calls, total_resumes.", examples=[{"turns": 3}]),
    ]
    topics: NotRequired[
        Annotated[
            list[TopicSegment],
            Field(
                description="Every topic, oldest first (when the topics were read).",
                examples=[[]],
            ),
        ]
    ]
    turn_running: NotRequired[
        Annotated[
            bool,
            Field(
                description="A turn is running on the conversation now (the API tells; poll "
                "until it is false, then read the messages).",
                examples=[False],
            ),
        ]
    ]


def snapshot_of(
    conversation_id: str, snap: StateSnapshot, topics: Sequence[TopicRow] | None = None
) -> Snapshot:
    """The conversation's snapshot from its state (and its topic rows, when read)."""
    values = snap.values
    waiting = pending_confirmation(snap)
    result: Snapshot = {
        "conversation_id": conversation_id,
        "agent_state": agent_state_of(snap),
        "complete": _complete(values, waiting),
        "mission": values.get("mission"),
        "todolist": values.get("todolist"),
        "topic": topic_ref(values.get("topic")),
        "pending_confirmation": waiting,
        "stats": values.get("stats", {}),
    }
    if topics is not None:
        result["topics"] = [topic_segment(row) for row in topics]
    return result


class ResetAnswer(TypedDict):
    """The answer to a reset."""

    success: Annotated[
        bool, Field(description="Always true when the reset happened.", examples=[True])
    ]
    message: Annotated[
        str,
        Field(
            description="What to tell the user.",
            examples=["Conversation context has been reset. Starting fresh! …"],
        ),
    ]
    new_topic_id: Annotated[
        str, Field(description="The topic the conversation continues in.", examples=["0b6c5d1e-…"])
    ]
    previous_messages_preserved: Annotated[
        bool, Field(description="The message log is kept (always true).", examples=[True])
    ]


def reset_answer(result: TurnResult) -> ResetAnswer:
    """The answer to a reset, read from the result of the turn that ran the reset command."""
    if result.topic is None:
        raise ValueError("a reset always leaves the conversation in a new topic")
    return {
        "success": True,
        "message": result.reply,
        "new_topic_id": result.topic["id"],
        "previous_messages_preserved": True,
    }
