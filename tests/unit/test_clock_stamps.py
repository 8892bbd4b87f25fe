"""Every stored timestamp comes from the clock keel is given: tasks, the tool-call ledger and
conversations are stamped by a test's clock, never by the wall clock."""

from keel.checkpoints.conversation_store import ConversationStore
from keel.checkpoints.database import read_time
from keel.tools.ledger import record
from keel.tools.tasks.store import TaskStore
from tests.helpers import open_database


async def stamps(db, sql, **params):
    row = await db.fetchone(sql, params)
    return [read_time(v) for v in row.values()]


async def test_a_task_is_stamped_by_the_stores_clock(database_url, clock):
    async with open_database(database_url) as db:
        store = TaskStore(db, clock)
        created = await store.create("ann", "tea")
        assert created["created_at"] == clock().isoformat()
        sql = "SELECT created_at, updated_at FROM keel_tasks WHERE user_id = :u AND number = :n"
        assert await stamps(db, sql, u="ann", n=1) == [clock(), clock()]
        made = clock()
        clock.advance(hours=1)
        await store.rename("ann", 1, "green tea")
        assert await stamps(db, sql, u="ann", n=1) == [made, clock()]
        clock.advance(hours=1)
        async with db.transaction() as tx:
            await store.within(tx).complete("ann", 1)
        assert await stamps(db, sql, u="ann", n=1) == [made, clock()]


async def test_a_recorded_tool_call_is_stamped_by_the_clock_given(database_url, clock):
    async with open_database(database_url) as db:
        async with db.transaction() as tx:
            await record(db, tx, "ann", "call_1", "create_todo_task", "success", "{}", clock)
        sql = "SELECT created_at FROM keel_tool_results WHERE tool_call_id = :id"
        assert await stamps(db, sql, id="call_1") == [clock()]


async def test_a_conversation_is_stamped_by_the_stores_clock(database_url, clock):
    async with open_database(database_url) as db:
        conversations = ConversationStore(db, clock)
        created = await conversations.create("ann")
        assert created["created_at"] == clock().isoformat()
        clock.advance(days=1)
        await conversations.claim("c2", "ann")  # a thread a LangGraph client started
        listed = {c["conversation_id"]: c["created_at"] for c in await conversations.list("ann")}
        sql = "SELECT created_at FROM keel_conversations WHERE id = :id"
        assert await stamps(db, sql, id="c2") == [clock()]
        assert listed == {
            created["conversation_id"]: created["created_at"],
            "c2": clock().isoformat(),
        }
