"""Words as keel reads them in what people type: tokens, stems, typos and politeness.

The offline understanding (``keel.tools.understanding.reading``) and the matching of task titles
(``keel.tools.tasks.matching``) share these: ``stem`` brings inflections together ("calling",
"called" and "call"; "bought" and "buy"), ``near`` tells a typo of a word ("delte", "shwo"),
``Corrected`` puts a message's misspelt command words right while remembering where every character
came from, and ``strip_politeness`` takes off what wraps a request ("could you please ... for me,
thanks"). Everything is linear in the length of the text.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

TOKEN = re.compile(r"\w+", re.UNICODE)
"""A word: letters and digits of any script (an apostrophe splits "dentist's")."""

IRREGULAR = {
    "bought": "buy", "brought": "bring", "went": "go", "gone": "go", "paid": "pay",
    "made": "make", "did": "do", "done": "do", "sent": "send", "wrote": "write",
    "written": "write", "took": "take", "taken": "take", "got": "get", "gotten": "get",
    "ate": "eat", "eaten": "eat", "ran": "run", "fed": "feed", "met": "meet", "taught": "teach",
    "caught": "catch", "sold": "sell", "told": "tell", "found": "find", "left": "leave",
    "kept": "keep", "gave": "give", "given": "give", "drove": "drive", "driven": "drive",
    "swam": "swim", "spoke": "speak", "spent": "spend", "built": "build", "lent": "lend",
    "sat": "sit", "saw": "see", "seen": "see", "threw": "throw", "thrown": "throw",
    "hung": "hang", "fixed": "fix", "rang": "ring", "sang": "sing",
    "washed": "wash", "ironed": "iron", "picked": "pick", "hid": "hide", "forgot": "forget",
    "began": "begin", "dug": "dig", "cut": "cut", "put": "put", "set": "set", "read": "read",
    "shut": "shut", "swept": "sweep", "slept": "sleep", "bent": "bend", "fought": "fight",
    "thought": "think", "sought": "seek", "held": "hold", "won": "win", "chose": "choose",
    "children": "child", "people": "person", "men": "man", "women": "woman",
}  # fmt: skip
"""Forms no suffix rule reaches (past tenses, plurals), each to its base word."""

_DOUBLED = re.compile(r"([bdfgmnprt])\1$")


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A crude stem of a lower-case ``word``: what its inflections share ("call" for "calling").

    Not a dictionary form: "write" and "writing" both give "writ". Irregular forms map first.
    """
    word = IRREGULAR.get(word, word)
    if len(word) <= 3 or not word.isascii():
        return word
    for suffix, keep in (("ies", "y"), ("ied", "y"), ("ing", ""), ("ed", ""), ("es", ""),
                         ("s", "")):  # fmt: skip
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "es" and not word.endswith(("sses", "shes", "ches", "xes", "zes", "oes")):
                continue  # "tables" is "table" + "s", handled next
            if suffix == "s" and word.endswith(("ss", "us", "is")):
                break
            word = word[: len(word) - len(suffix)] + keep
            word = _DOUBLED.sub(r"\1", word)  # "stopp" -> "stop", "runn" -> "run"
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def words(text: str) -> list[str]:
    """The words of ``text``, casefolded."""
    return TOKEN.findall(text.casefold())


def near(typed: str, known: str) -> bool:
    """``typed`` is ``known`` with one slip: a letter left out, added, changed or two swapped.

    Only for words of three letters or more: a swap of two letters after the first from three;
    a letter left out or added from four (one typed more at the end only when doubled, "addd":
    "wiper" is not "wipe"); a changed letter only from seven (so "clean" is not "clear" nor
    "bone" "done": a changed letter often makes another word); never the first letter.
    """
    if typed == known or min(len(typed), len(known)) < 3 or abs(len(typed) - len(known)) > 1:
        return False
    if len(typed) == len(known):
        diff = [i for i, (a, b) in enumerate(zip(typed, known, strict=True)) if a != b]
        if len(diff) == 2 and diff[1] == diff[0] + 1 and diff[0] > 0:
            return typed[diff[0]] == known[diff[1]] and typed[diff[1]] == known[diff[0]]
        return len(diff) == 1 and diff[0] > 0 and len(known) >= 7
    if min(len(typed), len(known)) < 4 and max(len(typed), len(known)) < 4:
        return False
    short, long_ = (typed, known) if len(typed) < len(known) else (known, typed)
    if short[0] != long_[0]:
        return False
    i = next((i for i, (a, b) in enumerate(zip(short, long_, strict=False)) if a != b), len(short))
    if i == len(short) and typed is long_ and long_[-1] != long_[-2]:
        return False  # a letter typed more at the end makes another word ("wiper"), unless doubled
    return short[i:] == long_[i + 1 :]


@dataclass(frozen=True)
class Corrected:
    """A text with some words put right, and where each of its characters came from."""

    text: str
    """The text with its words corrected."""
    origin: tuple[int, ...]
    """For each character of ``text`` (and one past its end), its index in the original."""

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The span of the original text that ``text[start:end]`` came from."""
        return self.origin[start], self.origin[end]


_WORD_OR_REST = re.compile(r"[A-Za-z]+|[^A-Za-z]+")


def correct(text: str, vocabulary: frozenset[str]) -> Corrected:
    """``text`` with each word that is a slip of a ``vocabulary`` word put right; words of the
    vocabulary, and words it has no near neighbour for, stay as they are.
    """  # noqa: D205
    out: list[str] = []
    origin: list[int] = []
    for m in _WORD_OR_REST.finditer(text):
        piece, start = m.group(), m.start()
        lowered = piece.lower()
        fix = None
        contraction = text[m.end() : m.end() + 1] == "'"  # "don't", "haven't": no slips
        if piece[0].isalpha() and lowered not in vocabulary and len(piece) >= 3 and not contraction:
            fix = next((w for w in _candidates(lowered, vocabulary) if near(lowered, w)), None)
        if fix is None or fix == lowered:
            out.append(piece)
            origin.extend(range(start, m.end()))
        else:  # a corrected word's characters all come from the word's start
            out.append(fix)
            origin.extend([start] * len(fix))
    origin.append(len(text))
    return Corrected("".join(out), tuple(origin))


def _deletes(word: str) -> set[str]:
    """``word`` and ``word`` with each one of its letters left out."""
    return {word, *(word[:i] + word[i + 1 :] for i in range(len(word)))}


@functools.lru_cache(maxsize=64)
def _by_deletes(vocabulary: frozenset[str]) -> dict[str, tuple[str, ...]]:
    """Each vocabulary word under itself and each one-letter-shorter form of it: a word one slip
    away shares one of these forms with it (a letter added, left out, changed or swapped).
    """  # noqa: D205
    table: dict[str, set[str]] = {}
    for w in vocabulary:
        for form in _deletes(w):
            table.setdefault(form, set()).add(w)
    return {form: tuple(sorted(ws)) for form, ws in table.items()}


def _candidates(word: str, vocabulary: frozenset[str]) -> Iterable[str]:
    """The vocabulary words that may be one slip from ``word``, in a stable order."""
    table = _by_deletes(vocabulary)
    found: set[str] = set()
    for form in _deletes(word):
        found.update(table.get(form, ()))
    return sorted(found, key=lambda w: (abs(len(w) - len(word)), len(w) != len(word) - 1, w))


_LEADING = re.compile(
    r"^(?:(?:hey|hi|hello|ok(?:ay)?|so|um+|uh+|well|oh|alright|right|yo)\b[,!.]?\s+"
    r"|(?:please|pls|plz|pleas|kindly|just|also|and|but|now|then|quickly|instead)\s+"
    r"|would you mind\s+|do you mind\s+"
    r"|(?:could|can|would|will|won'?t) (?:you|u|ya)(?: please| pls| kindly| just| maybe)?\s+"
    r"|would it be possible to\s+|is it possible to\s+"
    r"|(?:i'?d|i would) (?:like|love|want) (?:you )?to\s+|i (?:want|need) you to\s+"
    r"|(?:i'?d|i would) (?:like|love) you to\s+|you can\s+|you could\s+|go ahead and\s+"
    r"|help me\s+|let'?s\s+|time to\s+|(?:can|could|may) i\s+|let me\s+|lemme\s+"
    r"|(?:(?:i|we) (?:want|need|have|would like|'?d like) to )?know\s+)",
    re.I,
)
_TRAILING = re.compile(
    r"(?:[\s,]+(?:please|pls|plz|for me|thanks|thank you|thx|ty|cheers|if you can|if you could"
    r"|when you can|right now|asap|real quick|for me please|mate|buddy)"
    r"|[\s,]*[!?.…]+|[\s,]+:\)|[\s,]+:-\)|[\s,]*[\U0001F000-\U0001FAFF\u2600-\u27BF\uFE0F]+)$",
    re.I,
)


def strip_politeness(text: str) -> str:
    """``text`` without the words that wrap a request: "could you please", "for me", "thanks".

    Each pass takes one wrapper off either end; a text is never stripped to nothing. Only the
    text's last characters are searched for a trailing wrapper, so a long text costs no more.
    """
    for _ in range(8):
        before = text
        text = _LEADING.sub("", text, count=1)
        head, tail = text[:-TAIL], text[-TAIL:]
        shorter = (head + _TRAILING.sub("", tail, count=1)).strip()
        if " " in shorter or " " not in text:  # "add thanks" keeps its title
            text = shorter
        if text == before or not text:
            break
    return text or before


TAIL = 40
"""How far from its end a text is searched for a trailing wrapper."""
