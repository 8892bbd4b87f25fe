"""The checkpointer factory: one URL in, a LangGraph checkpoint saver out.

``open_checkpointer(url)`` yields the saver of ``open_backend(url)``: ``memory`` gives an
``InMemorySaver``, ``sqlite:///path`` a ``LoopSqliteSaver`` (LangGraph's ``SqliteSaver``),
``postgresql://...`` an ``AsyncPostgresSaver`` on the process's psycopg pool, each keeping its
threads' newest checkpoints (``keel.checkpoints.retention.Pruned``). Used where only
checkpoints are needed (``keel db prune``, tests, notebooks).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from keel.checkpoints.backend import open_backend
from keel.checkpoints.retention import DEFAULT_KEEP, Pruned


@asynccontextmanager
async def open_checkpointer(url: str, keep: int = DEFAULT_KEEP) -> AsyncIterator[Pruned]:
    """Open the checkpoint saver named by ``url``, keeping ``keep`` checkpoints a thread.

    Raises:
        UnsupportedDatabaseURL: the scheme is not memory, sqlite or postgresql.
    """
    async with open_backend(url, keep=keep) as backend:
        yield backend.saver
