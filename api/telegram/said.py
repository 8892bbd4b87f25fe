"""Who said what where in Telegram: the keel user of a Telegram user, a message or press named
for good, and a command read from a message's text.
"""  # noqa: D205

from __future__ import annotations

from dataclasses import dataclass


def keel_user(telegram_user_id: int) -> str:
    """The keel user of a Telegram user (no API key's user can be named so: keys have no colon)."""
    return f"telegram:{telegram_user_id}"


@dataclass(frozen=True)
class Said:
    """Who said what where: the chat, its member, the message or press, what to reply to."""

    chat_id: int
    user_id: int
    name: str
    """The message or press, named for good (``keel.api.telegram.inbound.said_of``)."""
    reply_to: int | None
    """The message the answer replies to (in groups), or None."""

    @property
    def user(self) -> str:
        """The keel user."""
        return keel_user(self.user_id)

    @property
    def key(self) -> str:
        """The idempotency key of the turn it runs."""
        return f"telegram:{self.chat_id}:{self.name}"


def command_of(text: str, username: str | None) -> tuple[str | None, str]:
    """``("reset", "")`` for "/reset" or "/reset@thisbot"; ``(None, text)`` for a plain message.

    A command addressed to another bot ("/reset@otherbot") is ``("", text)``: not for us.
    """
    if not text.startswith("/"):
        return None, text
    head, _, rest = text[1:].partition(" ")
    name, _, bot = head.partition("@")
    if bot and username and bot.lower() != username.lower():
        return "", text
    return name.lower(), rest.strip()
