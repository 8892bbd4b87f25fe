"""``keel chat``: a terminal conversation with the agent.

Opens keel's parts as every client does (``keel.graphs.assembly.open_keel``: the database named by
``KEEL_DATABASE_URL``, SQLite in the user's data directory by default; the tools ``KEEL_TOOLS``
names), creates or continues a conversation owned by ``--user``, and runs one graph turn per line
typed. ``/state`` shows where the conversation stands, ``/reset`` starts afresh (history kept: the
graph takes the line as its reset command, as from any client), ``/quit`` (or "quit", "exit",
"bye", Ctrl-D, Ctrl-C) ends the session at once; while a turn runs, the first Ctrl-C stops it (as
the page's Stop does) and a second one ends the session. A pending confirmation survives the end
of the process and is asked again on the next start. A new conversation is made at its first
message. Replies wrap at word boundaries in a terminal; what tools did is told in their
sentences. The chat delivers reminders as ``keel serve`` does (``keel.graphs.reminding``), and
tells those said in any of the user's conversations after each line, and as it starts, those of
the last day whose task is still open; one that falls due while the prompt waits is told after
the next line.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import uuid
from collections.abc import Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import structlog
from rich.console import Console
from rich.markup import escape

from keel.api.command_name import invoked_as
from keel.api.lines import line_in_thread
from keel.api.terminal_view import print_result, print_state
from keel.checkpoints.clock import utcnow
from keel.checkpoints.conversation_store import ConversationNotFound, ConversationStore
from keel.checkpoints.locks import ConversationLocked
from keel.checkpoints.trouble import trouble_of
from keel.graphs.assembly import open_keel
from keel.graphs.reminding import delivering
from keel.graphs.result import TurnResult
from keel.graphs.runner import snapshot
from keel.graphs.settings import Settings
from keel.graphs.turns import Turns
from keel.nodes.remind import reminder_text
from keel.tools.tasks.store import TaskError, TaskStore

log = structlog.get_logger(__name__)

QUIT_WORDS = frozenset({"/quit", "/exit", "quit", "exit", "bye", "goodbye"})
"""What ends the chat when it is the whole line ("quit", "exit", "bye!"), however written."""
CHAT_WAIT_SECONDS = 30
ATTEMPTS = 3
"""Tries of one message while the database is away, with the same idempotency key."""
BUSY = "[red]error:[/red] a turn is running on this conversation elsewhere; try again"
REMINDERS_EVERY_SECONDS = 1.0
"""How often the chat looks for reminders said while its prompt waits."""
REMINDED_LATELY = timedelta(days=1)
"""How far back the reminders told as a chat starts go (those whose task is still open)."""


def ends_chat(text: str) -> bool:
    """The line asks to leave the chat: ``/quit``, or a word people use for it ("exit", "Bye!")."""
    return text.strip().rstrip(".!").strip().lower() in QUIT_WORDS


async def _open_conversation(
    conversations: ConversationStore, conversation_id: str, user_id: str
) -> str:
    try:
        uuid.UUID(conversation_id)
    except ValueError:
        raise ConversationNotFound(conversation_id) from None
    await conversations.require(conversation_id, user_id)
    return conversation_id


async def chat(
    conversation_id: str | None,
    user_id: str,
    verbose: bool,
    console: Console,
    first: Future[str] | None = None,
) -> int:
    """Run the chat loop until /quit or end of input; the exit status is returned.

    A new conversation is made at its first message, so a chat left before saying anything leaves
    none behind. ``first``: the first line, read already while keel's parts loaded (its banner and
    prompt shown); else a new conversation's banner is shown here.
    """
    settings = Settings()
    async with (
        open_keel(settings, wait_seconds=CHAT_WAIT_SECONDS) as keel,
        delivering(keel.turns, settings.reminder_poll_seconds),
    ):
        session = _Session(keel.conversations, keel.turns, user_id, verbose, console)
        if conversation_id is not None and not await session.continue_with(conversation_id):
            return 1
        if conversation_id is None and first is None:
            console.print(f"New conversation  (user {escape(user_id)}; /state, /reset, /quit)")
        await session.tell_reminders_safely(lately=True)
        # At the prompt Ctrl-C interrupts the read at once (not only once Enter is pressed).
        signal.signal(signal.SIGINT, signal.default_int_handler)
        telling = asyncio.create_task(session.keep_telling())
        try:
            while True:
                try:
                    session.at_prompt = True
                    text = (await _read_line(first or line_in_thread(console))).strip()
                    first = None
                except (EOFError, KeyboardInterrupt):
                    console.print()
                    break
                finally:
                    session.at_prompt = False
                if ends_chat(text):
                    break
                if text and not await session.take(text):
                    return 1
                await session.tell_reminders_safely()
        finally:
            telling.cancel()
    if session.cid is None:
        console.print("Bye.")
    else:
        continued = f"{invoked_as()} chat --conversation {session.cid}"
        console.print(f"Bye. Continue with: {continued}", soft_wrap=True)
    return 0


@dataclass
class _Session:
    """One ``keel chat``: the conversation it is on (None until the first message)."""

    conversations: ConversationStore
    turns: Turns
    user_id: str
    verbose: bool
    console: Console
    cid: str | None = None
    seen: datetime = field(default_factory=utcnow)
    """Reminders said after this are yet to be told here."""
    at_prompt: bool = False
    """The prompt waits for a line: a reminder said now is told at once, above a new prompt."""
    telling: asyncio.Lock = field(default_factory=asyncio.Lock)
    """One telling of reminders at a time (the prompt's and the one after a line)."""

    async def keep_telling(self) -> None:
        """Tell each reminder said while the prompt waits, as it is said."""
        while True:
            await asyncio.sleep(REMINDERS_EVERY_SECONDS)
            if self.at_prompt and await self.tell_reminders_safely(above_prompt=True):
                self.console.print("[bold]you>[/bold] ", end="")

    async def tell_reminders_safely(self, lately: bool = False, above_prompt: bool = False) -> bool:
        """``tell_reminders``, one at a time; the database away: told later, the chat goes on."""
        async with self.telling:
            try:
                return await self.tell_reminders(lately, above_prompt)
            except Exception as exc:
                log.warning("reminders_not_told", error=type(exc).__name__)
                return False

    async def tell_reminders(self, lately: bool = False, above_prompt: bool = False) -> bool:
        """Tell the reminders said since the last were told (``lately``: those of the last day
        whose task is still open, as the chat starts).
        """  # noqa: D205
        since = self.seen - REMINDED_LATELY if lately else self.seen
        resources = self.turns.resources
        said = [r for r in await resources.reminders.of_user(self.user_id, 50, since)]
        said = [r for r in reversed(said) if r.delivered_at is not None]
        if lately:
            said = [r for r in said if not await _done(resources.store, self.user_id, r.task_id)]
            if said:
                self.console.print("[dim]· Reminders said while you were away:[/dim]")
        if said and above_prompt:
            self.console.print()
        zone = resources.context(self.user_id).store.zone
        for reminder in said:
            where = "" if reminder.conversation_id == self.cid else " (in another conversation)"
            at = reminder.delivered_at or reminder.remind_at
            line = reminder_text(reminder, at, reminder.remind_at.astimezone(zone)) + where
            self.console.print(f"[bold cyan]keel>[/bold cyan] {escape(line)}")
        if said:
            self.seen = max(r.delivered_at or self.seen for r in said)
        return bool(said)

    async def continue_with(self, cid: str) -> bool:
        """Go on with conversation ``cid``: a turn cut off last time is finished, a question
        waiting asked again. False when it cannot be (not there, not the user's, busy: said).
        """  # noqa: D205
        console = self.console
        try:
            self.cid = await _open_conversation(self.conversations, cid, self.user_id)
        except ConversationNotFound as exc:
            console.print(f"[red]error:[/red] {exc}")
            return False
        console.print(f"Conversation: {cid}  (user {escape(self.user_id)}; /state, /reset, /quit)")
        try:
            recovered = await self.turns.open(cid, self.user_id)
        except ConversationLocked:
            console.print(BUSY)
            return False
        if recovered is not None:
            console.print("[dim]· Finished the turn that was cut off last time:[/dim]")
            print_result(console, recovered, self.verbose)
        waiting = (await snapshot(self.turns.graph, cid))["pending_confirmation"]
        if waiting:
            console.print(f"[bold cyan]keel>[/bold cyan] {escape(waiting['prompt'])}")
        return True

    async def take(self, text: str) -> bool:
        """Act on one line typed: /state, or a message (a turn); False when the chat must end."""
        console, max_chars = self.console, Settings().max_message_chars
        if text == "/state":
            if self.cid is None:
                console.print("Nothing yet: say something to begin.")
            else:
                print_state(console, await snapshot(self.turns.graph, self.cid))
            return True
        if len(text) > max_chars:
            console.print(
                f"[red]error:[/red] message too long ({len(text)} > {max_chars} characters)"
            )
            return True
        if self.cid is None:
            self.cid = (await self.conversations.create(self.user_id))["conversation_id"]
            console.print(f"Conversation: {self.cid}")
        try:
            with _ctrl_c_stops(self.turns, self.cid, console):
                result = await _say(self.turns, self.cid, self.user_id, text, console)
        except ConversationNotFound as exc:  # deleted from elsewhere meanwhile
            console.print(f"[red]error:[/red] {exc}")
            return False
        if result is not None:
            print_result(console, result, self.verbose)
        return True


async def _read_line(line: Future[str]) -> str:
    """Wait for ``line``; Ctrl-C ends the wait at once, as a ``KeyboardInterrupt``."""
    loop = asyncio.get_running_loop()
    waiting = asyncio.wrap_future(line)
    loop.add_signal_handler(signal.SIGINT, waiting.cancel)
    try:
        return await waiting
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if waiting.cancelled() and task is not None and not task.cancelling():
            raise KeyboardInterrupt from None
        raise
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        signal.signal(signal.SIGINT, signal.default_int_handler)


async def _done(store: TaskStore, user_id: str, task_id: int) -> bool:
    """The task is done or gone."""
    try:
        return bool((await store.get(user_id, task_id))["completed"])
    except TaskError:
        return True


@contextlib.contextmanager
def _ctrl_c_stops(turns: Turns, cid: str, console: Console) -> Iterator[None]:
    """While a turn runs, the first Ctrl-C asks it to stop; a second one ends the session."""
    loop = asyncio.get_running_loop()
    main = asyncio.current_task()

    def on_ctrl_c() -> None:
        if turns.stop(cid):
            console.print("[dim]· Stopping…[/dim]")
            loop.remove_signal_handler(signal.SIGINT)
            loop.add_signal_handler(signal.SIGINT, quit_now)
        else:
            quit_now()

    def quit_now() -> None:
        if main is not None:
            main.cancel()

    loop.add_signal_handler(signal.SIGINT, on_ctrl_c)
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        signal.signal(signal.SIGINT, signal.default_int_handler)


async def _say(
    turns: Turns, cid: str, user_id: str, text: str, console: Console
) -> TurnResult | None:
    """Run one line as a turn, retried with one idempotency key while the database is away."""
    key = str(uuid.uuid4())
    for attempt in range(1, ATTEMPTS + 1):
        try:
            return await turns.take(cid, user_id, text, key=key)
        except ConversationLocked:
            console.print(BUSY)
            return None
        except Exception as exc:
            if trouble_of(exc) is None or attempt == ATTEMPTS:
                raise
            console.print("[dim]· the database is unavailable; trying the message again[/dim]")
            await asyncio.sleep(attempt)
    return None
