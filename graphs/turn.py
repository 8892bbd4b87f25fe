"""Running one turn of a conversation and reading its result.

``run_turn`` is what the CLI and the API call with a user's message. It resumes a pending
confirmation when one is waiting (the message is the answer) and otherwise starts a new turn; it
collects the events nodes publish and returns a ``TurnResult``. ``snapshot`` reads a
conversation's state for ``/state`` and the API.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
import structlog
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Command, Durability, Interrupt, StateSnapshot, StreamMode
from psycopg_pool import PoolTimeout
from pydantic import BaseModel, Field

from checkpoints.retention import Retention, prune_thread
from graphs.agent_state import AgentState
from graphs.builder import KeelGraph
from graphs.state import Todolist
from nodes.done_marker import has_done, strip_done
from nodes.logs import preview
from nodes.runtime import KeelContext

log = structlog.get_logger(__name__)

DURABILITY: Durability = "exit"
"""A run writes its checkpoint when it stops, not after every step: one write instead of ten."""
CHECKPOINT_BEFORE = ["tool_execution"]
"""The turn stops (and so checkpoints) before every tool execution and goes on at once. The model's
tool calls, with their ids, are stored before any tool changes anything: a process killed after
that re-runs the same calls on the next call, and the tool-call ledger answers those that already
ran. A process killed before it loses only the unanswered message, with nothing done."""
MAX_RUNS = 50
STREAM_MODES: list[StreamMode] = ["custom", "updates", "values", "messages"]
"""Tokens ("messages") are streamed only to a caller that listens."""
INTERRUPT = "__interrupt__"  # the key of interrupts in the "updates" stream
"""Stops before tool execution in one turn, at most (the loop limit ends a turn long before)."""


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


def thread_config(conversation_id: str) -> RunnableConfig:
    """The LangGraph config that addresses a conversation's thread."""
    return {"configurable": {"thread_id": conversation_id}}


def _confirmation(interrupts: Sequence[Interrupt]) -> Confirmation | None:
    for intr in interrupts:
        if isinstance(intr.value, dict) and "prompt" in intr.value:
            return Confirmation(**{k: intr.value[k] for k in ("action", "task_id", "prompt")})
    return None


def pending_confirmation(snap: StateSnapshot) -> Confirmation | None:
    """The confirmation the conversation is paused on, if any."""
    return _confirmation(snap.interrupts)


def agent_state_of(snap: StateSnapshot) -> str:
    """The state machine's position; a paused node counts as entered (it waits inside)."""
    for task in snap.tasks:
        if task.interrupts and task.name in AgentState._value2member_map_:
            return task.name
    return str(snap.values.get("agent_state", AgentState.USER_INPUT.value))


def _reply(values: dict[str, Any], done_marker: str) -> str:
    last = next((m for m in reversed(values.get("window", [])) if isinstance(m, AIMessage)), None)
    text = strip_done(last.text, done_marker) if last is not None else ""
    note = values.get("turn_note")
    return "\n".join(part for part in (text, note) if part)


def _topic(topic: dict[str, Any] | None) -> dict[str, Any] | None:
    return {"id": topic["id"], "title": topic["title"]} if topic else None


def turn_result(
    conversation_id: str,
    values: dict[str, Any],
    interrupts: Sequence[Interrupt],
    events: list[dict[str, Any]],
    done_marker: str,
) -> TurnResult:
    """Build the TurnResult of a conversation from its state and interrupts after a turn."""
    waiting = _confirmation(interrupts)
    todolist: Todolist | None = values.get("todolist")
    return TurnResult(
        conversation_id=conversation_id,
        reply=waiting.prompt if waiting else _reply(values, done_marker),
        agent_state=AgentState.TOOL_EXECUTION.value  # the node that asks waits inside
        if waiting
        else str(values.get("agent_state", AgentState.USER_INPUT.value)),
        complete=bool(values.get("complete")) and waiting is None,
        awaiting_confirmation=waiting,
        mission=values.get("mission"),
        todolist=dict(todolist) if todolist else None,
        topic=_topic(values.get("topic")),
        events=[Event(**e) for e in events],
        tool_calls=[ToolCallRecord(**e["data"]) for e in events if e["type"] == "tool_call"],
    )


EventSink = Callable[[dict[str, Any]], Awaitable[None]]
"""Receives, as they happen, a turn's events ``{"type": ..., "data": ...}`` and model tokens
``{"type": "token", "data": {"text": ...}}``."""


class TokenLines:
    """Passes model tokens on line by line, holding back lines that carry the DONE marker."""

    def __init__(self, done_marker: str) -> None:
        """Filter with ``done_marker``."""
        self.marker, self.pending = done_marker, ""
        self.message_id: str | None = None

    def feed(self, message_id: str | None, text: str) -> list[str]:
        """Text that may be shown now (complete lines of the same message)."""
        out = self.flush() if message_id != self.message_id else []
        self.message_id = message_id
        self.pending += text
        *lines, self.pending = self.pending.split("\n")
        out.extend(f"{line}\n" for line in lines if not has_done(line, self.marker))
        return out

    def flush(self) -> list[str]:
        """The held-back last line, unless it is the DONE line."""
        rest, self.pending = self.pending, ""
        return [rest] if rest and not has_done(rest, self.marker) else []


async def _stream(
    graph: KeelGraph,
    graph_input: Any,
    conversation_id: str,
    context: KeelContext,
    sink: EventSink | None = None,
) -> TurnResult:
    """Run the turn to its end; each stop before tool execution is checkpointed, then resumed."""
    config = thread_config(conversation_id)
    events: list[dict[str, Any]] = []
    tokens = TokenLines(context.done_marker)
    values: dict[str, Any] = {}
    interrupts: Sequence[Interrupt] = ()
    for _ in range(MAX_RUNS):
        stopped_before_tools = False
        stream: AsyncIterator[Any] = graph.astream(
            graph_input,
            config,
            context=context,
            stream_mode=STREAM_MODES if sink is not None else STREAM_MODES[:3],
            durability=DURABILITY,
            interrupt_before=CHECKPOINT_BEFORE,
        )
        async for mode, chunk in stream:
            if mode == "values":
                values = chunk
            elif mode == "updates":
                if INTERRUPT in chunk:
                    interrupts = chunk[INTERRUPT]
                    stopped_before_tools = not interrupts
            elif mode == "custom":
                events.append(chunk)
                if sink is not None:
                    await sink(chunk)
            elif sink is not None:
                message, metadata = chunk
                if metadata.get("langgraph_node") == "assistant" and message.text:
                    for text in tokens.feed(message.id, message.text):
                        await sink({"type": "token", "data": {"text": text}})
        if not stopped_before_tools:
            break
        graph_input = None
    if sink is not None:
        for text in tokens.flush():
            await sink({"type": "token", "data": {"text": text}})
    return turn_result(conversation_id, values, interrupts, events, context.done_marker)


@dataclass(frozen=True)
class TurnStart:
    """Where a conversation stands before a turn, as far as running the turn goes."""

    waiting: Confirmation | None
    """The confirmation it is paused on: the next message answers it."""
    cut_off: bool
    """A turn was cut off mid-way (its process died) and is finished first."""

    @classmethod
    def of(cls, snap: StateSnapshot) -> TurnStart:
        """Read it from the conversation's state."""
        return cls(pending_confirmation(snap), _cut_off(snap))


async def recover_turn(
    graph: KeelGraph, conversation_id: str, context: KeelContext
) -> TurnResult | None:
    """Finish a turn that was cut off mid-way (the process died); None when there is none.

    The checkpoint holds the pending work: the graph resumes it from the last completed step.
    A turn paused on a confirmation is not cut off; it waits for its answer.
    """
    snap = await graph.aget_state(thread_config(conversation_id))
    return await _finish_cut_off(graph, snap, conversation_id, context)


def _cut_off(snap: StateSnapshot) -> bool:
    """The checkpoint holds pending steps that are not a confirmation waiting for its answer."""
    return bool(snap.next) and pending_confirmation(snap) is None


async def _finish_cut_off(
    graph: KeelGraph, snap: StateSnapshot, conversation_id: str, context: KeelContext
) -> TurnResult | None:
    if not _cut_off(snap):
        return None
    log.warning("recovering_cut_off_turn", pending=list(snap.next))
    return await _stream(graph, None, conversation_id, context)


ABANDONED = "The previous turn could not be finished ({error}); it was left as it was."


def _transient(exc: Exception) -> bool:
    """The database is away or busy: the cut-off turn may well finish on a later call."""
    return isinstance(
        exc, OSError | psycopg.OperationalError | PoolTimeout | sqlite3.OperationalError
    )


async def _recover(graph: KeelGraph, conversation_id: str, context: KeelContext) -> TurnResult:
    """Finish a cut-off turn; if it fails for good, abandon it with a note instead.

    A turn that fails the same way every time it is retried (bad data in a step) would otherwise
    fail every later message of the conversation too.
    """
    log.warning("recovering_cut_off_turn")
    try:
        return await _stream(graph, None, conversation_id, context)
    except Exception as exc:
        if _transient(exc):
            raise
        note = ABANDONED.format(error=type(exc).__name__)
        log.error("cut_off_turn_abandoned", error=type(exc).__name__, detail=preview(exc))
    await graph.aupdate_state(
        thread_config(conversation_id),
        {
            "agent_state": AgentState.RESPONSE.value,
            "complete": False,
            "turn_over": True,
            "turn_note": note,
        },
        as_node="response",
    )
    return TurnResult(
        conversation_id=conversation_id,
        reply=note,
        agent_state=AgentState.RESPONSE.value,
        complete=False,
    )


async def run_turn(
    graph: KeelGraph,
    conversation_id: str,
    content: str,
    context: KeelContext,
    sink: EventSink | None = None,
    retention: Retention | None = None,
    start: TurnStart | None = None,
) -> TurnResult:
    """Run one turn for ``content``; a pending confirmation takes it as its answer.

    A turn left unfinished by a crash is finished first; its reply comes back as
    ``recovered_reply``. Old checkpoints are pruned by ``retention`` (the API's prunes in the
    background every few turns), else right after the turn. ``start`` is where the conversation
    stands, when the caller knows it; otherwise it is read from the checkpoint.
    """
    config = thread_config(conversation_id)
    with structlog.contextvars.bound_contextvars(
        conversation_id=conversation_id, thread_id=conversation_id, user_id=context.user_id
    ):
        if start is None:
            start = TurnStart.of(await graph.aget_state(config))
        recovered = None
        waiting = start.waiting
        if start.cut_off:
            recovered = await _recover(graph, conversation_id, context)
            waiting = recovered.awaiting_confirmation
        log.info("turn_received", resuming=waiting is not None, message_preview=preview(content))
        graph_input: Any = Command(resume=content) if waiting else {"content": content}
        result = await _stream(graph, graph_input, conversation_id, context, sink)
        if recovered is not None:
            result.recovered_reply = recovered.reply
        if retention is not None:
            retention.after_turn(conversation_id)
        elif isinstance(graph.checkpointer, BaseCheckpointSaver):
            await prune_thread(graph.checkpointer, conversation_id, context.checkpoint_keep)
        log.info("turn_finished", complete=result.complete, reply_preview=preview(result.reply))
        return result


async def snapshot(graph: KeelGraph, conversation_id: str) -> dict[str, Any]:
    """The conversation's current state: agent_state, mission, todolist, topic, confirmation."""
    snap = await graph.aget_state(thread_config(conversation_id))
    values = snap.values
    waiting = pending_confirmation(snap)
    return {
        "conversation_id": conversation_id,
        "agent_state": agent_state_of(snap),
        "complete": bool(values.get("complete")) and waiting is None,
        "mission": values.get("mission"),
        "todolist": values.get("todolist"),
        "topic": _topic(values.get("topic")),
        "pending_confirmation": waiting.model_dump() if waiting else None,
        "stats": values.get("stats", {}),
    }
