"""The statements a turn sends to PostgreSQL, counted: on PostgreSQL each one is a round trip.

The same ten turns as the work budget on SQLite (``tests/unit/test_turn_budget.py``: "Add item
k", one tool call each, through the API's turn path after a warm-up) on a real PostgreSQL, with
every statement psycopg sends counted (BEGIN and COMMIT included). More fails the test, and so
does less, so that the budget follows every saving down; raising it is allowed, on purpose, with
the reason beside the number.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

import psycopg
from psycopg_pool import AsyncConnectionPool

from keel.api.service import open_service
from keel.graphs.settings import Settings
from keel.tools.tasks.todo import TODO_TOOLS

TURNS = 10

BUDGET_PER_TURN = {
    # the turn lock taken, with the owner and the newest checkpoint read in the same statement
    # (keel_take_turn), on the lock's own connection (1); the run's newest checkpoint read (1);
    # unless it holds ``messages`` whole (a third of them: ``SNAPSHOT_EVERY`` writes, two a
    # turn), the checkpoints back to the one that does, then their writes to it (1.4);
    # LangGraph's checkpoints, durability "sync": four, each its blobs and row in one statement
    # (4), and the three steps' pending writes, one statement each (3); the recent messages for
    # the context (1); the ledger transaction: BEGIN, the task numbered and written, its result
    # recorded, COMMIT (4); the turn's log rows (1); the newest checkpoint's id, remembered for
    # the next turn (1); the lock let go (1, not waited for). Every fortieth checkpoint (a tenth
    # tool turn), the prune's look at how many checkpoints there are, in a transaction of its
    # own (0.3: none to drop yet).
    "statements": 18.7,
}


CHECKING: ContextVar[bool] = ContextVar("checking", default=False)
"""The pool is trying a connection that sat idle over a second before lending it (a pause of a
busy machine): that statement is the pool's, not the turn's, and is not counted."""


def counting(counts: Counter[str], fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` (a coroutine method sending statements) counting its calls."""

    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not CHECKING.get():
            counts["statements"] += 1
        return await fn(*args, **kwargs)

    return wrapper


def uncounted(check: Callable[..., Any]) -> Callable[..., Any]:
    """The pool's check of a connection, its statement left out of the count."""

    async def wrapper(conn: Any) -> None:
        token = CHECKING.set(True)
        try:
            await check(conn)
        finally:
            CHECKING.reset(token)

    return wrapper


async def test_a_tool_turn_sends_no_more_statements_than_its_budget(database_url, monkeypatch):
    counts: Counter[str] = Counter()
    settings = Settings(
        database_url=database_url, reminder_poll_seconds=0
    )  # a turn's work, not the reminders' polls
    async with open_service(settings, TODO_TOOLS) as service:
        cid = (await service.conversations.create("bench"))["conversation_id"]
        for k in range(5):  # warm-up
            await service.turns.take(cid, "bench", f"Add item {k}")
        await service.backend.saver.pruned()
        for cls, name in (
            (psycopg.AsyncCursor, "execute"),  # a connection's execute comes here too
            (psycopg.AsyncCursor, "executemany"),
            (psycopg.AsyncTransaction, "__aenter__"),  # BEGIN
            (psycopg.AsyncTransaction, "__aexit__"),  # COMMIT (or ROLLBACK)
        ):
            monkeypatch.setattr(cls, name, counting(counts, getattr(cls, name)))
        check = AsyncConnectionPool.check_connection
        monkeypatch.setattr(AsyncConnectionPool, "check_connection", uncounted(check))
        for k in range(5, 5 + TURNS):
            result = await service.turns.take(cid, "bench", f"Add item {k}")
            assert result.reply == f"Created task: item {k}"
        await service.backend.saver.pruned()  # the tenth turn's prune runs in the background
        await service.turns.locks.close()  # the last let-go lands
        monkeypatch.undo()

    per_turn = {key: counts[key] / TURNS for key in BUDGET_PER_TURN}
    over = {k: (v, BUDGET_PER_TURN[k]) for k, v in per_turn.items() if v > BUDGET_PER_TURN[k]}
    assert not over, f"a turn sends more than its budget (sent, budget): {over}"
    assert per_turn == BUDGET_PER_TURN, "a turn sends less than its budget: lower the budget"
