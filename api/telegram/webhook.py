"""Webhook mode: ``keel serve`` takes Telegram's updates at ``/telegram/webhook``.

Set KEEL_TELEGRAM_TOKEN and KEEL_TELEGRAM_WEBHOOK_SECRET for the server, and register the
webhook once with ``keel telegram --webhook https://<public host>/telegram/webhook``. Every
update must carry the secret token in ``X-Telegram-Bot-Api-Secret-Token`` (checked by
``keel.api.request_guard`` before the body is read; 401 otherwise). An update is answered 200
once it has been handled. It is answered 503 (with Retry-After), and Telegram sends it again
later, when the database is away, when the Bot API does not take the answer within
``PATIENCE_SECONDS``, or when the same update is still being answered (Telegram sent it again
meanwhile); it never runs twice. Without the settings the path answers 404. The bot's parts are
imported only when it is configured: the server needs no Telegram library otherwise.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import structlog
from fastapi import APIRouter, Request

from keel.api.errors import APIError
from keel.api.telegram import WEBHOOK_PATH
from keel.checkpoints.trouble import trouble_of
from keel.graphs.settings import Settings
from keel.graphs.turns import Turns

if TYPE_CHECKING:
    from keel.api.telegram.front import TelegramFront

log = structlog.get_logger(__name__)
router = APIRouter(tags=["telegram"], include_in_schema=False)

PATIENCE_SECONDS = 5.0
"""How long one Bot API call of an update is retried before the update is answered 503."""


def configured(settings: Settings) -> bool:
    """The server takes Telegram's updates: a token and a webhook secret are set."""
    return settings.telegram_token is not None and settings.telegram_webhook_secret is not None


@asynccontextmanager
async def opened_webhook(settings: Settings, turns: Turns) -> AsyncIterator[TelegramFront | None]:
    """The bot in front of the server's turns, when webhook mode is configured (else None)."""
    if not configured(settings):
        yield None
        return
    from keel.api.telegram.front import TelegramFront
    from keel.api.telegram.polling import wire_of

    wire = wire_of(settings, PATIENCE_SECONDS)
    try:
        yield TelegramFront(
            turns,
            wire,
            settings.max_message_chars,
            settings.telegram_users,
            timezone=settings.timezone,
        )
    finally:
        wire.close()
        await wire.bot.shutdown()


@router.post(WEBHOOK_PATH)
async def telegram_update(request: Request) -> Any:
    """Handle one update Telegram sends; 503 asks Telegram to send it again later."""
    front: TelegramFront | None = getattr(request.app.state, "telegram", None)
    if front is None:
        raise APIError(404, "not_found", "Not Found")
    from telegram import Update

    try:
        update = Update.de_json(await request.json(), front.wire.bot)
    except (ValueError, TypeError, KeyError, AttributeError):
        raise APIError(400, "invalid_update", "not a Telegram update") from None
    try:
        if front.username is None:
            front.username = (await front.wire.call("getMe", front.wire.bot.get_me)).username
        await front.handle(update)
    except Exception as exc:
        if (unavailable := retry_later(exc)) is not None:
            raise unavailable from None
        log.exception("telegram_update_failed", update_id=update.update_id)
    return {}


def retry_later(exc: Exception) -> APIError | None:
    """The 503 that asks Telegram to send the update again, when ``exc`` is passing trouble."""
    from telegram.error import BadRequest, NetworkError, RetryAfter

    from keel.api.telegram.inbound import UpdateUnderWay

    if (trouble := trouble_of(exc)) is not None:
        return APIError(503, trouble.value, trouble.message)
    if isinstance(exc, UpdateUnderWay):
        return APIError(503, "telegram_update_under_way", f"{exc}; send it again later")
    if isinstance(exc, NetworkError | RetryAfter) and not isinstance(exc, BadRequest):
        message = "the Bot API did not take the answer; send the update again"
        return APIError(503, "telegram_unavailable", message)
    return None
