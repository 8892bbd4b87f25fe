"""A turn under way, noted on its conversation so that the next turn can finish it.

keel runs a turn as one graph run, and LangGraph writes the run's checkpoint when the run ends
(durability "exit"). Before a turn's tools may change anything, the turn is noted here
(``keel_conversations.turn_in_flight``): the checkpoint it started from, its message and
idempotency key, and the model's messages that called tools, by reply id. The assistant node
notes it when the model asks for tools; the user_input node when a message answers a waiting
confirmation.

If the process dies before the run's checkpoint is written, the conversation's newest checkpoint
is still the one it was when the turn began (the one the turn started from, or, for a turn run
from an earlier checkpoint - an edited message - the ``newest`` the note names): the next turn on
it, in any process, finds the note where it takes the turn lock (``keel.checkpoints.locks``) and
finishes the turn first - the message run again from the checkpoint it started from, the model's
recorded calls used instead of asking the model anew, and the tool-call ledger
(``keel.tools.ledger``) answering the calls that already ran. Once the turn's checkpoint is
written, it is the newest and the note means nothing: it is never cleared, only overwritten by the
next turn's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import structlog

from keel.checkpoints.database import Database, read_json

log = structlog.get_logger(__name__)


BEGINNING = "beginning"
"""Names the point before a conversation's first checkpoint, to run a turn from: a checkpoint id
no checkpoint has, so LangGraph starts from an empty state (the first message edited)."""


class CheckpointNotKept(LookupError):
    """A checkpoint the conversation no longer keeps (or never had), asked to run or view from."""

    code = "checkpoint_not_found"

    def __init__(self, checkpoint_id: str) -> None:
        """Name the checkpoint."""
        super().__init__(
            f"checkpoint {checkpoint_id!r} is not one this conversation keeps: only its newest "
            "checkpoints are kept (the messages of every branch stay in its log)"
        )


@dataclass(frozen=True)
class InFlight:
    """A turn under way, as noted."""

    start: str | None
    """The checkpoint the turn started from (None: the conversation had none)."""
    content: str
    """The turn's message."""
    request_key: str | None = None
    """The idempotency key it was sent with."""
    rounds: Mapping[str, dict[str, Any]] = field(default_factory=dict)
    """The model's messages that called tools, by reply id, as langchain's message dicts."""
    newest: str | None = None
    """The conversation's newest checkpoint when the turn began, when the turn started from an
    earlier one (a message edited, a branch continued); None: it started from the newest."""

    @property
    def forked(self) -> bool:
        """The turn started from a checkpoint other than the conversation's newest."""
        return self.newest is not None and self.newest != self.start

    @property
    def started(self) -> str:
        """The checkpoint the turn started from, ``BEGINNING`` before the conversation's first."""
        return self.start if self.start is not None else BEGINNING

    def started_from(self, newest: str | None) -> bool:
        """``newest`` (the conversation's newest checkpoint) is the one it was when the turn
        began, so the turn never wrote one: it was cut off.
        """  # noqa: D205
        return (self.newest if self.newest is not None else self.start) == newest

    def with_round(self, reply_id: str, message: dict[str, Any]) -> InFlight:
        """This note with one more of the model's messages."""
        rounds = {**self.rounds, reply_id: message}
        return InFlight(self.start, self.content, self.request_key, rounds, self.newest)

    def as_json(self) -> dict[str, Any]:
        """The note as stored."""
        return {
            "start": self.start,
            "content": self.content,
            "request_key": self.request_key,
            "rounds": dict(self.rounds),
            "newest": self.newest,
        }

    @classmethod
    def read(cls, value: Any) -> InFlight | None:
        """A note as read from its column (None when there is none, or it cannot be read)."""
        if value is None:
            return None
        try:
            data = read_json(value)
            rounds = data.get("rounds") or {}
            if not isinstance(rounds, dict) or not isinstance(data["content"], str):
                raise TypeError("rounds or content")
            newest = data.get("newest")
            return cls(data.get("start"), data["content"], data.get("request_key"), rounds, newest)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            log.warning("turn_in_flight_unreadable", error=type(exc).__name__)
            return None


async def note(db: Database, conversation_id: str, in_flight: InFlight) -> None:
    """Note ``in_flight`` on its conversation (one statement, committed before it returns).

    Its commit does not wait for the disk (``Database.unflushed``): whatever the turn does after
    it - a tool's change, the checkpoint - commits after it and makes it durable first.
    """
    unflushed = f" FROM {db.unflushed}" if db.unflushed else ""
    await db.execute(
        f"UPDATE keel_conversations SET turn_in_flight = :note{unflushed} WHERE id = :id",
        {"id": conversation_id, "note": db.json(in_flight.as_json())},
    )
