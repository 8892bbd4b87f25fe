"""Talking to the Bot API: every call retried through rate limits and network trouble.

``Wire`` wraps python-telegram-bot's ``Bot`` (the API client only; keel runs its own update loop).
A 429 is waited out for as long as Telegram's ``retry_after`` says, a network error (a refused
connection, a timeout, a 5xx) is retried with a growing pause, and a request Telegram refuses (a
400, a blocked bot) is given up at once. ``send`` cuts a reply to Telegram's size and sends it as
plain text; ``typing`` keeps "typing..." shown while a turn runs. The bot's token is part of every
request's URL: ``redact`` takes it out of whatever is logged.
"""

from __future__ import annotations

import asyncio
import logging
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager, suppress
from datetime import timedelta
from typing import TypeVar

import structlog
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup, Message, ReplyParameters
from telegram.error import BadRequest, NetworkError, RetryAfter, TelegramError
from telegram.request import HTTPXRequest

from keel.api.telegram.texts import split_message

log = structlog.get_logger(__name__)
T = TypeVar("T")

ATTEMPTS = 12
"""Tries of one call through 429s and network errors (the pauses add up to a few minutes)."""
LONGEST_PAUSE = 30.0
TYPING_EVERY = 4.0
"""Telegram shows "typing..." for 5 s after each sendChatAction."""
Buttons = Sequence[Sequence[tuple[str, str]]]
"""Inline keyboard rows of (label, callback data)."""


def pause(attempt: int) -> float:
    """Seconds to wait before try ``attempt + 1`` after a network error: 0.5, 1, 2, ... 30."""
    return min(LONGEST_PAUSE, 0.5 * 2 ** (attempt - 1))


def retry_after(exc: RetryAfter) -> float:
    """The seconds Telegram asked to wait."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the int form is deprecated in favour of timedelta
        value = exc.retry_after
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


class Redacted(logging.Filter):
    """Takes a secret out of every log record of the standard library's loggers."""

    def __init__(self, secret: str) -> None:
        """Hide ``secret``."""
        super().__init__()
        self.secret = secret

    def filter(self, record: logging.LogRecord) -> bool:
        """Rewrite the record's message without the secret."""
        message = record.getMessage()
        if self.secret in message:
            record.msg, record.args = message.replace(self.secret, "<token>"), None
        return True


def new_bot(token: str, api_url: str) -> Bot:
    """A Bot API client whose requests go to ``{api_url}/bot{token}/{method}``."""
    for handler in logging.getLogger().handlers:
        handler.addFilter(Redacted(token))
    logging.getLogger("httpx").setLevel(logging.WARNING)  # it logs every URL at INFO
    return Bot(
        token,
        base_url=f"{api_url.rstrip('/')}/bot",
        request=HTTPXRequest(connection_pool_size=16, read_timeout=20, connect_timeout=10),
        get_updates_request=HTTPXRequest(read_timeout=10, connect_timeout=10),
    )


def markup(buttons: Buttons | None) -> InlineKeyboardMarkup | None:
    """The inline keyboard of ``buttons`` (None: no keyboard)."""
    if not buttons:
        return None
    return InlineKeyboardMarkup(
        [
            [InlineKeyboardButton(label, callback_data=data) for label, data in row]
            for row in buttons
        ]
    )


class Wire:
    """The Bot API, called with retries."""

    def __init__(self, bot: Bot) -> None:
        """Call the API through ``bot``."""
        self.bot = bot
        self.token = bot.token

    def redact(self, text: str) -> str:
        """``text`` without the bot's token."""
        return text.replace(self.token, "<token>")

    async def call(self, method: str, request: Callable[[], Awaitable[T]]) -> T:
        """Run ``request`` until it answers: 429s waited out, network errors retried."""
        for attempt in range(1, ATTEMPTS + 1):
            try:
                return await request()
            except RetryAfter as exc:
                wait = retry_after(exc)
                log.warning("telegram_rate_limited", method=method, retry_after=wait)
            except BadRequest:
                raise
            except NetworkError as exc:
                if attempt == ATTEMPTS:
                    raise
                wait = pause(attempt)
                log.warning(
                    "telegram_network_error", method=method, error=self.redact(str(exc)), wait=wait
                )
            await asyncio.sleep(wait)
        raise NetworkError(f"{method}: still rate limited after {ATTEMPTS} tries")

    async def send(
        self,
        chat_id: int,
        text: str,
        reply_to: int | None = None,
        buttons: Buttons | None = None,
    ) -> int:
        """Send ``text`` (in as many messages as it takes); the id of the last one sent.

        The first message answers ``reply_to``; the last carries the ``buttons``.
        """
        parts = split_message(text)
        sent = 0
        for n, part in enumerate(parts):
            sent = await self._send_one(
                chat_id,
                part,
                reply_to if n == 0 else None,
                markup(buttons) if n == len(parts) - 1 else None,
            )
        return sent

    async def _send_one(
        self,
        chat_id: int,
        text: str,
        reply_to: int | None,
        keyboard: InlineKeyboardMarkup | None,
    ) -> int:
        replying = ReplyParameters(reply_to, allow_sending_without_reply=True) if reply_to else None

        async def request() -> Message:
            return await self.bot.send_message(
                chat_id, text, reply_parameters=replying, reply_markup=keyboard
            )

        return (await self.call("sendMessage", request)).message_id

    async def answer_button(self, query_id: str, text: str | None = None) -> None:
        """Answer a button press (a short notice when ``text``); an old press is let go."""
        with suppress(BadRequest):  # the query is too old to answer (a redelivered update)
            await self.call(
                "answerCallbackQuery", lambda: self.bot.answer_callback_query(query_id, text)
            )

    async def drop_buttons(self, chat_id: int, message_id: int) -> None:
        """Take the buttons off a message (nothing to do when they are gone already)."""
        with suppress(BadRequest):  # "message is not modified", or it was deleted
            await self.call(
                "editMessageReplyMarkup",
                lambda: self.bot.edit_message_reply_markup(chat_id, message_id, reply_markup=None),
            )

    @asynccontextmanager
    async def typing(self, chat_id: int) -> AsyncIterator[None]:
        """Show "typing..." in the chat until the block ends (failures to show it are ignored)."""

        async def keep_typing() -> None:
            while True:
                with suppress(TelegramError):
                    await self.bot.send_chat_action(chat_id, "typing")
                await asyncio.sleep(TYPING_EVERY)

        task = asyncio.create_task(keep_typing())
        try:
            yield
        finally:
            task.cancel()
            with suppress(asyncio.CancelledError):
                await task
