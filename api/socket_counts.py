"""The WebSockets each user holds open on one server, counted across its workers.

``KEEL_WS_PER_USER`` bounds them per server, not per worker process: with ``keel serve --workers N``
the workers share the server's own directory (``Settings.metrics_dir``), where each open socket is
a file named after its worker's pid in its user's folder, taken under that folder's lock; a socket
of a worker that died is not counted (its pid is gone) and its file is removed by the next count.
One process alone counts in memory. A count and its lock run in a worker thread, off the event loop.
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import os
import uuid
from collections import Counter
from pathlib import Path

from keel.api.serving import is_alive

FOLDER = "websockets"
"""The folder of the server's directory where the workers count their sockets."""


class SocketCounts:
    """Open sockets per user: ``take`` one when there is room, ``give_back`` it when it closes."""

    def __init__(self, directory: str | None) -> None:
        """Count in ``directory`` (shared by a server's workers), or in memory without one."""
        self.folder = Path(directory) / FOLDER if directory else None
        self.counts: Counter[str] = Counter()

    async def take(self, user: str, limit: int) -> str | None:
        """A ticket for one more socket of ``user``; None when they hold ``limit`` already."""
        if self.folder is None:
            if self.counts[user] >= limit:
                return None
            self.counts[user] += 1
            return user
        return await asyncio.to_thread(_take, self.folder / _folder_of(user), limit)

    def give_back(self, user: str, ticket: str) -> None:
        """The socket of ``ticket`` closed (one file removed: done at once, even when cancelled)."""
        if self.folder is None:
            self.counts[user] -= 1
            if not self.counts[user]:
                del self.counts[user]
            return
        Path(ticket).unlink(missing_ok=True)


def _folder_of(user: str) -> str:
    """A user's folder name: their id's digest (any id is a safe file name that way)."""
    return hashlib.sha256(user.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _take(folder: Path, limit: int) -> str | None:
    """A ticket file in ``folder`` when fewer than ``limit`` live ones are there."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one worker counts and adds at a time
        live = 0
        for ticket in folder.glob("*.socket"):
            if is_alive(int(ticket.name.split("-", 1)[0])):
                live += 1
            else:  # its worker died with the socket open
                ticket.unlink(missing_ok=True)
        if live >= limit:
            return None
        ticket = folder / f"{os.getpid()}-{uuid.uuid4().hex}.socket"
        ticket.touch()
        return str(ticket)
