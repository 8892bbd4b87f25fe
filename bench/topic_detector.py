"""What keel's topic-shift detector costs a message, and that it stays flat as a conversation grows.

Runs the detector's decision for every message of a long synthetic conversation (the dialogues of
``bench/data/topics_dev.jsonl`` one after another, repeated): a return the message names, the
semantic signal against the active topic's recent messages and, on a shift, the look for a return
among the closed topics.
The speakers alternate and every message is judged, the assistant's too (the node judges only the
user's, so this is the dearer case), once as with the offline model (a request it is sure of stays
in its topic: the detector asks the offline understanding, whose reading the model's turn then
reuses; and again with that reading made first, which is what the detector adds to an offline
turn) and once as with a language model. Prints milliseconds per message (median, 90th and 99th
percentile) for the first and the last stretch of the conversation, the one-off cost of loading
the embeddings, the shift network and the offline understanding's model (which keeps a todo
request in its topic), and the resident memory that loading adds.

    python bench/topic_detector.py --messages 2000
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from langchain_core.tools import BaseTool

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from keel.nodes.context import embeddings  # noqa: E402
from keel.nodes.context.dialogue_segments import judge  # noqa: E402
from keel.nodes.context.topic_model import Said, alternating, load_shift_model  # noqa: E402
from keel.tools.tasks.todo import TODO_TOOLS  # noqa: E402
from keel.tools.understanding.reading import sure_request, understand  # noqa: E402

DEV = Path(__file__).parent / "data" / "topics_dev.jsonl"


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile of ``values`` (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def resident_mb() -> float:
    """The process's resident memory now, in MB (Linux)."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * 4096 / 1e6


def run(
    turns: list[Said],
    messages: int,
    embedder: embeddings.Embedder,
    tools: Sequence[BaseTool] | None,
    read_first: bool = False,
) -> tuple[list[float], int]:
    """Judge ``messages`` messages as the node would; their costs in ms, and the topics made.

    ``read_first``: the offline understanding reads each message before it is timed (what the
    offline model's turn needs anyway, and then finds made).
    """
    topics: list[list[Said]] = [[turns[0]]]
    active, costs = 0, []
    for n in range(1, messages):
        said = turns[n % len(turns)]
        message = Said(said.speaker, f"{said.text} ({n})")  # every message new to the embedder
        if read_first and tools:
            understand(message.text, tools)
        start = time.perf_counter()
        shift = judge(message, topics, active, embedder, tools, 0.4, 0.35)
        costs.append((time.perf_counter() - start) * 1000)
        if shift is not None:
            active = int(shift.topic_id) if shift.topic_id else len(topics)
            if shift.topic_id is None:
                topics.append([])
        topics[active].append(message)
    return costs, len(topics)


def main() -> None:
    """Time the detector over a conversation of ``--messages`` messages, with the offline model
    (which reads each user message first) and with a language model (which does not).
    """  # noqa: D205
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=2000)
    args = parser.parse_args()
    before = resident_mb()
    began = time.perf_counter()
    embedder = embeddings.load_embedder()
    network = load_shift_model()
    sure_request("Add buy milk", TODO_TOOLS)  # loads the offline understanding's model, once
    loaded = time.perf_counter() - began
    if embedder is None or network is None:
        raise SystemExit("the embedding model or the shift network is not installed")
    added = resident_mb() - before
    texts = [t for line in DEV.read_text().splitlines() for t in json.loads(line)["turns"]]
    turns = alternating(texts)
    print(  # noqa: T201
        f"models loaded in {loaded * 1000:.0f} ms, {added:.1f} MB resident added; "
        f"{args.messages - 1} messages"
    )
    print("| model | messages | median ms | p90 ms | p99 ms |")  # noqa: T201
    print("|---|---|---|---|---|")  # noqa: T201
    models: list[tuple[str, Sequence[BaseTool] | None, bool]] = [
        ("offline", TODO_TOOLS, False),
        ("offline, the message read first", TODO_TOOLS, True),
        ("language model", None, False),
    ]
    for model, tools, read_first in models:
        costs, _ = run(turns, args.messages, embedder, tools, read_first)
        stretch = max(1, len(costs) // 10)
        for name, part in (("first", costs[:stretch]), ("last", costs[-stretch:])):
            cells = [statistics.median(part), percentile(part, 0.9), percentile(part, 0.99)]
            row = " | ".join(f"{c:.3f}" for c in cells)
            print(f"| {model} | {name} {len(part)} | {row} |")  # noqa: T201


if __name__ == "__main__":
    main()
