"""The words of a yes and of a no: how an answer to a confirmation question is read.

``answer_of(text)`` reads a reply to "Are you sure ...? (yes/no)" as ``"yes"``, ``"no"`` or
``None`` (unclear: keel asks again rather than taking it as a no). Everyday answers count: "go
ahead", "sure thing", "ok do it", "yes please", "👍" say yes; "no wait", "actually keep it",
"nah", "cancel" say no; a no anywhere in the answer wins over a yes ("yes... actually no").
``is_bare_answer`` tells a message that is only a yes or a no (with nothing waiting, keel says
so). ``confirms`` finds a yes inside a request itself ("delete task 3, yes I'm sure"), so that the
request runs without a question; ``is_confirmation`` tells a piece of a message that is only a
yes. Used by the tool_execution node and by the offline understanding.
"""

from __future__ import annotations

import re
from typing import Literal

YES_WORDS = frozenset(
    "yes y yep yeah yea yup ya yass sure ok okay k kk confirm confirmed confirmation affirmative "
    "absolutely definitely certainly correct right proceed go approved approve agreed indeed "
    "please aye 👍 ✅ ✔️ 👌".split()
)
"""Words that say yes on their own."""
NO_WORDS = frozenset(
    "no n nope nah nay cancel stop abort don't dont wait keep hold never nevermind negative "
    "not 👎 ❌ ✋ undo".split()
)
"""Words that say no (or hold back) wherever they stand in an answer."""
YES_PHRASES = (
    "go ahead", "do it", "i'm sure", "im sure", "i am sure", "go for it", "of course",
    "sounds good", "that's right", "thats right", "delete it", "rename it", "remove it",
    "make it so", "why not", "all good", "yes please", "please do", "you bet", "for sure",
)  # fmt: skip
"""Phrases that say yes."""
NO_PHRASES = (
    "not sure", "not now", "changed my mind", "leave it", "forget it", "scratch that",
    "on second thought", "hang on", "hold on", "keep it", "no thanks", "don't", "do not",
    "not yet", "never mind", "let me think",
)  # fmt: skip
"""Phrases that say no ("not sure" is no yes either: nothing is done on a doubt)."""
YES_DESPITE_NO = ("why not", "no problem", "no worries", "not a problem", "no doubt")
"""Yes phrases that hold a no word."""
UNSURE = ("not sure", "let me think", "i don't know", "i dont know", "dunno", "maybe")
"""Doubt: neither yes nor no; keel asks again."""

_WORD = re.compile(r"[^\s,.!?;:]+")
ANSWER_MAX_CHARS = 200
"""An answer longer than this is a message of its own, not a yes or a no."""

Answer = Literal["yes", "no"]


def _words(text: str) -> list[str]:
    return _WORD.findall(" ".join(text.replace("\u2019", "'").split()).lower())


def answer_of(text: object) -> Answer | None:
    """``text`` read as an answer to a yes/no question: "yes", "no", or None when unclear."""
    raw = str(text or "")
    if len(raw) > ANSWER_MAX_CHARS:
        return None
    found = _words(raw)
    if not found:
        return None
    joined = " " + " ".join(found) + " "
    if any(f" {p} " in joined for p in UNSURE):
        return None
    plain = joined
    for phrase in YES_DESPITE_NO:  # "no worries": no no, but "no worries, keep it" is one
        plain = plain.replace(f" {phrase} ", " ")
    if any(w in NO_WORDS for w in plain.split()) or any(f" {p} " in plain for p in NO_PHRASES):
        return "no"
    if plain != joined or any(w in YES_WORDS for w in found):
        return "yes"
    return "yes" if any(f" {p} " in joined for p in YES_PHRASES) else None


BARE_ANSWER_WORDS = 4
"""A message of at most this many words that says yes or no is an answer, not a request."""
ACKNOWLEDGED = frozenset("ok okay k kk alright cool great fine".split())
"""Words that take note of a reply rather than answer a question ("ok")."""


def is_bare_answer(text: str) -> bool:
    """``text`` is only a yes or a no ("yes", "no thanks", "go ahead"), not a note taken ("ok")."""
    words = _words(text)
    if not words or len(words) > BARE_ANSWER_WORDS or set(words) <= ACKNOWLEDGED:
        return False
    return answer_of(text) is not None


def is_yes(answer: object) -> bool:
    """The answer to a confirmation question says yes."""
    return answer_of(answer) == "yes"


_ONLY_WORDS = re.compile(r"[a-z' ,.!]*")
_SURE = re.compile(r"\b(?:i'?m sure|i am sure)\b")
SURE_PHRASES = frozenset({("i'm", "sure"), ("im", "sure"), ("i", "am", "sure"), ("do", "it")})
"""Phrases that say yes on their own ("I'm sure") or after a yes word ("yes, do it")."""
STRICT_YES = frozenset({"yes", "y", "yep", "yeah", "sure", "confirm", "confirmed"})
"""The yes words that make a piece of a request a confirmation ("delete task 3, yes")."""


def is_confirmation(text: str) -> bool:
    """The words are only a yes ("yes", "yep, I'm sure", "confirm", "do it"); "..." is none."""
    lowered = " ".join(text.replace("\u2019", "'").split()).lower()
    if not _ONLY_WORDS.fullmatch(lowered):
        return False
    words = tuple(re.findall(r"[a-z]+(?:'[a-z]+)?", lowered))
    if not words:
        return False
    count = 0
    while count < len(words) and words[count] in STRICT_YES:
        count += 1
    rest = words[count:]
    return (count > 0 and not rest) or rest in SURE_PHRASES


def confirms(pieces: list[str], whole: str) -> bool:
    """A request's ``pieces`` (or the ``whole`` message) carry an explicit yes."""
    if _SURE.search(" ".join(whole.replace("\u2019", "'").split()).lower()):
        return True
    return any(is_confirmation(piece) for piece in pieces)
