"""A checkpoint read answered from memory is the one the database would give, object for object.

Every ``aget_tuple`` of the service's saver is made twice: as keel makes it (from memory while a
turn holds the conversation), and straight from the database; the two must be equal in every
field, through tool turns, a confirmation and its answer, a stop while a question waits, a reset
and a two-step request. Reads must also come from memory at all (else the test proves nothing).
"""

from __future__ import annotations

from typing import Any

import pytest

from keel.api.service import open_service
from keel.checkpoints.newest import NewestKept
from keel.graphs.settings import Settings
from keel.tools.tasks.todo import TODO_TOOLS
from tests.conftest import database_url_for


@pytest.fixture(params=["sqlite", "postgres"])
def url(request: pytest.FixtureRequest, tmp_path) -> str:
    return database_url_for(request.param, request, tmp_path)


def plain(value: Any) -> Any:
    """``value`` as plain data, for comparing (messages by their fields)."""
    if hasattr(value, "model_dump"):
        return {"__type__": type(value).__name__, **plain(value.model_dump())}
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


async def test_reads_from_memory_equal_reads_from_the_database(url, monkeypatch):
    async with open_service(Settings(database_url=url), TODO_TOOLS) as service:
        saver = service.backend.saver
        assert isinstance(saver, NewestKept)
        base = next(c for c in type(saver).__mro__[1:] if c is not NewestKept and "aput" in vars(c))
        from_database = base.aget_tuple
        counts = {"reads": 0, "database reads": 0, "differing": 0}

        async def counted(self: Any, config: Any) -> Any:
            counts["database reads"] += 1
            return await from_database(self, config)

        monkeypatch.setattr(base, "aget_tuple", counted)
        keel_read = saver.aget_tuple

        async def both(config: Any) -> Any:
            mine = await keel_read(config)
            theirs = await from_database(saver, config)
            counts["reads"] += 1
            if (mine is None) != (theirs is None) or plain(mine) != plain(theirs):
                counts["differing"] += 1
            return mine

        saver.aget_tuple = both  # type: ignore[method-assign]
        cid = (await service.conversations.create("u"))["conversation_id"]
        for text in ("Add bread", "Add eggs", "Delete task 1", "yes", "Rename task 2 to toast"):
            await service.turns.take(cid, "u", text)
        stopped = await service.turns.start(cid, "u", "yes")  # the rename's answer, stopped
        service.turns.stop(cid)
        await stopped
        await service.turns.take(cid, "u", "Add jam")
        await service.turns.take(cid, "u", "", command={"command": "reset"})
        for text in ("Add tea and then delete task 3", "yes", "Show all"):
            await service.turns.take(cid, "u", text)
        await service.retention.aclose()

    assert counts["differing"] == 0, counts
    assert counts["reads"] - counts["database reads"] >= 10, counts  # read from memory, mostly
