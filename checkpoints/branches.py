"""Branches of a conversation's message log: where a turn's rows go, and which rows a branch sees.

A conversation forks when a turn starts from an earlier checkpoint (time travel in Studio, a
notebook or the SDK) instead of the thread's newest one. Both lines of turns stay in the log; each
row carries its ``branch`` and the ``turn`` (the turn number) that wrote it. A conversation that
never forks has one branch, ``main``. A fork's rows go to a branch of its own, named after the turn
that started it; that branch sees its own rows plus, for each branch it descends from, that
branch's rows up to the turn it was forked after (``Lineage``). The lineage is kept in the graph
state, so every checkpoint knows the rows its line of turns wrote, and reading it costs no lookup.

Why no branch table and no read per turn: a fork is only found where it matters, when its first
row is written. Each turn's opening user message holds a slot, unique per (conversation, branch,
turn), so a turn whose slot is already taken by another message (the other line's turn of the same
number) fails that one insert, and only then is the turn moved to its new branch
(``keel.checkpoints.messages.MessageLog.append``). Rows are named by keys that follow the turn's
lineage (its previous turn's key and its message), so writing a fork's rows never collides with
the other line's, and a re-run of the same turn writes the same keys: nothing twice. A turn run
again from the same checkpoint with the same message (and idempotency key) is that same turn, a
replay, not a fork. Forks cost only the turn that starts one (a few statements, once); the parent
and fork point live in each checkpoint's state, so no table repeats them and reading a lineage
needs no lookup: its condition grows with the forks along its line, never with its turns, and
stays one flat CASE however deep the forks go.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
)

MAIN = "main"
"""The branch of a conversation that was never forked."""

BEGINNING = "beginning"
"""Names the point before a conversation's first checkpoint, to run a turn from: a checkpoint id
no checkpoint has, so LangGraph starts from an empty state (the first message edited)."""


def rooted(config: RunnableConfig) -> RunnableConfig:
    """The config a checkpoint is written under, a run from ``BEGINNING`` given no parent.

    A turn run from before a conversation's first checkpoint (its first message edited) names
    ``BEGINNING``, which no checkpoint has: LangGraph starts it from an empty state, and would
    write the name as its checkpoint's parent.
    """
    configurable = config.get("configurable") or {}
    if configurable.get("checkpoint_id") != BEGINNING:
        return config
    ids = {k: v for k, v in configurable.items() if k != "checkpoint_id"}
    return {**config, "configurable": ids}


class Rooted(BaseCheckpointSaver):
    """Mixed into keel's savers: ``rooted`` checkpoints."""

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Write ``checkpoint``, with no parent when its run started from ``BEGINNING``."""
        return await super().aput(rooted(config), checkpoint, metadata, new_versions)


class CheckpointNotKept(LookupError):
    """A checkpoint the conversation no longer keeps (or never had), asked to run or view from."""

    code = "checkpoint_not_found"

    def __init__(self, checkpoint_id: str) -> None:
        """Name the checkpoint."""
        super().__init__(
            f"checkpoint {checkpoint_id!r} is not one this conversation keeps: only its newest "
            "checkpoints are kept (the messages of every branch stay in its log)"
        )


@dataclass(frozen=True)
class Segment:
    """A branch's rows that a lineage holds: all of them, or those up to a turn."""

    branch: str
    upto: int | None = None
    """The last turn of ``branch`` in the lineage; None: every row of the branch."""


@dataclass(frozen=True)
class Lineage:
    """The rows of the log one line of turns sees: its branch's, then each ancestor's, in part.

    The first segment is the branch the turns are written to; the others are the branches it was
    forked from, nearest first, each up to the turn the fork came after. Rows written before the
    log knew of turns (no ``turn``) belong to the branch they are on, whatever the bound.
    """

    segments: tuple[Segment, ...] = (Segment(MAIN),)

    def where(self, params: dict[str, Any]) -> str:
        """The SQL condition that picks the lineage's rows (its parameters added to ``params``).

        One CASE over the row's branch, whatever the number of forks: its WHEN list is flat, so
        no depth of forks nests the condition (SQLite refuses an expression nested 1,000 deep).
        """
        if len(self.segments) == 1 and self.segments[0].upto is None:
            params["branch0"] = self.segments[0].branch
            return "branch = :branch0"
        cases = []
        for n, segment in enumerate(self.segments):
            params[f"branch{n}"] = segment.branch
            if segment.upto is None:
                cases.append(f"WHEN :branch{n} THEN TRUE")
            else:
                params[f"upto{n}"] = segment.upto
                cases.append(f"WHEN :branch{n} THEN coalesce(turn <= :upto{n}, TRUE)")
        return f"(CASE branch {' '.join(cases)} ELSE FALSE END)"


@dataclass(frozen=True)
class TurnPlace:
    """Where a turn's rows are written: its branch and number, and the branch it opens on a fork."""

    branch: str
    turn: int
    fork: str
    """The branch this turn starts when its place on ``branch`` holds another turn's message."""
