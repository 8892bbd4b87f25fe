"""Schema migrations: the scripts build exactly the declared schema, on SQLite and PostgreSQL."""

import uuid

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from keel.checkpoints.migrate import head_revision, migration_engine, upgrade
from keel.checkpoints.tables import metadata
from keel.checkpoints.urls import parse_database_url
from keel.graphs.run_turn import run_turn
from tests.helpers import current_revision, open_database
from tests.keel_process import run_keel


def keel_tables_only(name, type_, parent_names):
    # the checkpointer's own tables live in the same database; they are LangGraph's schema
    return type_ != "table" or name.startswith("keel_") or name == "alembic_version"


def diff(connection):
    context = MigrationContext.configure(connection, opts={"include_name": keel_tables_only})
    return compare_metadata(context, metadata)


def sync_engine(database_url, db):
    parsed = parse_database_url(database_url)
    if parsed.kind != "memory":
        return migration_engine(parsed)
    return sa.create_engine("sqlite://", creator=lambda: db.conn, poolclass=sa.pool.StaticPool)


async def test_migrations_build_the_declared_schema(database_url):
    async with open_database(database_url) as db:
        engine = sync_engine(database_url, db)
        assert await current_revision(engine) == head_revision()
        with engine.connect() as conn:
            assert diff(conn) == []


@pytest.mark.parametrize("database_url", ["sqlite", "postgres"], indirect=True)
async def test_upgrade_is_idempotent_and_keeps_data(database_url):
    async with open_database(database_url) as db:
        await db.execute(
            "INSERT INTO keel_conversations (id, user_id, created_at) "
            "VALUES ('c1', 'ann', CURRENT_TIMESTAMP)"
        )
    engine = migration_engine(parse_database_url(database_url))
    await upgrade(engine)
    await upgrade(engine)
    with engine.connect() as conn:
        count = conn.execute(sa.text("SELECT count(*) FROM keel_conversations"))
        assert count.scalar() == 1


@pytest.mark.parametrize("database_url", ["sqlite", "postgres"], indirect=True)
def test_keel_db_upgrade_command(database_url):
    first = run_keel(database_url, ["db", "upgrade"])
    assert first.returncode == 0, first.stderr
    assert f"schema: empty -> {head_revision()}" in first.stdout
    again = run_keel(database_url, ["db", "upgrade"])
    assert f"schema: {head_revision()} -> {head_revision()}" in again.stdout


@pytest.mark.parametrize("database_url", ["sqlite", "postgres"], indirect=True)
async def test_keel_db_prune_keeps_n_checkpoints_and_never_the_log_or_tasks(
    keel, database_url, messages_whole
):
    cid = str(uuid.uuid4())
    for n in range(3):
        await run_turn(keel.graph, cid, f"Add chore {n}", keel.context())
    history_before = [
        s async for s in keel.graph.aget_state_history({"configurable": {"thread_id": cid}})
    ]
    assert len(history_before) == 3 * 4  # a tool turn's: its input, then one a step (three)
    result = run_keel(database_url, ["db", "prune", "--keep", "2"])
    assert result.returncode == 0, result.stderr
    assert "to their newest 2 checkpoints" in result.stdout
    kept = [s async for s in keel.graph.aget_state_history({"configurable": {"thread_id": cid}})]
    assert len(kept) == 2
    assert await keel.count_messages(cid) == 9  # user, tool result, reply
    assert len(await keel.store.list("local")) == 3
    after = await run_turn(keel.graph, cid, "Show all", keel.context())
    assert "chore 2" in after.reply


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
async def test_keel_db_prune_keeps_what_keel_checkpoint_keep_says(
    keel, database_url, messages_whole
):
    cid = str(uuid.uuid4())
    for n in range(3):
        await run_turn(keel.graph, cid, f"Add chore {n}", keel.context())
    result = run_keel(database_url, ["db", "prune"], KEEL_CHECKPOINT_KEEP="3")
    assert result.returncode == 0, result.stderr
    assert "to their newest 3 checkpoints" in result.stdout
    kept = [s async for s in keel.graph.aget_state_history({"configurable": {"thread_id": cid}})]
    assert len(kept) == 3
    again = run_keel(database_url, ["db", "prune", "--keep", "1"], KEEL_CHECKPOINT_KEEP="3")
    assert "to their newest 1 checkpoints" in again.stdout  # --keep wins over the setting
    kept = [s async for s in keel.graph.aget_state_history({"configurable": {"thread_id": cid}})]
    assert len(kept) == 1


def test_prune_refuses_a_keep_below_one(tmp_path):
    result = run_keel(f"sqlite:///{tmp_path / 'k.db'}", ["db", "prune", "--keep", "0"])
    assert result.returncode != 0
    assert "keep" in (result.stderr + result.stdout).lower()


@pytest.mark.parametrize("database_url", ["sqlite", "postgres"], indirect=True)
async def test_existing_tasks_are_numbered_per_user_by_the_migration(database_url):
    from alembic import command

    from keel.checkpoints.migrate import _config
    from keel.tools.tasks.store import TaskStore

    engine = migration_engine(parse_database_url(database_url))
    with engine.begin() as conn:
        command.upgrade(_config(conn), "0004")
        for user, title in [
            ("ann", "a1"),
            ("bob", "b1"),
            ("ann", "a2"),
            ("bob", "b2"),
            ("ann", "a3"),
        ]:
            conn.execute(
                sa.text(
                    "INSERT INTO keel_tasks (user_id, title, completed, created_at, updated_at) "
                    "VALUES (:u, :t, false, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
                ),
                {"u": user, "t": title},
            )
    async with open_database(database_url) as db:  # upgrades to the newest revision
        store = TaskStore(db)
        assert [(t["id"], t["title"]) for t in await store.list("ann")] == [
            (1, "a1"),
            (2, "a2"),
            (3, "a3"),
        ]
        assert [(t["id"], t["title"]) for t in await store.list("bob")] == [(1, "b1"), (2, "b2")]
        assert (await store.create("bob", "b3"))["id"] == 3
        assert (await store.create("carol", "c1"))["id"] == 1


@pytest.mark.parametrize("database_url", ["sqlite", "postgres"], indirect=True)
async def test_an_existing_log_is_the_main_branch_with_its_turns(database_url):
    from alembic import command

    from keel.checkpoints.branches import MAIN, TurnPlace
    from keel.checkpoints.messages import MessageLog
    from keel.checkpoints.migrate import _config

    engine = migration_engine(parse_database_url(database_url))
    keys = ["c:turn-1:user", "c:turn-1:assistant-0:call_1:result", "c:turn-1:assistant-1"]
    keys += ["c:turn-2:user", "answer:c:turn-2:assistant-0:call_2:1", "sha256:ab12:result"]
    with engine.begin() as conn:
        command.upgrade(_config(conn), "0008")
        for key in keys:
            conn.execute(
                sa.text(
                    "INSERT INTO keel_messages (conversation_id, message_key, user_id, role, "
                    "content, created_at) VALUES ('c', :k, 'ann', 'user', :text, CURRENT_TIMESTAMP)"
                ),
                {"k": key, "text": key},
            )
    async with open_database(database_url) as db:  # upgrades to the newest revision
        rows = await db.fetch(
            "SELECT message_key, branch, turn, opens_turn FROM keel_messages ORDER BY id"
        )
        assert [(r["branch"], r["turn"], bool(r["opens_turn"])) for r in rows] == [
            (MAIN, 1, True),
            (MAIN, 1, False),
            (MAIN, 1, False),
            (MAIN, 2, True),
            (MAIN, 2, False),
            (MAIN, None, False),
        ]
        fork = TurnPlace(MAIN, 2, "turn-2-fork")  # another message as turn 2: a fork
        row = {"message_key": "c:turn-2-fork:user", "role": "user", "content": "Add plums"}
        written = await MessageLog(db).append("c", "ann", [{**row, "opens_turn": True}], fork)
        assert written == "turn-2-fork"
