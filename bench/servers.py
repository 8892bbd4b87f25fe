"""The two servers of the HTTP load bench and their databases: how to start, watch and stop each.

``keel serve`` and the plain LangGraph baseline (``bench/plain_server.py``), each a uvicorn process
group of its own on a free port, its output in a log file, on a fresh SQLite file or PostgreSQL
database. Used by ``bench/http_load.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import httpx
import psycopg

REPO = Path(__file__).resolve().parents[1]
READY_TIMEOUT = 60.0
STOP_TIMEOUT = 20.0


# --- the two servers ------------------------------------------------------------------------


@dataclass(frozen=True)
class Impl:
    """How to start one implementation and talk to it."""

    name: str
    env_var: str
    ready_path: str
    create_path: str
    message_path: str
    """With ``{cid}`` for the conversation id."""
    command: Callable[[int, int], list[str]]
    extra_env: dict[str, str] = field(default_factory=dict)


def keel_command(port: int, workers: int) -> list[str]:
    return [
        sys.executable,
        "-c",
        "from keel.api.cli import app; app()",
        "serve",
        "--port",
        str(port),
        "--workers",
        str(workers),
    ]


def plain_command(port: int, workers: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "uvicorn",
        "bench.plain_server:app",
        "--port",
        str(port),
        "--workers",
        str(workers),
        "--log-level",
        "warning",
    ]


IMPLS = {
    "keel": Impl(
        name="keel",
        env_var="KEEL_DATABASE_URL",
        ready_path="/readyz",
        create_path="/v1/conversations",
        message_path="/v1/conversations/{cid}/messages",
        command=keel_command,
        extra_env={"KEEL_LOG_LEVEL": "warning", "KEEL_LOG_FORMAT": "json"},
    ),
    "plain": Impl(
        name="plain",
        env_var="PLAIN_DATABASE_URL",
        ready_path="/healthz",
        create_path="/conversations",
        message_path="/conversations/{cid}/messages",
        command=plain_command,
    ),
}


class ServerFailed(Exception):
    """The server did not become ready (it exited, or timed out)."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def proc_cpu_seconds(pgid: int) -> float:
    """CPU seconds used so far by the live processes of process group ``pgid`` (Linux /proc)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        # after "pid (comm)": state ppid pgrp session tty tpgid flags minflt cminflt majflt
        # cmajflt utime stime
        if int(fields[2]) == pgid:
            total += int(fields[11]) + int(fields[12])
    return total / tick


class Server:
    """One server process (uvicorn and its workers, in a process group of their own)."""

    def __init__(self, impl: Impl, url: str, workers: int, log_path: Path) -> None:
        """Prepare to run ``impl`` on the database ``url``, logging to ``log_path``."""
        self.impl, self.url, self.workers, self.log_path = impl, url, workers, log_path
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start the process, its output appended to the log file."""
        env = {k: v for k, v in os.environ.items() if k not in ("KEEL_API_KEYS", "KEEL_HOST")}
        env.update(self.impl.extra_env)
        env[self.impl.env_var] = self.url
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                self.impl.command(self.port, self.workers),
                cwd=REPO,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    async def wait_ready(self, timeout: float = READY_TIMEOUT) -> float:
        """Seconds until the readiness endpoint answered 200; ServerFailed otherwise."""
        assert self.proc is not None
        start = time.perf_counter()
        async with httpx.AsyncClient(base_url=self.base, timeout=2.0) as client:
            while time.perf_counter() - start < timeout:
                if self.proc.poll() is not None:
                    raise ServerFailed(f"exited with status {self.proc.returncode}")
                with contextlib.suppress(httpx.HTTPError):
                    if (await client.get(self.impl.ready_path)).status_code == 200:
                        return time.perf_counter() - start
                await asyncio.sleep(0.2)
        raise ServerFailed(f"not ready after {timeout:.0f} s")

    def cpu_seconds(self) -> float:
        """CPU seconds used so far by uvicorn and its live workers."""
        return proc_cpu_seconds(self.proc.pid) if self.proc else 0.0

    def stop(self) -> None:
        """SIGTERM to uvicorn (it stops its workers); SIGKILL to the group if it hangs."""
        if self.proc is None:
            return
        pid = self.proc.pid
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
            try:
                self.proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                print(f"  {self.impl.name}: no exit after SIGTERM, killing", file=sys.stderr)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)  # workers left behind, if any
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(5)


# --- databases ------------------------------------------------------------------------------


def database_url(admin: str, name: str) -> str:
    parts = urlsplit(admin)
    return urlunsplit(parts._replace(path=f"/{name}"))


class FreshDatabase:
    """A new SQLite file or PostgreSQL database for one server."""

    def __init__(
        self, backend: str, impl: str, tmp: Path, pg_admin: str | None, keep: bool
    ) -> None:
        """Name it; ``create`` makes it."""
        self.backend, self.pg_admin, self.keep = backend, pg_admin or "", keep
        self.name = f"bench_http_{impl}_{uuid.uuid4().hex[:8]}"
        if backend == "sqlite":
            self.url = f"sqlite:///{tmp / self.name / 'bench.db'}"
        else:
            assert pg_admin
            self.url = database_url(pg_admin, self.name)

    def create(self) -> None:
        """Create the PostgreSQL database (SQLite makes its file on first use)."""
        if self.backend == "postgres":
            with psycopg.connect(self.pg_admin, autocommit=True) as conn:
                conn.execute(f'CREATE DATABASE "{self.name}"')

    def drop(self) -> None:
        """Drop the PostgreSQL database, unless asked to keep it."""
        if self.backend != "postgres" or self.keep:
            return
        try:
            with psycopg.connect(self.pg_admin, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')
        except psycopg.Error as exc:
            print(f"  could not drop database {self.name}: {exc}", file=sys.stderr)
