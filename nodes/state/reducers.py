"""The reducers that keep the state's lists bounded, and the update that stays off the stream.

``window`` (the turn's messages), ``messages`` (the conversation for LangGraph's clients) and
``audit`` grow by their updates and keep only their newest; ``unstreamed`` wraps messages a node
adds that are state, not assistant text to stream. Declared on ``keel.nodes.state.schema``'s
fields.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AnyMessage, BaseMessage
from langgraph.graph.message import add_messages

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
    """
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


def bounded_messages(left: list[AnyMessage], right: Any) -> list[AnyMessage]:
    """Append messages (``add_messages`` semantics), keeping the newest MESSAGES_MAX, cut before a
    user message (no tool result is kept without the assistant message that asked for it).
    ``right`` may be an ``unstreamed`` update: keel's nodes add the turn's messages that way, so
    the ``messages`` stream carries the assistant's tokens alone.
    """  # noqa: D205
    merged = _merged(left, right)
    if len(merged) <= MESSAGES_MAX:
        return merged
    cut = len(merged) - MESSAGES_MAX
    while cut < len(merged) - 1 and merged[cut].type != "human":
        cut += 1
    return merged[cut:]


def bounded_audit(left: list[AuditEntry], right: list[AuditEntry]) -> list[AuditEntry]:
    """Append audit entries, keeping the most recent AUDIT_MAX_ENTRIES. An entry already kept is not
    added again: a nested graph returns the whole list it was given, with its own entries after.
    """  # noqa: D205
    kept = list(left or [])
    return (kept + [e for e in right or [] if e not in kept])[-AUDIT_MAX_ENTRIES:]
