"""Making the learned understanding: the classifier and the tagger, from ``nlu.data``.

``train(tools, folder)`` fits a logistic regression over the hashed features of every training
utterance (scikit-learn, L-BFGS: the same data gives the same weights) and a linear-chain CRF over
their tagged words (CRFsuite), and writes them to ``folder`` with a manifest naming the labels and
the fingerprint of what they were made from. ``keel nlu train`` calls it for the todo tools; a
process whose tools differ from the shipped model's trains its own once and keeps it
(``keel.tools.understanding.nlu.reader_for``). Takes well under two minutes on two cores.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pycrfsuite
import structlog

from keel.tools.understanding.nlu.data import (
    OUTSIDE,
    TALK,
    Sample,
    fingerprint,
    labels_of,
    training,
)
from keel.tools.understanding.nlu.features import BUCKETS, sentence_features, token_features, tokens
from keel.tools.understanding.nlu.model import MANIFEST, TAGGER, VOCABULARY, WEIGHTS

if TYPE_CHECKING:
    from scipy.sparse import csr_matrix

log = structlog.get_logger(__name__)

REGULARISATION = 60.0
"""The classifier's inverse regularisation strength (scikit-learn's ``C``)."""
BALANCE = 0.5
"""How far each label's samples are weighted to even out the labels: its weight is (samples /
(labels x the label's samples)) to this power; 1 would weigh every label as a whole the same,
which lets a few hundred "add ..." requests outweigh thousands of other assistants' "add this
song to my playlist"; 0 would let the many things that are not requests drown the requests."""
TAGGER_PARAMS = {
    "c1": 0.05,
    "c2": 0.01,
    "max_iterations": 150,
    "feature.possible_transitions": True,
}
"""CRFsuite's L-BFGS settings: a little L1 and L2, a fixed number of rounds."""


def _matrix(samples: Sequence[Sample]) -> csr_matrix:
    from scipy.sparse import csr_matrix  # scikit-learn and SciPy load only to train (seconds)

    rows, cols, values = [], [], []
    for i, sample in enumerate(samples):
        for slot, value in sentence_features(tokens(sample.text)).items():
            rows.append(i)
            cols.append(slot)
            values.append(value)
    return csr_matrix((values, (rows, cols)), shape=(len(samples), BUCKETS), dtype=np.float64)


def _weights(samples: Sequence[Sample], labels: Sequence[str]) -> dict[str, np.ndarray]:
    """The classifier's weights, kept only for the feature slots training saw."""
    from sklearn.linear_model import LogisticRegression

    index = {label: i for i, label in enumerate(labels)}
    features = _matrix(samples)
    targets = np.array([index[s.label] for s in samples])
    fitted = LogisticRegression(
        C=REGULARISATION, max_iter=2000, class_weight=_label_weights(targets)
    )
    fitted.fit(features, targets)
    coef = np.zeros((len(labels), BUCKETS))
    bias = np.full(len(labels), -30.0)  # a label with no sample is never read
    coef[fitted.classes_] = fitted.coef_
    bias[fitted.classes_] = fitted.intercept_
    slots = np.unique(features.indices)
    return {
        "slots": slots.astype(np.int32),
        "rows": coef[:, slots].T.astype(np.float32),
        "bias": bias,
    }


def _label_weights(targets: np.ndarray) -> dict[int, float]:
    """Each label's sample weight (see ``BALANCE``)."""
    counts = np.bincount(targets)
    present = np.flatnonzero(counts)
    share = len(targets) / (len(present) * counts[present])
    weights = share**BALANCE
    return {int(label): float(weight) for label, weight in zip(present, weights, strict=True)}


def _tagger(samples: Sequence[Sample], path: Path) -> None:
    """The tagger, from the requests, and from talk with a date marked (the words of dates are
    the same whatever is asked): it is asked only about a message read as a request.
    """  # noqa: D205
    trainer = pycrfsuite.Trainer(verbose=False)
    for sample in samples:
        if sample.label in TALK and all(t == OUTSIDE for t in sample.tags):
            continue
        words = tokens(sample.text)
        if words and len(words) == len(sample.tags):
            trainer.append(token_features(words, sample.label), list(sample.tags))
    trainer.set_params(TAGGER_PARAMS)
    trainer.train(str(path))


def train(tools: Sequence[Any], folder: Path) -> Path:
    """Fit the model for ``tools`` and write it to ``folder`` (made if missing)."""
    started = time.monotonic()
    folder.mkdir(parents=True, exist_ok=True)
    samples = training(tools)
    labels = labels_of(tools)
    weights = _weights(samples, labels)
    np.savez_compressed(
        folder / WEIGHTS, slots=weights["slots"], rows=weights["rows"], bias=weights["bias"]
    )
    _tagger(samples, folder / TAGGER)
    seen = sorted(
        {w.norm for s in samples for w in tokens(s.text) if any(c.isalpha() for c in w.text)}
    )
    (folder / VOCABULARY).write_text("\n".join(seen) + "\n", encoding="utf-8")
    manifest = {"labels": list(labels), "fingerprint": fingerprint(tools), "samples": len(samples)}
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    log.info("nlu_trained", samples=len(samples), seconds=round(time.monotonic() - started, 1))
    return folder
