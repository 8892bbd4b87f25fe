"""A message that asks for no tool: what kind of talk it is, and what the offline model says to it.

Greetings, thanks, goodbyes and "how are you" get one short friendly line; "help" and "what can you
do?" get the help paragraph; a question outside todos gets one honest sentence about what keel can
do offline; anything else gets a short "did you mean ...", with the closest request keel knows (a
misspelt command word's tool, or adding the words as a task). Which kind of talk a message is, the
learned model says (``keel.tools.understanding.nlu.settle``); ``kind_of`` tells only what a
message's shape does (a question, or words to guess a request from), ``say`` the words. Used by
``keel.tools.understanding.reading`` and the rule-based chat model.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from keel.tools.understanding.words import near, strip_politeness

if TYPE_CHECKING:
    from keel.tools.understanding.phrasings import Table

_QUESTION = re.compile(
    r"\?$|^(?:what|who|whom|whose|when|where|why|how|which|is|are|am|was|were|do|does|did"
    r"|can|could|will|would|should|shall)\b"
)
TALK_MAX_CHARS = 200
"""Small talk is short: a longer message is read only as a question or not."""
REPLIES = {
    "greeting": "Hi! What would you like to do with your list?",
    "thanks": "You're welcome!",
    "goodbye": "Bye! Your tasks are saved for next time.",
    "wellbeing": "All good here, thanks. What can I do for your list?",
    "lists": (
        'A list begins when you put a task on it ("add a tent to the camping list"). I can show '
        "your lists and what is on one, move a task to another list or to the top, and clear a "
        'whole list. Say "help" to see how.'
    ),
    "answer": (
        "There is nothing waiting for a yes or no right now. What would you like to do with "
        "your list?"
    ),
    "offtopic": (
        "Offline I can only help with your todo list: adding, showing, completing, renaming and "
        'deleting tasks. Say "help" to see how.'
    ),
}


def kind_of(text: str, table: Table) -> tuple[str, str | None]:
    """The kind of talk ``text`` is as its shape tells: ``help`` for nothing but a question mark,
    ``offtopic`` for a question, else ``unknown`` with the closest request keel knows. Which kind
    of talk it really is (a greeting, thanks, ...) is the learned model's to say
    (``keel.tools.understanding.nlu.settle``).
    """  # noqa: D205
    lowered = text.lower().strip()
    if not lowered.strip(" ?!.") and "?" in lowered:
        return "help", None
    if _QUESTION.search(lowered[:TALK_MAX_CHARS]):
        return "offtopic", None
    plain = strip_politeness(lowered).strip(" !.,?~") or lowered
    return "unknown", _closest(plain, table) if len(lowered) <= TALK_MAX_CHARS else None


def _closest(text: str, table: Table) -> str | None:
    """The request keel would guess ``text`` meant: the tool of a word close to a command word."""
    words = re.findall(r"[a-z]+", text)
    for word in words[:3]:
        for tool, pattern in table.rows:
            literals = set(re.findall(r"[a-z]{4,}", pattern.pattern[:60]))
            if any(near(word, w) or _two_slips(word, w) for w in literals):
                return tool
    if 0 < len(words) <= 5 and len(text) <= 60:
        return f"add:{text}"
    return None


def _two_slips(typed: str, known: str) -> bool:
    """``typed`` is ``known`` with two slips, for words of six letters or more."""
    if min(len(typed), len(known)) < 6 or abs(len(typed) - len(known)) > 2 or typed[0] != known[0]:
        return False
    return any(
        near(typed[:i] + typed[i + 1 :], known) or near(typed, known[:i] + known[i + 1 :])
        for i in range(1, len(typed))
    )


def say(kind: str, detail: str | None, examples: dict[str, str], help_text: str) -> str:
    """What the offline model answers to a message of ``kind`` (``examples``: a tool's example)."""
    if kind == "help":
        return help_text
    if kind == "too_many":
        return (
            f"That is {detail} requests in one message; I take at most 100 at a time, so I did "
            "nothing. Please split it up."
        )
    if kind == "too_long":
        return (
            "That message is too long for me to read offline; please split it up into shorter "
            "messages."
        )
    if kind in REPLIES:
        return REPLIES[kind]
    if kind == "topic":  # "new topic: the garden"
        about = f"Sure, {detail.rstrip(' .!?')}. " if detail else "Sure. "
        return f"{about}What would you like to do about it on your list?"
    if kind == "unsure" and detail:
        return f"Did you mean to {detail}?"
    if kind == "missing" and detail in examples:
        doing, _, said = examples[detail].partition(" (")
        return f"I can {doing}; say which, for example {said.rstrip(')')}."
    if detail and detail.startswith("add:"):
        return f'Sorry, I didn\'t get that. Did you mean "add {detail[4:]}"? Say "help" for more.'
    if detail and detail in examples:
        return f"Sorry, I didn't get that. Did you mean to {examples[detail]}?"
    return 'Sorry, I didn\'t get that. Try "add buy milk", "what\'s on my list?" or "help".'
