"""The learned understanding at run time: what a message asks for, how sure, and its arguments.

``Reader.read(text)`` gives a ``Reading``: the classifier's label (a tool's name, or a kind of talk
such as ``offtopic``) with its probability and the runner-up, and the words the tagger marks as each
argument (``title``, ``ref``), cut from the person's own text. The classifier is a linear model over
hashed n-grams (``keel.tools.understanding.nlu.features``), kept as a weight per label for each
feature slot that training saw; the tagger is a linear-chain CRF (CRFsuite). Both are files made by
``keel.tools.understanding.nlu.training`` (``keel nlu train``); loading them costs a few
milliseconds, reading a message a fraction of one. CPU only, deterministic, nothing fetched.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from itertools import groupby
from pathlib import Path

import numpy as np
import pycrfsuite

from keel.tools.understanding.nlu.data import TALK
from keel.tools.understanding.nlu.features import (
    WORDS_READ,
    Token,
    sentence_features,
    token_features,
    tokens,
)

TAGGED_MAX_TOKENS = 200
"""The tagger reads a message's first words only; the rest of a longer one is no argument."""
WEIGHTS = "classifier.npz"
TAGGER = "tagger.crfsuite"
MANIFEST = "manifest.json"
VOCABULARY = "vocabulary.txt"


@dataclass(frozen=True)
class Reading:
    """A message as the learned model reads it."""

    label: str
    """What it asks for: a tool's name, or a kind of talk (``offtopic``, ``greeting``, ...)."""
    confidence: float
    """The classifier's probability of ``label``."""
    runner_up: str
    """The next most likely label."""
    runner_up_confidence: float
    args: dict[str, str] = field(default_factory=dict)
    """Each argument the tagger found, as the person's own words ("eggs" for ``title``)."""
    familiar: float = 1.0
    """The share of the message's words the model saw in training (gibberish: 0)."""


class Reader:
    """A trained classifier and tagger, loaded from the folder ``training`` wrote."""

    def __init__(self, folder: Path) -> None:
        """Load the model in ``folder``."""
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        self.labels: tuple[str, ...] = tuple(manifest["labels"])
        self.vocabulary = frozenset((folder / VOCABULARY).read_text(encoding="utf-8").split())
        self.fingerprint: str = manifest["fingerprint"]
        with np.load(folder / WEIGHTS) as saved:
            slots, rows, self.bias = saved["slots"], saved["rows"], saved["bias"]
        self._row_of = {int(s): i for i, s in enumerate(slots)}
        self._rows = rows.astype(np.float32)
        self._tagger = pycrfsuite.Tagger()
        self._tagger.open(str(folder / TAGGER))

    def scores(self, words: list[Token]) -> np.ndarray:
        """The classifier's probability of each label for a message's words."""
        features = sentence_features(words)
        known = [(self._row_of[s], v) for s, v in features.items() if s in self._row_of]
        logits = self.bias.astype(np.float64).copy()
        if known:
            index = np.fromiter((i for i, _ in known), dtype=np.int64, count=len(known))
            values = np.fromiter((v for _, v in known), dtype=np.float64, count=len(known))
            logits += values @ self._rows[index]
        logits -= logits.max()
        probs = np.exp(logits)
        return probs / probs.sum()

    def familiar(self, words: list[Token]) -> float:
        """The share of ``words`` (letters only) that training saw; 1 for a message of none."""
        lettered = [w.norm for w in words[:WORDS_READ] if any(c.isalpha() for c in w.text)]
        if not lettered:
            return 1.0
        return sum(1 for w in lettered if w in self.vocabulary) / len(lettered)

    def read(self, text: str) -> Reading:
        """What ``text`` asks for, how sure the model is, and the words of each argument."""
        words = tokens(text)
        probs = self.scores(words)
        order = np.argsort(-probs, kind="stable")
        first, second = int(order[0]), int(order[1])
        label = self.labels[first]
        return Reading(
            label=label,
            confidence=round(float(probs[first]), 4),
            runner_up=self.labels[second],
            runner_up_confidence=round(float(probs[second]), 4),
            args={} if label in TALK else self.arguments(text, label)[0],
            familiar=self.familiar(words),
        )

    def tags(self, words: list[Token], label: str) -> tuple[list[str], float]:
        """The tagger's tag for each of ``words`` read as ``label``, and how sure it is of them
        all (the probability of the whole sequence).
        """  # noqa: D205
        head = words[:TAGGED_MAX_TOKENS]
        if not head:
            return [], 1.0
        found = self._tagger.tag(token_features(head, label))
        sure = float(self._tagger.probability(found))
        return list(found) + ["O"] * (len(words) - len(head)), sure

    def certainty(self, text: str, label: str, tag: str) -> float:
        """How sure the tagger is of the words it marks ``tag`` in ``text`` read as ``label``:
        the least probability of that tag among them (0 when it marks none).
        """  # noqa: D205
        words = tokens(text)[:TAGGED_MAX_TOKENS]
        tags, _ = self.tags(words, label)
        marked = [i for i, t in enumerate(tags) if t == tag]
        return min((self._tagger.marginal(tag, i) for i in marked), default=0.0)

    def arguments(self, text: str, label: str) -> tuple[dict[str, str], float]:
        """The words of ``text`` the tagger marks as each argument of a request for ``label``,
        and how sure it is of them.

        An argument is the longest run of words with its tag (the first, on a tie), cut from the
        text with what stands between them ("Äpfel kaufen", "call bill tomorrow at 5").
        """  # noqa: D205
        words = tokens(text)
        tags, sure = self.tags(words, label)
        runs: dict[str, tuple[int, int]] = {}
        at = 0
        for tag, group in groupby(tags):
            size = len(list(group))
            best = runs.get(tag)
            if tag != "O" and (best is None or size > best[1] - best[0]):
                runs[tag] = (at, at + size)
            at += size
        found = {
            tag: text[words[a].start : words[b - 1].end].strip(" ,.;:!?\"'")
            for tag, (a, b) in runs.items()
        }
        return found, sure
