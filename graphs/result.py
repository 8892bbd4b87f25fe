"""The result of a turn: its typed shape (the API's response model) and how it is read.

``turn_result`` builds a ``TurnResult`` from the graph's values and interrupts at the end of a
run; ``pending_confirmation`` and ``agent_state_of`` read a ``StateSnapshot`` for ``/state`` and
the API; ``TokenLines`` passes model tokens on without the DONE line. Used by ``keel.graphs.runner``
and the API.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.types import Interrupt, StateSnapshot
from pydantic import BaseModel, Field

from keel.nodes.agent_state import AgentState
from keel.nodes.markers import strip_done
from keel.nodes.state import Todolist


class Confirmation(BaseModel):
    """A destructive action waiting for the user's yes or no."""

    action: str = Field(description="What will be done.", examples=["delete"])
    task_id: Any = Field(description="The task it will be done to.", examples=[3])
    prompt: str = Field(
        description="The question put to the user.",
        examples=["Are you sure you want to delete task 3? (yes/no)"],
    )


class Event(BaseModel):
    """Something a node reported during the turn."""

    type: str = Field(description="Event type.", examples=["tool_call"])
    data: dict[str, Any] = Field(
        description="Event payload.", examples=[{"name": "list_todo_tasks"}]
    )


class ToolCallRecord(BaseModel):
    """A tool call made during the turn, with what it returned."""

    name: str = Field(description="The tool's name.", examples=["create_todo_task"])
    args: dict[str, Any] = Field(
        description="The arguments the model gave.", examples=[{"title": "buy milk"}]
    )
    result: Any = Field(
        description="What the tool returned (JSON), or its error text.",
        examples=[{"id": 1, "title": "buy milk", "completed": False}],
    )


class TurnResult(BaseModel):
    """What one turn produced."""

    conversation_id: str = Field(
        description="The conversation's id (UUID).",
        examples=["6f1c1a9e-0c57-4d3e-9a52-2f9b0f0c3b11"],
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
    topic: dict[str, Any] | None = Field(
        default=None,
        description="The active topic: id and title.",
        examples=[{"id": "…", "title": "Add buy milk"}],
    )
    events: list[Event] = Field(
        description="What the nodes reported during the turn, in order.",
        default_factory=list,
        examples=[[{"type": "topic_changed", "data": {"reason": "phrase"}}]],
    )
    tool_calls: list[ToolCallRecord] = Field(
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


def confirmation_in(interrupts: Sequence[Interrupt]) -> Confirmation | None:
    """The confirmation among ``interrupts``, if one of them asks for one."""
    for intr in interrupts:
        if isinstance(intr.value, dict) and "prompt" in intr.value:
            return Confirmation(**{k: intr.value[k] for k in ("action", "task_id", "prompt")})
    return None


def pending_confirmation(snap: StateSnapshot) -> Confirmation | None:
    """The confirmation the conversation is paused on, if any."""
    return confirmation_in(snap.interrupts)


def agent_state_of(snap: StateSnapshot) -> str:
    """The state machine's position; a paused node counts as entered (it waits inside)."""
    for task in snap.tasks:
        if task.interrupts and task.name in AgentState._value2member_map_:
            return task.name
    return str(snap.values.get("agent_state", AgentState.USER_INPUT.value))


def _reply(values: dict[str, Any]) -> str:
    last = next((m for m in reversed(values.get("window", [])) if isinstance(m, AIMessage)), None)
    text = strip_done(last.text).strip() if last is not None else ""
    note = values.get("turn_note")
    return "\n".join(part for part in (text, note) if part)


def topic_of(topic: dict[str, Any] | None) -> dict[str, Any] | None:
    """The topic as the API shows it: id and title."""
    return {"id": topic["id"], "title": topic["title"]} if topic else None


def turn_result(
    conversation_id: str,
    values: dict[str, Any],
    interrupts: Sequence[Interrupt],
    events: list[dict[str, Any]],
) -> TurnResult:
    """Build the TurnResult of a conversation from its state and interrupts after a turn."""
    waiting = confirmation_in(interrupts)
    todolist: Todolist | None = values.get("todolist")
    return TurnResult(
        conversation_id=conversation_id,
        reply=waiting.prompt if waiting else _reply(values),
        agent_state=AgentState.TOOL_EXECUTION.value  # the node that asks waits inside
        if waiting
        else str(values.get("agent_state", AgentState.USER_INPUT.value)),
        complete=bool(values.get("complete")) and waiting is None,
        awaiting_confirmation=waiting,
        mission=values.get("mission"),
        todolist=dict(todolist) if todolist else None,
        topic=topic_of(values.get("topic")),
        events=[Event(**e) for e in events],
        tool_calls=[ToolCallRecord(**e["data"]) for e in events if e["type"] == "tool_call"],
    )
