"""Telegram chats and their conversations: the ``keel_telegram_chats`` table.

Each member of a Telegram chat (a private chat has one, a group many) has one active
conversation there, kept here so a restarted bot continues where people were. The row also holds
the last update the bot answered for that member (an update Telegram delivers again after a
restart is not answered twice) and the message whose Yes / No buttons wait for an answer (they are
taken away once it is answered, by a button or typed). Rows go with their conversation. Used by
``keel.api.telegram``.
"""

from __future__ import annotations

from dataclasses import dataclass

from keel.checkpoints.clock import Clock, utcnow
from keel.checkpoints.database import Database


@dataclass(frozen=True)
class ChatMember:
    """One member of one chat, as the bot knows them."""

    conversation_id: str
    """The active conversation."""
    answered_update_id: int | None
    """The last update answered (None: none yet in this conversation)."""
    question_message_id: int | None
    """The message whose Yes / No buttons are still shown."""


class TelegramChats:
    """Which conversation each chat member talks in, and what the bot answered them."""

    def __init__(self, db: Database, clock: Clock = utcnow) -> None:
        """Work on the app tables of ``db``, stamping rows with ``clock``."""
        self.db = db
        self.clock = clock

    async def get(self, chat_id: int, user_id: int) -> ChatMember | None:
        """The member's row, if the bot talked with them in this chat."""
        row = await self.db.fetchone(
            "SELECT conversation_id, answered_update_id, question_message_id "
            "FROM keel_telegram_chats WHERE chat_id = :chat AND telegram_user_id = :user",
            {"chat": chat_id, "user": user_id},
        )
        if row is None:
            return None
        return ChatMember(
            str(row["conversation_id"]), row["answered_update_id"], row["question_message_id"]
        )

    async def activate(self, chat_id: int, user_id: int, conversation_id: str) -> None:
        """Make ``conversation_id`` the member's active conversation in the chat."""
        await self.db.execute(
            "INSERT INTO keel_telegram_chats (chat_id, telegram_user_id, conversation_id, "
            "updated_at) VALUES (:chat, :user, :c, :now) "
            "ON CONFLICT (chat_id, telegram_user_id) DO UPDATE SET conversation_id = :c, "
            "question_message_id = NULL, updated_at = :now",
            {"chat": chat_id, "user": user_id, "c": conversation_id, "now": self._now()},
        )

    async def answered(
        self, chat_id: int, user_id: int, update_id: int, question_message_id: int | None
    ) -> None:
        """Note that ``update_id`` was answered, leaving buttons on ``question_message_id``."""
        await self.db.execute(
            "UPDATE keel_telegram_chats SET answered_update_id = :u, question_message_id = :q, "
            "updated_at = :now WHERE chat_id = :chat AND telegram_user_id = :user",
            {
                "chat": chat_id,
                "user": user_id,
                "u": update_id,
                "q": question_message_id,
                "now": self._now(),
            },
        )

    def _now(self) -> object:
        return self.db.time(self.clock())
