"""keel's own words in a conversation: notes it adds for the person, and what it tells the model.

Notes for the person (a fallback, the loop limit, the time budget, a stop, a repeated step, what
was not done) end a reply; the nudge and the context headers are written for the model alone.
None of them is the model's own words, and a small model copies what it is shown: the history the
model reads carries its earlier replies without keel's notes (``without_notes``), and a reply that
copies any of this text has those lines taken out before a person sees it (``Echoes``, applied by
the filter every model's answer goes through, ``keel.nodes.models.markers.DoneLines``).
"""

from __future__ import annotations

import re
from functools import lru_cache

FALLBACK_NOTE = "(The model service failed; keel's offline assistant took over.)"
"""The line that ends an answer the offline model finished."""
LOOP_LIMIT = "I stopped after {loops} rounds without finishing this."
OUT_OF_TIME = "I ran out of time ({seconds} s) before finishing this."
MODEL_FAILED = "The model gave no usable answer ({reason}), so I stopped here."
STOPPED = "Stopped at your request. What already ran is done and kept."
REPEATED = "I stopped here: the model asked for a step it had already taken ({tools})."
REPEATED_ANSWER = "I stopped here: the model gave the same answer again."
SAME_ANSWER = "(the same answer)"
"""``repeated_step`` when the model repeated an answer rather than a tool call."""
NOT_DONE = "Left undone after the model service failed: {items}."

NUDGE_PREFIX = "Not finished yet."
"""The start of the reminder the response node sends when an answer did not finish the task."""
TOPIC_CHANGED = (
    "IMPORTANT: the user has switched topics or corrected you. Focus on the current message; "
    "do not carry over the earlier topic."
)
CURRENT_HEADER = "## Current conversation (most important)"
EARLIER_HEADER = "## Earlier context (only if relevant)"
ANSWERS_HEADER = "Answers the user gave to your questions:"
ANSWER_NOW = (
    "Now answer the user from the results above. When everything they asked for is handled, end "
    'with a last line "KEEL DONE: <a few words>".'
)
"""Sent after tool results: the DONE line is asked for when it is due, not in the system prompt
(where a small model writes it at once, instead of calling the tools)."""

NOTES = (
    FALLBACK_NOTE,
    LOOP_LIMIT,
    OUT_OF_TIME,
    MODEL_FAILED,
    STOPPED,
    REPEATED,
    REPEATED_ANSWER,
    NOT_DONE,
)
"""Every note keel adds to a reply for the person."""
FRAMING = (
    f"{NUDGE_PREFIX} Open items:",
    f"{NUDGE_PREFIX} If everything is handled",
    TOPIC_CHANGED.split(". ")[0],
    ANSWERS_HEADER,
    ANSWER_NOW.split(". ")[0],
)
"""keel's lines for the model: a copied line that starts with one of them is dropped whole."""
HEADERS = (CURRENT_HEADER, EARLIER_HEADER)
"""The context's section headers: the transcript lines after a copied one are dropped too."""
TRANSCRIPT = re.compile(r"^\s*(?:(?:User|You|Tool result)\s*:|- the user asked\b)")
"""A line of the history as the context shows it (``keel.nodes.context.recency``)."""
HISTORY_ITEM = re.compile(r"^\s*-\s*(?:the user asked|you answered)\s*:", re.IGNORECASE)
"""An item of the history as a chat model is shown it: a copy wherever it stands."""


def _pattern(template: str) -> str:
    parts = re.split(r"\{[a-z_]+\}", template)
    return r".+?".join(re.escape(part) for part in parts)


@lru_cache(maxsize=1)
def _notes() -> re.Pattern[str]:
    """A whole line that is one of keel's notes (a model's own line may start the same way)."""
    notes = "|".join(_pattern(n) for n in NOTES)
    return re.compile(rf"^\s*\(?(?:{notes})\)?\s*$", re.IGNORECASE)


@lru_cache(maxsize=1)
def _fallback_note() -> re.Pattern[str]:
    """The fallback note, wherever it stands: no model writes it of its own accord."""
    return re.compile(r"\s*" + re.escape(FALLBACK_NOTE), re.IGNORECASE)


@lru_cache(maxsize=1)
def _framing() -> re.Pattern[str]:
    return re.compile(r"^\s*(?:" + "|".join(re.escape(f) for f in FRAMING) + ")", re.IGNORECASE)


@lru_cache(maxsize=1)
def _headers() -> re.Pattern[str]:
    names = "|".join(re.escape(h.lstrip("# ")) for h in HEADERS)
    return re.compile(rf"^\s*#*\s*(?:{names})", re.IGNORECASE)


class Echoes:
    """Reads a reply line by line and tells which lines copy keel's own text."""

    def __init__(self) -> None:
        """Start outside any copied section."""
        self.in_section = False

    def copied(self, line: str) -> bool:
        """``line`` copies keel's text (a whole note, a framing line, a context section)."""
        if _headers().search(line):
            self.in_section = True
            return True
        if self.in_section and (TRANSCRIPT.search(line) or not line.strip()):
            return True
        self.in_section = False
        if _framing().search(line) or HISTORY_ITEM.search(line):
            return True
        return bool(_notes().search(line))

    def clean(self, line: str) -> str:
        """``line`` without what it copies (empty when nothing else is left)."""
        if self.copied(line):
            return ""
        return _fallback_note().sub("", line).rstrip()


def without_notes(text: str) -> str:
    """``text`` (an earlier reply) without keel's notes and framing, as the model is shown it."""
    echoes = Echoes()
    kept = [cleaned for line in text.split("\n") if (cleaned := echoes.clean(line)).strip()]
    return "\n".join(kept)
