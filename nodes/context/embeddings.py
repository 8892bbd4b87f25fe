"""Sentence embeddings for topic shifts: a small static model that ships inside its package.

keel uses WordLlama's ``l2_supercat`` model (256 dimensions, 16 MB of float16 token vectors and
its tokenizer, both inside the ``wordllama`` wheel from PyPI): a message's embedding is the mean
of its tokens' vectors, computed with numpy on the CPU in well under a millisecond. Nothing is
fetched from a model hub: the files are read from the installed package. When the package or its
files are missing, ``load_embedder`` says so once and returns None, and keel detects topic
shifts by its phrases alone.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import structlog

log = structlog.get_logger(__name__)

MODEL = "l2_supercat"
DIMENSIONS = 256


TEXT_MAX_CHARS = 2000
"""A text is embedded (and kept) by its first 2,000 characters: enough to say what it is about,
and a 32,000-character message costs no more than a long one."""
KEPT = 4096
"""Vectors kept (the most recently used): a topic's recent messages and the closed topics'
summaries are embedded once, not at every turn, so a turn's cost stays flat."""


class Embedder:
    """Unit-length sentence vectors for texts (rows of a float32 array), the recent ones kept."""

    def __init__(self, model: Any) -> None:
        """Wrap a loaded WordLlama model."""
        self.model = model
        self.kept: OrderedDict[str, np.ndarray] = OrderedDict()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One unit vector per text (a zero vector for a text with no known token)."""
        texts = [t[:TEXT_MAX_CHARS] for t in texts]
        missing = list(dict.fromkeys(t for t in texts if t not in self.kept))
        if missing:
            made = np.asarray(self.model.embed(missing), dtype=np.float32).reshape(len(missing), -1)
            norms = np.linalg.norm(made, axis=1, keepdims=True)
            made = np.divide(made, norms, out=np.zeros_like(made), where=norms > 0)
            self.kept.update(zip(missing, made, strict=True))
        for text in texts:
            self.kept.move_to_end(text)
        vectors = [self.kept[t] for t in texts]
        while len(self.kept) > KEPT:
            self.kept.popitem(last=False)
        return np.stack(vectors) if vectors else np.zeros((0, DIMENSIONS), dtype=np.float32)


def mean_direction(vectors: np.ndarray) -> np.ndarray:
    """The unit vector of the mean of ``vectors`` (rows): what several texts are about together."""
    mean = vectors.mean(axis=0)
    norm = float(np.linalg.norm(mean))
    return mean / norm if norm else mean


@functools.cache
def load_embedder() -> Embedder | None:
    """The process's embedder, read once from the installed package; None when it is absent."""
    try:
        import wordllama
        from safetensors import safe_open
        from tokenizers import Tokenizer
        from wordllama.inference import WordLlamaInference

        root = Path(wordllama.__file__).parent
        tokenizer = Tokenizer.from_file(str(root / "tokenizers" / f"{MODEL}_tokenizer_config.json"))
        weights = root / "weights" / f"{MODEL}_{DIMENSIONS}.safetensors"
        with safe_open(str(weights), framework="np", device="cpu") as f:
            table = f.get_tensor("embedding.weight")
        embedder = Embedder(WordLlamaInference(table, tokenizer, binary=False))
    except Exception as exc:  # the package, or a file of it, is missing: phrases only
        log.warning("topic_embeddings_unavailable", error=type(exc).__name__, detail=str(exc)[:200])
        return None
    log.info("topic_embeddings_loaded", model=MODEL, dimensions=DIMENSIONS)
    return embedder
