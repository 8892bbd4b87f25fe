"""The words a topic is told by: its content words and their stems.

``content_words`` (no stop words, three letters or more) feed the shift network's features, topic
titles and summaries; ``stems`` match a message to what a topic named ("groceries" to "grocery").
Read by ``keel.nodes.context.topic_model``, ``keel.nodes.context.topic_shifts`` and
``keel.nodes.support.topic_names``.
"""

from __future__ import annotations

import functools
import re

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


def content_words(text: str) -> set[str]:
    """The words of ``text`` that say what it is about (no stop words, three letters or more)."""
    return {w for w in WORD.findall(text.lower()) if w not in STOP_WORDS and len(w) > 2}


@functools.lru_cache(maxsize=4096)
def stems(text: str) -> frozenset[str]:
    """The content words of ``text`` as their stems ("groceries" as "grocery", "Ishiguro's").

    The recent texts' are kept: a topic's older messages are read again at every message.
    """
    return frozenset(stem(w.removesuffix("'s")) for w in content_words(text))
