"""``keel telegram``: the bot in a process of its own, long-polling the Bot API.

Opens keel's parts as every client does (``keel.graphs.assembly.open_keel``), drops a webhook
left set (Telegram sends updates one way only), registers the commands (setMyCommands), then asks
for updates in a loop. Updates of different chats are handled side by side, those of one chat in
order. An update is confirmed to Telegram (by the next request's ``offset``) only once it has been
answered: one the database or Telegram could not take is asked for again after a pause, and after
a restart Telegram delivers again whatever was not confirmed (``front`` never runs one twice).
SIGTERM or Ctrl-C lets the updates under way finish first, without waiting out the Bot API: a
call that fails then is not tried again, and its update is left for the next start.
"""

from __future__ import annotations

import asyncio
import signal
from collections import defaultdict
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager, suppress

import structlog
from telegram import BotCommand, Update
from telegram.error import InvalidToken, NetworkError, RetryAfter, TelegramError

from keel.api.service import count_reminder
from keel.api.telegram.front import TelegramFront
from keel.api.telegram.inbound import UpdateUnderWay
from keel.api.telegram.texts import COMMANDS
from keel.api.telegram.wire import Wire, new_bot, pause, retry_after
from keel.checkpoints.trouble import trouble_of
from keel.graphs.assembly import open_keel
from keel.graphs.reminding import delivering
from keel.graphs.settings import Settings

log = structlog.get_logger(__name__)

POLL_SECONDS = 25
"""How long one getUpdates waits for an update."""
UPDATES = ("message", "callback_query")
TURN_WAIT_SECONDS = 30
"""How long a message waits for a turn of the same conversation running elsewhere."""
PATIENCE_SECONDS = 60.0
"""How long one Bot API call is retried before its update is left for later."""


def wire_of(settings: Settings, patience: float = PATIENCE_SECONDS) -> Wire:
    """The Bot API client of ``settings`` (KEEL_TELEGRAM_TOKEN, KEEL_TELEGRAM_API_URL).

    Each call is retried for at most ``patience`` seconds.
    """
    if settings.telegram_token is None:
        raise ValueError("KEEL_TELEGRAM_TOKEN is not set: get a bot token from @BotFather")
    bot = new_bot(settings.telegram_token.get_secret_value(), settings.telegram_api_url)
    return Wire(bot, patience)


async def introduce(wire: Wire) -> str:
    """Check the token (getMe) and register the commands; the bot's username."""
    await wire.call("getMe", wire.bot.initialize)
    commands = [BotCommand(name, what) for name, what in COMMANDS.items()]
    await wire.call("setMyCommands", lambda: wire.bot.set_my_commands(commands))
    return wire.bot.username


@asynccontextmanager
async def opened_front(settings: Settings, wire: Wire) -> AsyncIterator[TelegramFront]:
    """Keel's database and graph, with the bot in front of them; it tells the reminders of its
    chats' conversations (and any other's: it delivers them, as ``keel serve`` does).
    """  # noqa: D205
    async with open_keel(settings, wait_seconds=TURN_WAIT_SECONDS) as keel:
        front = TelegramFront(
            keel.turns,
            wire,
            settings.max_message_chars,
            settings.telegram_users,
            timezone=settings.timezone,
        )
        async with delivering(
            keel.turns, settings.reminder_poll_seconds, [count_reminder], [front.remind]
        ):
            yield front


async def _chat_in_order(front: TelegramFront, updates: Sequence[Update]) -> int | None:
    """Handle one chat's updates in order; the id of the first that must be tried again."""
    for update in updates:
        try:
            await front.handle(update)
        except Exception as exc:
            if trouble_of(exc) is not None or isinstance(
                exc, NetworkError | RetryAfter | UpdateUnderWay
            ):
                log.warning(
                    "telegram_update_postponed",
                    update_id=update.update_id,
                    error=front.wire.redact(f"{type(exc).__name__}: {exc}"),
                )
                return update.update_id
            log.exception("telegram_update_failed", update_id=update.update_id)
    return None


def _chat_of(update: Update) -> int:
    chat = update.effective_chat
    return chat.id if chat is not None else 0


async def handle_batch(front: TelegramFront, updates: Sequence[Update]) -> int:
    """Handle a batch of updates; the offset that confirms those done (and no others)."""
    by_chat: dict[int, list[Update]] = defaultdict(list)
    for update in updates:
        by_chat[_chat_of(update)].append(update)
    postponed = await asyncio.gather(*(_chat_in_order(front, u) for u in by_chat.values()))
    waiting = [u for u in postponed if u is not None]
    return min(waiting) if waiting else updates[-1].update_id + 1


async def poll(front: TelegramFront) -> None:
    """Ask for updates and answer them until the wire is closed."""
    wire, offset, failures = front.wire, None, 0
    while not wire.closed.is_set():
        asking = asyncio.ensure_future(
            wire.bot.get_updates(offset, timeout=POLL_SECONDS, allowed_updates=UPDATES)
        )
        stopping = asyncio.ensure_future(wire.closed.wait())
        await asyncio.wait({asking, stopping}, return_when=asyncio.FIRST_COMPLETED)
        stopping.cancel()
        if not asking.done():
            asking.cancel()
            with suppress(asyncio.CancelledError, TelegramError):
                await asking
            break
        try:
            updates = asking.result()
        except RetryAfter as exc:
            await wire.rest(retry_after(exc))
            continue
        except InvalidToken:
            raise
        except TelegramError as exc:  # network trouble, a conflicting poller or webhook
            failures += 1
            log.warning("telegram_poll_failed", error=wire.redact(str(exc)), attempt=failures)
            await wire.rest(pause(failures))
            continue
        failures = 0
        if not updates:
            continue
        offset = await handle_batch(front, updates)
        if offset <= updates[-1].update_id:  # one was postponed: ask again after a pause
            await wire.rest(1.0)
    if offset is not None:  # confirm what was answered, so a restart does not get it again
        with suppress(TelegramError):
            await wire.bot.get_updates(offset, timeout=0, allowed_updates=UPDATES)


async def run_polling(settings: Settings) -> int:
    """Run the bot until SIGTERM or Ctrl-C; the exit status."""
    wire = wire_of(settings)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, wire.close)
    try:
        username = await introduce(wire)
        await wire.call("deleteWebhook", wire.bot.delete_webhook)
        async with opened_front(settings, wire) as front:
            front.username = username
            log.info("telegram_polling", bot=username)
            await poll(front)
    except InvalidToken:
        log.error("telegram_token_refused", hint="check KEEL_TELEGRAM_TOKEN")
        return 2
    except NetworkError as exc:
        log.error(
            "telegram_unreachable", error=wire.redact(str(exc)), url=settings.telegram_api_url
        )
        return 1
    finally:
        await wire.bot.shutdown()
    log.info("telegram_stopped")
    return 0
