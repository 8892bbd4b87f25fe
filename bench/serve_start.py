"""How long `keel serve` takes to answer, and until every worker is ready, by worker count.

Starts `keel serve --workers N` on a fresh SQLite database (the offline model) for each N and
prints, per start, the seconds until /healthz first answers and until the last worker has opened
its stores (each worker logs ``topic_embeddings_loaded`` as its start-up ends), then the medians.

    python bench/serve_start.py --workers 1,2,4 --runs 3
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

KEEL = Path(sys.executable).with_name("keel")
WAIT_SECONDS = 120.0
READY = b"topic_embeddings_loaded"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def one_start(data: Path, workers: int) -> tuple[float, float]:
    """Seconds to the first /healthz answer and to the last worker's start-up, for one start."""
    port = free_port()
    env = {**os.environ, "XDG_DATA_HOME": str(data), "KEEL_ENV_FILE": "", "KEEL_PORT": str(port)}
    env.pop("KEEL_DATABASE_URL", None)
    started = time.monotonic()
    process = subprocess.Popen(
        [str(KEEL), "serve", "--workers", str(workers)], stderr=subprocess.PIPE, env=env
    )
    ready: list[float] = []

    def read_log() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            if READY in line:
                ready.append(time.monotonic())

    threading.Thread(target=read_log, daemon=True).start()
    try:
        answered = None
        while time.monotonic() - started < WAIT_SECONDS:
            if answered is None:
                try:
                    if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).is_success:
                        answered = time.monotonic()
                except httpx.TransportError:
                    pass
            if answered is not None and len(ready) >= workers:
                return answered - started, max(ready[:workers]) - started
            time.sleep(0.05)
        raise TimeoutError(f"{workers} workers not ready in {WAIT_SECONDS} s")
    finally:
        process.terminate()
        process.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        one_start(Path(folder), 1)  # makes the database: every start after opens one
        for workers in (int(n) for n in args.workers.split(",")):
            first, last = [], []
            for n in range(args.runs):
                answer, all_ready = one_start(Path(folder), workers)
                first.append(answer)
                last.append(all_ready)
                print(
                    f"{workers} workers, run {n + 1}: /healthz {answer:.2f} s, "
                    f"every worker ready {all_ready:.2f} s"
                )
            print(
                f"{workers} workers, median of {args.runs}: /healthz "
                f"{statistics.median(first):.2f} s, every worker ready "
                f"{statistics.median(last):.2f} s"
            )


if __name__ == "__main__":
    main()
