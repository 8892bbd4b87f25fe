"""The phrases that change the topic (the seed's switch and correction phrases), and what a
message that opens with one goes on to say.

The topic_detect node starts a new topic on them (``keel.nodes.context.topic_shifts``); the
offline reading reads only what follows one ("new topic: add seeds" adds seeds; "new topic: the
garden" asks for nothing, ``keel.tools.understanding.reading``).
"""  # noqa: D205

from __future__ import annotations

import re

SWITCH_PHRASES = (
    "new topic",
    "different topic",
    "let's discuss",
    "lets discuss",
    "switching to",
    "moving on to",
    "but we weren't discussing",
    "but we werent discussing",
    "we were talking about",
)
CORRECTION_PHRASES = (
    "but we weren't discussing",
    "but we werent discussing",
    "we were talking about",
    "not about that",
    "different topic",
    "let's discuss",
    "lets discuss",
    "switching topics",
    "new topic",
    "back to",
)
PHRASES = tuple(dict.fromkeys(sorted(SWITCH_PHRASES + CORRECTION_PHRASES, key=len, reverse=True)))
PHRASE_PATTERN = re.compile(
    r"(?<![\w'])(" + "|".join(re.escape(p) for p in PHRASES) + r")(?![\w'])", re.I
)
_OPENING = re.compile(
    r"^\W*(?:(?:ok|okay|so|alright|anyway|now|well|and|hey|right)\b[\s,.!-]*){0,3}"
    r"(?:" + "|".join(re.escape(p) for p in PHRASES) + r")(?![\w'])[\s:,.!-]*",
    re.I,
)


def after_opening(message: str) -> str | None:
    """What ``message`` says after the topic phrase it opens with ("ok so, new topic: the
    garden" says "the garden"; a bare "new topic" says ""), or None when it opens with none.
    """  # noqa: D205
    found = _OPENING.match(message)
    if found is None:
        return None
    rest = message[found.end() :]
    while (again := _OPENING.match(rest)) is not None:  # "new topic: back to ..."
        rest = rest[again.end() :]
    return rest.strip()
