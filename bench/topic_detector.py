"""What keel's topic-shift detector costs a message, and that it stays flat as a conversation grows.

Runs the detector's decision for every message of a long synthetic conversation (the dialogues of
``bench/data/topics_dev.jsonl`` one after another, repeated): a return the message names, the
semantic signal against the active topic's recent messages and, on a shift, the look for a return
among the closed topics.
Prints milliseconds per message (median, 90th and 99th percentile) for the first and the last
stretch of the conversation, and the one-off cost of loading the model.

    python bench/topic_detector.py --messages 2000
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from keel.nodes.context import embeddings  # noqa: E402
from keel.nodes.context.dialogue_segments import judge  # noqa: E402
from keel.tools.tasks.todo import TODO_TOOLS  # noqa: E402

DEV = Path(__file__).parent / "data" / "topics_dev.jsonl"


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile of ``values`` (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    """Time the detector over a conversation of ``--messages`` messages."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=2000)
    args = parser.parse_args()
    began = time.perf_counter()
    embedder = embeddings.load_embedder()
    loaded = time.perf_counter() - began
    if embedder is None:
        raise SystemExit("the embedding model is not installed")
    turns = [t for line in DEV.read_text().splitlines() for t in json.loads(line)["turns"]]
    topics: list[list[str]] = [[turns[0]]]
    active, costs = 0, []
    for n in range(1, args.messages):
        message = f"{turns[n % len(turns)]} ({n})"  # every message new to the embedder
        start = time.perf_counter()
        shift = judge(message, topics, active, embedder, TODO_TOOLS, 0.32, 0.35)
        costs.append((time.perf_counter() - start) * 1000)
        if shift is not None:
            active = int(shift.topic_id) if shift.topic_id else len(topics)
            if shift.topic_id is None:
                topics.append([])
        topics[active].append(message)
    stretch = max(1, len(costs) // 10)
    print(f"model loaded in {loaded * 1000:.0f} ms; {len(costs)} messages, {len(topics)} topics")  # noqa: T201
    print("| messages | median ms | p90 ms | p99 ms |")  # noqa: T201
    print("|---|---|---|---|")  # noqa: T201
    for name, part in (("first", costs[:stretch]), ("last", costs[-stretch:])):
        cells = [statistics.median(part), percentile(part, 0.9), percentile(part, 0.99)]
        print(f"| {name} {len(part)} | " + " | ".join(f"{c:.3f}" for c in cells) + " |")  # noqa: T201


if __name__ == "__main__":
    main()
