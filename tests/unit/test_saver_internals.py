"""keel.checkpoints.saver_internals on each real saver: memory, SQLite (here), PostgreSQL (rerun by
tests/integration/test_stores_on_postgres.py).

A tiny LangGraph graph writes checkpoints (and their pending writes) to two threads; the
assertions go through the saver's public API only, so they fail when an upgrade of a saver changes
the private storage the module was written against.
"""

import operator
import uuid
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.graph import END, START, StateGraph

from keel.checkpoints.backend import open_backend
from keel.checkpoints.branches import CheckpointNotKept
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


class Said(TypedDict):
    turn: int
    said: Annotated[
        list[str], DeltaChannel(lambda kept, writes: kept + writes, snapshot_frequency=3)
    ]


def _say(state: Said) -> dict[str, Any]:
    return {"said": f"reply {state['turn']}"}


def _said_graph(saver: BaseCheckpointSaver) -> Any:
    builder = StateGraph(Said).add_node("say", _say).add_edge(START, "say")
    return builder.add_edge("say", END).compile(checkpointer=saver)


async def test_prune_keeps_what_a_kept_checkpoints_delta_channel_is_rebuilt_from(database_url):
    thread = str(uuid.uuid4())
    async with open_backend(database_url) as backend:
        saver = backend.saver
        graph = _said_graph(saver)
        for n in range(7):
            await graph.ainvoke({"turn": n, "said": f"user {n}"}, _config(thread))
        before = [found async for found in saver.alist(_config(thread))]
        states = {_id(c): (await graph.aget_state(_config(thread, _id(c)))).values for c in before}

        keep = 3  # the third newest is no whole copy: it is rebuilt from an older checkpoint
        assert before[keep - 1].metadata.get("counters_since_delta_snapshot")
        await internals_of(saver).prune(thread, keep)

        after = [_id(found) async for found in saver.alist(_config(thread))]
        assert keep < len(after) < len(before)  # what the oldest kept one is rebuilt from stays
        for checkpoint_id in after:
            state = (await graph.aget_state(_config(thread, checkpoint_id))).values
            assert state == states[checkpoint_id]
        newest = (await graph.aget_state(_config(thread))).values
        assert newest["said"] == [f"{who} {n}" for n in range(7) for who in ("user", "reply")]


class SaidWhole(TypedDict):
    turn: int
    said: Annotated[list[str], lambda kept, said: [*kept, said]]


def _say_whole(state: dict[str, Any]) -> dict[str, Any]:
    return {"said": f"reply {state['turn']}"}


async def test_a_thread_stored_whole_reads_on_as_deltas_and_is_pruned_as_such(database_url):
    """A conversation kept before ``messages`` was stored as deltas goes on where it was."""
    thread = str(uuid.uuid4())
    async with open_backend(database_url) as backend:
        saver = backend.saver
        for schema, say, turns in ((SaidWhole, _say_whole, range(3)), (Said, _say, range(3, 8))):
            builder = StateGraph(schema).add_node("say", say).add_edge(START, "say")
            graph = builder.add_edge("say", END).compile(checkpointer=saver)
            for n in turns:
                await graph.ainvoke({"turn": n, "said": f"user {n}"}, _config(thread))
        await internals_of(saver).prune(thread, 2)
        said = (await graph.aget_state(_config(thread))).values["said"]
        assert said == [f"{who} {n}" for n in range(8) for who in ("user", "reply")]


async def test_a_copy_of_an_older_checkpoint_keeps_what_it_is_rebuilt_from(database_url):
    """A copy (``as_node="__copy__"``) has the parent of what it copied, not what it copied."""
    thread = str(uuid.uuid4())
    async with open_backend(database_url) as backend:
        saver = backend.saver
        graph = _said_graph(saver)
        for n in range(5):
            await graph.ainvoke({"turn": n, "said": f"user {n}"}, _config(thread))
        older = [found async for found in saver.alist(_config(thread))][3]
        assert older.metadata.get("counters_since_delta_snapshot")  # rebuilt from its parents
        copied = (await graph.aget_state(older.config)).values
        await graph.aupdate_state(older.config, None, as_node="__copy__")
        await internals_of(saver).prune(thread, 1)
        assert (await graph.aget_state(_config(thread))).values == copied


async def test_a_checkpoint_pruned_while_it_is_read_is_not_read_as_empty(database_url):
    """Its tuple was read, then a prune elsewhere removed it and its parents: no empty history."""
    thread = str(uuid.uuid4())
    async with open_backend(database_url) as backend:
        saver = backend.saver
        graph = _said_graph(saver)
        for n in range(7):
            await graph.ainvoke({"turn": n, "said": f"user {n}"}, _config(thread))
        oldest = [found async for found in saver.alist(_config(thread))][-2]
        await internals_of(saver).prune(thread, 2)
        assert await saver.aget_tuple(oldest.config) is None
        with pytest.raises(CheckpointNotKept):
            await saver.aget_delta_channel_history(config=oldest.config, channels=["said"])
