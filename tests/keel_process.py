"""Running the real `keel` command as a child process in tests."""

from __future__ import annotations

import itertools
import os
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KEEL = [sys.executable, "-c", "from keel.api.cli import app; app()"]

PORTS_FROM, PORTS_EACH = 20000, 1500
"""The ports a test process gives its servers: below the kernel's ephemeral range (32768 on),
which client connections draw from, and a block of ``PORTS_EACH`` for each of pytest-xdist's
processes, so a port a test holds for a server it restarts is never handed to another."""
_WORKER = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)
_ports = itertools.cycle(
    range(PORTS_FROM + _WORKER * PORTS_EACH, PORTS_FROM + (_WORKER + 1) * PORTS_EACH)
)


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on, from this process's own block."""
    while True:
        port = next(_ports)
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port


def keel_env(database_url: str, **extra: str) -> dict[str, str]:
    env = {**os.environ, "KEEL_DATABASE_URL": database_url, "PYTHONUNBUFFERED": "1", **extra}
    env.pop("OPENAI_API_KEY", None)
    env.pop("KEEL_PAUSE_AT", None) if "KEEL_PAUSE_AT" not in extra else None
    return env


def run_keel(database_url: str, args: list[str], stdin: str = "", **extra: str):
    return subprocess.run(
        [*KEEL, *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=keel_env(database_url, **extra),
        timeout=180,
        cwd=ROOT,
    )


def start_keel(database_url: str, args: list[str], **extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*KEEL, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=keel_env(database_url, **extra),
        cwd=ROOT,
    )
