"""The unit tests that take a database, run again on a real PostgreSQL; and PostgreSQL's own.

Every test function of the listed unit modules that asks for ``keel``, ``database_url`` or a
``store`` on it is
collected here too, where ``database_url`` is a fresh PostgreSQL database (this package's
conftest): the same assertions, on the server keel runs on in production.
"""

from __future__ import annotations

import importlib
import inspect
import uuid

from keel.checkpoints.backend import open_backend
from keel.graphs.builder import served
from keel.graphs.resources import open_resources
from keel.graphs.run_turn import run_turn
from keel.graphs.runner import snapshot
from keel.nodes.state.reducers import SNAPSHOT_EVERY
from keel.tools.tasks.todo import TODO_TOOLS
from tests.conftest import new_postgres_database
from tests.unit.test_reminders import db, second_db, sunday  # noqa: F401 (fixtures)
from tests.unit.test_tools import store  # noqa: F401 (a fixture on database_url)

UNIT_MODULES = (
    "test_branches",
    "test_checkpoints",
    "test_confirmation",
    "test_graph_clients",
    "test_legacy_import",
    "test_message_log",
    "test_migrations",
    "test_mission_reset",
    "test_reminders",
    "test_resume",
    "test_saver_internals",
    "test_task_pages",
    "test_todo_graph",
    "test_tools",
    "test_topics",
)
ON_A_DATABASE = {"keel", "database_url", "store", "db"}

for _module_name in UNIT_MODULES:
    _module = importlib.import_module(f"tests.unit.{_module_name}")
    for _name, _test in vars(_module).items():
        if _name.startswith("test_") and ON_A_DATABASE & set(inspect.signature(_test).parameters):
            globals()[f"{_name}__{_module_name}"] = _test


async def test_postgres_retention_drops_unreferenced_blobs(postgres_server):
    import psycopg

    url = new_postgres_database(postgres_server)
    cid = str(uuid.uuid4())
    async with open_backend(url) as backend:
        db, saver = backend.db, backend.saver
        saver.keep, saver.prune_every = 4, 4  # pruned once a tool turn (four checkpoints)
        graph = served(saver)
        blobs = []
        for n in range(11):
            await run_turn(
                graph,
                cid,
                f"Add chore {n}",
                open_resources(db, tools=TODO_TOOLS).context(),
            )
            await saver.pruned()
            with psycopg.connect(url) as conn:
                blobs.append(conn.execute("SELECT count(*) FROM checkpoint_blobs").fetchone()[0])
        cycle = (
            SNAPSHOT_EVERY // 2
        )  # turns between two whole copies of ``messages`` (two writes a turn)
        assert blobs[-cycle:] == blobs[-2 * cycle : -cycle]  # bounded, not growing per turn
        assert (await snapshot(graph, cid))["stats"]["turns"] == 11


async def test_keels_postgres_saver_writes_what_langgraphs_own_reads(postgres_server):
    """keel's saver skips LangGraph's lock and thread hand-over; what it stores is the same."""
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    from keel.checkpoints.backend import open_backend
    from keel.checkpoints.postgres_saver import PoolPostgresSaver

    url = new_postgres_database(postgres_server)
    cid = str(uuid.uuid4())
    async with open_backend(url) as backend:
        saver = backend.saver
        assert isinstance(saver, PoolPostgresSaver)
        graph = served(saver)
        context = open_resources(backend.db, saver, tools=TODO_TOOLS).context()
        for text in ("Add buy milk", "Add eggs", "Show all"):
            await run_turn(graph, cid, text, context)
        config = {"configurable": {"thread_id": cid}}
        ours = [found async for found in saver.alist(config)]
        plain = AsyncPostgresSaver(saver.conn)
        theirs = [found async for found in plain.alist(config)]
        assert len(ours) == 3 * 4 and ours == theirs  # three tool turns: input, three steps
        newest = await plain.aget_tuple(config)
        assert newest is not None
        values = newest.checkpoint["channel_values"]
        assert values["stats"]["turns"] == 3 and "eggs" in values["window"][-1].text
