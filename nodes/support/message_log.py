"""Writing the current turn's messages to the message log, idempotently.

``flush`` writes the turn's window under its message ids: the user's message, the tool results,
and one assistant message, the final answer as the user sees it (with the note the response node
adds). The assistant's earlier rounds (tool calls, answers it was sent back from) stay in the
checkpoints only, so the log and a reloaded page show a turn as one exchange. A message already
written is left as it is, so flushing again after a crash or a re-run adds nothing. Nodes flush
before they pause (tool_execution: no answer yet) and when a turn ends (response): once or twice a
turn. Replies enter the window without their DONE line
(``keel.nodes.models.chat.WithoutDoneLines``), so the log holds what the user sees. Rows go to
the state's branch of the log; a turn found to be a fork there is moved to a branch of its own,
and ``flush`` returns the state update that records it (``keel.nodes.state.lineage``).
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
from langgraph.runtime import Runtime

from keel.nodes.models.markers import SYNTHETIC
from keel.nodes.run_context import KeelContext, conversation_id
from keel.nodes.state.lineage import logged, place, turn_key
from keel.nodes.state.reducers import UNSTREAMED, unstreamed
from keel.nodes.state.schema import KeelState, Topic

ROLES = {"human": "user", "ai": "assistant", "tool": "tool"}


def log_row(message: AnyMessage, topic_id: str | None) -> dict[str, Any]:
    """The message-log row for one window message."""
    row: dict[str, Any] = {
        "message_key": message.id,
        "role": ROLES.get(message.type, message.type),
        "content": message.text,
        "topic_id": topic_id,
    }
    if isinstance(message, AIMessage) and message.tool_calls:
        row["tool_calls"] = [
            {"name": c["name"], "args": c["args"], "id": c.get("id")} for c in message.tool_calls
        ]
    if isinstance(message, ToolMessage):
        row["tool_name"] = message.name
        row["tool_call_id"] = message.tool_call_id
    return row


def final_answer(window: list[AnyMessage]) -> AIMessage | None:
    """The turn's last assistant message: the one the log keeps."""
    return next((m for m in reversed(window) if isinstance(m, AIMessage)), None)


def with_conversation(update: dict[str, Any]) -> dict[str, Any]:
    """``update`` with what it adds to the window added to ``messages`` too, as it happens: the
    assistant's messages and the tool results (the user's message joins at user_input; what keel
    makes for the model alone never), after what the node adds itself (a question and its answer).
    """  # noqa: D205
    window = update.get("window")
    added = window[UNSTREAMED] if isinstance(window, dict) else window
    shown = [
        m
        for m in added or []
        if m.type in ("ai", "tool") and m.id and not m.additional_kwargs.get(SYNTHETIC)
    ]
    if not shown:
        return update
    own = update.get("messages")
    before = list(own[UNSTREAMED] if isinstance(own, dict) else own or [])
    return {**update, "messages": unstreamed([*before, *shown])}


def finished(window: list[AnyMessage], note: str | None = None) -> list[AnyMessage]:
    """The turn's reply as ``messages`` keeps it once the turn ends: as Markdown that keeps its
    lines, ``note`` after its text (or the note alone, when there is no reply to add it to).
    """  # noqa: D205
    final = final_answer(window)
    replied = final is not None and not final.tool_calls and final is window[-1]
    reply = closing_reply(window, final if replied else None, note)
    return [AIMessage(paragraphs(reply.text), id=reply.id)] if reply is not None else []


def closing_reply(
    window: list[AnyMessage], final: AIMessage | None, note: str | None
) -> AIMessage | None:
    """The assistant message that ends the turn: ``final`` with ``note`` after its text, else the
    note alone, under the id of the window's first message and ``:note``; None when neither.
    """  # noqa: D205
    if final is not None and final.id:
        text = "\n".join(p for p in (final.text.strip(), note) if p)
        return final.model_copy(update={"content": text})
    if note and window and window[0].id:
        return AIMessage(note, id=f"{window[0].id}:note")
    return None


def paragraphs(text: str) -> str:
    """``text`` as Markdown that shows its lines as they are: a blank line between two lines that
    are not items of one list (Markdown joins them into one line otherwise).
    """  # noqa: D205
    lines = text.split("\n")
    out = lines[:1]
    for before, line in zip(lines, lines[1:], strict=False):
        if before.strip() and line.strip() and not line.startswith("- "):
            out.append("")
        out.append(line)
    return "\n".join(out)


def user_message_id(runtime: Runtime[KeelContext], state: KeelState) -> str:
    """The id of the current turn's user message: the message that opens the turn in the log."""
    return f"{conversation_id(runtime)}:{turn_key(state)}:user"


async def flush(
    state: KeelState, runtime: Runtime[KeelContext], ending: bool = False, note: str | None = None
) -> dict[str, Any]:
    """Write the turn's window to the log (messages already there are skipped).

    When the turn is ``ending``, its final answer is written too, with ``note`` after its text.
    Returns the state update that records where the turn's rows went (``branch``), if any.
    """
    ctx = runtime.context
    topic = state.get("topic")
    topic_id = topic["id"] if topic else None
    window = state.get("window", [])
    opening = user_message_id(runtime, state)
    started = ctx.turn.checkpoint_id if ctx.turn is not None else None
    rows = [
        {**log_row(m, topic_id), "opens_turn": m.id == opening}
        for m in window
        if m.id and not m.additional_kwargs.get(SYNTHETIC) and not isinstance(m, AIMessage)
    ]
    for row in rows:
        if row["opens_turn"]:
            row["from_checkpoint"] = started  # where an edit of the message runs from
    reply = closing_reply(window, final_answer(window), note) if ending else None
    if reply is not None:  # the reply comes last, after what the turn's tools did
        rows.append(log_row(reply, topic_id))
    written_to = await ctx.resources.messages.append(
        conversation_id(runtime), ctx.user_id, rows, place(state)
    )
    return logged(state, written_to)


async def log_exchange(
    runtime: Runtime[KeelContext],
    state: KeelState,
    key: str,
    role: str,
    text: str,
    topic: Topic | None = None,
) -> None:
    """Write one message that is not in the window (a confirmation question or its answer, a
    reset's reply), in ``topic`` (else the state's).
    """  # noqa: D205
    ctx = runtime.context
    topic = topic or state.get("topic")
    row = {
        "message_key": key,
        "role": role,
        "content": text,
        "topic_id": topic["id"] if topic else None,
    }
    await ctx.resources.messages.append(conversation_id(runtime), ctx.user_id, [row], place(state))
