r"""The service's edges under a hostile client: huge bodies, half-sent requests.

Starts ``keel serve`` (one worker, SQLite, in a temporary directory) and prints:

- memory: the server's resident memory (VmRSS from /proc) before, at the peak (sampled every
  5 ms) and 2 s after six concurrent clients each POST a 50 MB JSON message, on a server with API
  keys, without a key and with one (to an unknown conversation), and on a local server (no keys);
  with how many bytes the server took before it answered, and its status;
- half-sent requests: how long a connection survives that sends a request line and then a header
  line every second, and one that sends nothing;
- crowding: with ``KEEL_MAX_CONNECTIONS=100``, 150 such connections are opened, then /healthz is
  asked every half second: how long legitimate requests are answered 503 before they are served.

Each wait is capped (``--cap`` seconds): "survives >= cap" means it was never closed. From the
repository root:

    .venv/bin/python bench/service_edges.py
    .venv/bin/python bench/service_edges.py --megabytes 50 --clients 6 --cap 60
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.servers import IMPLS, Server  # noqa: E402

KEY = "bench-key"
UNKNOWN = "6f1c1a9e-0c57-4d3e-9a52-2f9b0f0c3b11"


def rss_mb(pid: int) -> float:
    """Resident memory of process ``pid`` in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class PeakRss:
    """Samples a process's resident memory in a thread; ``peak`` is the most seen."""

    def __init__(self, pid: int) -> None:
        """Watch ``pid``."""
        self.pid, self.peak, self.running = pid, 0.0, True
        self.thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while self.running:
            with contextlib.suppress(OSError):
                self.peak = max(self.peak, rss_mb(self.pid))
            time.sleep(0.005)

    def __enter__(self) -> PeakRss:
        """Start sampling."""
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        """Stop sampling."""
        self.running = False
        self.thread.join()


def json_body(size: int) -> bytes:
    """A JSON message of exactly ``size`` bytes."""
    return b'{"content": "' + b"a" * (size - 15) + b'"}'


async def post_huge(port: int, path: str, body: bytes, headers: str) -> tuple[str, int]:
    """POST ``body``; (the answer's status line, bytes sent before the answer came)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n{headers}\r\n".encode()
    )
    answer = asyncio.ensure_future(reader.readline())
    view, sent = memoryview(body), 0
    with contextlib.suppress(ConnectionError):
        while sent < len(body) and not answer.done():
            writer.write(view[sent : sent + (1 << 20)])
            await writer.drain()
            sent = min(len(body), sent + (1 << 20))
    try:
        status = (await asyncio.wait_for(answer, 120)).decode().strip()
    except ConnectionError:
        status = ""
    writer.close()
    return status, sent


async def memory_row(server: Server, label: str, path: str, headers: str, args: object) -> str:
    assert server.proc is not None
    pid = server.proc.pid
    await asyncio.sleep(1)
    before = rss_mb(pid)
    body = json_body(args.megabytes << 20)  # type: ignore[attr-defined]
    clients = range(args.clients)  # type: ignore[attr-defined]
    with PeakRss(pid) as watch:
        answers = await asyncio.gather(
            *(post_huge(server.port, path, body, headers) for _ in clients)
        )
        await asyncio.sleep(2)
    after = rss_mb(pid)
    statuses = sorted({a[0].split(" ", 2)[1] if a[0] else "closed" for a in answers})
    taken = max(a[1] for a in answers) / (1 << 20)
    return (
        f"| {label} | {before:.0f} | {watch.peak:.0f} | {after:.0f} | {','.join(statuses)} "
        f"| {taken:.1f} |"
    )


async def survives(port: int, trickle: bool, cap: float) -> float:
    """Seconds a connection lives that trickles header lines (or sends nothing), up to ``cap``."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    start = time.monotonic()
    if trickle:
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    line = 0
    while time.monotonic() - start < cap:
        try:
            if not await asyncio.wait_for(reader.read(4096), 1.0):
                break
        except TimeoutError:
            pass
        except ConnectionError:
            break
        if trickle:
            with contextlib.suppress(ConnectionError):
                writer.write(b"X-Line-%d: 1\r\n" % line)
                line += 1
    writer.close()
    return time.monotonic() - start


async def crowding(server: Server, cap: float) -> str:
    """Open 150 trickling connections; how long /healthz is refused before it is served."""
    hold = [asyncio.ensure_future(survives(server.port, True, cap)) for _ in range(150)]
    await asyncio.sleep(1)
    start, refused = time.monotonic(), 0
    async with httpx.AsyncClient(base_url=server.base, timeout=5) as client:
        while time.monotonic() - start < cap:
            with contextlib.suppress(httpx.HTTPError):
                if (await client.get("/healthz")).status_code == 200:
                    break
                refused += 1
            await asyncio.sleep(0.5)
    waited = time.monotonic() - start
    for task in hold:
        task.cancel()
    return f"{refused} answers 503 over {waited:.1f} s before /healthz was served"


def keel(tmp: Path, name: str, **env: str) -> Server:
    impl = dataclasses.replace(IMPLS["keel"], extra_env={**IMPLS["keel"].extra_env, **env})
    return Server(impl, f"sqlite:///{tmp / name}.db", 1, tmp / f"{name}.log")


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="keel-edges-") as tmp_name:
        tmp = Path(tmp_name)
        print(f"{args.clients} clients x {args.megabytes} MB JSON bodies; RSS in MB\n")
        print(
            "| server, request | RSS before | RSS peak | RSS after | status "
            "| MB sent before the answer |"
        )
        print("|---|---|---|---|---|---|")
        rows = [
            ("keys, no key", "/v1/conversations", "", {"KEEL_API_KEYS": f"bench:{KEY}"}),
            (
                "keys, a key, unknown conversation",
                f"/v1/conversations/{UNKNOWN}/messages",
                f"Authorization: Bearer {KEY}\r\n",
                {"KEEL_API_KEYS": f"bench:{KEY}"},
            ),
            ("no keys (local)", f"/v1/conversations/{UNKNOWN}/messages", "", {}),
        ]
        for n, (label, path, headers, env) in enumerate(rows):
            server = keel(tmp, f"memory{n}", **env)
            server.start()
            try:
                await server.wait_ready()
                print(await memory_row(server, label, path, headers, args), flush=True)
            finally:
                server.stop()
        server = keel(tmp, "slow", KEEL_MAX_CONNECTIONS="100")
        server.start()
        try:
            await server.wait_ready()
            trickling = await survives(server.port, True, args.cap)
            silent = await survives(server.port, False, args.cap)
            print(f"\na connection trickling header lines survives {trickling:.1f} s")
            print(f"a connection sending nothing survives {silent:.1f} s")
            print(f"KEEL_MAX_CONNECTIONS=100, 150 trickling: {await crowding(server, args.cap)}")
        finally:
            server.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--megabytes", type=int, default=50, help="size of each body")
    parser.add_argument("--clients", type=int, default=6, help="concurrent huge bodies")
    parser.add_argument("--cap", type=float, default=60.0, help="longest wait measured, s")
    asyncio.run(main(parser.parse_args()))
