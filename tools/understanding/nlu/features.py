"""The features the learned understanding reads: tokens with their places, hashed n-grams.

``tokens(text)`` splits a message into words and punctuation, each with its span in the text, so
a span the tagger marks maps back to the person's own characters. ``sentence_features`` are the
classifier's inputs: word unigrams and bigrams (with the message's first word marked) and the
letter n-grams of each word, which carry a misspelt word ("delte") close to the right one; each
is hashed into ``BUCKETS`` with a stable hash, so the model is a plain weight matrix. The
tagger's inputs are ``token_features``: the word, its shape and ends, its neighbours, and what the
classifier read the message as. Linear in the length of the text.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

BUCKETS = 1 << 18
"""How many hashed feature slots the classifier has."""
WORDS_READ = 64
"""The classifier reads a message's first words only: what a request is shows early."""
_TOKEN = re.compile(r"\w+(?:['\u2019:.\-/]\w+)*|[^\w\s]", re.UNICODE)
"""A word (with what joins its parts: "don't", "1:30", "to-do", "3.5") or one other character."""


@dataclass(frozen=True)
class Token:
    """A word or a punctuation mark, with where it stands in the text."""

    text: str
    start: int
    end: int

    @property
    def norm(self) -> str:
        """The word as features see it: lower case, digits as 0, a curly apostrophe straight."""
        return re.sub(r"\d", "0", self.text.casefold().replace("\u2019", "'"))


def tokens(text: str) -> list[Token]:
    """The words and punctuation of ``text`` with their spans."""
    return [Token(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(text)]


def _slot(feature: str) -> int:
    return zlib.crc32(feature.encode("utf-8", "surrogatepass")) % BUCKETS


def sentence_features(words: Sequence[Token]) -> dict[int, float]:
    """The hashed features of a message's words, each counted once, scaled to unit length."""
    norms = [t.norm for t in words[:WORDS_READ]]
    names: set[str] = set()
    for i, word in enumerate(norms):
        names.add(f"w:{word}")
        names.add(f"b:{norms[i - 1] if i else '^'}_{word}")
        if len(word) > 3 and word.isalpha():
            padded = f"<{word}>"
            names.update(f"c:{padded[j : j + 4]}" for j in range(len(padded) - 3))
    if norms:
        names.add(f"b:{norms[-1]}_$")
        names.add(f"first:{norms[0]}")
    if not norms:
        names.add("empty")
    weight = 1.0 / max(1, len(names)) ** 0.5
    features: dict[int, float] = {}
    for name in names:
        slot = _slot(name)
        features[slot] = features.get(slot, 0.0) + weight
    return features


def _shape(word: str) -> str:
    if word.isdigit():
        return "digits"
    if not any(c.isalnum() for c in word):
        return "punct"
    if not word.isascii():
        return "script"
    return "word"


def token_features(words: Sequence[Token], label: str) -> list[list[str]]:
    """The tagger's features for each word of a message read as ``label``."""
    norms = [t.norm for t in words]
    out: list[list[str]] = []
    for i, word in enumerate(norms):
        before = norms[i - 1] if i else "^"
        before2 = norms[i - 2] if i > 1 else "^"
        after = norms[i + 1] if i + 1 < len(norms) else "$"
        after2 = norms[i + 2] if i + 2 < len(norms) else "$"
        out.append(
            [
                f"w={word}",
                f"s={word[-3:]}",
                f"p={word[:3]}",
                f"shape={_shape(word)}",
                f"w-1={before}",
                f"w-2={before2}",
                f"w+1={after}",
                f"w+2={after2}",
                f"w-1w={before}|{word}",
                f"ww+1={word}|{after}",
                f"w-2w-1={before2}|{before}",
                f"label={label}",
                f"label|w={label}|{word}",
                f"label|w-1={label}|{before}",
                f"pos={min(i, 4)}",
                f"left={min(len(norms) - i - 1, 4)}",
            ]
        )
    return out
