"""Where one turn's time goes: the service's turn, in-process, split by what it waits on.

Opens keel as ``keel serve`` does (``open_service``), runs one conversation of N turns
("Add item k": one tool call each) through the API's turn path (``service.turns``: the turn
lock with its ownership check, ``run_turn``), and times every call into the checkpointer, keel's
own tables, the lock and retention. Prints per-turn means: calls and milliseconds per category,
and the rest (graph engine, nodes, models, serialisation: CPU in this process).

    python bench/turn_profile.py --turns 200
    python bench/turn_profile.py --turns 200 --database-url postgresql://postgres@127.0.0.1:55432/db
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import structlog

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from keel.api.service import open_service  # noqa: E402
from keel.checkpoints.branches import Rooted  # noqa: E402
from keel.checkpoints.retention import Pruned  # noqa: E402
from keel.graphs.settings import Settings  # noqa: E402
from keel.tools.tasks.todo import TODO_TOOLS

CALLS: dict[str, int] = defaultdict(int)
SECONDS: dict[str, float] = defaultdict(float)


def _timed(category: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return await fn(*args, **kwargs)
        finally:
            CALLS[category] += 1
            SECONDS[category] += time.perf_counter() - start

    return wrapper


def _timed_cm(category: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """Time an async context manager's enter and exit, not the body."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        cm = fn(*args, **kwargs)

        class Timed:
            async def __aenter__(self) -> Any:
                start = time.perf_counter()
                try:
                    return await cm.__aenter__()
                finally:
                    SECONDS[category] += time.perf_counter() - start

            async def __aexit__(self, *exc: Any) -> Any:
                start = time.perf_counter()
                try:
                    return await cm.__aexit__(*exc)
                finally:
                    CALLS[category] += 1
                    SECONDS[category] += time.perf_counter() - start

        return Timed()

    return wrapper


def instrument(service: Any) -> None:
    """Wrap the saver, the app-table stores, the lock, retention and state reads."""
    saver = type(service.backend.saver)
    # LangGraph's saver under keel's mixins (Rooted, Pruned): what reaches the database
    base = next(c for c in saver.__mro__[1:] if c not in (Rooted, Pruned) and "aput" in vars(c))
    for name in ("aput", "aput_writes"):
        setattr(base, name, _timed("checkpoint writes", getattr(base, name)))
    base.aget_tuple = _timed("checkpoint reads", base.aget_tuple)
    import keel.checkpoints.conversation_store as conversations
    import keel.checkpoints.messages as messages
    import keel.checkpoints.topics as topics
    import keel.graphs.turns as turns
    import keel.tools.calls as calls
    import keel.tools.tasks.store as store

    for cls, category in (
        (conversations.ConversationStore, "app tables: conversations"),
        (messages.MessageLog, "app tables: message log"),
        (topics.TopicStore, "app tables: topics"),
        (store.TaskStore, "app tables: tasks"),
    ):
        for name, fn in list(vars(cls).items()):
            if not name.startswith("_") and asyncio.iscoroutinefunction(fn):
                setattr(cls, name, _timed(category, fn))
    calls.run_tool_call = _timed("tool call (ledger tx, incl. task SQL)", calls.run_tool_call)
    import keel.nodes.tool_execution as tool_node

    tool_node.run_tool_call = calls.run_tool_call
    import keel.checkpoints.retention as retention

    retention.prune_thread = _timed("retention (prune, in the background)", retention.prune_thread)
    turns.latest_checkpoint_id = _timed(
        "newest checkpoint id (is the cached state current?)", turns.latest_checkpoint_id
    )
    lock = type(service.turns.locks)
    lock.hold = _timed_cm("turn lock (take + release)", lock.hold)


async def run(url: str, turns: int) -> None:
    settings = Settings(
        database_url=url, reminder_poll_seconds=0
    )  # a turn's work, not the reminders' polls
    async with open_service(settings, TODO_TOOLS) as service:
        instrument(service)
        cid = (await service.conversations.create("bench"))["conversation_id"]
        # warm up: first turn opens topics, compiles, fills caches
        await service.turns.take(cid, "bench", "Add item 0")
        CALLS.clear()
        SECONDS.clear()
        start = time.perf_counter()
        for k in range(1, turns + 1):
            await service.turns.take(cid, "bench", f"Add item {k}")
        total = time.perf_counter() - start
    per = 1000 / turns
    print(f"database: {url.split('@')[-1]}   turns: {turns}   ms per turn: {total * per:.2f}")
    print("| where | calls/turn | ms/turn |")
    print("|---|---|---|")
    nested = {
        "app tables: tasks",
        "retention (prune, in the background)",
        "checkpoint reads from the database",
    }
    accounted = 0.0
    for category in sorted(SECONDS, key=SECONDS.get, reverse=True):  # type: ignore[arg-type]
        ms = SECONDS[category] * per
        if category not in nested:
            accounted += SECONDS[category]
        print(f"| {category} | {CALLS[category] / turns:.1f} | {ms:.2f} |")
    print(f"| rest (graph engine, nodes, CPU) | | {(total - accounted) * per:.2f} |")
    print(
        "(task SQL is inside the tool call, database reads inside the reads; background prunes "
        "overlap other turns)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--database-url", help="default: a fresh SQLite file")
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(40))
    with tempfile.TemporaryDirectory(prefix="keel-profile-") as tmp:
        url = args.database_url or f"sqlite:///{tmp}/keel.db"
        asyncio.run(run(url, args.turns))


if __name__ == "__main__":
    main()
