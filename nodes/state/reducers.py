"""The reducers that keep the state's lists bounded, and the update that stays off the stream.

``window`` (the turn's messages), ``messages`` (the conversation for LangGraph's clients) and
``audit`` grow by their updates and keep only their newest; ``unstreamed`` wraps messages a node
adds that are state, not assistant text to stream. Declared on ``keel.nodes.state.schema``'s
fields.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from langchain_core.messages import AnyMessage, BaseMessage, RemoveMessage, convert_to_messages
from langgraph.channels.delta import DeltaChannel
from langgraph.graph.message import REMOVE_ALL_MESSAGES, add_messages
from pydantic import TypeAdapter, ValidationError

if TYPE_CHECKING:
    from keel.nodes.state.schema import AuditEntry

WINDOW_MAX_MESSAGES = 40
"""Upper bound on the messages kept in ``window``, reached by dropping earlier turns' messages;
the current turn's (from its user message on) are never dropped."""
AUDIT_MAX_ENTRIES = 20
"""Upper bound on ``audit`` entries kept in state."""
UNSTREAMED = "unstreamed"


def unstreamed(messages: Sequence[BaseMessage]) -> dict[str, Sequence[BaseMessage]]:
    """A window update kept off LangGraph's ``messages`` stream, which only the assistant feeds.

    The stream picks up messages, and lists of them, that a node returns; the user's own message,
    tool results and window resets are state, not something to show as it is typed.
    Each message gets its id here if it has none: ``messages`` is rebuilt from its writes
    (``conversation``), and a message must come back with the id it was written with.
    """
    for message in messages:
        if not message.id:
            message.id = str(uuid.uuid4())
    return {UNSTREAMED: messages}


def _merged(left: list[AnyMessage], right: Any) -> list[AnyMessage]:
    """``right`` (messages, or an ``unstreamed`` update) added to ``left`` by ``add_messages``."""
    if isinstance(right, dict):
        right = right[UNSTREAMED]
    merged: list[AnyMessage] = add_messages(left, right)  # type: ignore[arg-type,assignment]
    return merged


def bounded_window(left: list[AnyMessage], right: Any) -> list[AnyMessage]:
    """Append messages (``add_messages`` semantics), keeping at most WINDOW_MAX_MESSAGES.

    ``right`` may be an ``unstreamed`` update.

    Only messages before the current turn's user message (the last human message) are ever
    dropped, oldest first, so a turn keeps all of its own messages however many there are; the cut
    never leaves a tool result without the assistant message that asked for it (the window starts
    at a human message when it is trimmed).
    """
    merged = _merged(left, right)
    if len(merged) <= WINDOW_MAX_MESSAGES:
        return merged
    turn = max((i for i, m in enumerate(merged) if m.type == "human"), default=0)
    cut = min(len(merged) - WINDOW_MAX_MESSAGES, turn)
    while cut < turn and merged[cut].type != "human":
        cut += 1
    return merged[cut:]


MESSAGES_MAX = 200
"""Upper bound on the messages kept in ``messages``: the conversation's newest, from a user message
on. The message log keeps the whole conversation; the page and the API read it there."""


def _newest(merged: list[AnyMessage]) -> list[AnyMessage]:
    """``merged`` cut to its newest MESSAGES_MAX, from a user message on."""
    if len(merged) <= MESSAGES_MAX:
        return merged
    cut = len(merged) - MESSAGES_MAX
    while cut < len(merged) - 1 and merged[cut].type != "human":
        cut += 1
    return merged[cut:]


SNAPSHOT_EVERY = 6
"""Writes to ``messages`` between two whole copies of it in a checkpoint (a tool turn writes it
three times): a checkpoint in between stores none of it, and a read replays the writes
since the newest copy."""


_MESSAGE: TypeAdapter[AnyMessage] = TypeAdapter(AnyMessage)
"""LangChain's union of the message types, told apart by ``type``."""


def _revived(message: Any) -> AnyMessage:
    """A message as it was written, also when a server kept it as JSON (its fields, ``type``
    among them); any other message-like value (a removal, a string, a role and text) as
    LangChain reads it.
    """  # noqa: D205
    if isinstance(message, BaseMessage):
        return cast(AnyMessage, message)
    if isinstance(message, dict) and "type" in message:
        try:
            return _MESSAGE.validate_python(message)
        except ValidationError:
            pass
    return cast(AnyMessage, convert_to_messages([message])[0])


def _conversation(messages: list[AnyMessage], writes: Sequence[Any]) -> list[AnyMessage]:
    """``writes`` (message lists, or ``unstreamed`` updates) added to ``messages`` one after
    another, each as ``add_messages`` adds it (a known id replaced, a ``RemoveMessage`` removing,
    the ``REMOVE_ALL_MESSAGES`` one clearing; a removal of a message already cut is no error),
    then cut to the newest MESSAGES_MAX from a user message on, so no tool result is kept without
    the assistant message that asked for it. ``writes`` may be ``unstreamed`` updates: keel's
    nodes add the turn's messages that way, so the ``messages`` stream carries the assistant's
    tokens alone.
    A fold, so adding two batches one after the other is adding them as one (``DeltaChannel``
    replays a checkpoint's writes in one batch, where the run added them step by step).
    """  # noqa: D205
    if messages and not isinstance(messages[0], BaseMessage):  # a copy a server kept as JSON
        messages = [_revived(m) for m in messages]
    for write in writes:
        batch = write[UNSTREAMED] if isinstance(write, dict) else write
        messages = _newest(_added(messages, batch if isinstance(batch, list) else [batch]))
    return messages


def _added(messages: list[AnyMessage], batch: list[Any]) -> list[AnyMessage]:
    """One write's messages added to ``messages`` (a new list; ``messages`` is left as it is)."""
    merged: list[AnyMessage | None] = list(messages)
    at = {m.id: i for i, m in enumerate(messages) if m.id is not None}
    before = messages[-1].id if messages else None
    for item in batch:
        message = _revived(item)
        if isinstance(message, RemoveMessage) and message.id == REMOVE_ALL_MESSAGES:
            merged, at = [], {}
            continue
        if not message.id:  # a string or (role, text) given as input: the same id on every read
            said = f"{before}|{message.type}|{message.text}".encode("utf-8", "replace").decode()
            message.id = str(uuid.uuid5(uuid.NAMESPACE_OID, said))
        if isinstance(message, RemoveMessage):
            if message.id in at:
                merged[at.pop(message.id)] = None
        elif message.id in at:
            merged[at[message.id]] = message
        else:
            at[message.id] = len(merged)
            merged.append(message)
        before = message.id
    return [m for m in merged if m is not None]


def conversation() -> DeltaChannel[list[AnyMessage]]:
    """The channel of ``messages``: only what each step adds is stored, not the whole list again.

    LangGraph keeps a whole copy every ``SNAPSHOT_EVERY`` writes and rebuilds the list from the
    newest copy and the steps' writes after it (``keel.checkpoints.retention`` keeps them).
    """
    return DeltaChannel(_conversation, snapshot_frequency=SNAPSHOT_EVERY)


def bounded_audit(left: list[AuditEntry], right: list[AuditEntry]) -> list[AuditEntry]:
    """Append audit entries, keeping the most recent AUDIT_MAX_ENTRIES. An entry already kept is not
    added again: a nested graph returns the whole list it was given, with its own entries after.
    """  # noqa: D205
    kept = list(left or [])
    return (kept + [e for e in right or [] if e not in kept])[-AUDIT_MAX_ENTRIES:]
