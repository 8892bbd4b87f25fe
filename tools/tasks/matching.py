"""Finding a task by what it is: how well a title matches the words someone used for it.

"the milk one", "calling mom", "dentist" name tasks titled "buy milk", "call mom" and "book the
dentist": ``Description`` takes the words that carry meaning (no "the", "one", "task"), and
``Description.score`` rates a title by how many of them it holds, as the same word, an inflection
(a shared ``stem``), the start of a longer word, or with one slip of spelling; a title that holds
the description's words in a row, or is the description itself, rates higher. ``choose`` reads
the ranked matches: one clear match, several close ones (keel asks which), or none. Used by the
``find_todo_tasks`` tool, which reads the user's titles once for all the descriptions of a turn.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from keel.tools.understanding.words import near, stem, words

FILLER = frozenset(
    "a an the my our your this that these those it one ones task tasks item items thing things "
    "stuff entry todo to-do list about for of to on in at with re regarding called named "
    "titled something".split()
)
"""Words that name no task: they say where a description is, not what."""
MATCH_MIN = 0.6
"""The least score a title needs to be a match at all: more than half the words (both of two),
so "buy bananas" is not "buy milk"."""
CLOSE = 0.15
"""Matches within this of the best are too close to pick between: keel asks."""
EXACT = 2.0
"""The score of a title that is the description itself."""


@functools.lru_cache(maxsize=65536)
def _title_words(title: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A title's content words and their stems."""
    found = tuple(w for w in words(title) if w not in FILLER) or tuple(words(title))
    return found, tuple(stem(w) for w in found)


@dataclass(frozen=True)
class Description:
    """The words someone used for a task, ready to rate titles against."""

    text: str
    folded: str
    words: tuple[str, ...]
    stems: tuple[str, ...]

    @classmethod
    def of(cls, text: str) -> Description:
        """The description ``text`` ("the milk one")."""
        found = tuple(w for w in words(text) if w not in FILLER) or tuple(words(text))
        folded = " ".join(found)
        return cls(text, folded, found, tuple(stem(w) for w in found))

    def could_match(self, folded_title: str) -> bool:
        """A cheap first look: the title holds the start of one of the words (or no word is)."""
        return not self.words or any(w[:3] in folded_title for w in self.words)

    def score(self, title: str) -> float:
        """How well ``title`` matches: 0 (not at all) to 1 (all its words), ``EXACT`` if equal."""
        folded = title.casefold()
        whole = " ".join(folded.split())
        if not self.words:
            return 0.0
        title_words, title_stems = _title_words(title)
        if self.folded == " ".join(title_words) or self.text.casefold().strip() == whole:
            return EXACT
        total = 0.0
        for word, word_stem in zip(self.words, self.stems, strict=True):
            total += _word_score(word, word_stem, title_words, title_stems)
        coverage = total / len(self.words)
        if coverage == 0.0 and len(self.folded) >= 2 and self.folded in whole:
            coverage = 1.0  # words in a script without spaces: "牛乳" in "牛乳を買う"
        held = sum(1 for s in title_stems if s in self.stems) / max(1, len(title_stems))
        in_a_row = 0.05 if len(self.words) > 1 and self.folded in " ".join(title_words) else 0.0
        return round(coverage + 0.1 * held + in_a_row, 4) if coverage else 0.0


def _word_score(
    word: str, word_stem: str, title_words: Sequence[str], title_stems: Sequence[str]
) -> float:
    best = 0.0
    for other, other_stem in zip(title_words, title_stems, strict=True):
        score = _pair_score(word, word_stem, other, other_stem)
        if score == 1.0:
            return 1.0
        best = max(best, score)
    return best


@functools.lru_cache(maxsize=65536)
def _pair_score(word: str, word_stem: str, other: str, other_stem: str) -> float:
    """How well one word of a description matches one word of a title.

    Titles share words: each pair is weighed once, not once a title.
    """
    if word == other or word_stem == other_stem:
        return 1.0
    if len(word) >= 4 and len(other) >= 4 and (other.startswith(word) or word.startswith(other)):
        return 0.8
    if near(word, other) or near(word_stem, other_stem):
        return 0.7
    return 0.0


def rank(
    description: str, tasks: Sequence[dict[str, Any]], limit: int = 5
) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """The ``tasks`` that match ``description``, best first, each with its ``score``, at most
    ``limit``; and, when none does, the nearest there is (None when nothing comes near).
    """  # noqa: D205
    wanted = Description.of(description)
    scored: list[dict[str, Any]] = []
    nearest: dict[str, Any] | None = None
    unlike: list[dict[str, Any]] = []
    for task in tasks:  # words that share a start first; slips only if none match
        if not wanted.could_match(task["title"].casefold()):
            unlike.append(task)
            continue
        nearest = _scored(wanted, task, scored, nearest)
    if not scored:
        for task in _slipped(wanted, unlike):
            nearest = _scored(wanted, task, scored, nearest)
    scored.sort(key=lambda t: (-t["score"], t["id"]))
    return scored[:limit], None if scored else nearest


def _scored(
    wanted: Description, task: dict[str, Any], scored: list[dict[str, Any]],
    nearest: dict[str, Any] | None,
) -> dict[str, Any] | None:  # fmt: skip
    """Rate ``task``: a match goes to ``scored``; the nearest non-match so far comes back."""
    score = wanted.score(task["title"])
    if score >= MATCH_MIN:
        scored.append({**task, "score": score})
    elif score > 0 and (nearest is None or score > nearest["score"]):
        return {**task, "score": score}
    return nearest


def _slipped(wanted: Description, tasks: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ``tasks`` with a title word that is a slip of a word of the description ("bananas",
    "banans"); each distinct title word is weighed once, however many titles hold it.
    """  # noqa: D205
    typed = [w for w in wanted.words if len(w) >= 4]
    if not typed:
        return []
    slip: dict[str, bool] = {}
    found = []
    for task in tasks:
        for word in _content_words(task["title"]):
            if word not in slip:
                slip[word] = any(
                    near(w, word)
                    for w in typed
                    if word[:1] == w[:1] and abs(len(word) - len(w)) <= 1
                )
            if slip[word]:
                found.append(task)
                break
    return found


def _content_words(title: str) -> list[str]:
    """A title's words that name something (all of them when none does)."""
    found = words(title)
    return [w for w in found if w not in FILLER] or found


@dataclass(frozen=True)
class Choice:
    """What the matches of a description tell: the task meant, or why there is none."""

    task: dict[str, Any] | None = None
    """The one task the description clearly names."""
    close: tuple[dict[str, Any], ...] = ()
    """Several matches too close to pick between (keel asks which)."""
    closest: dict[str, Any] | None = None
    """No match: the nearest title there is, if any."""


def choose(matches: Sequence[dict[str, Any]], prefer_open: bool = False) -> Choice:
    """The task ``matches`` (best first, as ``rank`` gives them) clearly point at, if any.

    An exact title wins; otherwise the best match must lead the next by more than ``CLOSE``.
    With ``prefer_open`` (completing a task), open tasks count before completed ones.
    """
    if prefer_open and any(not m.get("completed") for m in matches):
        matches = [m for m in matches if not m.get("completed")]
    if not matches:
        return Choice()
    best = matches[0]
    exact = [m for m in matches if m["score"] >= EXACT]
    if len(exact) == 1:
        return Choice(task=exact[0])
    close = tuple(m for m in matches if best["score"] - m["score"] < CLOSE)
    if len(close) == 1:
        return Choice(task=best)
    return Choice(close=close)
