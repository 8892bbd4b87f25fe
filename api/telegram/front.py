"""The bot itself: a Telegram update in, ``Turns`` calls, messages out.

``TelegramFront.handle`` takes one update. Each Telegram user is the keel user
``telegram:<id>`` (their tasks and conversations are theirs only) and each member of a chat has
one active conversation there (``keel.checkpoints.telegram_chats``); in a group the bot answers
the message it replies to. A message runs as a turn whose idempotency key names the message (a
press, the press), so one Telegram delivers again never runs twice: one already answered is
skipped, one still being answered is refused (``UpdateUnderWay``: Telegram sends it again later),
one whose turn ran but whose answer was never sent is answered from the recorded turn. A forged
private-chat update is dropped, and a text the HTTP API would refuse is answered with the reason,
without a turn (``keel.api.telegram.inbound``). Commands:
/start, /help, /reset (the graph's reset command), /state, /new, /topics (buttons that reopen a
topic: the graph's reopen command). A question the graph asks before a destructive action comes
with Yes / No buttons whose data names the checkpoint the question waits on: a button of any other
question has expired. Behaviour stays in the graph; this module only translates.
"""

from __future__ import annotations

from dataclasses import dataclass

import structlog
from telegram import CallbackQuery, Message, Update

from keel.api.telegram import texts
from keel.api.telegram.inbound import UpdateUnderWay, forged, loggable, refusal, said_of
from keel.api.telegram.reminders import REMINDER_VERBS, answer, send_reminder
from keel.api.telegram.said import Said, command_of
from keel.api.telegram.wire import Buttons, Wire
from keel.checkpoints.conversation_store import ConversationNotFound
from keel.checkpoints.locks import ConversationLocked
from keel.checkpoints.reminders import Reminder
from keel.checkpoints.telegram_chats import ChatMember, TelegramChats
from keel.checkpoints.trouble import trouble_of
from keel.graphs.result import TurnResult, snapshot_of
from keel.graphs.runner import thread_config
from keel.graphs.turns import Turns
from keel.nodes.state.confirmation import is_approval_request
from keel.nodes.state.schema import TurnCommand
from keel.nodes.support.previews import preview

log = structlog.get_logger(__name__)

TURN_ATTEMPTS = 8
"""Tries of a turn while the database is away (the same idempotency key each time)."""
ANSWERS = {"y": "yes", "n": "no"}
"""A confirmation button's verb, and the answer it gives (as if typed)."""
CHOICES = (("y", "Yes"), ("n", "No"))
"""The confirmation's buttons: verb and label."""


@dataclass
class TelegramFront:
    """Telegram updates as keel turns."""

    turns: Turns
    wire: Wire
    max_chars: int
    """The longest message taken (KEEL_MAX_MESSAGE_CHARS, as in the HTTP API)."""
    allowed: frozenset[int] | None = None
    """Telegram user ids answered; None: everyone."""
    username: str | None = None
    """The bot's username (to tell its commands in groups)."""
    timezone: str | None = None
    """The zone reminders' times are said in (``KEEL_TIMEZONE``)."""

    def __post_init__(self) -> None:
        """Keep the chats beside the rest of keel's tables."""
        self.chats = TelegramChats(self.turns.db)
        self.under_way: set[tuple[int, str]] = set()
        """The messages and presses being answered in this process."""

    async def handle(self, update: Update) -> None:
        """Answer one update (messages and button presses; anything else is let go).

        Raises ``UpdateUnderWay`` for one being answered already, and what the database or
        Telegram could not do: the update is to be tried again.
        """
        said = said_of(update)
        if said is None:
            return
        if said in self.under_way:
            raise UpdateUnderWay(said[1])
        self.under_way.add(said)
        try:
            if await self.chats.was_answered(*said):
                log.info("telegram_update_answered_before", update_id=update.update_id)
            elif update.callback_query is not None:
                await self._pressed(said[1], update.callback_query)
            elif update.message is not None:
                await self._message(said[1], update.message)
        finally:
            self.under_way.discard(said)

    # --- messages ---------------------------------------------------------------------------

    async def _message(self, name: str, message: Message) -> None:
        assert message.from_user is not None
        if forged(message.chat, message.from_user.id):
            log.warning(
                "telegram_forged_update", chat_id=message.chat_id, from_id=message.from_user.id
            )
            return
        group = message.chat.type != "private"
        said = Said(
            message.chat_id, message.from_user.id, name, message.message_id if group else None
        )
        if not self._may(said.user_id):
            await self._reply(said, texts.PRIVATE)
            return
        member = await self._member(said)
        if message.text is None:
            await self._say(said, member, texts.TEXT_ONLY)
            return
        command, text = command_of(message.text.strip(), self.username)
        if command == "":
            return
        await self._command(said, member, command, text)

    async def _command(
        self, said: Said, member: ChatMember, command: str | None, text: str
    ) -> None:
        if command is None:
            await self._message_turn(said, member, text)
        elif command == "start":
            await self._say(said, member, texts.START)
        elif command == "help":
            await self._say(said, member, texts.HELP)
        elif command == "reset":
            await self._turn(said, member, "", {"command": "reset"})
        elif command == "state":
            await self._say(said, member, await self._state(member.conversation_id))
        elif command == "new":
            created = await self.turns.resources.conversations.create(said.user)
            await self.chats.activate(said.chat_id, said.user_id, created["conversation_id"])
            await self._drop_question(said, member)
            await self._reply(said, texts.NEW_CONVERSATION)
        elif command == "topics":
            await self._topics(said, member)
        else:
            await self._say(said, member, texts.UNKNOWN_COMMAND)

    async def _message_turn(self, said: Said, member: ChatMember, text: str) -> None:
        """Run a typed message as a turn, or say why the HTTP API would refuse it."""
        reason = refusal(text, self.max_chars)
        if reason is None:
            await self._turn(said, member, text)
            return
        log.info("telegram_message_refused", reason=reason, message_preview=preview(loggable(text)))
        await self._say(said, member, texts.refused(reason))

    async def _state(self, conversation_id: str) -> str:
        snap = await self.turns.graph.aget_state(thread_config(conversation_id))
        question = snap.values.get("pending_question")
        return texts.state_text(snapshot_of(conversation_id, snap), question)

    async def _topics(self, said: Said, member: ChatMember) -> None:
        topics = await self.turns.resources.topics.list(member.conversation_id)
        if not topics:
            await self._say(said, member, texts.NO_TOPICS)
            return
        buttons: Buttons = [
            [(f"{n}. {t.title}"[:60], f"t:{t.id}:{said.user_id}")]
            for n, t in enumerate(topics, 1)
            if not t.is_active
        ]
        await self._say(said, member, texts.topics_text(topics), buttons or None)

    # --- reminders ----------------------------------------------------------------------------

    async def remind(self, reminder: Reminder) -> None:
        """Say ``reminder`` in its conversation's chats (a channel of ``keel.graphs.reminding``)."""
        await send_reminder(self.wire, self.chats, self.timezone, reminder)

    # --- button presses ---------------------------------------------------------------------

    async def _pressed(self, name: str, query: CallbackQuery) -> None:
        message = query.message
        verb, _, rest = (query.data or "").partition(":")
        ref, _, owner = rest.rpartition(":")
        if message is None:
            await self.wire.answer_button(query.id, texts.EXPIRED)
            return
        if forged(message.chat, query.from_user.id):
            log.warning(
                "telegram_forged_update", chat_id=message.chat.id, from_id=query.from_user.id
            )
            return
        group = message.chat.type != "private"
        said = Said(
            message.chat.id, query.from_user.id, name, message.message_id if group else None
        )
        if not self._may(said.user_id):
            await self.wire.answer_button(query.id, texts.PRIVATE)
            return
        if owner != str(said.user_id):
            await self.wire.answer_button(query.id, texts.NOT_YOURS)
            return
        member = await self._member(said)
        if verb in ANSWERS and ref == await self._question_checkpoint(member.conversation_id):
            await self.wire.answer_button(query.id)
            await self.wire.drop_buttons(said.chat_id, message.message_id)
            await self._turn(said, member, ANSWERS[verb])
            return
        if verb in REMINDER_VERBS and ref.isdigit():
            await self.wire.answer_button(query.id)
            await self.wire.drop_buttons(said.chat_id, message.message_id)
            await self._say(said, member, await answer(self.turns, self.timezone, said, verb, ref))
            return
        if verb == "t" and await self.turns.resources.topics.get(member.conversation_id, ref):
            await self.wire.answer_button(query.id)
            await self.wire.drop_buttons(said.chat_id, message.message_id)
            await self._turn(said, member, "", {"command": "reopen", "topic_id": ref})
            return
        await self.wire.answer_button(query.id, texts.EXPIRED if verb != "t" else texts.TOPIC_GONE)
        await self.wire.drop_buttons(said.chat_id, message.message_id)
        asked = member.question_message_id
        await self.chats.answered(
            said.chat_id, said.user_id, said.name, None if asked == message.message_id else asked
        )

    async def _question_checkpoint(self, conversation_id: str) -> str | None:
        """The checkpoint a confirmation waits on (None: no confirmation waits)."""
        snap = await self.turns.graph.aget_state(thread_config(conversation_id))
        if not any(is_approval_request(i.value) for i in snap.interrupts):
            return None
        return str(snap.config["configurable"]["checkpoint_id"])

    # --- turns and replies ------------------------------------------------------------------

    async def _turn(
        self, said: Said, member: ChatMember, content: str, command: TurnCommand | None = None
    ) -> None:
        """Run the turn (retried while the database is away) and send what it says."""
        async with self.wire.typing(said.chat_id):
            result = await self._take(said, member, content, command)
        if result is None:
            await self.wire.send(said.chat_id, texts.BUSY, said.reply_to)
            return
        if result.replayed and await self.chats.was_answered(said.chat_id, said.name):
            return  # answered from another process meanwhile
        member = await self._member(said)  # a conversation deleted meanwhile was replaced
        text = result.reply
        if command is not None and command["command"] == "reset":
            text = f"{text}\n\n{texts.RESET_FOLLOW_UP}"
        if result.recovered_reply:
            text = f"{result.recovered_reply}\n\n{text}"
        buttons: Buttons | None = None
        if result.awaiting_confirmation is not None:
            waits = await self._question_checkpoint(member.conversation_id)
            buttons = [[(label, f"{verb}:{waits}:{said.user_id}") for verb, label in CHOICES]]
        await self._drop_question(said, member)
        await self._reply(said, text, buttons, asks=buttons is not None)

    async def _take(
        self, said: Said, member: ChatMember, content: str, command: TurnCommand | None
    ) -> TurnResult | None:
        cid, key = member.conversation_id, said.key
        for attempt in range(1, TURN_ATTEMPTS + 1):
            try:
                return await self.turns.take(cid, said.user, content, key=key, command=command)
            except ConversationLocked:
                if await self.turns.requests.get(cid, key) is not None:
                    raise UpdateUnderWay(
                        said.name
                    ) from None  # this very message holds it, elsewhere
                return None
            except ConversationNotFound:  # deleted from elsewhere: a new one takes its place
                cid = await self._new_conversation(said)
            except Exception as exc:
                if trouble_of(exc) is None or attempt == TURN_ATTEMPTS:
                    raise
                log.warning("telegram_turn_retried", reason=trouble_of(exc), attempt=attempt)
                if not await self.wire.rest(min(10.0, attempt)):
                    raise
        raise ConversationNotFound(cid)

    async def _say(
        self, said: Said, member: ChatMember, text: str, buttons: Buttons | None = None
    ) -> None:
        """Answer with ``text``, leaving a question that waits (and its buttons) as it is."""
        await self._reply(said, text, buttons, question=member.question_message_id)

    async def _reply(
        self,
        said: Said,
        text: str,
        buttons: Buttons | None = None,
        *,
        question: int | None = None,
        asks: bool = False,
    ) -> None:
        """Send ``text`` and note the update answered.

        The message whose Yes / No buttons wait is then ``question``, or this one when it ``asks``.
        """
        sent = await self.wire.send(said.chat_id, text, said.reply_to, buttons)
        asked = sent if asks else question
        await self.chats.answered(said.chat_id, said.user_id, said.name, asked)

    async def _drop_question(self, said: Said, member: ChatMember) -> None:
        if member.question_message_id is not None:
            await self.wire.drop_buttons(said.chat_id, member.question_message_id)

    async def _member(self, said: Said) -> ChatMember:
        """The chat member's row, made with a new conversation on first contact."""
        member = await self.chats.get(said.chat_id, said.user_id)
        if member is not None:
            return member
        await self._new_conversation(said)
        member = await self.chats.get(said.chat_id, said.user_id)
        assert member is not None
        return member

    async def _new_conversation(self, said: Said) -> str:
        created = await self.turns.resources.conversations.create(said.user)
        await self.chats.activate(said.chat_id, said.user_id, created["conversation_id"])
        return created["conversation_id"]

    def _may(self, user_id: int) -> bool:
        return self.allowed is None or user_id in self.allowed
