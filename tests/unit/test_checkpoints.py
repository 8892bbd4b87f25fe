import uuid

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from checkpoints.conversations import ConversationNotFound, ConversationStore
from checkpoints.database import open_database
from checkpoints.saver import open_checkpointer
from checkpoints.urls import UnsupportedDatabaseURL, parse_database_url
from graphs.builder import build_graph
from graphs.turn import run_turn, snapshot
from nodes.runtime import KeelContext

EXPECTED = {"memory": InMemorySaver, "sqlite": AsyncSqliteSaver, "postgres": AsyncPostgresSaver}


async def test_open_checkpointer_gives_the_saver_of_the_scheme(database_url):
    kind = parse_database_url(database_url).kind
    async with open_checkpointer(database_url) as saver:
        assert isinstance(saver, EXPECTED[kind])


@pytest.mark.parametrize("url", ["mysql://x", "sqlite://relative", "", "redis://localhost"])
async def test_unknown_scheme_names_the_accepted_ones(url):
    with pytest.raises(UnsupportedDatabaseURL) as err:
        async with open_checkpointer(url):
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
    async with open_database(database_url) as engine, open_checkpointer(database_url) as saver:
        await run_turn(build_graph(saver), cid, "Add buy milk", KeelContext.for_engine(engine))
    async with open_checkpointer(database_url) as saver:
        state = await snapshot(build_graph(saver), cid)
    assert state["mission"] == "Add buy milk" and state["complete"]
    assert state["todolist"]["items"][0]["status"] == "done"


async def test_conversations_belong_to_one_user(database_url):
    async with open_database(database_url) as engine:
        store = ConversationStore(engine)
        created = await store.create("ann")
        uuid.UUID(created["conversation_id"])
        await store.require(created["conversation_id"], "ann")
        with pytest.raises(ConversationNotFound):
            await store.require(created["conversation_id"], "bob")
        with pytest.raises(ConversationNotFound):
            await store.require(str(uuid.uuid4()), "ann")
