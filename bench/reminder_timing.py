"""How soon reminders are said, and whether any is lost or doubled: `keel serve` over real HTTP.

Sets ``--count`` reminders in words over HTTP ("remind me in 47 seconds to feed the owl"), spread
over ``--conversations`` conversations, all falling due within the same minute; waits until keel
has said them; prints the delay from each one's time to when it was said (median, 95th percentile,
max), and, from every conversation's message log, how many were said twice or never. With
``--kill before`` one of the ``--workers`` is killed (SIGKILL) after the reminders are set and
before they fall due; with ``--kill during``, a third of a second after, while they are said.

    python bench/reminder_timing.py --backend sqlite
    python bench/reminder_timing.py --backend postgres --postgres-url URL --workers 2 --kill during

A reminder the offline understanding did not read as one (it asks instead) is left out and
counted. There is no plain LangGraph side: a plain graph has no reminders to compare with.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.servers import IMPLS, FreshDatabase, Server  # noqa: E402

VERBS = ["feed", "walk", "wash", "brush", "call", "visit", "weigh", "groom", "draw", "photograph"]
ANIMALS = [
    "cat", "dog", "horse", "rabbit", "parrot", "goat", "pony", "hamster", "turtle", "goldfish",
    "lamb", "duck", "goose", "hen", "pig", "cow", "donkey", "ferret", "mouse", "owl",
]  # fmt: skip
SAID = "⏰ Reminder: "


def titles(count: int) -> list[str]:
    every = [f"{verb} the {animal}" for animal in ANIMALS for verb in VERBS]
    if count > len(every):
        raise SystemExit(f"--count is at most {len(every)}")
    return every[:count]


def workers_of(server: Server) -> list[int]:
    """The pids of the server's worker processes (the children of its first process)."""
    assert server.proc is not None
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                stat = Path(f"/proc/{entry.name}/stat").read_bytes().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if int(stat[1]) == server.proc.pid:
                found.append(int(entry.name))
    return found


async def set_all(client: httpx.AsyncClient, cids: list[str], said: list[str], due: float) -> int:
    """Set each reminder to fall due at ``due`` (epoch seconds); how many were set."""
    gate = asyncio.Semaphore(4)

    async def one(n: int, title: str) -> bool:
        async with gate:
            seconds = max(5, round(due - time.time()))
            text = f"remind me in {seconds} seconds to {title}"
            answer = await client.post(
                f"/v1/conversations/{cids[n % len(cids)]}/messages", json={"content": text}
            )
            answer.raise_for_status()
            return answer.json()["reply"].startswith(f"Created task: {title}")

    return sum(await asyncio.gather(*(one(n, t) for n, t in enumerate(said))))


async def said_in(client: httpx.AsyncClient, cid: str) -> list[str]:
    answer = await client.get(f"/v1/conversations/{cid}/messages", params={"limit": 1000})
    answer.raise_for_status()
    return [m["content"] for m in answer.json() if m["content"].startswith(SAID)]


async def run(args: argparse.Namespace) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="keel-reminders-"))
    db = FreshDatabase(args.backend, "keel", tmp, args.postgres_url, keep=False)
    db.create()
    server = Server(IMPLS["keel"], db.url, args.workers, tmp / "keel.log")
    server.start()
    try:
        await server.wait_ready()
        async with httpx.AsyncClient(base_url=server.base, timeout=120) as client:
            cids = [
                (await client.post("/v1/conversations", json={})).json()["conversation_id"]
                for _ in range(args.conversations)
            ]
            wanted = titles(args.count)
            minute = (int(time.time()) // 60 + 2) * 60  # the start of a minute to come
            began = time.perf_counter()
            made = await set_all(client, cids, wanted, minute + 20)
            print(f"set {made} of {len(wanted)} reminders in {time.perf_counter() - began:.1f} s")
            if args.kill:
                if args.kill == "during":  # mid-delivery: its leases must run out first
                    await asyncio.sleep(max(0.0, minute + 20.3 - time.time()))
                victim = workers_of(server)[0]
                os.kill(victim, signal.SIGKILL)
                print(f"killed worker {victim} (SIGKILL) {args.kill} their time")
            deadline = minute + 20 + args.wait
            found: list[dict] = []
            while time.time() < deadline:
                answer = await client.get("/v1/reminders", params={"limit": 200})
                found = [r for r in answer.json() if r["delivered_at"]]
                if len(found) >= made:
                    break
                await asyncio.sleep(1)
            logged = [line for cid in cids for line in await said_in(client, cid)]
    finally:
        server.stop()
        db.drop()
    delays = sorted(
        (
            datetime.fromisoformat(r["delivered_at"]) - datetime.fromisoformat(r["remind_at"])
        ).total_seconds()
        for r in found
    )
    said_titles = [line.removeprefix(SAID).split(" (task")[0] for line in logged]
    doubled = sum(1 for t in set(said_titles) if said_titles.count(t) > 1)
    print(
        f"backend {args.backend}, {args.workers} worker(s)"
        f"{f', one killed {args.kill} their time' if args.kill else ''}: "
        f"{len(found)} said of {made} set"
    )
    if delays:
        p95 = delays[min(len(delays) - 1, int(len(delays) * 0.95))]
        print(
            f"delay from due to said, s: median {statistics.median(delays):.2f}, "
            f"p95 {p95:.2f}, max {delays[-1]:.2f}"
        )
    print(
        f"in the conversations' logs: {len(logged)} said, {doubled} doubled, "
        f"{made - len(set(said_titles))} lost"
    )
    print(f"(measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; log: {tmp / 'keel.log'})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--postgres-url", help="an admin URL; a database is made and dropped")
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--conversations", type=int, default=20)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument(
        "--kill",
        choices=["before", "during"],
        help="SIGKILL one worker before the reminders fall due, or while they are being said",
    )
    parser.add_argument("--wait", type=float, default=180, help="seconds to wait for them all")
    args = parser.parse_args()
    if args.backend == "postgres" and not args.postgres_url:
        parser.error("--backend postgres needs --postgres-url")
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
