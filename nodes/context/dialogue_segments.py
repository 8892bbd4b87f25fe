"""keel's topic detector over a whole dialogue, message by message.

Used by ``keel topics eval`` and the detector's benchmark.
``judge`` is the topic_detect node's decision for one message without the time gap (a return the
message names, the semantic signal, the look for a return among closed topics), on topics kept as
lists of messages; ``segment`` runs it over a dialogue.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from langchain_core.tools import BaseTool

from keel.nodes.context.embeddings import Embedder
from keel.nodes.context.topic_shifts import (
    RECENT,
    RETURN_CANDIDATES,
    Shift,
    assess,
    explicit_change,
    find_return,
    go_back,
    named_return,
)


def judge(
    message: str,
    topics: Sequence[Sequence[str]],
    active: int,
    embedder: Embedder | None,
    tools: Sequence[BaseTool],
    shift_threshold: float,
    return_threshold: float,
) -> Shift | None:
    """Whether ``message`` changes the topic from ``topics[active]``, and to which (by index).

    A closed topic is summed up by its last messages, the last ``RETURN_CANDIDATES`` of them
    looked at, as the node reads them: the cost stays flat however many topics there were.
    """
    recent = topics[active][-RECENT:]
    first = max(0, len(topics) - RETURN_CANDIDATES - 1)
    closed = [
        (str(k), " ".join(topics[k][-RECENT:])) for k in range(first, len(topics)) if k != active
    ][-RETURN_CANDIDATES:]
    named = named_return(message)
    shift = go_back(named, closed, " ".join(topics[active][:1])) if named else None
    if shift is None:
        found = explicit_change(message, None, datetime.min, 0)
        shift = assess(message, recent, found, embedder, tools, shift_threshold, topics[active][:1])
    if shift is not None and shift.reason not in ("user_reset", "returned"):
        shift = find_return(message, shift, recent, closed, embedder, return_threshold)
    return shift


def segment(
    turns: Sequence[str],
    embedder: Embedder | None,
    tools: Sequence[BaseTool],
    shift_threshold: float,
    return_threshold: float,
) -> list[tuple[int, Shift]]:
    """Where a dialogue's topics change (turn index, why), as keel's detector sees it turn by turn.

    The topic_detect node's decisions, without the time gap: each topic keeps its messages and a
    return goes back to one. Without speakers, every turn is judged and a closed topic is summed
    up by its last messages (the node judges the user's messages, and matches a return against
    the topic's title and what its summary says was asked).
    """
    topics: list[list[str]] = [[turns[0]]] if turns else []
    active, changes = 0, []
    for index, message in enumerate(turns[1:], start=1):
        shift = judge(message, topics, active, embedder, tools, shift_threshold, return_threshold)
        if shift is not None:
            changes.append((index, shift))
            if shift.topic_id is not None:
                active = int(shift.topic_id)
            else:
                topics.append([])
                active = len(topics) - 1
        topics[active].append(message)
    return changes
