"""The topic-shift detector: when a message starts a new topic, or returns to an earlier one.

One place for every signal, strongest first:

1. A return by name (``returned``): a message that says "back to X", "we were talking about X" or
   starts with "return to X" goes back to the closed topic whose title and summary hold most of
   the words of X (at least half of them; ``go_back``). When no closed topic holds them, "return
   to" is no signal, and the other two are switch phrases like those below.
2. ``/reset`` (``user_reset``), a switch or correction phrase ("new topic", "let's discuss",
   "back to", ...: ``phrase``) and a silence longer than ``topic_gap_seconds`` (``time_gap``):
   ``detect_topic_change``. They always win. (In the graph ``/reset`` never gets here: it is the
   reset command, carried out by the reset_conversation node; dialogues segmented offline keep it.)
3. The semantic signal (``semantic``): ``drift`` is the probability, by a small network learned
   from labelled dialogues (``keel.nodes.context.topic_model``), that a message leaves the active
   topic, read from the message, who says it and the topic's last messages; at or above the
   ``KEEL_TOPIC_SHIFT_THRESHOLD`` setting it is a shift. Without a language model, a request the
   offline understanding is sure of ("Add buy milk") never is, so a todo session stays one
   topic.
4. A return by likeness (``returned``): when a message drifts, or says "back to" or "we were
   talking about" of nothing a closed topic names, ``returned_to`` compares it with the summaries
   of the conversation's closed topics; one more similar than ``KEEL_TOPIC_RETURN_THRESHOLD``
   (less with such a phrase) and than the active topic is reopened instead of a new one. A switch
   ("new topic") or a correction ("not about that") always goes forward.

The network is trained by ``keel topics train``; ``keel topics eval`` runs this detector over a
file of dialogues (``keel.nodes.context.dialogue_segments``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np
from langchain_core.tools import BaseTool

from keel.nodes.context.embeddings import Embedder, mean_direction
from keel.nodes.context.topic_model import RECENT, USER, Said, load_shift_model
from keel.nodes.context.topic_words import content_words, stems
from keel.nodes.event_types import TopicReason
from keel.tools.understanding.reading import sure_request
from keel.tools.understanding.topic_phrases import (  # noqa: F401 - the seed's phrases, here too
    CORRECTION_PHRASES,
    PHRASE_PATTERN,
    SWITCH_PHRASES,
)
from keel.tools.understanding.words import strip_politeness

RESET_COMMAND = "/reset"
RETURN_PHRASES = ("back to", "we were talking about", "return to")
"""Phrases that point back: a closed topic their subject names is reopened ("back to the
groceries"), and a closed topic needs less similarity to be reopened. "return to" (no switch phrase
of the seed) counts only at the start of a message, and only when its subject names a topic."""
SUBJECT_WORDS = 6
"""The words after a phrase that points back that name what it goes back to."""
_SUBJECT_END = re.compile(r"[:;,.!?\n]| - ")
NAMED_SHARE = 0.5
"""A closed topic is the one a return names when it holds more than this share of its words."""
NAMED_LEAD = 2
"""Words a phrase that points back may follow in its clause ("ok, so back to ..."): further in
("I need to get back to work") it says something else."""
RETURN_CANDIDATES = 20
"""Closed topics a return is looked for among (the most recent), so a turn's cost is bounded."""
PHRASE_RETURN_DISCOUNT = 0.1
"""How much less similarity a return needs when the message says "back to" or the like."""


@dataclass(frozen=True)
class Shift:
    """Why a message changes the topic, and, for a return, which topic it goes back to."""

    reason: TopicReason
    phrase: str | None = None
    topic_id: str | None = None
    score: float | None = None


def detect_topic_change(
    message: str, last_message_at: datetime | None, now: datetime, gap_seconds: float
) -> tuple[TopicReason, str | None] | None:
    """``/reset``, a switch or correction phrase, or a long silence (reason, phrase); else None."""
    if message.strip().lower() == RESET_COMMAND:
        return "user_reset", None
    match = PHRASE_PATTERN.search(message.replace("\u2019", "'"))
    if match:
        return "phrase", match.group(1).lower()
    if last_message_at is not None and (now - last_message_at).total_seconds() > gap_seconds:
        return "time_gap", None
    return None


def explicit_change(
    message: str, last_message_at: datetime | None, now: datetime, gap_seconds: float
) -> Shift | None:
    """``detect_topic_change`` as a ``Shift``."""
    found = detect_topic_change(message, last_message_at, now, gap_seconds)
    return Shift(*found) if found else None


@dataclass(frozen=True)
class NamedReturn:
    """A message that says it goes back, and to what: "back to the groceries: add bananas"."""

    phrase: str
    subject: str


def named_return(message: str) -> NamedReturn | None:
    """The phrase that points back in ``message`` and the words after it that name a subject."""
    text = message.replace("\u2019", "'")
    found = PHRASE_PATTERN.search(text)
    lead = _SUBJECT_END.split(text[: found.start()])[-1] if found else ""
    if found and found.group(1).lower() in RETURN_PHRASES and len(lead.split()) <= NAMED_LEAD:
        phrase, rest = found.group(1).lower(), text[found.end() :]
    elif "return to" in text.lower() and (plain := strip_politeness(text)).lower().startswith(
        "return to "
    ):
        phrase, rest = "return to", plain[len("return to") :]
    else:
        return None
    subject = " ".join(_SUBJECT_END.split(rest, maxsplit=1)[0].split()[:SUBJECT_WORDS])
    return NamedReturn(phrase, subject) if content_words(subject) else None


def go_back(
    named: NamedReturn, closed: Sequence[tuple[str, str]], current: str = ""
) -> Shift | None:
    """The return to the ``closed`` topic (id, what it was about) that ``named`` names: the one
    that holds the largest share of its words (more than ``NAMED_SHARE``; the latest of equals),
    unless the ``current`` topic holds as many (then the message stays where it is).
    """  # noqa: D205
    wanted = stems(named.subject)
    best: tuple[str, float] | None = None
    for topic_id, about in list(closed)[-RETURN_CANDIDATES:]:
        share = len(wanted & stems(about)) / len(wanted)
        if share > NAMED_SHARE and (best is None or share >= best[1]):
            best = (topic_id, share)
    if best is None or len(wanted & stems(current)) / len(wanted) >= best[1]:
        return None
    return Shift("returned", named.phrase, best[0], round(best[1], 3))


def drift(
    message: Said, recent: Sequence[Said], embedder: Embedder, about: Sequence[str] = ()
) -> float | None:
    """How likely ``message`` leaves the topic of ``recent`` and ``about`` (the rest of the
    topic: its title, older messages), by the learned model (``keel.nodes.context.topic_model``);
    None when it cannot tell (no earlier message, or no model).
    """  # noqa: D205
    model = load_shift_model()
    if not recent or model is None:
        return None
    older = [said.text for said in recent[:-RECENT]]
    return model.probability(message, recent[-RECENT:], embedder, [*about, *older])


def returned_to(
    message_vector: np.ndarray,
    closed: Sequence[tuple[str, str]],
    active_vector: np.ndarray | None,
    embedder: Embedder,
    threshold: float,
) -> tuple[str, float] | None:
    """The closed topic (id, summary) ``message_vector`` goes back to, with its similarity.

    A topic qualifies when its summary is at least ``threshold`` similar to the message and more
    similar than the active topic (``active_vector``) is.
    """
    candidates = list(closed)[-RETURN_CANDIDATES:]
    if not candidates:
        return None
    similarities = embedder.embed([text for _, text in candidates]) @ message_vector
    best = int(np.argmax(similarities))
    score = float(similarities[best])
    floor = float(message_vector @ active_vector) if active_vector is not None else -1.0
    if score >= threshold and score > floor:
        return candidates[best][0], score
    return None


def says_return(shift: Shift | None) -> bool:
    """The shift was said with a phrase that points back ("back to ...")."""
    return shift is not None and shift.phrase in RETURN_PHRASES


def assess(
    message: Said,
    recent: Sequence[Said],
    explicit: Shift | None,
    embedder: Embedder | None,
    tools: Sequence[BaseTool] | None,
    threshold: float,
    about: Sequence[str] = (),
) -> Shift | None:
    """Whether ``message`` shifts away from the topic of ``recent``: explicitly, or by drift.

    ``tools``: the offline model's tools, whose requests ("Add buy milk") stay in the topic when
    its understanding is sure of them; None when a language model reads the messages. ``about``
    is more of the topic: its title, older messages.
    """
    if explicit is not None:
        return explicit
    if embedder is None or threshold >= 1:
        return None
    if message.speaker == USER and tools and sure_request(message.text, tools):
        return None
    score = drift(message, recent, embedder, about)
    return Shift("semantic", score=round(score, 3)) if score and score >= threshold else None


def find_return(
    message: str,
    shift: Shift,
    recent: Sequence[str],
    closed: Sequence[tuple[str, str]],
    embedder: Embedder | None,
    threshold: float,
) -> Shift:
    """``shift`` as a return to one of the ``closed`` topics (id, summary), if it is one."""
    if embedder is None or not closed or not (shift.reason == "semantic" or says_return(shift)):
        return shift  # a switch ("new topic") or a correction ("not about that") goes forward
    vectors = embedder.embed([message, *recent[-RECENT:]])
    active = mean_direction(vectors[1:]) if len(vectors) > 1 else None
    needed = threshold - (PHRASE_RETURN_DISCOUNT if says_return(shift) else 0.0)
    found = returned_to(vectors[0], closed, active, embedder, needed)
    if found is None:
        return shift
    return Shift("returned", shift.phrase, found[0], round(found[1], 3))
