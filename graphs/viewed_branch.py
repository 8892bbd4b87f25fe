"""The branch of a conversation a reader sees: the one its thread's newest checkpoint is on.

A conversation forked from an earlier checkpoint has more than one line of turns in its message log
(``keel.checkpoints.branches``). What a client is shown is the active one: the lineage recorded in
the newest checkpoint's state, and that state's topic. Used by the API's message log; the graph's
own readers take the lineage from the state they run on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from keel.checkpoints.branches import Lineage
from keel.graphs.builder import KeelGraph
from keel.graphs.runner import thread_config
from keel.nodes.state.lineage import lineage
from keel.nodes.state.schema import KeelState


@dataclass(frozen=True)
class ViewedBranch:
    """The log rows of the active branch, and its topic."""

    lineage: Lineage
    topic_id: str | None


async def viewed_branch(graph: KeelGraph, conversation_id: str) -> ViewedBranch:
    """The active branch of the conversation (one checkpoint read)."""
    values = cast(KeelState, (await graph.aget_state(thread_config(conversation_id))).values)
    topic = values.get("topic")
    return ViewedBranch(lineage(values), topic["id"] if topic else None)
