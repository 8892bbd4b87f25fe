"""The words a topic is told by: its content words, their stems, and short questions about them.

``content_words`` (no stop words, three letters or more) feed the drift model's features, topic
titles and summaries; ``stems`` match a message to what a topic named ("groceries" to "grocery");
``asks_about`` keeps a short question about the topic in it ("is the milk done?"). Read by
``keel.nodes.context.topic_shifts`` and ``keel.nodes.support.topic_names``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from keel.tools.understanding.words import stem

WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
"""A word in any script (letters, with an inner apostrophe)."""
STOP_WORDS = frozenset(
    "i you he she it we they me him her us them my your his its our their a an the and or but "
    "if then so to of in on at for with about as is are was were be been am do does did have "
    "has had not no yes yeah oh lol ok okay well just really very too that this what which who "
    "whom how why when where there here can could would should will shall may might must also "
    "like get got go going know think want i'm it's that's don't you're i've i'll thanks thank "
    "please sure".split()
)
QUESTION = re.compile(r"^\W*(?:what|do|have|are|did|how|where|who|which|is|would|can|any)\b", re.I)
SHORTQUESTION = 4
"""A question of at most this many content words about what the topic just said stays in it."""
SHORTQUESTION_CHARS = 200


def content_words(text: str) -> set[str]:
    """The words of ``text`` that say what it is about (no stop words, three letters or more)."""
    return {w for w in WORD.findall(text.lower()) if w not in STOP_WORDS and len(w) > 2}


def stems(text: str) -> set[str]:
    """The content words of ``text`` as their stems ("groceries" as "grocery", "Ishiguro's")."""
    return {stem(w.removesuffix("'s")) for w in content_words(text)}


def asks_about(message: str, recent: Sequence[str]) -> bool:
    """``message`` is a short question about something the topic's ``recent`` messages name
    ("is the milk done?" after "Add buy milk"): it follows the topic, whatever its wording.
    """  # noqa: D205
    if len(message) > SHORTQUESTION_CHARS or ("?" not in message and not QUESTION.match(message)):
        return False
    words = stems(message)
    if not words or len(words) > SHORTQUESTION:
        return False
    return not words.isdisjoint(set().union(*(stems(text) for text in recent)))
