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
sentences.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import uuid
from collections.abc import Iterable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass

from rich.console import Console
from rich.markup import escape

from keel.api.command_name import invoked_as
from keel.checkpoints.conversation_store import ConversationNotFound, ConversationStore
from keel.checkpoints.locks import ConversationLocked
from keel.checkpoints.trouble import trouble_of
from keel.graphs.assembly import open_keel
from keel.graphs.result import Snapshot, TurnResult
from keel.graphs.runner import snapshot
from keel.graphs.settings import Settings
from keel.graphs.turns import Turns
from keel.nodes.event_types import Event

QUIT_WORDS = frozenset({"/quit", "/exit", "quit", "exit", "bye", "goodbye"})
"""What ends the chat when it is the whole line ("quit", "exit", "bye!"), however written."""
CHAT_WAIT_SECONDS = 30
ATTEMPTS = 3
"""Tries of one message while the database is away, with the same idempotency key."""
BUSY = "[red]error:[/red] a turn is running on this conversation elsewhere; try again"


def describe_event(event: Event) -> str:
    """One line a person can read for an event (shown with ``--verbose``)."""
    if event["type"] == "state_updated" and event["data"]["mission_reset"]:
        if event["data"]["reason"] == "user_requested":
            return "Mission reset (requested)"
        if event["data"]["reason"] == "unfinished_turn_abandoned":
            return "Starting new query (previous task left unfinished)"
        return "Starting new query (previous task completed)"
    if event["type"] == "topic_changed":
        back = event["data"]["reason"] == "returned"
        return f"{'Back to the topic' if back else 'New topic'}: {event['data']['title']}"
    if event["type"] == "tool_call":
        return event["data"].get("text") or ""
    if event["type"] == "loop_limit":
        return f"Loop limit reached after {event['data']['loops']} rounds"
    if event["type"] == "resumed":
        return f"Starting new session from step {event['data']['step']}"
    if event["type"] == "model_fallback":
        return f"Model failed ({event['data']['reason']}): the offline assistant took over"
    if event["type"] == "turn_timed_out":
        return f"Out of time after {event['data']['seconds']} s"
    return f"{event['type']}: {event['data']}"


def _print_events(console: Console, events: Iterable[Event], verbose: bool) -> None:
    """What the tools did, always; the other events with ``verbose``."""
    for event in events:
        if event["type"] != "tool_call" and not verbose:
            continue
        if text := describe_event(event):
            console.print(f"[dim]· {escape(text)}[/dim]")


def _print_state(console: Console, state: Snapshot) -> None:
    console.print(f"agent_state: {state['agent_state']}   complete: {state['complete']}")
    console.print(f"mission: {escape(str(state['mission']))}")
    todolist = state.get("todolist")
    if todolist:
        console.print(f"todolist {todolist['id']}:")
        for item in todolist["items"]:
            console.print(escape(f"  {item['id']}. [{item['status']}] {item['description']}"))
    else:
        console.print("todolist: none")
    waiting = state.get("pending_confirmation")
    console.print(f"pending confirmation: {escape(waiting['prompt']) if waiting else 'none'}")


def _print_result(console: Console, result: TurnResult, verbose: bool) -> None:
    if result.recovered_reply:
        console.print("[dim]· Finished the turn that was cut off last time:[/dim]")
        console.print(f"[bold cyan]keel>[/bold cyan] {escape(result.recovered_reply)}")
    _print_events(console, result.events, verbose)
    console.print(f"[bold cyan]keel>[/bold cyan] {escape(result.reply)}")


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
    async with open_keel(Settings(), wait_seconds=CHAT_WAIT_SECONDS) as keel:
        session = _Session(keel.conversations, keel.turns, user_id, verbose, console)
        if conversation_id is not None and not await session.continue_with(conversation_id):
            return 1
        if conversation_id is None and first is None:
            console.print(f"New conversation  (user {escape(user_id)}; /state, /reset, /quit)")
        # At the prompt Ctrl-C interrupts the read at once (not only once Enter is pressed).
        signal.signal(signal.SIGINT, signal.default_int_handler)
        while True:
            try:
                if first is not None:
                    line, first = asyncio.wrap_future(first), None
                    text = (await line).strip()
                else:
                    text = console.input("[bold]you>[/bold] ").strip()
            except (EOFError, KeyboardInterrupt):
                console.print()
                break
            if ends_chat(text):
                break
            if text and not await session.take(text):
                return 1
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
            _print_result(console, recovered, self.verbose)
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
                _print_state(console, await snapshot(self.turns.graph, self.cid))
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
            _print_result(console, result, self.verbose)
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
