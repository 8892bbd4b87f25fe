"""Turn cost over a long conversation: keel against a plain LangGraph ReAct graph.

One conversation of N turns (one tool call each: "Add chore N") per backend and implementation.
Prints the per-turn latency (median of the 25 turns up to each mark, from turn 2 on) at turns 10,
100, 500 and N, the bytes stored per turn between turn 10 and turn N, and the ratios.

    python bench/turn_cost.py --turns 1000 --postgres-url postgresql://postgres@127.0.0.1:5432/postgres
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import psycopg
import structlog
from langchain_core.messages import HumanMessage

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.plain_react import build_plain_graph  # noqa: E402
from bench.plain_server import open_plain  # noqa: E402
from keel.checkpoints.backend import open_backend  # noqa: E402
from keel.graphs.builder import build_graph  # noqa: E402
from keel.graphs.resources import open_resources  # noqa: E402
from keel.graphs.run_turn import run_turn  # noqa: E402
from keel.tools.tasks.store import TaskStore  # noqa: E402
from keel.tools.tasks.todo import TODO_TOOLS

WINDOW = 25


def marks(turns: int) -> list[int]:
    return [m for m in (10, 100, 500) if m < turns] + [turns]


VACUUM_EVERY = 25
"""On PostgreSQL the bench runs VACUUM every 25 turns, for both graphs, standing in for
autovacuum: 1000 turns run in a few minutes, while autovacuum wakes once a minute."""


def vacuum(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM")


async def stored_bytes(url: str, engine: Any, saver: Any) -> int:
    """Bytes the conversation occupies in the backend right now."""
    if url == "memory":
        total = sum(len(v[1]) for v in saver.blobs.values())
        for namespaces in saver.storage.values():
            for checkpoints in namespaces.values():
                total += sum(len(c[1]) + len(m[1]) for c, m, _ in checkpoints.values())
        total += sum(len(w[2][1]) for ws in saver.writes.values() for w in ws.values())
        pages = (await engine.fetchone("PRAGMA page_count"))["page_count"]
        size = (await engine.fetchone("PRAGMA page_size"))["page_size"]
        return total + pages * size
    if url.startswith("sqlite:///"):
        path = url.removeprefix("sqlite:///")
        await engine.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return sum(os.path.getsize(p) for p in (path, f"{path}-wal") if os.path.exists(p))
    with psycopg.connect(url) as conn:
        return int(conn.execute("SELECT pg_database_size(current_database())").fetchone()[0])


@asynccontextmanager
async def opened(url: str, plain: bool) -> AsyncIterator[tuple[Any, Any]]:
    """The tables and the saver of one run: keel's saver, or plain LangGraph's (``open_plain``)."""
    if plain and url != "memory":
        async with open_plain(url) as (saver, store):
            yield store.db, saver
        return
    async with open_backend(url) as backend:
        yield backend.db, backend.saver


async def measure(
    url: str,
    turns: int,
    make_turn: Callable[[Any, Any, int], Awaitable[Any]],
    build: Any,
    plain: bool = False,
) -> dict[str, Any]:
    """Run one conversation of ``turns`` turns; latency per turn and bytes at each mark."""
    async with opened(url, plain) as (engine, saver):
        runner = build(saver, engine)
        latencies: list[float] = []
        sizes: dict[int, int] = {}
        for n in range(1, turns + 1):
            start = time.perf_counter()
            await make_turn(runner, engine, n)
            latencies.append(time.perf_counter() - start)
            if url.startswith("postgresql://") and n % VACUUM_EVERY == 0:
                vacuum(url)
            if n in marks(turns):
                sizes[n] = await stored_bytes(url, engine, saver)
        at = {m: statistics.median(latencies[max(1, m - WINDOW) : m]) for m in marks(turns)}
        first, last = marks(turns)[0], turns
        return {
            "latency": at,
            "bytes_per_turn": (sizes[last] - sizes[first]) / (last - first),
            "total_bytes": sizes[last],
        }


def keel_impl() -> tuple[Any, Any]:
    cid = str(uuid.uuid4())

    def build(saver: Any, engine: Any) -> Any:
        return build_graph(checkpointer=saver), open_resources(
            engine, saver, tools=TODO_TOOLS
        ).context("bench")

    async def turn(runner: Any, _engine: Any, n: int) -> None:
        graph, context = runner
        await run_turn(graph, cid, f"Add chore {n}", context)

    return build, turn


def plain_impl() -> tuple[Any, Any]:
    config = {"configurable": {"thread_id": str(uuid.uuid4())}}

    def build(saver: Any, engine: Any) -> Any:
        return build_plain_graph(saver, TaskStore(engine), "bench")

    async def turn(graph: Any, _engine: Any, n: int) -> None:
        await graph.ainvoke({"messages": [HumanMessage(f"Add chore {n}")]}, config)

    return build, turn


def fresh_url(kind: str, workdir: Path, pg_admin: str | None, name: str) -> str:
    if kind == "memory":
        return "memory"
    if kind == "sqlite":
        return f"sqlite:///{workdir / f'{name}.db'}"
    assert pg_admin
    db = f"bench_{name}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_admin, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {db}")
    return pg_admin.rsplit("/", 1)[0] + f"/{db}"


def fmt_ms(seconds: float) -> str:
    return f"{seconds * 1000:8.1f}"


def report(rows: list[tuple[str, str, dict[str, Any]]], turns: int) -> str:
    ms = marks(turns)
    head = ["backend", "graph"] + [f"ms@{m}" for m in ms] + [f"ms {ms[-1]}/{ms[0]}", "B/turn"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for backend, impl, r in rows:
        lat = r["latency"]
        cells = [backend, impl] + [fmt_ms(lat[m]).strip() for m in ms]
        cells += [f"{lat[ms[-1]] / lat[ms[0]]:.2f}", f"{r['bytes_per_turn']:,.0f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--backends", help="comma-separated: memory, sqlite, postgres")
    parser.add_argument("--postgres-url", help="admin URL of a PostgreSQL server to bench on")
    parser.add_argument("--graphs", default="keel,plain", help="comma-separated: keel, plain")
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(40))
    default = "memory,sqlite,postgres" if args.postgres_url else "memory,sqlite"
    backends = (args.backends or default).split(",")
    if "postgres" in backends and not args.postgres_url:
        parser.error("the postgres backend needs --postgres-url")
    rows = []
    with tempfile.TemporaryDirectory(prefix="keel-bench-") as tmp:
        for backend in backends:
            impls = {"keel": keel_impl, "plain": plain_impl}
            for name in args.graphs.split(","):
                impl = impls[name]
                url = fresh_url(backend, Path(tmp), args.postgres_url, name)
                build, turn = impl()
                result = await measure(url, args.turns, turn, build, plain=name == "plain")
                rows.append((backend, name, result))
                print(f"{backend:9} {name:6} done: {result}", file=sys.stderr)
    print(report(rows, args.turns))
    by = {(b, i): r for b, i, r in rows}
    for backend in backends if len(args.graphs.split(",")) == 2 else []:
        keel, plain = by[(backend, "keel")], by[(backend, "plain")]
        last = args.turns
        speed = plain["latency"][last] / keel["latency"][last]
        space = plain["bytes_per_turn"] / max(keel["bytes_per_turn"], 1)
        print(
            f"{backend}: at turn {last} plain/keel latency = {speed:.2f}, "
            f"plain/keel bytes per turn = {space:.0f}"
        )


if __name__ == "__main__":
    asyncio.run(main())
