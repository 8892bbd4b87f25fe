"""Telegram chats and their conversations: the ``keel_telegram_chats`` table and what was answered.

Each member of a Telegram chat (a private chat has one, a group many) has one active
conversation there, kept here so a restarted bot continues where people were, with the message
whose Yes / No buttons wait for an answer (they are taken away once it is answered, by a button or
typed). Member rows go with their conversation. ``keel_telegram_answered`` notes, per chat, each
message and button press the bot answered, so one Telegram delivers again (after a restart, a lost
webhook answer) is not answered twice. It is kept for ``KEPT_FOR``: Telegram keeps an update it
could not deliver for 24 hours at most. Update ids are no record of it: Telegram numbers them in
order, but starts from a random number after a week without updates. Used by
``keel.api.telegram``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from keel.checkpoints.clock import Clock, utcnow
from keel.checkpoints.database import Database

KEPT_FOR = timedelta(days=2)
"""How long an answered message or press is remembered (Telegram redelivers within a day)."""


@dataclass(frozen=True)
class ChatMember:
    """One member of one chat, as the bot knows them."""

    conversation_id: str
    """The active conversation."""
    question_message_id: int | None
    """The message whose Yes / No buttons are still shown."""


class TelegramChats:
    """Which conversation each chat member talks in, and what the bot answered in each chat."""

    def __init__(self, db: Database, clock: Clock = utcnow) -> None:
        """Work on the app tables of ``db``, stamping rows with ``clock``."""
        self.db = db
        self.clock = clock

    async def get(self, chat_id: int, user_id: int) -> ChatMember | None:
        """The member's row, if the bot talked with them in this chat."""
        row = await self.db.fetchone(
            "SELECT conversation_id, question_message_id "
            "FROM keel_telegram_chats WHERE chat_id = :chat AND telegram_user_id = :user",
            {"chat": chat_id, "user": user_id},
        )
        if row is None:
            return None
        return ChatMember(str(row["conversation_id"]), row["question_message_id"])

    async def talking_in(self, conversation_id: str) -> list[tuple[int, int]]:
        """The chats and members whose active conversation is ``conversation_id``."""
        rows = await self.db.fetch(
            "SELECT chat_id, telegram_user_id FROM keel_telegram_chats WHERE conversation_id = :c",
            {"c": conversation_id},
        )
        return [(int(r["chat_id"]), int(r["telegram_user_id"])) for r in rows]

    async def activate(self, chat_id: int, user_id: int, conversation_id: str) -> None:
        """Make ``conversation_id`` the member's active conversation in the chat."""
        await self.db.execute(
            "INSERT INTO keel_telegram_chats (chat_id, telegram_user_id, conversation_id, "
            "updated_at) VALUES (:chat, :user, :c, :now) "
            "ON CONFLICT (chat_id, telegram_user_id) DO UPDATE SET conversation_id = :c, "
            "question_message_id = NULL, updated_at = :now",
            {"chat": chat_id, "user": user_id, "c": conversation_id, "now": self._now()},
        )

    async def was_answered(self, chat_id: int, said: str) -> bool:
        """The bot answered ``said`` (a message or a press, see ``answered``) in the chat."""
        row = await self.db.fetchone(
            "SELECT 1 AS found FROM keel_telegram_answered WHERE chat_id = :chat AND said = :said",
            {"chat": chat_id, "said": said},
        )
        return row is not None

    async def answered(
        self, chat_id: int, user_id: int, said: str, question_message_id: int | None
    ) -> None:
        """Note ``said`` answered, leaving the member's buttons on ``question_message_id``.

        ``said`` names what was answered for good: a message by its id, a press by its query id.
        Notes older than ``KEPT_FOR`` are forgotten on the way.
        """
        now = self.clock()
        params = {
            "chat": chat_id,
            "user": user_id,
            "said": said,
            "q": question_message_id,
            "now": self.db.time(now),
            "expired": self.db.time(now - KEPT_FOR),
        }
        async with self.db.transaction() as tx:
            await tx.execute(
                "UPDATE keel_telegram_chats SET question_message_id = :q, updated_at = :now "
                "WHERE chat_id = :chat AND telegram_user_id = :user",
                params,
            )
            await tx.execute(
                "DELETE FROM keel_telegram_answered WHERE answered_at < :expired", params
            )
            await tx.execute(
                "INSERT INTO keel_telegram_answered (chat_id, said, answered_at) "
                "VALUES (:chat, :said, :now) ON CONFLICT DO NOTHING",
                params,
            )

    def _now(self) -> object:
        return self.db.time(self.clock())
