"""Who owns which conversation: the ``keel_conversations`` table.

A conversation id is a UUIDv4 that belongs to exactly one user; another user's id reads as
unknown. Callers (the CLI, the API) create, list and delete conversations here. Every check that
answers a client reads the table (``require``); a turn checks in the statement that takes its
lock (``keel.checkpoints.locks``), so a conversation deleted by any process is gone at once for
all of them. Only the graph's own claim on a thread (``claim``, at every node) trusts an owner
read a short while ago. Deleting removes everything of the conversation in one transaction: its
checkpoints and backups (when they live in this database), log, topics, keyed requests, the
Telegram chats it is active in and the conversation itself; the user's tasks stay.
"""

from __future__ import annotations

import time
import uuid
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from keel.checkpoints.clock import Clock, utcnow
from keel.checkpoints.database import Database, read_time
from keel.checkpoints.messages import COMMAND
from keel.checkpoints.process_locks import Found
from keel.checkpoints.saver_internals import thread_tables
from keel.checkpoints.text_rules import one_line

OWNERS_CACHED = 10_000
OWNER_SECONDS = 30.0
"""How long the graph's claim trusts an owner it read (the API never trusts a cached owner)."""
PREVIEW_CHARS = 100
NAME_CHARS = 200
"""The longest name a conversation can be given."""
LISTED = (
    "SELECT * FROM (SELECT c.id, c.created_at, c.name, "
    "(SELECT m.created_at FROM keel_messages m WHERE m.conversation_id = c.id "
    f"AND m.role <> '{COMMAND}' ORDER BY m.id DESC LIMIT 1) AS last_message_at, "
    f"(SELECT substr(m.content, 1, {PREVIEW_CHARS}) FROM keel_messages m "
    "WHERE m.conversation_id = c.id AND m.role = 'user' ORDER BY m.id LIMIT 1) AS title, "
    f"(SELECT substr(m.content, 1, {PREVIEW_CHARS}) FROM keel_messages m "
    "WHERE m.conversation_id = c.id AND m.role IN ('user', 'assistant') "
    "ORDER BY m.id DESC LIMIT 1) AS preview "
    "FROM keel_conversations c WHERE c.user_id = :user{only}) AS listed "
    "ORDER BY coalesce(last_message_at, created_at) DESC, id LIMIT :limit OFFSET :offset"
)
MAX_SEARCH_WORDS = 10
"""The most different words one search looks for (each is one more scan of the messages)."""
MATCHING = (
    " AND ({fold}(coalesce(c.name, '')) LIKE {fold}(:{word}) ESCAPE '!' OR EXISTS (SELECT 1 "
    "FROM keel_messages m WHERE m.conversation_id = c.id AND m.role IN ('user', 'assistant') "
    "AND {fold}(m.content) LIKE {fold}(:{word}) ESCAPE '!'))"
)
"""Conversations whose name, or a message of the user or keel, holds one word searched for."""
ONE = " AND c.id = :id"
FOUND = "SELECT user_id FROM keel_conversations WHERE id = :id"
FOUND_WITH_NEWEST = (
    "SELECT user_id, (SELECT checkpoint_id FROM checkpoints WHERE thread_id = :id "
    "AND checkpoint_ns = '' ORDER BY checkpoint_id DESC LIMIT 1) AS newest "
    "FROM keel_conversations WHERE id = :id"
)
"""What a turn reads of its conversation (``read_found``), with the newest checkpoint where the
saver's ``checkpoints`` table is in keel's database (LangGraph's SQL savers)."""
ERASED = (
    "keel_messages",
    "keel_topics",
    "keel_backups",
    "keel_requests",
    "keel_telegram_chats",
)
"""keel's tables with rows of a conversation, deleted with it (the tasks are the user's)."""


class ConversationNotFound(LookupError):
    """No conversation with this id belongs to this user."""

    code = "conversation_not_found"

    def __init__(self, conversation_id: str) -> None:
        """Name the id that was asked for."""
        super().__init__(f"conversation {conversation_id} not found")


class TooManyWords(ValueError):
    """A search for more different words than ``MAX_SEARCH_WORDS``."""


def search_words(text: str | None) -> list[str]:
    """The different words of a search, in order; TooManyWords past ``MAX_SEARCH_WORDS``."""
    words = list(dict.fromkeys(text.split())) if text else []
    if len(words) > MAX_SEARCH_WORDS:
        raise TooManyWords(f"holds {len(words)} different words; the most is {MAX_SEARCH_WORDS}")
    return words


def _matching(fold: str, words: list[str], params: dict[str, Any]) -> str:
    """The condition that each of ``words`` is in the conversation (patterns put in ``params``)."""
    where = ""
    for n, word in enumerate(words):
        params[f"w{n}"] = _like(word)
        where += MATCHING.format(fold=fold, word=f"w{n}")
    return where


def _like(word: str) -> str:
    """A LIKE pattern for ``word`` anywhere, its own % and _ taken literally."""
    escaped = word.replace("!", "!!").replace("%", "!%").replace("_", "!_")
    return f"%{escaped}%"


def _one_line(text: str | None) -> str | None:
    """A name or a message's start as listed (``one_line``; a NUL an older keel stored dropped)."""
    return one_line(text.replace("\x00", "")) or None if text else None


def _listed(row: Any) -> dict[str, Any]:
    last = row["last_message_at"]
    return {
        "conversation_id": row["id"],
        "created_at": read_time(row["created_at"]).isoformat(),
        "last_message_at": read_time(last).isoformat() if last else None,
        "title": _one_line(row["name"]) or _one_line(row["title"]),
        "name": _one_line(row["name"]),
        "preview": _one_line(row["preview"]),
    }


class ConversationStore:
    """Create, list and delete conversations, and check who they belong to."""

    def __init__(
        self, db: Database, clock: Clock = utcnow, saver: BaseCheckpointSaver | None = None
    ) -> None:
        """Work on the app tables of ``db``, stamping rows with ``clock``.

        ``saver``: the checkpointer; where its tables are in ``db``, a turn reads the newest
        checkpoint with the conversation's row (``read_found``).
        """
        self.db = db
        self.clock = clock
        self._owners: OrderedDict[str, tuple[str, float]] = OrderedDict()
        self._found = FOUND_WITH_NEWEST if thread_tables(saver, db.dialect) else FOUND

    def _remember(self, conversation_id: str, user_id: str) -> None:
        self._owners[conversation_id] = (user_id, time.monotonic() + OWNER_SECONDS)
        self._owners.move_to_end(conversation_id)
        if len(self._owners) > OWNERS_CACHED:
            self._owners.popitem(last=False)

    async def create(self, user_id: str, conversation_id: str | None = None) -> dict[str, str]:
        """Create a conversation for ``user_id`` (a new UUIDv4 unless one is given)."""
        cid = conversation_id or str(uuid.uuid4())
        now = self.clock()
        await self.db.execute(
            "INSERT INTO keel_conversations (id, user_id, created_at) VALUES (:id, :user, :at)",
            {"id": cid, "user": user_id, "at": self.db.time(now)},
        )
        self._remember(cid, user_id)
        return {"conversation_id": cid, "created_at": now.isoformat()}

    async def list(
        self, user_id: str, limit: int = 100, offset: int = 0, words: str | None = None
    ) -> list[dict[str, Any]]:
        """The user's conversations, the most recently active first, with title and preview.

        With ``words``, only those whose name or messages of the user or keel hold every one of
        them, in any order and any case (``search_words``: TooManyWords past the most).
        """
        params: dict[str, Any] = {"user": user_id, "limit": limit, "offset": offset}
        only = _matching(self.db.fold, search_words(words), params)
        rows = await self.db.fetch(LISTED.format(only=only), params)
        return [_listed(r) for r in rows]

    async def listed(self, conversation_id: str, user_id: str) -> dict[str, Any] | None:
        """One of the user's conversations as the list shows it (None: no such one)."""
        params = {"id": conversation_id, "user": user_id, "limit": 1, "offset": 0}
        rows = await self.db.fetch(LISTED.format(only=ONE), params)
        return _listed(rows[0]) if rows else None

    async def rename(self, conversation_id: str, name: str | None) -> None:
        """Give the conversation ``name``, cleaned by ``one_line`` (None or blank: named by its
        first message again); UnstorableText when it holds a NUL or a lone surrogate.
        """  # noqa: D205
        cleaned = one_line(name)[:NAME_CHARS].rstrip() if name else ""
        await self.db.execute(
            "UPDATE keel_conversations SET name = :name WHERE id = :id",
            {"id": conversation_id, "name": cleaned or None},
        )

    async def owner(self, conversation_id: str) -> str | None:
        """The owner of ``conversation_id`` (None: no such conversation), read a while ago."""
        known = self._owners.get(conversation_id)
        if known is not None and known[1] > time.monotonic():
            return known[0]
        return await self.read_owner(conversation_id)

    async def read_owner(self, conversation_id: str) -> str | None:
        """The owner of ``conversation_id`` as the table has it now (None: no such one)."""
        row = await self.db.fetchone(
            "SELECT user_id FROM keel_conversations WHERE id = :id", {"id": conversation_id}
        )
        owner = str(row["user_id"]) if row is not None else None
        self.noted(conversation_id, owner)
        return owner

    async def read_found(self, conversation_id: str) -> Found:
        """What a turn reads of the conversation as it takes it, in one statement: the owner and,
        where the checkpoints are in this database, the newest checkpoint.
        """  # noqa: D205
        row = await self.db.fetchone(self._found, {"id": conversation_id})
        owner = str(row["user_id"]) if row is not None else None
        self.noted(conversation_id, owner)
        if row is None:
            return Found(None)
        newest_read = self._found is FOUND_WITH_NEWEST
        newest = row["newest"] if newest_read else None
        return Found(owner, newest, newest_read)

    def noted(self, conversation_id: str, owner: str | None) -> None:
        """Remember an owner read from the table (None: the conversation is gone)."""
        if owner is None:
            self._owners.pop(conversation_id, None)
        else:
            self._remember(conversation_id, owner)

    async def claim(self, conversation_id: str, user_id: str) -> None:
        """Check that ``user_id`` owns the conversation, making it theirs when nobody does.

        A thread that a LangGraph client started (Studio, the SDK) becomes the acting user's
        conversation on its first run; another user's raises ConversationNotFound.
        """
        owner = await self.owner(conversation_id)
        if owner is None:
            await self.db.execute(
                "INSERT INTO keel_conversations (id, user_id, created_at) VALUES (:id, :user, :at) "
                "ON CONFLICT (id) DO NOTHING",
                {"id": conversation_id, "user": user_id, "at": self.db.time(self.clock())},
            )
            owner = await self.owner(conversation_id)
        if owner != user_id:
            raise ConversationNotFound(conversation_id)

    async def require(self, conversation_id: str, user_id: str) -> None:
        """Raise ConversationNotFound unless ``user_id`` owns ``conversation_id`` (read now).

        Another user's conversation takes the same one lookup as an unknown one: timing tells
        nothing.
        """
        if await self.read_owner(conversation_id) != user_id:
            raise ConversationNotFound(conversation_id)

    async def delete(
        self, conversation_id: str, saver: BaseCheckpointSaver | None = None
    ) -> Sequence[str]:
        """Delete the conversation and everything of it, in one transaction.

        The checkpoints of the conversation and of its backups go in the same transaction when
        ``saver`` keeps them in this database; otherwise the thread ids are returned for the
        caller to delete with its saver (the in-memory one).
        """
        params = {"c": conversation_id}
        tables = thread_tables(saver, self.db.dialect)
        threads = "thread_id = :c OR thread_id IN (SELECT backup_id FROM keel_backups " + (
            "WHERE conversation_id = :c)"
        )
        async with self.db.transaction() as tx:
            backups = await tx.fetch(
                "SELECT backup_id FROM keel_backups WHERE conversation_id = :c", params
            )
            for table in tables:
                await tx.execute(f"DELETE FROM {table} WHERE {threads}", params)
            for table in ERASED:
                await tx.execute(f"DELETE FROM {table} WHERE conversation_id = :c", params)
            await tx.execute("DELETE FROM keel_conversations WHERE id = :c", params)
        self._owners.pop(conversation_id, None)
        if tables:
            return []
        return [conversation_id, *(str(b["backup_id"]) for b in backups)]
