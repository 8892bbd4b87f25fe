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
from keel.nodes.context.topic_model import ABOUT, RECENT, Said
from keel.nodes.context.topic_shifts import (
    RETURN_CANDIDATES,
    Shift,
    assess,
    explicit_change,
    find_return,
    go_back,
    named_return,
)


def judge(
    message: Said,
    topics: Sequence[Sequence[Said]],
    active: int,
    embedder: Embedder | None,
    tools: Sequence[BaseTool] | None,
    shift_threshold: float,
    return_threshold: float,
) -> Shift | None:
    """Whether ``message`` changes the topic from ``topics[active]``, and to which (by index).

    ``tools``: the offline model's (its sure requests stay); None as with a language model.

    A closed topic is summed up by its last messages, the last ``RETURN_CANDIDATES`` of them
    looked at, as the node reads them: the cost stays flat however many topics there were.
    """
    recent = topics[active][-ABOUT:]  # the last few to compare with, the rest for its words
    first = max(0, len(topics) - RETURN_CANDIDATES - 1)
    closed = [
        (str(k), " ".join(said.text for said in topics[k][-RECENT:]))
        for k in range(first, len(topics))
        if k != active
    ][-RETURN_CANDIDATES:]
    opening = [said.text for said in topics[active][:1]]
    named = named_return(message.text)
    shift = go_back(named, closed, " ".join(opening)) if named else None
    if shift is None:
        found = explicit_change(message.text, None, datetime.min, 0)
        shift = assess(message, recent, found, embedder, tools, shift_threshold, opening)
    if shift is not None and shift.reason not in ("user_reset", "returned"):
        texts = [said.text for said in recent[-RECENT:]]
        shift = find_return(message.text, shift, texts, closed, embedder, return_threshold)
    return shift


def segment(
    turns: Sequence[Said],
    embedder: Embedder | None,
    tools: Sequence[BaseTool],
    shift_threshold: float,
    return_threshold: float,
) -> list[tuple[int, Shift]]:
    """Where a dialogue's topics change (turn index, why), as keel's detector sees it turn by turn.

    The topic_detect node's decisions, without the time gap: each topic keeps its messages and a
    return goes back to one. Every turn is judged, whoever says it, and a closed topic is summed
    up by its last messages (the node judges the user's messages, and matches a return against
    the topic's title and what its summary says was asked).
    """
    topics: list[list[Said]] = [[turns[0]]] if turns else []
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
