"""The message log: every user message, assistant reply and tool result, written once.

``keel_messages`` is append-only. Each row has a ``message_key`` unique within its conversation, so
writing the same message again (a node re-run after a crash, a retried flush) changes nothing; a
key that already holds another user's message is an error (``LogKeyTaken``), never skipped.
Rows carry the branch and turn that wrote them; a turn forked from an earlier checkpoint is moved
to a branch of its own as its first rows are written, and reads take the rows of one lineage
(``keel.checkpoints.branches``). Reads are bounded by an index on (conversation_id, topic_id, id):
a turn's reads cost the same at turn 1000 as at turn 10. A reset leaves a row of its own (role
``COMMAND``) where it happened: people are shown it, while the reads that make the conversation the
model and topic detection see leave it out. Written by the graph's nodes and the turn runner; read
by the context builder, topic detection and the API.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from keel.checkpoints.branches import MAIN, Lineage, TurnPlace
from keel.checkpoints.clock import Clock, utcnow
from keel.checkpoints.database import Database, Row, Session, read_json, read_time
from keel.checkpoints.message_rows import INSERT, NAMES, batch_insert

COMMAND = "command"
"""The role of a command's row (a reset's, holding its reply): no message of the conversation."""


class LogKeyTaken(RuntimeError):
    """A message key of the conversation already holds another user's message."""

    def __init__(self, conversation_id: str, key: str) -> None:
        """Name the conversation and the key."""
        super().__init__(f"message key {key!r} of conversation {conversation_id} is another user's")


@dataclass(frozen=True)
class LoggedMessage:
    """One row of the message log."""

    id: int
    key: str
    role: str
    content: str
    topic_id: str | None
    created_at: datetime
    tool_name: str | None = None
    tool_call_id: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    branch: str = MAIN
    turn: int | None = None
    from_checkpoint: str | None = None
    """For a turn's own message: the checkpoint the turn started from (None: not recorded)."""
    opens_turn: bool = False
    """The message a turn started with (a user's message)."""

    def as_dict(self) -> dict[str, Any]:
        """The row as JSON-ready data."""
        return {
            "id": self.id,
            "role": self.role,
            "content": self.content,
            "topic_id": self.topic_id,
            "created_at": self.created_at.isoformat(),
            "tool_name": self.tool_name,
            "tool_calls": self.tool_calls,
            "checkpoint_id": self.from_checkpoint,
        }


def _from_row(row: Row) -> LoggedMessage:
    return LoggedMessage(
        id=row["id"],
        key=row["message_key"],
        role=row["role"],
        content=row["content"],
        topic_id=row["topic_id"],
        created_at=read_time(row["created_at"]),
        tool_name=row["tool_name"],
        tool_call_id=row["tool_call_id"],
        tool_calls=read_json(row["tool_calls"]),
        branch=row["branch"],
        turn=row["turn"],
        from_checkpoint=row["from_checkpoint"],
        opens_turn=bool(row["opens_turn"]),
    )


@dataclass(frozen=True)
class Sibling:
    """A message sent from the same checkpoint as another: one branch of the conversation."""

    id: int
    content: str
    created_at: datetime
    branch: str
    turn: int | None


class MessageLog:
    """Append and read a conversation's messages."""

    def __init__(self, db: Database, clock: Clock = utcnow) -> None:
        """Work on the app tables of ``db``, stamping rows with ``clock``."""
        self.db = db
        self.clock = clock

    async def append(
        self,
        conversation_id: str,
        user_id: str,
        rows: list[dict[str, Any]],
        place: TurnPlace | None = None,
    ) -> str:
        """Write ``rows`` (message_key, role, content, topic_id, tool fields) in order, once.

        ``place`` is the turn that writes them (none: the main branch, no turn); a row with
        ``opens_turn`` is the turn's own message. Returns the branch the rows are on: ``place``'s,
        or the branch a forked turn was moved to (see ``_settle``).
        """
        branch = place.branch if place else MAIN
        if not rows:
            return branch
        now = self.db.time(self.clock())
        full = [
            {
                "conversation_id": conversation_id,
                "user_id": user_id,
                "created_at": now,
                "topic_id": None,
                "tool_name": None,
                "tool_call_id": None,
                "opens_turn": False,
                "from_checkpoint": None,
                **row,
                "tool_calls": self.db.json(row.get("tool_calls")),
                "branch": branch,
                "turn": place.turn if place else None,
            }
            for row in rows
        ]
        if await self._insert_batch(full, place) == len(full):  # one statement, most times
            return branch
        async with self.db.transaction() as tx:
            if await tx.executemany(INSERT, full) == len(full):
                return branch
            keys = [r["message_key"] for r in full]
            await self._check_keys(tx, conversation_id, user_id, keys)
            opening = next((r for r in full if r["opens_turn"]), None)
            if place is None or opening is None:
                return branch
            return await self._settle(tx, place, full, opening)

    async def _insert_batch(self, full: list[dict[str, Any]], place: TurnPlace | None) -> int:
        """Write the rows in one statement unless ``GUARD`` stops them; how many went in."""
        opening = next((r for r in full if r["opens_turn"]), None)
        params: dict[str, Any] = {
            "g_c": full[0]["conversation_id"],
            "g_u": full[0]["user_id"],
            "g_b": place.branch if place else MAIN,
            "g_t": place.turn if place and opening is not None else None,
            "g_k": opening["message_key"] if opening is not None else None,
        }
        for n, row in enumerate(full):
            params.update({f"r{n}_{name}": row[name] for name in NAMES})
        return await self.db.execute(batch_insert(self.db, len(full)), params)

    async def _settle(
        self, tx: Session, place: TurnPlace, rows: list[dict[str, Any]], opening: dict[str, Any]
    ) -> str:
        """The branch a turn's rows belong on, when its opening message was not written.

        Either the message was written before (a re-run: the turn stays where that run put it),
        or the turn's slot on its branch holds another turn's message: the turn is a fork, and
        starts ``place.fork``. This batch's rows (none of them visible yet) are then written
        there instead, in their order.
        """
        params = {"c": opening["conversation_id"], "k": opening["message_key"]}
        found = await tx.fetchone(
            "SELECT branch FROM keel_messages WHERE conversation_id = :c AND message_key = :k",
            params,
        )
        branch = found["branch"] if found else place.fork
        if branch == place.branch:
            return branch
        marks = ", ".join(f":k{n}" for n in range(len(rows)))
        await tx.execute(
            "DELETE FROM keel_messages WHERE conversation_id = :c AND branch = :b "
            f"AND message_key IN ({marks})",
            {
                **params,
                "b": place.branch,
                **{f"k{n}": r["message_key"] for n, r in enumerate(rows)},
            },
        )
        await tx.executemany(INSERT, [{**r, "branch": branch} for r in rows])
        return branch

    async def _check_keys(
        self, tx: Session, conversation_id: str, user_id: str, keys: list[str]
    ) -> None:
        """Raise LogKeyTaken when a key already written is another user's, not a re-run's."""
        marks = ", ".join(f":k{n}" for n in range(len(keys)))
        params = {"c": conversation_id, "u": user_id, **{f"k{n}": k for n, k in enumerate(keys)}}
        row = await tx.fetchone(
            "SELECT message_key FROM keel_messages WHERE conversation_id = :c AND user_id <> :u "
            f"AND message_key IN ({marks}) LIMIT 1",
            params,
        )
        if row is not None:
            raise LogKeyTaken(conversation_id, row["message_key"])

    async def last_message_at(
        self, conversation_id: str, lineage: Lineage | None = None
    ) -> datetime | None:
        """When the conversation's latest logged message (of ``lineage``, if given) was written."""
        where, params = self._where(conversation_id, None, lineage)
        row = await self.db.fetchone(
            f"SELECT created_at FROM keel_messages WHERE {where} AND role <> :command "
            "ORDER BY id DESC LIMIT 1",
            {**params, "command": COMMAND},
        )
        return read_time(row["created_at"]) if row else None

    async def recent(
        self,
        conversation_id: str,
        *,
        topic_id: str | None = None,
        limit: int = 20,
        exclude_roles: tuple[str, ...] = (),
        lineage: Lineage | None = None,
    ) -> list[LoggedMessage]:
        """The latest ``limit`` messages (of one topic, of one lineage, if given), oldest first;
        a command's row is none.
        """  # noqa: D205
        where, params = self._where(conversation_id, topic_id, lineage)
        for n, role in enumerate((COMMAND, *exclude_roles)):
            where += f" AND role <> :role{n}"
            params[f"role{n}"] = role
        rows = await self.db.fetch(
            f"SELECT * FROM keel_messages WHERE {where} ORDER BY id DESC LIMIT :limit",
            {**params, "limit": limit},
        )
        return [_from_row(r) for r in reversed(rows)]

    async def page(
        self,
        conversation_id: str,
        *,
        topic_id: str | None = None,
        newest_first: bool = False,
        cursor: int | None = None,
        limit: int = 1000,
        lineage: Lineage | None = None,
    ) -> list[LoggedMessage]:
        """One page of the log in id order (or newest first), starting past ``cursor``'s id.

        With ``lineage``, only its rows: the branch being viewed.
        """
        where, params = self._where(conversation_id, topic_id, lineage)
        if cursor is not None:
            where += " AND id < :cursor" if newest_first else " AND id > :cursor"
            params["cursor"] = cursor
        order = "DESC" if newest_first else "ASC"
        rows = await self.db.fetch(
            f"SELECT * FROM keel_messages WHERE {where} ORDER BY id {order} LIMIT :limit",
            {**params, "limit": limit},
        )
        return [_from_row(r) for r in rows]

    async def get(self, conversation_id: str, message_id: int) -> LoggedMessage | None:
        """One row of the conversation's log, by id."""
        row = await self.db.fetchone(
            "SELECT * FROM keel_messages WHERE conversation_id = :c AND id = :id",
            {"c": conversation_id, "id": message_id},
        )
        return _from_row(row) if row else None

    async def content_of(self, conversation_id: str, key: str) -> str | None:
        """The text logged under ``key`` in the conversation (a question as it was put), if any."""
        row = await self.db.fetchone(
            "SELECT content FROM keel_messages WHERE conversation_id = :c AND message_key = :k "
            "LIMIT 1",
            {"c": conversation_id, "k": key},
        )
        return str(row["content"]) if row else None

    async def siblings(
        self, conversation_id: str, checkpoints: list[str]
    ) -> dict[str, list[Sibling]]:
        """The turns' own messages sent from each of ``checkpoints``, oldest first."""
        if not checkpoints:
            return {}
        params: dict[str, Any] = {"c": conversation_id}
        names = []
        for n, checkpoint in enumerate(dict.fromkeys(checkpoints)):
            params[f"k{n}"] = checkpoint
            names.append(f":k{n}")
        rows = await self.db.fetch(
            "SELECT id, content, created_at, branch, turn, from_checkpoint FROM keel_messages "
            f"WHERE conversation_id = :c AND from_checkpoint IN ({', '.join(names)}) "
            "AND opens_turn ORDER BY id",
            params,
        )
        found: dict[str, list[Sibling]] = {}
        for r in rows:
            found.setdefault(r["from_checkpoint"], []).append(
                Sibling(r["id"], r["content"], read_time(r["created_at"]), r["branch"], r["turn"])
            )
        return found

    @staticmethod
    def _where(
        conversation_id: str, topic_id: str | None, lineage: Lineage | None
    ) -> tuple[str, dict[str, Any]]:
        """The rows of the conversation, of one topic, of one lineage (none: every branch's)."""
        params: dict[str, Any] = {"c": conversation_id}
        where = "conversation_id = :c"
        if topic_id is not None:
            where += " AND topic_id = :t"
            params["t"] = topic_id
        if lineage is not None:
            where += " AND " + lineage.where(params)
        return where, params
