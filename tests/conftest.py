"""Shared fixtures: database backends (memory, SQLite, a throwaway PostgreSQL) and keel on them."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import get_type_hints

import langgraph.pregel._checkpoint as langgraph_checkpoints
import psycopg
import pytest

from keel.checkpoints.backend import open_backend
from keel.checkpoints.clock import Clock, utcnow
from keel.checkpoints.database import Database
from keel.checkpoints.messages import MessageLog
from keel.checkpoints.retention import Pruned
from keel.checkpoints.topics import TopicStore
from keel.graphs.builder import KeelGraph, served
from keel.graphs.resources import open_resources
from keel.graphs.result import TurnResult
from keel.graphs.run_turn import run_turn
from keel.nodes.run_context import KeelContext
from keel.nodes.state.schema import KeelState
from keel.tools.tasks.store import TaskStore
from keel.tools.tasks.todo import TODO_TOOLS
from tests.keel_process import free_port


def _pg_bin() -> Path:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    if not found:
        pytest.fail(
            "PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin: install them "
            "with `apt-get install -y postgresql` (.ci/run does this)."
        )
    return found[-1].parent


def _as_postgres(cmd: str) -> list[str]:
    if os.geteuid() == 0:
        return ["su", "postgres", "-s", "/bin/sh", "-c", cmd]
    return ["sh", "-c", cmd]


@dataclass
class PostgresCluster:
    """A throwaway PostgreSQL cluster: its admin URL, and a way to restart it."""

    url: str
    pg_ctl: str

    def restart(self) -> None:
        """Stop the server (fast: sessions are cut) and start it again."""
        subprocess.run(_as_postgres(f"{self.pg_ctl} -m fast -w restart >/dev/null"), check=True)


@contextmanager
def postgres_cluster() -> Iterator[PostgresCluster]:
    """A PostgreSQL cluster on a free port, stopped and removed afterwards."""
    bin_dir = _pg_bin()
    root = Path(tempfile.mkdtemp(prefix="keel-pg-"))
    if os.geteuid() == 0:
        shutil.chown(root, "postgres")
    root.chmod(0o700)
    data, port = root / "data", free_port()
    subprocess.run(
        _as_postgres(f"{bin_dir}/initdb -D {data} -A trust -U postgres >/dev/null"), check=True
    )
    opts = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off"
    pg_ctl = f"{bin_dir}/pg_ctl -D {data} -o '{opts}' -l {root}/log"
    subprocess.run(_as_postgres(f"{pg_ctl} -w start >/dev/null"), check=True)
    try:
        yield PostgresCluster(f"postgresql://postgres@127.0.0.1:{port}/postgres", pg_ctl)
    finally:
        subprocess.run(
            _as_postgres(f"{bin_dir}/pg_ctl -D {data} -m immediate -w stop >/dev/null"), check=False
        )
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session", autouse=True)
def own_settings_and_data(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A developer's own ``.env`` (an OpenAI key, a threshold) reaches neither the suite nor the
    processes it starts, and nothing the suite runs on the default database touches the user's
    data directory: it gets one of its own. A terminal the suite starts reads its own size.
    """  # noqa: D205
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KEEL_ENV_FILE", "")
        patch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("data-home")))
        for size in ("COLUMNS", "LINES"):  # pytest-xdist's workers set them; a pty has its own
            patch.delenv(size, raising=False)
        yield


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A throwaway PostgreSQL cluster on a free port; yields the admin URL."""
    with postgres_cluster() as cluster:
        yield cluster.url


def new_postgres_database(admin_url: str) -> str:
    """Create an empty database on the test server and return its URL."""
    name = f"keel_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return admin_url.rsplit("/", 1)[0] + f"/{name}"


def database_url_for(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh database of ``kind``: memory, a SQLite file, or a new PostgreSQL database."""
    if kind == "memory":
        return "memory"
    if kind == "sqlite":
        return f"sqlite:///{tmp_path / 'keel.db'}"
    return new_postgres_database(request.getfixturevalue("postgres_server"))


@dataclass
class Keel:
    """keel opened on one database: the compiled graph and a context factory."""

    graph: KeelGraph
    store: TaskStore
    url: str
    db: Database
    saver: Pruned

    def context(self, user_id: str = "local", clock: Clock = utcnow, **kw: object) -> KeelContext:
        """The run context of a turn, the way the API builds it; ``kw``: tunables or run parts."""
        tunables = {k: v for k, v in kw.items() if k in KeelContext.model_fields}
        parts = {k: v for k, v in kw.items() if k not in tunables}
        parts = {"store": self.store, "backups": None, **parts}
        run = open_resources(self.db, self.saver, clock=clock, **{"tools": TODO_TOOLS, **parts})
        return run.context(user_id, **tunables)

    async def say(self, cid: str, text: str, user_id: str = "local", **kw: object) -> TurnResult:
        """Run one turn of ``text`` on the conversation; ``kw`` as for ``context``."""
        return await run_turn(self.graph, cid, text, self.context(user_id, **kw))

    @property
    def messages(self) -> MessageLog:
        return MessageLog(self.db)

    async def count_messages(self, conversation_id: str) -> int:
        """How many messages the conversation's log holds."""
        row = await self.db.fetchone(
            "SELECT count(*) AS n FROM keel_messages WHERE conversation_id = :c",
            {"c": conversation_id},
        )
        return int(row["n"]) if row else 0

    @property
    def topics(self) -> TopicStore:
        return TopicStore(self.db)


@pytest.fixture
def messages_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every checkpoint stores ``messages`` whole, not as what its step added: a prune then keeps
    exactly the newest ``keep``, with no older checkpoint to rebuild them from. For tests of when
    and what retention prunes; ``tests/unit/test_saver_internals.py`` and ``test_checkpoints.py``
    test what it keeps of ``messages`` as keel stores it.
    """  # noqa: D205
    channel = get_type_hints(KeelState, include_extras=True)["messages"].__metadata__[0]
    monkeypatch.setattr(channel, "snapshot_frequency", 1)  # a step that writes it stores it
    monkeypatch.setattr(langgraph_checkpoints, "DELTA_MAX_SUPERSTEPS_SINCE_SNAPSHOT", 1)  # others


@pytest.fixture
async def keel(database_url: str) -> AsyncIterator[Keel]:
    async with open_backend(database_url) as backend:
        db = backend.db
        graph = served(checkpointer=backend.saver)
        yield Keel(graph, TaskStore(db), database_url, db, backend.saver)


@pytest.fixture
async def memory_keel() -> AsyncIterator[Keel]:
    async with open_backend("memory") as backend:
        db = backend.db
        graph = served(checkpointer=backend.saver)
        yield Keel(graph, TaskStore(db), "memory", db, backend.saver)


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def set(self, when: datetime) -> None:
        self.now = when

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(datetime(2026, 1, 6, 16, 25, tzinfo=UTC))
