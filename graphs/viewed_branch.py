"""The branch of a conversation a reader sees, and where each of a message's branches is viewed.

A conversation forked from an earlier checkpoint (a message edited and sent again, time travel in
Studio, a notebook or the SDK) has more than one line of turns in its message log
(``keel.checkpoints.branches``). What a client is shown is one line: by default the active one,
the lineage recorded in the newest checkpoint's state, with that state's topic; or the line of a
checkpoint the client names (the branch it switched to). The messages sent from one checkpoint
are a message's branches; each is viewed at the newest kept checkpoint whose line holds it. Used
by the API; the graph's own readers take the lineage from the state they run on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from keel.checkpoints.branches import Lineage
from keel.checkpoints.messages import Sibling
from keel.graphs.builder import KeelGraph
from keel.graphs.runner import state_at, thread_config
from keel.nodes.state.lineage import lineage
from keel.nodes.state.schema import KeelState


@dataclass(frozen=True)
class ViewedBranch:
    """The log rows of the branch a reader sees, and its topic."""

    lineage: Lineage
    topic_id: str | None


async def viewed_branch(
    graph: KeelGraph, conversation_id: str, checkpoint_id: str | None = None
) -> ViewedBranch:
    """The active branch of the conversation, or the one ``checkpoint_id`` is on (one read).

    A checkpoint the conversation does not keep raises ``CheckpointNotKept``.
    """
    values = cast(KeelState, (await state_at(graph, conversation_id, checkpoint_id)).values)
    topic = values.get("topic")
    return ViewedBranch(lineage(values), topic["id"] if topic else None)


def holds(line: Lineage, row: Sibling) -> bool:
    """The line of turns sees the row."""
    return any(
        s.branch == row.branch and (s.upto is None or row.turn is None or row.turn <= s.upto)
        for s in line.segments
    )


async def branch_tips(
    graph: KeelGraph, conversation_id: str, siblings: Sequence[Sibling]
) -> list[str | None]:
    """For each message, the newest kept checkpoint whose line of turns holds it (None: none).

    Reads the kept checkpoints newest first until each message has one (at most the retained
    few dozen).
    """
    tips: list[str | None] = [None] * len(siblings)
    async for snap in graph.aget_state_history(thread_config(conversation_id)):
        line = lineage(cast(KeelState, snap.values))
        for n, row in enumerate(siblings):
            if tips[n] is None and holds(line, row):
                tips[n] = snap.config["configurable"]["checkpoint_id"]
        if all(tips):
            break
    return tips
