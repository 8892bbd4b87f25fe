"""The work of a turn, counted: a change that adds work to the hot path must raise the budget.

Time is not tested (it depends on the machine); work is countable. Ten turns of one tool call each
("Add item k", the benchmarks' turn) run through the API's turn path on SQLite, after a few turns
of warm-up, and everything a turn costs is counted: graph runs and state reads, node runs, model
calls, checkpoint reads and writes, SQL statements. Ten turns include the one background prune
that the saver makes every forty checkpoints of a conversation (ten tool turns).

The budget below is what a turn does, exactly: more work fails the test, and so does less, so that
the budget follows every saving down. Raising it is allowed, on purpose: in the same change, with
the reason in the comment beside the number.
"""

from __future__ import annotations

import functools
import sqlite3
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

import keel.graphs.builder as builder
import keel.nodes.models.rule_based as rule_model
from keel.api.service import open_service
from keel.checkpoints.sqlite_saver import LoopSqliteSaver
from keel.graphs.settings import Settings
from keel.tools.tasks.todo import TODO_TOOLS

TURNS = 10

BUDGET_PER_TURN = {
    # One graph run, which LangGraph checkpoints before each step (durability "sync"): the graph
    # around the turn graph (``served``) takes three steps, its input, the turn graph up to the
    # model's tool call, the turn graph again from the call to the reply.
    "graph runs": 1,
    "state reads (aget_state)": 0,  # the service remembers where its last turn left the thread
    # The first run of the turn graph: user_input, topic_detect, reset (the last mission was
    # complete), plan, assistant (it asks for the tool); the second: user_input, tool_execution,
    # response, assistant (it reports what the tool did), response.
    "node runs": 10,
    "model calls": 2,
    "checkpoint reads": 1,  # the run starts from the thread's newest checkpoint
    "checkpoint reads from the database": 1,
    "checkpoint writes": 4,  # the input's, then one after each of the three steps
    "checkpoint pending-write batches": 3,  # each step's writes, before its checkpoint
    # Per turn (SQLite): once the turn lock is held, the conversation's owner and the newest
    # checkpoint id, in one statement, so a conversation deleted or a turn cut off by another
    # process is seen (1; on PostgreSQL they are read in the lock's own statement); the run's
    # newest checkpoint read, its row and its pending writes (2), and the writes to ``messages``
    # since the newest checkpoint that holds it whole (1: it holds what its step added); the four
    # checkpoints, BEGIN/INSERT/COMMIT each (12); the three steps' pending writes, BEGIN, a row a
    # channel written, COMMIT: the input's three, the first turn graph run's fifteen, the
    # second's eleven (35); the recent messages for the context (1); the ledger transaction:
    # BEGIN, the user's task counter, the task, the result, COMMIT (5; a turn's first run does
    # not look its call up first); the turn's three logged messages (the user's, the tool
    # result, the one reply; the tool-call round stays in the checkpoints) in one statement (1);
    # the newest checkpoint's id, remembered for the next turn (1). Every fortieth checkpoint (a
    # tenth tool turn), a prune of five statements (0.5).
    "SQL statements": 59.5,
}


def counted(counts: Counter[str], key: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` (a coroutine function) counting its calls under ``key``."""

    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        counts[key] += 1
        return await fn(*args, **kwargs)

    return wrapper


def counted_stream(counts: Counter[str], key: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` (an async generator function) counting its calls under ``key``."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        counts[key] += 1
        return fn(*args, **kwargs)

    return wrapper


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Counters that the graph's nodes and the rule model report to (patched before building)."""
    counts: Counter[str] = Counter()
    node = builder.node

    def counting_node(fn: Any, enters: Any = None) -> Any:
        return counted(counts, "node runs", node(fn, enters))

    monkeypatch.setattr(builder, "node", counting_node)
    decide = rule_model.decide

    def counting_decide(*args: Any, **kwargs: Any) -> Any:
        counts["model calls"] += 1
        return decide(*args, **kwargs)

    monkeypatch.setattr(rule_model, "decide", counting_decide)
    return counts


async def test_a_tool_turn_does_no_more_work_than_its_budget(tmp_path, counts, monkeypatch):
    database_reads = counted(
        counts, "checkpoint reads from the database", LoopSqliteSaver.aget_tuple
    )
    monkeypatch.setattr(LoopSqliteSaver, "aget_tuple", database_reads)
    settings = Settings(
        database_url=f"sqlite:///{tmp_path / 'keel.db'}", reminder_poll_seconds=0
    )  # a turn's work, not the reminders' polls
    async with open_service(settings, TODO_TOOLS) as service:
        cid = (await service.conversations.create("bench"))["conversation_id"]
        for k in range(5):  # warm-up: the first turn opens the topic, compiles, fills caches
            await service.turns.take(cid, "bench", f"Add item {k}")
        await service.backend.saver.pruned()

        graph, saver = service.graph, service.backend.saver
        graph.astream = counted_stream(counts, "graph runs", graph.astream)  # type: ignore[method-assign]
        graph.aget_state = counted(counts, "state reads (aget_state)", graph.aget_state)  # type: ignore[method-assign]
        saver.aget_tuple = counted(counts, "checkpoint reads", saver.aget_tuple)  # type: ignore[method-assign]
        saver.aput = counted(counts, "checkpoint writes", saver.aput)  # type: ignore[method-assign]
        saver.aput_writes = counted(  # type: ignore[method-assign]
            counts, "checkpoint pending-write batches", saver.aput_writes
        )

        def statement(sql: str) -> None:
            counts["SQL statements"] += 1

        connections: list[sqlite3.Connection] = [saver.conn, service.db.conn]  # type: ignore[attr-defined]
        for conn in connections:
            conn.set_trace_callback(statement)
        counts.clear()
        try:
            for k in range(5, 5 + TURNS):
                result = await service.turns.take(cid, "bench", f"Add item {k}")
                assert result.reply == f"Created task: item {k}"
            await (
                service.backend.saver.pruned()
            )  # the prune of the tenth turn runs in the background
        finally:
            for conn in connections:
                conn.set_trace_callback(None)

    per_turn = {key: counts[key] / TURNS for key in BUDGET_PER_TURN}
    over = {k: (v, BUDGET_PER_TURN[k]) for k, v in per_turn.items() if v > BUDGET_PER_TURN[k]}
    assert not over, f"a turn does more work than its budget (done, budget): {over}"
    assert per_turn == BUDGET_PER_TURN, "a turn does less work than its budget: lower the budget"
