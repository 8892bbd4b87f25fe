"""Fit the semantic topic-shift signal's weights on labelled dialogues (keel's own features).

Reads JSON lines ``{"id", "turns", "labels"}`` (``bench/topic_corpus.py`` makes them from public
corpora; ``bench/data/topics_dev.jsonl`` is keel's own), computes every turn's features exactly
as the detector does (``keel.nodes.context.topic_shifts.features``, the previous four turns as the
topic's recent messages), fits a logistic regression (numpy, L2), and prints the weights to put
in ``WEIGHTS`` with their feature names.

    python bench/topic_fit.py tiage-train.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from keel.nodes.context.embeddings import load_embedder  # noqa: E402
from keel.nodes.context.topic_shifts import FEATURES, RECENT, features  # noqa: E402


def rows(paths: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The features and labels of every turn after the first, of every dialogue in ``paths``."""
    embedder = load_embedder()
    if embedder is None:
        raise SystemExit("the embedding model is not installed")
    xs, ys = [], []
    for path in paths:
        for line in Path(path).read_text().splitlines():
            dialogue = json.loads(line)
            turns, labels = dialogue["turns"], dialogue["labels"]
            vectors = embedder.embed(turns)
            for i in range(1, len(turns)):
                lo = max(0, i - RECENT)
                xs.append(features(turns[i], vectors[i], turns[lo:i], vectors[lo:i]))
                ys.append(labels[i])
    return np.array(xs), np.array(ys, dtype=float)


def fit(x: np.ndarray, y: np.ndarray, steps: int = 4000, rate: float = 0.5) -> np.ndarray:
    """Logistic regression by gradient descent, with a little L2."""
    w = np.zeros(x.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-x @ w))
        w -= rate * (x.T @ (p - y) / len(y) + 1e-3 * w)
    return w


def main() -> None:
    """Fit on the files named on the command line and print the weights."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", help="JSON lines of labelled dialogues")
    args = parser.parse_args()
    x, y = rows(args.files)
    w = fit(x, y)
    print(f"turns: {len(y)}   shifts: {int(y.sum())}")  # noqa: T201
    for name, weight in zip(FEATURES, w, strict=True):
        print(f"  {weight:+.3f}  {name}")  # noqa: T201
    print("WEIGHTS = (" + ", ".join(f"{v:.3f}" for v in w) + ")")  # noqa: T201


if __name__ == "__main__":
    main()
