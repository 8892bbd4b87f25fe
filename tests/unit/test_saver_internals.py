"""keel.checkpoints.saver_internals on each real saver: memory, SQLite (here), PostgreSQL (rerun by
tests/integration/test_stores_on_postgres.py).

A tiny LangGraph graph writes checkpoints (and their pending writes) to two threads; the
assertions go through the saver's public API only, so they fail when an upgrade of a saver changes
the private storage the module was written against.
"""

import operator
import uuid
from typing import Annotated, Any, TypedDict

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.graph import END, START, StateGraph

from keel.checkpoints.backend import open_backend
from keel.checkpoints.saver_internals import (
    MemoryInternals,
    PostgresInternals,
    SqliteInternals,
    internals_of,
)
from keel.checkpoints.urls import parse_database_url

EXPECTED = {"memory": MemoryInternals, "sqlite": SqliteInternals, "postgres": PostgresInternals}
KEEP = 4


class Tally(TypedDict):
    turn: int
    items: Annotated[list[str], operator.add]


def _reply(state: Tally) -> dict[str, Any]:
    return {"items": [f"reply {state['turn']}"]}


def _graph(saver: BaseCheckpointSaver) -> Any:
    builder = StateGraph(Tally).add_node("reply", _reply)
    return builder.add_edge(START, "reply").add_edge("reply", END).compile(checkpointer=saver)


def _config(thread_id: str, checkpoint_id: str | None = None) -> Any:
    configurable = {"thread_id": thread_id, "checkpoint_ns": ""}
    if checkpoint_id is not None:
        configurable["checkpoint_id"] = checkpoint_id
    return {"configurable": configurable}


def _id(found: CheckpointTuple) -> str:
    return found.config["configurable"]["checkpoint_id"]


async def _turns(saver: BaseCheckpointSaver, thread_id: str, turns: int) -> list[CheckpointTuple]:
    """Run ``turns`` turns on ``thread_id``; return its checkpoints, newest first."""
    graph = _graph(saver)
    for n in range(turns):
        await graph.ainvoke({"turn": n, "items": [f"user {n}"]}, _config(thread_id))
    return [found async for found in saver.alist(_config(thread_id))]


async def test_prune_keeps_exactly_the_newest_checkpoints_of_the_thread(database_url):
    thread, other = str(uuid.uuid4()), str(uuid.uuid4())
    async with open_backend(database_url) as backend:
        saver = backend.saver
        before = await _turns(saver, thread, 4)
        other_before = await _turns(saver, other, 2)
        kept, deleted = before[:KEEP], before[KEEP:]
        assert deleted and any(found.pending_writes for found in deleted)  # something to drop

        internals = internals_of(saver)
        assert type(internals) is EXPECTED[parse_database_url(database_url).kind]
        await internals.prune(thread, KEEP)

        after = [found async for found in saver.alist(_config(thread))]
        assert [_id(found) for found in after] == [_id(found) for found in kept]
        assert after == kept  # values (their blobs) and pending writes intact
        assert [found async for found in saver.alist(_config(other))] == other_before

        latest = await saver.aget_tuple(_config(thread))
        assert latest is not None and _id(latest) == _id(before[0])
        assert latest.checkpoint["channel_values"]["turn"] == 3
        assert latest.checkpoint["channel_values"]["items"] == [
            f"{who} {n}" for n in range(4) for who in ("user", "reply")
        ]

        # A deleted checkpoint written again (its channel values left out) comes back without
        # its old pending writes and without the blobs no kept checkpoint refers to.
        referenced = {
            pair for found in kept for pair in found.checkpoint["channel_versions"].items()
        }
        for found in deleted:
            checkpoint = {**found.checkpoint, "channel_values": {}}
            await saver.aput(_config(thread), checkpoint, found.metadata, {})
            again = await saver.aget_tuple(_config(thread, _id(found)))
            assert again is not None and again.pending_writes == []
            versions = found.checkpoint["channel_versions"].items()
            survivors = {
                channel for channel, version in versions if (channel, version) in referenced
            }
            assert set(again.checkpoint["channel_values"]) <= survivors


async def test_thread_ids_and_latest_checkpoint_id_read_the_saver(database_url):
    thread, other = str(uuid.uuid4()), str(uuid.uuid4())
    async with open_backend(database_url) as backend:
        internals = internals_of(backend.saver)
        assert await internals.thread_ids() == []
        assert await internals.latest_checkpoint_id(backend.db, thread) is None
        newest = (await _turns(backend.saver, thread, 2))[0]
        await _turns(backend.saver, other, 1)

        assert sorted(await internals.thread_ids()) == sorted([thread, other])
        assert await internals.latest_checkpoint_id(backend.db, thread) == _id(newest)
        await internals.prune("no such thread", 1)
        assert sorted(await internals.thread_ids()) == sorted([thread, other])
