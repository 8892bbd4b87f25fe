"""The load of ``bench/http_load.py``: users sending turns over HTTP, and what they saw.

Each user is an asyncio task with its own connection that runs conversations of L turns back to
back until the deadline; ``drive`` runs U of them against a ready server and summarises a cell.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import time
from collections import Counter
from dataclasses import dataclass, field

import httpx

from bench.report import Result, percentile
from bench.servers import Impl, Server

REQUEST_TIMEOUT = 60.0
JSON_HEADERS = {"content-type": "application/json"}


@dataclass
class Load:
    """What one user saw in the measured window."""

    latencies: list[float] = field(default_factory=list)
    """Seconds, successful turns only."""
    errors: Counter[str] = field(default_factory=Counter)
    """"409", "503", "timeout", "connection", ... over turns and conversation creations."""
    turns_sent: int = 0
    conversations: int = 0
    last_end: float = 0.0
    depth_sum: int = 0
    """Sum over the measured turns of their place in their conversation (1 = first turn)."""


def retry_after(response: httpx.Response) -> float:
    try:
        return min(float(response.headers.get("retry-after", "0.1")), 1.0)
    except ValueError:
        return 0.1


DONE_WORK = b"Created task: item "
"""What the reply to every turn of the load ("Add item k") says once the task exists: a turn
answered otherwise (a baseline whose model no longer calls the tool, say) did not do the work and
counts as an error ("wrong reply"), not as a turn."""


async def post(
    client: httpx.AsyncClient, path: str, body: bytes, expected: int, says: bytes | None = None
) -> tuple[httpx.Response | None, str | None, float]:
    """POST ``body``: the response, the error kind (None when ``expected``, and the answer holds
    ``says`` when given), the pause after.
    """  # noqa: D205
    try:
        r = await client.post(path, content=body, headers=JSON_HEADERS)
    except httpx.TimeoutException:
        return None, "timeout", 0.0
    except httpx.TransportError:
        return None, "connection", 0.1
    if r.status_code == expected:
        if says is not None and says not in r.content:
            return r, "wrong reply", 0.0
        return r, None, 0.0
    return r, str(r.status_code), retry_after(r)


async def one_user(
    base: str,
    impl: Impl,
    bodies: list[bytes],
    measure_from: float,
    deadline: float,
    max_turns: int | None,
) -> Load:
    """Conversations of ``len(bodies)`` turns back to back until ``deadline``.

    Requests that end before ``measure_from`` (the warm-up) are not recorded; one that started in
    the warm-up and ends after it is (so a request that hangs shows up). ``max_turns`` counts every
    turn the user sends, warm-up included. A failed request ends its conversation; the user waits
    a little (Retry-After on 503, at most 1 s) and starts another.
    """
    load = Load()
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    clock = time.perf_counter

    def done() -> bool:
        return clock() >= deadline or (max_turns is not None and load.turns_sent >= max_turns)

    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=REQUEST_TIMEOUT) as client:
        while not done():
            r, error, pause = await post(client, impl.create_path, b"{}", 201)
            if r is not None and error is None:
                cid = r.json()["conversation_id"]
            end = clock()
            if end >= measure_from:
                load.last_end = end
                if error is None:
                    load.conversations += 1
                else:
                    load.errors[f"create {error}"] += 1
            if error is not None:
                await asyncio.sleep(pause)
                continue
            path = impl.message_path.format(cid=cid)
            for depth, body in enumerate(bodies, start=1):
                if done():
                    break
                start = clock()
                _, error, pause = await post(client, path, body, 200, DONE_WORK)
                end = clock()
                load.turns_sent += 1
                if end >= measure_from:
                    load.last_end = end
                    if error is None:
                        load.latencies.append(end - start)
                        load.depth_sum += depth
                    else:
                        load.errors[error] += 1
                if error is not None:
                    await asyncio.sleep(pause)
                    break
    return load


async def one_deep_user(
    base: str, impl: Impl, bodies: list[bytes], first: int, ready: asyncio.Barrier
) -> Load:
    """One conversation of ``len(bodies)`` turns, timed only from turn ``first`` on.

    The turns before ``first`` fill the conversation; then the user waits at ``ready`` until
    every user has got as far, and sends the rest, recorded, and stops.
    """
    load = Load()
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=REQUEST_TIMEOUT) as client:
        r, error, _ = await post(client, impl.create_path, b"{}", 201)
        if r is None or error is not None:
            load.errors[f"create {error}"] += 1
            await ready.wait()
            return load
        path = impl.message_path.format(cid=r.json()["conversation_id"])
        failed = False
        for body in bodies[: first - 1]:
            _, error, _ = await post(client, path, body, 200, DONE_WORK)
            if error is not None:
                load.errors[f"fill {error}"] += 1
                failed = True
                break
        await ready.wait()
        load.conversations = 1
        for depth, body in enumerate(bodies[first - 1 :] if not failed else [], start=first):
            start = time.perf_counter()
            _, error, _ = await post(client, path, body, 200, DONE_WORK)
            end = load.last_end = time.perf_counter()
            load.turns_sent += 1
            if error is not None:
                load.errors[error] += 1
                break
            load.latencies.append(end - start)
            load.depth_sum += depth
    return load


def cpu_self() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def drive(
    server: Server, impl: Impl, users: int, length: int, args: argparse.Namespace
) -> Result:
    """Run the load against a ready server and summarise it."""
    bodies = [f'{{"content": "Add item {k}"}}'.encode() for k in range(1, length + 1)]
    first = getattr(args, "measure_from_turn", 1)
    if first > 1:
        return await drive_deep(server, impl, users, bodies, first)
    start = time.perf_counter()
    measure_from = start + args.warmup
    deadline = measure_from + args.seconds
    tasks = [
        asyncio.create_task(
            one_user(server.base, impl, bodies, measure_from, deadline, args.max_turns_per_user)
        )
        for _ in range(users)
    ]
    await asyncio.sleep(max(0.0, measure_from - time.perf_counter()))
    cpu0, server_cpu0, wall0 = cpu_self(), server.cpu_seconds(), time.perf_counter()
    loads = await asyncio.gather(*tasks)
    cpu1, server_cpu1, wall1 = cpu_self(), server.cpu_seconds(), time.perf_counter()
    return summary(impl, loads, measure_from, wall1, cpu1 - cpu0, server_cpu1 - server_cpu0, wall0)


def summary(
    impl: Impl,
    loads: list[Load],
    measure_from: float,
    wall1: float,
    client_cpu: float,
    server_cpu: float,
    wall0: float | None = None,
) -> Result:
    """A cell's figures: turns/s over the measured window, latencies, errors, CPU per second."""
    end = max((load.last_end for load in loads), default=0.0)
    seconds = max(end - measure_from, 1e-9)
    latencies = sorted(x for load in loads for x in load.latencies)
    errors: Counter[str] = Counter()
    for load in loads:
        errors.update(load.errors)
    wall = max(wall1 - (measure_from if wall0 is None else wall0), 1e-9)
    return Result(
        impl=impl.name,
        turns_per_s=len(latencies) / seconds,
        p50_ms=percentile(latencies, 0.50) * 1000,
        p99_ms=percentile(latencies, 0.99) * 1000,
        errors=errors,
        ok_turns=len(latencies),
        conversations=sum(load.conversations for load in loads),
        seconds=seconds,
        client_cpu=client_cpu / wall,
        server_cpu=max(server_cpu, 0.0) / wall,
        mean_depth=sum(load.depth_sum for load in loads) / max(len(latencies), 1),
    )


async def drive_deep(
    server: Server, impl: Impl, users: int, bodies: list[bytes], first: int
) -> Result:
    """Every user fills one conversation to turn ``first`` - 1, then all are timed to its end."""
    ready = asyncio.Barrier(users + 1)
    tasks = [
        asyncio.create_task(one_deep_user(server.base, impl, bodies, first, ready))
        for _ in range(users)
    ]
    await ready.wait()
    cpu0, server_cpu0, wall0 = cpu_self(), server.cpu_seconds(), time.perf_counter()
    loads = await asyncio.gather(*tasks)
    cpu1, server_cpu1, wall1 = cpu_self(), server.cpu_seconds(), time.perf_counter()
    return summary(impl, loads, wall0, wall1, cpu1 - cpu0, server_cpu1 - server_cpu0)
