import asyncio
import uuid

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

from keel.checkpoints import retention
from keel.checkpoints.backend import Backend, open_backend
from keel.checkpoints.branches import CheckpointNotKept
from keel.checkpoints.conversation_store import ConversationNotFound, ConversationStore
from keel.checkpoints.retention import prune_thread
from keel.checkpoints.sqlite_saver import LoopSqliteSaver
from keel.checkpoints.urls import UnsupportedDatabaseURL, parse_database_url
from keel.graphs.builder import build_graph, served
from keel.graphs.resources import open_resources
from keel.graphs.run_turn import kept_checkpoint, run_turn
from keel.graphs.runner import snapshot, thread_config
from keel.nodes.run_context import KeelContext
from keel.nodes.state.reducers import SNAPSHOT_EVERY
from keel.tools.tasks.todo import TODO_TOOLS
from tests.helpers import open_database

EXPECTED = {"memory": InMemorySaver, "sqlite": LoopSqliteSaver, "postgres": AsyncPostgresSaver}


async def test_a_backend_has_the_saver_of_its_scheme(database_url):
    kind = parse_database_url(database_url).kind
    async with open_backend(database_url) as backend:
        assert isinstance(backend.saver, EXPECTED[kind])


@pytest.mark.parametrize("url", ["mysql://x", "sqlite://relative", "", "redis://localhost"])
async def test_unknown_scheme_names_the_accepted_ones(url):
    with pytest.raises(UnsupportedDatabaseURL) as err:
        async with open_backend(url):
            pass
    assert "memory" in str(err.value) and "sqlite:///" in str(err.value)
    assert "postgresql://" in str(err.value)


def test_credentials_are_not_echoed():
    with pytest.raises(UnsupportedDatabaseURL) as err:
        parse_database_url("mysql://admin:hunter2@db/keel")
    assert "hunter2" not in str(err.value)


@pytest.mark.parametrize("database_url", ["sqlite", "postgres"], indirect=True)
async def test_state_persists_across_reopen(database_url):
    cid = str(uuid.uuid4())
    async with open_backend(database_url) as backend:
        resources = open_resources(backend.db, tools=TODO_TOOLS)
        await run_turn(build_graph(backend.saver), cid, "Add buy milk", resources.context())
    async with open_backend(database_url) as backend:
        state = await snapshot(build_graph(backend.saver), cid)
    assert state["mission"] == "Add buy milk" and state["complete"]
    assert state["todolist"]["items"][0]["status"] == "done"


async def test_conversations_belong_to_one_user(database_url):
    async with open_database(database_url) as db:
        store = ConversationStore(db)
        created = await store.create("ann")
        uuid.UUID(created["conversation_id"])
        await store.require(created["conversation_id"], "ann")
        with pytest.raises(ConversationNotFound):
            await store.require(created["conversation_id"], "bob")
        with pytest.raises(ConversationNotFound):
            await store.require(str(uuid.uuid4()), "ann")


async def test_retention_keeps_the_last_n_checkpoints_and_the_state(keel):
    cid = str(uuid.uuid4())
    keel.saver.keep, keel.saver.prune_every = 5, 4  # due at the 1st, 5th, 9th... checkpoint
    context = keel.context()
    for n in range(9):
        await run_turn(keel.graph, cid, f"Add chore {n}", context)
    await keel.saver.pruned()
    kept = [s async for s in keel.graph.aget_state_history(thread_config(cid))]
    # five up to the ninth turn's first checkpoint, its three after, and the few that the oldest
    # of them is rebuilt from (``messages`` holds what each step added); the rest are gone
    assert 5 + 3 <= len(kept) < 5 + 3 + 4 * SNAPSHOT_EVERY < 4 * 9
    newest = kept[0].values["messages"]
    for older in kept:  # each kept checkpoint's conversation, as it stood then
        shown = older.values["messages"]
        assert shown and newest[: len(shown)] == shown
    state = await snapshot(keel.graph, cid)
    assert state["stats"]["turns"] == 9 and state["complete"]
    assert len(await keel.store.list("local")) == 9
    assert await keel.count_messages(cid) == 27  # user, tool result, reply
    result = await run_turn(keel.graph, cid, "Show all", context)
    assert "chore 8" in result.reply


async def test_the_saver_prunes_in_the_background_every_few_checkpoints(keel, messages_whole):
    cid = str(uuid.uuid4())
    keel.saver.keep, keel.saver.prune_every = 2, 8  # due at the 1st, 9th, 17th checkpoint
    context = keel.context()
    for n in range(2):  # eight checkpoints, four a tool turn
        await run_turn(keel.graph, cid, f"Add chore {n}", context)
    await keel.saver.pruned()
    assert len([s async for s in keel.graph.aget_state_history(thread_config(cid))]) == 8
    await run_turn(keel.graph, cid, "Add chore 2", context)
    await keel.saver.pruned()
    after_three = [s async for s in keel.graph.aget_state_history(thread_config(cid))]
    assert len(after_three) == 2 + 3  # two up to the 9th checkpoint, the three written after it
    await run_turn(keel.graph, cid, "Add chore 3", context)
    await keel.saver.pruned()
    kept = [s async for s in keel.graph.aget_state_history(thread_config(cid))]
    assert len(kept) == 2 + 3 + 4  # not due again until the 17th
    assert "chore 3" in (await run_turn(keel.graph, cid, "Show all", context)).reply


async def test_a_turn_from_an_older_checkpoint_waits_for_a_prune_of_its_conversation(
    keel, monkeypatch, messages_whole
):
    """A prune under way may be removing the checkpoint a turn would run from (an edited
    message's): the turn waits for it, then runs, or is refused if it is gone."""  # noqa: D205
    cid = str(uuid.uuid4())
    keel.saver.keep, keel.saver.prune_every = 2, 8  # due at the 1st, 9th, 17th checkpoint
    for n in range(2):
        await run_turn(keel.graph, cid, f"Add chore {n}", keel.context())
    await keel.saver.pruned()
    history = [s async for s in keel.graph.aget_state_history(thread_config(cid))]
    oldest, newest = (s.config["configurable"]["checkpoint_id"] for s in (history[-1], history[0]))
    release = asyncio.Event()

    async def held(*args, **kwargs):
        await release.wait()
        await prune_thread(*args, **kwargs)

    monkeypatch.setattr(retention, "prune_thread", held)
    await run_turn(keel.graph, cid, "Add chore 2", keel.context())  # the 9th: a prune, held
    asyncio.get_running_loop().call_later(0.05, release.set)
    with pytest.raises(CheckpointNotKept):
        await kept_checkpoint(keel.graph, cid, oldest)  # removed by the prune it waited for
    await kept_checkpoint(keel.graph, cid, newest)  # kept: two up to the 9th, and the rest


async def test_a_waiter_cancelled_leaves_the_prune_it_waited_for_running(
    keel, monkeypatch, messages_whole
):
    cid = str(uuid.uuid4())
    keel.saver.keep, keel.saver.prune_every = 2, 5  # due at the 1st and the 6th checkpoint
    release = asyncio.Event()

    async def held(*args, **kwargs):
        await release.wait()
        await prune_thread(*args, **kwargs)

    monkeypatch.setattr(retention, "prune_thread", held)
    for n in range(2):  # eight checkpoints, two prunes set off and held
        await run_turn(keel.graph, cid, f"Add chore {n}", keel.context())
    waiter = asyncio.create_task(keel.saver.pruned(cid))
    await asyncio.sleep(0.01)
    waiter.cancel()  # a request given up while it waited
    release.set()
    await keel.saver.pruned()
    kept = [s async for s in keel.graph.aget_state_history(thread_config(cid))]
    assert len(kept) == 2 + 2  # the prunes ran: two up to the 6th, and the two after it


def own_context(backend: Backend) -> KeelContext:
    """A turn's context on ``backend``'s tables and the todo tools."""
    return open_resources(backend.db, backend.saver, tools=TODO_TOOLS).context()


@pytest.mark.parametrize("database_url", ["sqlite", "postgres"], indirect=True)
async def test_a_process_prunes_a_conversation_at_its_first_checkpoint_there(
    database_url, messages_whole
):
    """A conversation used in many short sessions (``keel chat``) is kept bounded too."""
    cid = str(uuid.uuid4())
    async with open_backend(database_url, keep=3) as backend:
        backend.saver.prune_every = 1000
        graph = served(checkpointer=backend.saver)
        for n in range(3):
            await run_turn(graph, cid, f"Add chore {n}", own_context(backend))
        assert len([s async for s in graph.aget_state_history(thread_config(cid))]) == 12
    async with open_backend(database_url, keep=3) as backend:  # the next session
        graph = served(checkpointer=backend.saver)
        await run_turn(graph, cid, "Add chore 3", own_context(backend))
        await backend.saver.pruned()
        kept = [s async for s in graph.aget_state_history(thread_config(cid))]
        assert len(kept) == 3 + 3  # three up to its first checkpoint, the three after it
