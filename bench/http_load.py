r"""HTTP load: ``keel serve`` against a plain LangGraph ReAct server, same load, same backend.

For every backend x workers x users x conversation length, the bench starts ``keel serve`` on a
fresh database, drives it, stops it, then does the same with the baseline
(``bench/plain_server.py``, a plain LangGraph ReAct graph behind a minimal FastAPI app, no turn
lock, no auth) and prints a row. Each of the U users is an asyncio task with its own HTTP
connection; it runs conversations of L turns back to back ("Add item 1" ... "Add item L", one tool
call per turn, then a new conversation) until the time budget runs out, finishing the request it
is in. Requests ending in the first ``--warmup`` seconds are not counted; the measured window
runs from there until the last user has stopped. Per cell: successful turns per second,
p50/p99 latency of successful turns, errors (every non-2xx answer, timeout or connection error;
5xx in brackets). From the repository root:

    .venv/bin/python bench/http_load.py --backends sqlite

    .venv/bin/python bench/http_load.py --backends sqlite,postgres \
        --postgres-url postgresql://postgres@127.0.0.1:55432/postgres

    .venv/bin/python bench/http_load.py --backends sqlite --users 1,4 --lengths 20 \
        --workers 1 --seconds 5    # a smoke run

    .venv/bin/python bench/http_load.py --backends sqlite --users 1,8,32 --lengths 200 \
        --workers 1 --measure-from-turn 150    # turns 150-200 of 200-turn conversations

The defaults (``--users 1,8,32,64 --lengths 20,200 --workers 1,2 --seconds 20 --warmup 2``) make
16 cells per backend, two server runs each: about 20 minutes per backend, longer when requests
hang (a request times out after 60 s).

Databases: SQLite files live in a temporary directory removed at the end; on PostgreSQL every
server gets a new database ``bench_http_<impl>_<hex>`` on the ``--postgres-url`` server, dropped
after its run (``--keep-dbs`` leaves them). With more than one worker the fresh database is first
initialised by a one-worker start of the same server (``--no-prime`` skips that), so that N
workers do not race to create the schema.

The load client runs on the same machine as the servers and takes CPU from them (the details table
shows how much). Figures are only comparable within one run on one machine.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import traceback
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.load import drive  # noqa: E402
from bench.report import (  # noqa: E402
    DETAIL_HEAD,
    HEAD,
    Cell,
    Result,
    detail_row,
    md_row,
    md_table,
    progress,
    row,
)
from bench.servers import IMPLS, FreshDatabase, Impl, Server, ServerFailed  # noqa: E402

LOG_TAIL_CHARS = 3000


# --- one cell -------------------------------------------------------------------------------


def log_tail(path: Path) -> str:
    try:
        return path.read_text(errors="replace")[-LOG_TAIL_CHARS:]
    except OSError:
        return ""


async def start_ready(server: Server) -> float:
    """Start ``server`` and wait for it; stopped again if it fails."""
    server.start()
    try:
        return await server.wait_ready()
    except BaseException:
        server.stop()
        raise


async def run_impl(
    impl: Impl,
    backend: str,
    workers: int,
    users: int,
    length: int,
    tmp: Path,
    args: argparse.Namespace,
) -> Result:
    """Fresh database, fresh server, the load, then stop and clean up."""
    db = FreshDatabase(backend, impl.name, tmp, args.postgres_url, args.keep_dbs)
    log_path = tmp / f"{db.name}.log"
    server: Server | None = None
    try:
        db.create()
        if workers > 1 and not args.no_prime:
            primer = Server(impl, db.url, 1, log_path)
            await start_ready(primer)
            primer.stop()
        server = Server(impl, db.url, workers, log_path)
        startup = await start_ready(server)
        result = await drive(server, impl, users, length, args)
        result.startup_s = startup
        if server.proc is not None and server.proc.poll() is not None:
            result.note = f"server exited with status {server.proc.returncode}"
        return result
    except ServerFailed as exc:
        print(
            f"  {impl.name} failed to start: {exc}; log tail:\n{log_tail(log_path)}",
            file=sys.stderr,
        )
        last = next((line for line in reversed(log_tail(log_path).splitlines()) if line), "")
        return Result(impl=impl.name, failed=f"start failed: {exc}", note=last[:160])
    except Exception as exc:  # the bench goes on to the next cell
        traceback.print_exc()
        return Result(impl=impl.name, failed=f"bench error: {exc!r}")
    finally:
        if server is not None:
            server.stop()
        db.drop()


# --- main -----------------------------------------------------------------------------------


def int_list(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--backends", default="sqlite", help="comma-separated: sqlite, postgres")
    parser.add_argument("--postgres-url", help="admin URL of a PostgreSQL server to bench on")
    parser.add_argument("--users", type=int_list, default=[1, 8, 32, 64], help="e.g. 1,8,32,64")
    parser.add_argument("--lengths", type=int_list, default=[20, 200], help="turns/conversation")
    parser.add_argument("--workers", type=int_list, default=[1, 2], help="server worker processes")
    parser.add_argument("--seconds", type=float, default=20.0, help="measured seconds per run")
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds not counted, first")
    parser.add_argument("--max-turns-per-user", type=int, help="stop a user after this many turns")
    parser.add_argument(
        "--measure-from-turn",
        type=int,
        default=1,
        help="time only turns from this one on: each user fills one conversation up to it "
        "(untimed), then all send the rest of it, timed (--seconds and --warmup are not used)",
    )
    parser.add_argument("--impls", default="keel,plain", help="comma-separated: keel, plain")
    parser.add_argument("--keep-dbs", action="store_true", help="leave PostgreSQL databases")
    parser.add_argument(
        "--no-prime", action="store_true", help="start N workers on an uninitialised database"
    )
    args = parser.parse_args()
    args.backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    args.impls = [i.strip() for i in args.impls.split(",") if i.strip()]
    for backend in args.backends:
        if backend not in ("sqlite", "postgres"):
            parser.error(f"unknown backend {backend!r} (sqlite, postgres)")
    if "postgres" in args.backends and not args.postgres_url:
        parser.error("the postgres backend needs --postgres-url")
    for impl in args.impls:
        if impl not in IMPLS:
            parser.error(f"unknown impl {impl!r} ({', '.join(IMPLS)})")
    return args


async def main() -> None:
    args = parse_args()
    cells: list[tuple[Cell, dict[str, Result]]] = []
    print(md_row(HEAD), file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="keel-http-load-") as tmpdir:
        tmp = Path(tmpdir)
        for backend in args.backends:
            for workers in args.workers:
                for users in args.users:
                    for length in args.lengths:
                        cell: Cell = (backend, workers, users, length)
                        results: dict[str, Result] = {}
                        for name in args.impls:
                            r = await run_impl(IMPLS[name], *cell, tmp, args)
                            results[name] = r
                            print("  " + progress(cell, r), file=sys.stderr)
                        cells.append((cell, results))
                        print(md_row(row(cell, results)), file=sys.stderr, flush=True)
    print(
        f"\nHTTP load, {args.seconds:g} s measured after {args.warmup:g} s warm-up per run; "
        "turns/s counts 200 answers; latencies of those, in ms.\n"
    )
    print(md_table(HEAD, [row(c, rs) for c, rs in cells]))
    print("\nDetails (errors: non-2xx status, timeout or connection error):\n")
    print(md_table(DETAIL_HEAD, [detail_row(c, r) for c, rs in cells for r in rs.values()]))


def run(coro: Coroutine[Any, Any, None]) -> None:
    try:
        import uvloop
    except ImportError:
        asyncio.run(coro)
        return
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        runner.run(coro)


if __name__ == "__main__":
    run(main())
