"""How the topic-shift threshold was chosen: on held-out parts of the training data only.

Trains the network as ``keel topics train`` does, but without a fifth of SuperDialseg's
validation split and a third of keel's todo sessions, and without TIAGE's validation split; then
runs keel's detector (``dialogue_segments.segment``, the node's decisions) over those held-out
dialogues and keel's own ``topics_dev.jsonl`` at a few thresholds, and prints F1 and the false
shifts of each. The test splits are never read.

    python bench/topic_threshold.py
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from unittest.mock import patch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from keel.nodes.context import topic_shifts  # noqa: E402
from keel.nodes.context.dialogue_segments import segment  # noqa: E402
from keel.nodes.context.embeddings import Embedder, load_embedder  # noqa: E402
from keel.nodes.context.topic_model import Dialogue, said_turns, train  # noqa: E402
from keel.tools.tasks.todo import TODO_TOOLS  # noqa: E402

DATA = Path(__file__).parent / "data"


def dialogues(path: Path) -> list[Dialogue]:
    """The labelled dialogues of a keel JSON lines file (alternating speakers when it has none)."""
    found: list[Dialogue] = []
    for line in path.read_text().splitlines():
        d = json.loads(line)
        found.append((said_turns(d["turns"], d.get("speakers")), d["labels"]))
    return found


def scores(held: Sequence[Dialogue], embedder: Embedder, threshold: float) -> tuple[float, int]:
    """F1 and false shifts of keel's detector over ``held``."""
    tp = fp = fn = 0
    for turns, labels in held:
        opens = {i for i, _ in segment(turns, embedder, TODO_TOOLS, threshold, 0.35)}
        gold = {i for i, label in enumerate(labels) if label and i}
        tp, fp, fn = tp + len(opens & gold), fp + len(opens - gold), fn + len(gold - opens)
    f1 = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
    return f1, fp


def main() -> None:
    """Train without the held-out parts; print the held-out scores at each threshold."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--thresholds", default="0.3,0.35,0.4,0.45,0.5")
    args = parser.parse_args()
    embedder = load_embedder()
    if embedder is None:
        raise SystemExit("the embedding model is not installed")
    superseg = dialogues(DATA / "topics" / "superseg_validation.jsonl")
    todo = dialogues(DATA / "topics" / "todo_sessions.jsonl")
    parts = [
        (dialogues(DATA / "topics" / "tiage_train.jsonl"), 1.0),
        ([d for k, d in enumerate(superseg) if k % 5], 1.0),
        ([d for k, d in enumerate(todo) if k % 3], 6.0),
    ]
    held = {
        "TIAGE validation": dialogues(DATA / "topics" / "tiage_validation.jsonl"),
        "SuperDialseg validation, a fifth": [d for k, d in enumerate(superseg) if k % 5 == 0],
        "todo sessions, a third": [d for k, d in enumerate(todo) if k % 3 == 0],
        "topics_dev.jsonl": dialogues(DATA / "topics_dev.jsonl"),
    }
    network = train(parts, embedder)
    # the detector reads the held-out network in place of the shipped one
    with patch.object(topic_shifts, "load_shift_model", lambda: network):
        print("| threshold | " + " | ".join(f"{name}: F1, false shifts" for name in held) + " |")  # noqa: T201
        print("|---" * (len(held) + 1) + "|")  # noqa: T201
        for threshold in (float(t) for t in args.thresholds.split(",")):
            cells = [scores(part, embedder, threshold) for part in held.values()]
            print(f"| {threshold} | " + " | ".join(f"{f1:.3f}, {fp}" for f1, fp in cells) + " |")  # noqa: T201


if __name__ == "__main__":
    main()
