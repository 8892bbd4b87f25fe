"""The learned topic-shift signal: how likely a message leaves the active topic.

A small network reads a message, who says it, and the active topic's last few messages (with who
said them), and gives the probability that the message starts a new topic. Its inputs
(``features``):

- how alike the message is to the previous message, to the last two and to the topic's last
  few, by their sentence embeddings (``keel.nodes.context.embeddings``);
- the same for the message's last sentence, so a mixed message ("that is horrible, i love dogs.
  do you fish?") is read by the part that asks, and for the previous message's last sentence;
- its words: the share not said in the last three messages, how many, whether it refers back
  ("it", "they", ...);
- questions: whether the message asks, whether its last sentence does, whether the previous
  message or the one before asked (an answer follows its question);
- the speaker, and whether the speaker changed (in task dialogues people change the subject,
  not the agent answering them);
- how many messages it is compared with (the topic's last four at most);
- the embeddings themselves (element-wise products and differences with the previous message
  and the topic's last few, the message's own and the topic's), projected on 16 principal
  directions;
- how alike the message and the topic are to each kind of conversation it was trained on (the
  mean embedding of each training file's topics: everyday chit-chat, help-desk dialogues, todo
  sessions).

It is trained by ``keel topics train`` (``fit``) on labelled dialogues: the public corpora's
training and validation splits and keel's own todo sessions (``bench/data/topics/``, their
sources and licences in its README). Training reads each dialogue as the detector would online,
one message at a time, a topic starting where the labels say. The weights ship next to this
module (``topic_shift_model.npz``, about 100 KB); loading them takes numpy only.
"""

from __future__ import annotations

import functools
import re
import zipfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import structlog

from keel.nodes.context.embeddings import DIMENSIONS, TEXT_MAX_CHARS, Embedder, mean_direction
from keel.nodes.context.topic_words import QUESTION, WORD, content_words, stems

log = structlog.get_logger(__name__)

MODEL_FILE = Path(__file__).with_name("topic_shift_model.npz")
RECENT = 4
"""The active topic's messages a message is compared with (the last few)."""
ABOUT = 40
"""The rest of the topic's texts read for words it said before (the last of them)."""
PROJECTED = 16
"""Principal directions the embedding products are projected on."""
PRODUCTS = 6
"""Embedding-sized blocks in a feature row, after the scalars (see ``features``)."""
HIDDEN = 64
"""Units of the network's hidden layer."""
SEED = 0
"""Training is deterministic for a given set of dialogues."""

USER, ASSISTANT = "user", "assistant"
_ASSISTANT_NAMES = frozenset({"assistant", "agent", "ai", "bot", "system"})
SPEAKERS = _ASSISTANT_NAMES | {"user", "human", "customer", "client"}
"""The speaker names a dialogue file may use (in any case): the user's side, or the assistant's."""
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_BACK = frozenset("it that this they them those these he she him her his its their there".split())

SCALARS = (
    "similarity to the previous message",
    "similarity to the last two messages",
    "similarity to the topic's last messages",
    "similarity of its last sentence to the previous message",
    "similarity of its last sentence to the topic's last messages",
    "similarity to the previous message's last sentence",
    "share of content words not in the last three messages",
    "has no content word",
    "content words / 10 (at most 2)",
    "has a question mark",
    "starts like a question",
    "its last sentence asks",
    "has more than one sentence",
    "the previous message asked",
    "the previous message's last sentence asked",
    "the message before the previous one asked",
    "said by the user",
    "the speaker changed",
    "messages compared with / 8 (the topic's last four at most)",
    "refers back (it, that, they, she, ...)",
    "fewer than two content words",
    "share of its word stems said earlier in the topic (its title, older messages)",
    "similarity to the message before the previous one",
)


class Said(NamedTuple):
    """A message of a conversation and who said it (``USER`` or ``ASSISTANT``)."""

    speaker: str
    text: str


Dialogue = tuple[Sequence[Said], Sequence[int]]
"""A dialogue's turns and their labels (1 where a turn opens a topic)."""


def speaker(name: str | None) -> str:
    """``USER`` or ``ASSISTANT`` for a role or a corpus's speaker name ("agent", "system", ...)."""
    return ASSISTANT if (name or "").strip().lower() in _ASSISTANT_NAMES else USER


def alternating(texts: Sequence[str]) -> list[Said]:
    """A dialogue without speakers as one: the user first, then the assistant, in turn."""
    return [Said(ASSISTANT if i % 2 else USER, text) for i, text in enumerate(texts)]


def said_turns(texts: Sequence[str], speakers: Sequence[str] | None = None) -> list[Said]:
    """A dialogue's turns with who said each (``speakers`` by any known name; ``alternating``
    without them).
    """  # noqa: D205
    if speakers is None:
        return alternating(texts)
    return [Said(speaker(name), text) for name, text in zip(speakers, texts, strict=True)]


def _last_sentence(text: str) -> str:
    sentences = [s for s in _SENTENCE_END.split(text.strip()) if s]
    return sentences[-1] if len(sentences) > 1 else text


def features(
    message: Said, recent: Sequence[Said], embedder: Embedder, about: Sequence[str] = ()
) -> np.ndarray:
    """The network's input for ``message`` after the topic's ``recent`` messages (oldest first,
    at least one), ``about`` the rest of the topic (its title, older messages): the
    ``SCALARS``, then the embedding products to be projected.
    """  # noqa: D205
    recent = recent[-RECENT:]
    text, previous = message.text[:TEXT_MAX_CHARS], recent[-1].text[:TEXT_MAX_CHARS]
    last, previous_last = _last_sentence(text), _last_sentence(previous)
    vectors = embedder.embed([text, last, previous_last, *(said.text for said in recent)])
    u, lu, pl, window = vectors[0], vectors[1], vectors[2], vectors[3:]
    prev, topic = window[-1], mean_direction(window)
    words = content_words(text)
    seen = set().union(*(content_words(said.text[:TEXT_MAX_CHARS]) for said in recent[-3:]))
    wanted = stems(text)
    older = (stems(t[:TEXT_MAX_CHARS]) for t in about[-ABOUT:])
    earlier = set().union(*older) if wanted else set()
    scalars = [
        float(u @ prev),
        float(u @ mean_direction(window[-2:])),
        float(u @ topic),
        float(lu @ prev),
        float(lu @ topic),
        float(u @ pl),
        len(words - seen) / (len(words) or 1),
        float(not words),
        min(len(words), 20) / 10,
        float("?" in text),
        float(bool(QUESTION.match(text))),
        float("?" in last),
        float(last != text),
        float("?" in previous),
        float("?" in previous_last),
        float(len(recent) > 1 and "?" in recent[-2].text),
        float(message.speaker == USER),
        float(message.speaker != recent[-1].speaker),
        min(len(recent), 8) / 8,
        float(bool(_BACK & set(WORD.findall(text.lower())))),
        float(len(words) < 2),
        len(wanted & earlier) / (len(wanted) or 1),
        float(u @ window[-2]) if len(window) > 1 else 0.0,
    ]
    products = np.concatenate([u * prev, np.abs(u - prev), u * topic, lu * prev, u, topic])
    return np.concatenate([np.asarray(scalars, dtype=np.float32), products])


class ShiftModel:
    """The trained network: a projection of the embedding products, a scaler, one hidden layer."""

    def __init__(self, arrays: dict[str, np.ndarray]) -> None:
        """Hold the arrays ``fit`` makes (as saved in ``topic_shift_model.npz``)."""
        self.arrays = arrays
        self._mean, self._axes = arrays["projection_mean"], arrays["projection"]
        self._kinds = arrays["kinds"]
        self._center, self._scale = arrays["scaler_mean"], arrays["scaler_scale"]
        self._w1, self._b1 = arrays["hidden_weights"], arrays["hidden_bias"]
        self._w2, self._b2 = arrays["output_weights"], arrays["output_bias"]

    def inputs(self, rows: np.ndarray) -> np.ndarray:
        """The scaled network inputs of feature rows (``features``)."""
        rows = np.atleast_2d(rows).astype(np.float64)
        scalars, products = rows[:, : len(SCALARS)], rows[:, len(SCALARS) :]
        projected = (products - self._mean) @ self._axes.T
        kinds = _kinds(products, self._kinds)
        return (np.concatenate([scalars, projected, kinds], axis=1) - self._center) / self._scale

    def probabilities(self, rows: np.ndarray) -> np.ndarray:
        """The probability of a shift for each feature row."""
        hidden = np.maximum(self.inputs(rows) @ self._w1 + self._b1, 0.0)
        logits = (hidden @ self._w2 + self._b2).ravel()
        return 1.0 / (1.0 + np.exp(-logits))

    def probability(
        self, message: Said, recent: Sequence[Said], embedder: Embedder, about: Sequence[str] = ()
    ) -> float:
        """How likely ``message`` leaves the topic of ``recent`` (at least one message) and
        ``about`` (the rest of it).
        """  # noqa: D205
        return float(self.probabilities(features(message, recent, embedder, about))[0])

    def save(self, path: Path) -> None:
        """Write the arrays (numpy's compressed ``.npz``, in single precision)."""
        single: dict[str, Any] = {k: v.astype(np.float32) for k, v in self.arrays.items()}
        with path.open("wb") as f:
            np.savez_compressed(f, **single)


def training_rows(
    dialogues: Iterable[Dialogue], embedder: Embedder
) -> tuple[np.ndarray, np.ndarray]:
    """Every message after the first of every dialogue as the detector reads it online, with
    its label: the topic's messages so far are those since the last labelled shift.
    """  # noqa: D205
    rows: list[np.ndarray] = []
    labels: list[int] = []
    for turns, marks in dialogues:
        start = 0
        for i in range(1, len(turns)):
            split = max(start, i - RECENT)
            about = [said.text for said in turns[start:split]]
            rows.append(features(turns[i], turns[split:i], embedder, about))
            labels.append(int(marks[i]))
            if marks[i]:
                start = i
    return np.stack(rows), np.asarray(labels)


def train(parts: Sequence[tuple[Sequence[Dialogue], float]], embedder: Embedder) -> ShiftModel:
    """The network trained on ``parts``: each a kind of conversation (its dialogues) and how
    many times its messages count.
    """  # noqa: D205
    rows, labels, weights, kinds = [], [], [], []
    for kind, (dialogues, weight) in enumerate(parts):
        found, marks = training_rows(dialogues, embedder)
        rows.append(found)
        labels.append(marks)
        weights.append(np.full(len(marks), weight))
        kinds.append(np.full(len(marks), kind))
    return fit(*(np.concatenate(c) for c in (rows, labels, weights, kinds)))


def _kinds(products: np.ndarray, kinds: np.ndarray) -> np.ndarray:
    """How alike each row's message and topic are to each kind of conversation trained on."""
    message, topic = products[:, -2 * DIMENSIONS : -DIMENSIONS], products[:, -DIMENSIONS:]
    return np.concatenate([message @ kinds.T, topic @ kinds.T], axis=1)


def fit(
    rows: np.ndarray,
    labels: np.ndarray,
    weights: np.ndarray | None = None,
    kinds: np.ndarray | None = None,
) -> ShiftModel:
    """Train the network on feature rows, their labels and how much each counts (scikit-learn;
    deterministic).
    """  # noqa: D205
    from sklearn.decomposition import PCA
    from sklearn.neural_network import MLPClassifier
    from sklearn.preprocessing import StandardScaler

    rows = rows.astype(np.float64)
    scalars, products = rows[:, : len(SCALARS)], rows[:, len(SCALARS) :]
    projection = PCA(PROJECTED, random_state=SEED).fit(products)
    kinds = np.zeros(len(labels), dtype=int) if kinds is None else kinds
    centers = np.stack([products[kinds == k, -DIMENSIONS:].mean(axis=0) for k in np.unique(kinds)])
    centers /= np.linalg.norm(centers, axis=1, keepdims=True)
    inputs = np.concatenate(
        [scalars, projection.transform(products), _kinds(products, centers)], axis=1
    )
    scaler = StandardScaler().fit(inputs)
    scale = np.where(scaler.scale_ > 0, scaler.scale_, 1.0)
    network = MLPClassifier(
        (HIDDEN,), alpha=0.1, max_iter=300, early_stopping=True, random_state=SEED
    ).fit((inputs - scaler.mean_) / scale, labels, sample_weight=weights)
    return ShiftModel(
        {
            "projection_mean": projection.mean_,
            "projection": projection.components_,
            "kinds": centers,
            "scaler_mean": scaler.mean_,
            "scaler_scale": scale,
            "hidden_weights": network.coefs_[0],
            "hidden_bias": network.intercepts_[0],
            "output_weights": network.coefs_[1],
            "output_bias": network.intercepts_[1],
        }
    )


@functools.cache
def load_shift_model(path: Path = MODEL_FILE) -> ShiftModel | None:
    """The trained network, read once; None when its file is missing, unreadable or made for
    other features (topics change by phrases and gaps only then).
    """  # noqa: D205
    try:
        with np.load(path) as saved:
            model = ShiftModel({name: saved[name] for name in saved.files})
        inputs = len(SCALARS) + PROJECTED + 2 * len(model.arrays["kinds"])
        shapes = {
            "projection": (PROJECTED, PRODUCTS * DIMENSIONS),
            "hidden_weights": (inputs, HIDDEN),
        }
        if any(model.arrays[name].shape != shape for name, shape in shapes.items()):
            raise ValueError("its weights are for other inputs than these features")
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as exc:
        log.warning("topic_model_unavailable", error=type(exc).__name__, detail=str(exc)[:200])
        return None
    return model
