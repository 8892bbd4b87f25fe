"""Talking to the Bot API: every call retried through rate limits and network trouble.

``Wire`` wraps python-telegram-bot's ``Bot`` (the API client only; keel runs its own update loop).
A 429 is waited out for as long as Telegram's ``retry_after`` says, a network error (a refused
connection, a timeout, a 5xx) is retried with a growing pause, and a request Telegram refuses (a
400, a blocked bot) is given up at once. Every wait has a bound: each HTTP request has its
timeouts, a call gives up (``TimedOut``) after its ``patience``, and once the wire is ``close``d
a call is tried once more at most, so a stopping bot stops soon. ``send`` cuts a reply to
Telegram's size and sends it as plain text; ``typing`` keeps "typing..." shown while a turn runs.
The bot's token is part of every request's URL: ``redact`` takes it out of whatever is logged.
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
from telegram.error import BadRequest, NetworkError, RetryAfter, TelegramError, TimedOut
from telegram.request import HTTPXRequest

from keel.api.telegram.texts import split_message

log = structlog.get_logger(__name__)
T = TypeVar("T")

ATTEMPTS = 12
"""Tries of one call through 429s and network errors (within the call's patience)."""
LONGEST_PAUSE = 30.0
CONNECT_SECONDS = 5.0
"""How long a connection to the Bot API may take to open (or a pooled one to come free)."""
READ_SECONDS = 20.0
"""How long an answer may take once a request was sent (getUpdates adds its long-poll time)."""
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
        request=bounded_request(pool_size=16),
        get_updates_request=bounded_request(pool_size=1),
    )


def bounded_request(pool_size: int) -> HTTPXRequest:
    """An HTTP client for the Bot API whose every wait (connect, pool, write, read) is bounded."""
    return HTTPXRequest(
        connect_timeout=CONNECT_SECONDS,
        pool_timeout=CONNECT_SECONDS,
        write_timeout=READ_SECONDS,
        read_timeout=READ_SECONDS,
        connection_pool_size=pool_size,
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

    def __init__(self, bot: Bot, patience: float) -> None:
        """Call the API through ``bot``, each call for at most ``patience`` seconds."""
        self.bot = bot
        self.token = bot.token
        self.patience = patience
        self.closed = asyncio.Event()
        """Set by ``close``: calls no longer wait to try again."""

    def close(self) -> None:
        """Stop retrying: a call under way is tried once more at most, then fails."""
        self.closed.set()

    async def rest(self, seconds: float) -> bool:
        """Wait ``seconds``, less if the wire is closed meanwhile; False when it is closed."""
        with suppress(TimeoutError):
            await asyncio.wait_for(self.closed.wait(), seconds)
        return not self.closed.is_set()

    def redact(self, text: str) -> str:
        """``text`` without the bot's token."""
        return text.replace(self.token, "<token>")

    async def call(self, method: str, request: Callable[[], Awaitable[T]]) -> T:
        """Run ``request`` until it answers: 429s waited out, network errors retried.

        Gives up with ``TimedOut`` after ``patience`` seconds, and at the first failure once closed.
        """
        try:
            async with asyncio.timeout(self.patience):
                return await self._retried(method, request)
        except TimeoutError:
            log.warning("telegram_call_gave_up", method=method, seconds=self.patience)
            raise TimedOut(f"{method}: no answer from the Bot API in {self.patience:g} s") from None

    async def _retried(self, method: str, request: Callable[[], Awaitable[T]]) -> T:
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
            if not await self.rest(wait):
                break
        raise NetworkError(f"{method}: no answer after {attempt} tries")

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
