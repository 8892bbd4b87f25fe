"""The typed state of a keel conversation, its input and output schemas, and the per-turn fields.

Graph state holds the working set of one conversation: the state machine's position, the mission
and its todolist, the active topic, a bounded window of recent messages, and counters. Nodes read
it and return partial updates; the reducers its lists are kept by are in
``keel.nodes.state.reducers``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired

from langchain_core.messages import AnyMessage
from langgraph.channels.ephemeral_value import EphemeralValue
from pydantic import Field
from typing_extensions import TypedDict

from keel.nodes.state.reducers import (
    bounded_audit,
    bounded_window,
    conversation,
)
from keel.tools.next_step import NextStep

ItemStatus = Literal["pending", "in_progress", "done", "skipped"]
CommandName = Literal["reset", "reopen", "remind"]
"""What a command asks: ``reset`` (start afresh), ``reopen`` (back to an earlier topic)."""


class TodoItem(TypedDict):
    """One step of the plan."""

    id: int
    """1-based step number."""
    description: str
    """What the step is, in the user's words."""
    tool: str | None
    """The tool expected to carry it out, or None for a plain answer."""
    status: ItemStatus
    """pending, in_progress, done or skipped."""
    note: NotRequired[str]
    """Why the step ended as it did (an error, a cancellation)."""


class Todolist(TypedDict):
    """The plan for the current mission."""

    id: str
    """A new id each time a plan is made."""
    items: list[TodoItem]
    """The steps, in order."""
    steps_completed: list[int]
    """Ids of the steps that are done."""


class TopicRef(TypedDict):
    """A topic as results name it: its id and title."""

    id: Annotated[str, Field(description="The topic's id.", examples=["0b6c5d1e-…"])]
    title: Annotated[str, Field(description="The topic's title.", examples=["Add buy milk"])]


class Topic(TopicRef):
    """The active topic segment of the conversation."""

    started_at: str
    """ISO-8601 UTC timestamp."""


class Stats(TypedDict, total=False):
    """Counters over the life of the conversation."""

    turns: int
    total_resumes: int
    tool_calls: int


class HistoryEntry(TypedDict):
    """A logged message chosen by the context builder for the model to see."""

    role: str
    content: str
    at: str
    """ISO-8601 UTC time it was logged."""
    section: Literal["current", "earlier"]
    """current conversation, or earlier context (only if relevant)."""


class SharedTurns(TypedDict):
    """Rows of a branch that a forked branch shares: its turns up to the fork."""

    branch: str
    upto: int
    """The last turn of ``branch`` that came before the fork."""


class Branch(TypedDict):
    """The branch of the message log a line of turns writes to and reads from.

    See ``keel.checkpoints.branches``.
    """

    id: str
    """``main``, or the key of the turn that forked it."""
    tip: int | None
    """The last turn this line wrote to the branch (None: every row the branch has)."""
    shares: list[SharedTurns]
    """The branches it was forked from, nearest first, with the turns of each it shares."""


class AuditEntry(TypedDict, total=False):
    """One recorded decision: a reset, a resume, a legacy mapping."""

    at: str
    kind: str
    reason: str
    detail: dict[str, Any]


class TurnCommand(TypedDict):
    """A command given as a turn's input instead of a message: what it asks and for which topic."""

    command: CommandName
    """``reset``, ``reopen`` or ``remind``."""
    topic_id: NotRequired[str]
    """The earlier topic a ``reopen`` goes back to."""
    reminder_id: NotRequired[str]
    """The reminder a ``remind`` delivers (``keel.checkpoints.reminders``)."""


class TurnInput(TypedDict):
    """What a caller gives the graph to start a turn: a message, or a command."""

    content: NotRequired[str]
    """The user's message (``/reset`` typed is the reset command)."""
    messages: NotRequired[list[AnyMessage]]
    """The user's message as LangGraph's chat clients send it (Agent Chat UI, the SDK): the last
    user message is the turn's text, ``/reset`` included; used when ``content`` is not given."""
    request_key: NotRequired[str | None]
    """The idempotency key the message was sent with, if any (kept in state: a retry of a message
    whose turn reached a checkpoint is answered from it, never run again)."""
    command: NotRequired[CommandName | None]
    """A command instead of a message: ``reset`` (a new topic, the mission cleared) or ``reopen``
    (back to the earlier topic ``topic_id``). A confirmation waiting for yes or no is dropped."""
    topic_id: NotRequired[str | None]
    """The topic a ``reopen`` command goes back to."""
    reminder_id: NotRequired[str | None]
    """The reminder a ``remind`` command delivers: one of the user's that fell due."""


class KeelState(TypedDict, total=False):
    """The full internal state of one conversation thread."""

    content: Annotated[str, EphemeralValue]
    """The user message of this run's input, if it came as ``content``; it lasts one step:
    user_input reads it (or the newest user message in ``messages``) into ``request``."""
    request: str
    """The user message of the current turn."""
    messages: Annotated[list[AnyMessage], conversation()]
    """The conversation as LangChain messages, for every LangGraph client: the user's messages,
    the confirmation questions, the tool calls and their results, the replies (the newest
    ``reducers.MESSAGES_MAX``). A turn's own messages are added as its nodes write them; a
    checkpoint stores what its step added (``reducers.conversation``)."""
    request_key: str | None
    """The idempotency key of the latest message, as keel's service gives it."""
    command: Annotated[CommandName | None, EphemeralValue]
    """The command of this turn's input (or ``/reset`` typed); it lasts one step: user_input
    hands it on to its node, and no later input finds it."""
    topic_id: Annotated[str | None, EphemeralValue]
    """The topic a ``reopen`` command goes back to; lasts one step, like ``command``."""
    reminder_id: Annotated[str | None, EphemeralValue]
    """The reminder a ``remind`` command delivers; lasts one step, like ``command``."""
    agent_state: str
    """An ``AgentState`` value: where the turn is."""
    complete: bool
    """The last turn ended on a DONE marker with nothing left open."""
    mission: str | None
    """What the user asked for; set from the first message after a reset."""
    todolist: Todolist | None
    """The plan for the mission."""
    topic: Topic | None
    """The active topic segment."""
    window: Annotated[list[AnyMessage], bounded_window]
    """The messages of the current turn (bounded); earlier ones live in the message log."""
    history: list[HistoryEntry]
    """Earlier messages picked from the log for this turn's model calls."""
    topic_changed: bool
    """The current turn started a new topic."""
    context_exhausted: bool
    """The provider refused the last model input as too long; a resume is due."""
    last_message_at: str | None
    """ISO-8601 time the log was last written for this conversation (for the topic gap)."""
    pending_question: str | None
    """A question the model asked (``ask_user``): the next message answers it (so it continues
    the mission rather than resetting it)."""
    answers: dict[str, str]
    """The user's answers to the assistant's questions, by question (the most recent, kept across
    missions and shown to the model)."""
    next_step: NextStep | None
    """The next-step note for a resume."""
    stats: Stats
    """Counters: turns, resumes, tool calls."""
    turn_key: str
    """The current turn's key: its number and a digest of the previous turn's key and its message
    (``keel.nodes.state.lineage``). It names the turn's logged messages, topic and tool calls, so
    a re-run names them again and a fork names them anew."""
    branch: Branch
    """Where this line of turns sits in the message log (none yet: the main branch, all of it)."""
    audit: Annotated[list[AuditEntry], bounded_audit]
    """Recent recorded decisions (bounded)."""
    loops: int
    """RESPONSE -> ASSISTANT loops in the current turn."""
    nudges: int
    """Nudges sent to the assistant in the current turn (it stopped without finishing)."""
    turn_over: bool
    """The response node ended the turn (complete, or the loop limit)."""
    turn_note: str | None
    """A note for the user added by the response node (e.g. the loop limit was hit)."""
    stop_requested: bool
    """The caller stopped the turn (the API's cancel): the response node ends it at once."""
    turn_deadline: float | None
    """When the turn's time budget runs out (seconds since the epoch)."""
    out_of_time: bool
    """The time budget ran out: the response node ends the turn with what it has."""
    fell_back: str | None
    """Why the provider was given up in this turn: the offline model finishes it."""
    model_failed: str | None
    """No usable answer and nothing to take over: the turn ends."""
    repeated_step: str | None
    """The tools the model asked to run again with the same arguments (or ``SAME_ANSWER``): the
    turn ends."""


class TurnOutput(TypedDict, total=False):
    """What a finished turn exposes to a caller."""

    agent_state: str
    complete: bool
    mission: str | None
    todolist: Todolist | None
    topic: Topic | None
    window: list[AnyMessage]
    messages: list[AnyMessage]
    turn_note: str | None


def bump(stats: Stats | None, key: str, by: int = 1) -> Stats:
    """A copy of ``stats`` with counter ``key`` raised by ``by``."""
    counters: dict[str, int] = dict(stats or {})  # type: ignore[arg-type]
    counters[key] = counters.get(key, 0) + by
    return counters  # type: ignore[return-value]


def open_items(todolist: Todolist | None) -> list[TodoItem]:
    """Steps of the plan that are neither done nor skipped."""
    if not todolist:
        return []
    return [i for i in todolist["items"] if i["status"] in ("pending", "in_progress")]


def is_plan_complete(todolist: Todolist | None) -> bool:
    """A plan is complete when it exists and every step is done or skipped."""
    return bool(todolist) and not open_items(todolist)


def turn_start(**fields: Any) -> dict[str, Any]:
    """The per-turn fields as a turn starts (or is ended from outside), with ``fields`` over them.

    The one list of what belongs to a single turn: the user_input node starts a turn with it and
    the service's stops and commands end one with it.
    """
    return {
        "loops": 0,
        "nudges": 0,
        "complete": False,
        "turn_over": False,
        "turn_note": None,
        "stop_requested": False,
        "turn_deadline": None,
        "out_of_time": False,
        "fell_back": None,
        "model_failed": None,
        "repeated_step": None,
        **fields,
    }


ANSWERS_MAX = 10  # answers to the assistant's questions kept in state (the most recent)
ANSWER_MAX_CHARS = 200  # a question and its answer are kept to this many characters each


def with_answer(answers: dict[str, str] | None, question: str, answer: str) -> dict[str, str]:
    """``answers`` with the user's ``answer`` to ``question`` last, the oldest dropped past
    ``ANSWERS_MAX``.
    """  # noqa: D205
    question, answer = question[:ANSWER_MAX_CHARS], answer[:ANSWER_MAX_CHARS]
    kept = {q: a for q, a in (answers or {}).items() if q != question}
    kept[question] = answer
    return dict(list(kept.items())[-ANSWERS_MAX:])
