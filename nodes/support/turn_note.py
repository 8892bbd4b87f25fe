"""Noting the turn under way before its tools act, and reusing what a cut-off run of it noted.

A turn keel's runner runs is one graph run whose checkpoint is written at its end; the nodes note
it on its conversation (``keel.checkpoints.in_flight``) at the two points after which a tool may
change something: the assistant node when the model asks for tools, the user_input node when a
message answers a waiting confirmation. The write goes on while the graph moves on, and is waited
for before the state machine enters TOOL_EXECUTION (``noted``, in the graph's node wrapper).

The next turn finishes a turn its process lost by running its message again; the assistant node
then takes the model's noted calls (``replayed``) instead of asking the model anew, so the
tool-call ledger recognises every call that already ran. A run without a note (Studio, the SDK,
a notebook) notes nothing.
"""

from __future__ import annotations

from langchain_core.messages import AIMessage, message_to_dict, messages_from_dict
from langgraph.runtime import Runtime

from keel.nodes.run_context import KeelContext, conversation_id


def replayed(runtime: Runtime[KeelContext], reply_id: str) -> AIMessage | None:
    """The model's message for ``reply_id`` as a cut-off run of this turn noted it, if it did."""
    note = runtime.context.note
    noted = note.replay.get(reply_id) if note is not None else None
    if noted is None:
        return None
    message = messages_from_dict([noted])[0]
    return message if isinstance(message, AIMessage) else None


def note_round(runtime: Runtime[KeelContext], reply_id: str, reply: AIMessage) -> None:
    """Note the turn with the model's message ``reply``, which asks for tools."""
    note = runtime.context.note
    if note is None:
        return
    note.in_flight = note.in_flight.with_round(reply_id, message_to_dict(reply))
    _write(runtime)


def note_answer(runtime: Runtime[KeelContext]) -> None:
    """Note the turn whose message answers a waiting confirmation (its calls are in state)."""
    if runtime.context.note is not None:
        _write(runtime)


async def noted(runtime: Runtime[KeelContext]) -> None:
    """Wait for the turn's note to be written: before the state machine enters TOOL_EXECUTION."""
    if runtime.context.note is not None:
        await runtime.context.note.written()


def _write(runtime: Runtime[KeelContext]) -> None:
    """Start writing the note; it is waited for before a tool may act (``noted``)."""
    ctx = runtime.context
    assert ctx.note is not None
    conversations = ctx.resources.conversations
    ctx.note.write(conversations.note_in_flight(conversation_id(runtime), ctx.note.in_flight))
