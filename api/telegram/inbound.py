"""What the bot checks of an update before it answers: its name, its sender, its text.

``said_of`` names what an update says for good: a message by its chat and message id, a button
press by its query id (a message or press Telegram delivers again has the same name; update ids
are no such name, since Telegram starts them from a random number after a week without updates).
``forged`` tells a private-chat update whose sender is not the chat's owner, which Telegram never
sends. ``refusal`` applies the HTTP API's rules for a message (``NewMessage`` and
KEEL_MAX_MESSAGE_CHARS) to a message's text, with the reason in words; ``loggable`` makes such a
text fit for a log line. Used by
``keel.api.telegram.front``.
"""

from __future__ import annotations

from pydantic import ValidationError
from telegram import Chat, Update

from keel.api.errors import APIError, check_size
from keel.api.message_schemas import NewMessage


class UpdateUnderWay(RuntimeError):
    """The same message or press is being answered already (Telegram sent it again meanwhile)."""

    def __init__(self, said: str) -> None:
        """Name the message or press."""
        super().__init__(f"{said} is being answered already")


def said_of(update: Update) -> tuple[int, str] | None:
    """``(chat id, name)`` of the message or press in ``update``; None for anything else."""
    if update.callback_query is not None:
        query = update.callback_query
        message = query.message
        return (message.chat.id if message is not None else 0), f"button:{query.id}"
    if update.message is not None and update.message.from_user is not None:
        return update.message.chat_id, f"message:{update.message.message_id}"
    return None


def forged(chat: Chat, user_id: int) -> bool:
    """A private chat's update from someone other than its owner (a private chat's id is theirs)."""
    return chat.type == Chat.PRIVATE and chat.id != user_id


def loggable(text: str) -> str:
    """``text`` with what a log line cannot hold (lone surrogates, NUL) written as escapes."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8").replace("\x00", "\\x00")


def refusal(text: str, max_chars: int) -> str | None:
    """Why the HTTP API would refuse ``text`` as a message, in words; None when it would take it."""
    try:
        check_size(max_chars, text)
        NewMessage.model_validate({"content": text})
    except APIError as exc:
        return exc.message
    except ValidationError as exc:
        error = exc.errors()[0]
        reason = error.get("ctx", {}).get("error")
        return str(reason or error["msg"])
    return None
