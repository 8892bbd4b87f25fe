"""A question as it was put, and what an answer to it says: yes, no, a new request, or unclear.

``Asked`` is the one question about an assistant message's calls that need a yes (LangChain's
human-in-the-loop request with the question in words) and the words it is put in: as first asked,
again after an unclear answer ("Please answer yes or no."), or again after the tasks it names
changed since it was put ("This changed since I asked (before: ...)."). ``judged`` reads an answer,
typed or given as ``Command(resume=...)``, against the question it answered. Used by
``keel.nodes.support.confirming`` (tool_execution's questions) and user_input.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import structlog
from langchain_core.tools import BaseTool

from keel.nodes.state.confirmation import ApprovalRequest
from keel.tools.understanding.reading import parse_intents
from keel.tools.yes_no import answer_of

log = structlog.get_logger(__name__)

Verdict = Literal["yes", "no", "new"]
"""What an answer says: yes, no, or a new request instead (a no, and then it is carried out)."""
AGAIN = "Please answer yes or no."
CHANGED = "This changed since I asked"


@dataclass
class Asked:
    """The question about a message's calls, and what is known before it is answered."""

    request: ApprovalRequest | None
    """The question (None: no call needs one, or none has its task)."""
    call_ids: list[str]
    """The calls it asks about, in order."""
    missing: dict[str, str] = field(default_factory=dict)
    """Calls left out of it, their task not there: the error each one answers."""

    @property
    def base(self) -> str:
        """The question about the tasks as they are now, with nothing before it."""
        assert self.request is not None
        return self.request["question"]

    def words(self, why: str | None = None) -> str:
        """The question as put, ``why`` it is put again before it ("Please answer yes or no.")."""
        return f"{why} {self.base}" if why else self.base

    def put_as(self, words: str) -> ApprovalRequest:
        """The request the graph pauses on, its question in ``words`` (as logged)."""
        assert self.request is not None
        return {**self.request, "question": words}

    def current(self, put: str) -> bool:
        """``put`` (a question as it was put) asked about the tasks as they are now."""
        return put.endswith(self.base)

    def changed(self, put: str) -> str:
        """Why the question is put again after the tasks changed since ``put``: what they were."""
        now = set(self.base.splitlines()[1:])
        before = [line for line in put.splitlines()[1:] if line not in now]
        return f"{CHANGED} (before: {'; '.join(before)})." if before else f"{CHANGED}."


def judged(
    value: Any, put: str, asked: Asked, tools: Sequence[BaseTool]
) -> tuple[dict[str, Verdict], str | None, str | None]:
    """What an answer (text, or a resume value) to the question ``put`` says.

    The verdicts, or why the question is put again, and the answer's text (None: decisions, no
    text). Put again: an unclear answer ("Please answer yes or no."); a yes (or an unclear
    answer) given when the tasks changed since ``put`` (a no, or a new request, cancels whatever
    they are now). An unclear answer to a question already put again for that reason is a
    message of its own.
    """
    verdicts, text = decisions(value, asked, tools)
    if not asked.current(put) and (not verdicts or "yes" in verdicts.values()):
        log.info("confirmation_changed")
        return {}, asked.changed(put), text
    if verdicts:
        return verdicts, None, text
    if text is not None and put.startswith(AGAIN):
        return dict.fromkeys(asked.call_ids, "new"), None, text
    return {}, AGAIN, text


def is_new(verdicts: dict[str, Verdict]) -> bool:
    """The verdicts say the answer was a new request instead (carried out once they cancel)."""
    return next(iter(verdicts.values())) == "new"


def reading(text: str, asked: Asked, tools: Sequence[BaseTool]) -> Verdict | None:
    """What a typed answer says (None: it is unclear, and the question is put again).

    A new request instead of an answer ("add eggs", "delete task 3 instead") counts as a no,
    whatever yes words it holds; one about the question's own tasks ("yes, delete it") does not.
    """
    if _new_request(text, asked, tools):
        return "new"
    return answer_of(text)


def decisions(
    value: Any, asked: Asked, tools: Sequence[BaseTool]
) -> tuple[dict[str, Verdict], str | None]:
    """The verdict on each asked call from a resume value, and the text answered (if it was one).

    ``{"decisions": [...]}`` holds one decision a call (``approve`` or ``reject``), or one for
    them all; anything else is read as a typed answer.
    """
    if isinstance(value, dict) and isinstance(value.get("decisions"), list):
        given = [d.get("type") if isinstance(d, dict) else None for d in value["decisions"]]
        if len(given) == 1:
            given = given * len(asked.call_ids)
        if len(given) != len(asked.call_ids) or not set(given) <= {"approve", "reject"}:
            return {}, None  # asked again: only approve or reject, one for each call or for all
        return {
            call_id: ("yes" if d == "approve" else "no")
            for call_id, d in zip(asked.call_ids, given, strict=True)
        }, None
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    verdict = reading(text, asked, tools)
    return (dict.fromkeys(asked.call_ids, verdict) if verdict else {}), text


def _new_request(text: str, asked: Asked, tools: Sequence[BaseTool]) -> bool:
    """``text`` asks for something the question was not about."""
    assert asked.request is not None
    actions = asked.request["action_requests"]
    asked_tools = {a["name"] for a in actions}
    task_ids = [a["change"]["task_id"] for a in actions]
    for intent in parse_intents(text, tools):
        if intent.tool not in asked_tools:
            return True
        if intent.task_id is not None and intent.task_id not in task_ids:
            return True
        if intent.needs_lookup and not intent.refers_back and intent.select is None:
            return True
    return False
