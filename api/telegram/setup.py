"""``keel telegram --webhook URL``: point the bot's updates at ``keel serve``, once.

Registers the webhook with the secret token of KEEL_TELEGRAM_WEBHOOK_SECRET (Telegram sends it
with every update; the server refuses updates without it) and the bot's commands, then exits.
``keel telegram`` without ``--webhook`` drops the webhook again and polls.
"""

from __future__ import annotations

import structlog
from telegram.error import TelegramError

from keel.api.telegram import WEBHOOK_PATH
from keel.api.telegram.polling import UPDATES, introduce, wire_of
from keel.graphs.settings import Settings

log = structlog.get_logger(__name__)


async def register_webhook(settings: Settings, url: str) -> int:
    """Set the bot's webhook to ``url``; the exit status."""
    secret = settings.telegram_webhook_secret
    if secret is None:
        log.error("telegram_webhook_needs_a_secret", hint="set KEEL_TELEGRAM_WEBHOOK_SECRET")
        return 2
    if not url.startswith("https://") or not url.rstrip("/").endswith(WEBHOOK_PATH):
        log.error("telegram_webhook_url", hint=f"an https URL ending in {WEBHOOK_PATH}", url=url)
        return 2
    wire = wire_of(settings)
    try:
        await introduce(wire)
        await wire.call(
            "setWebhook",
            lambda: wire.bot.set_webhook(
                url, secret_token=secret.get_secret_value(), allowed_updates=UPDATES
            ),
        )
    except TelegramError as exc:
        log.error("telegram_webhook_refused", error=wire.redact(str(exc)))
        return 1
    finally:
        await wire.bot.shutdown()
    log.info("telegram_webhook_set", url=url)
    return 0
