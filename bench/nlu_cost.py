"""What the offline understanding costs a message, with a user who has 1,000 tasks.

First the resident memory the learned model adds once loaded. Then for every message of a labelled
set (``bench/data/nlu_dev.jsonl`` by default), uncached: the message understood
(``keel.tools.understanding.reading``: the decision table and the learned model), alone, and with
each task it names by what it is ranked against the user's titles
(``keel.tools.tasks.matching.rank``, as ``find_todo_tasks`` does over one read of them). Then the
offline model's whole decision (``decide``) after 10 and after 1,000 earlier messages, to show that
it does not grow with the conversation. Prints milliseconds per message: median, 90th and 99th
percentile.

    python bench/nlu_cost.py --tasks 1000
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langchain_core.messages import AIMessage, HumanMessage  # noqa: E402

from keel.nodes.models.decisions import decide  # noqa: E402
from keel.tools.tasks import matching  # noqa: E402
from keel.tools.tasks.todo import TODO_TOOLS  # noqa: E402
from keel.tools.understanding import reading as understanding  # noqa: E402
from keel.tools.understanding.nlu import reader_for  # noqa: E402

WORDS = (
    "buy milk call mom book dentist pay rent walk dog clean garage email boss fix bike water "
    "plants renew passport order lenses pick up parcel bake bread plan trip read report wash car"
).split()


def titles(count: int, seed: int = 7) -> list[dict[str, object]]:
    rng = random.Random(seed)
    made = [" ".join(rng.sample(WORDS, rng.randint(2, 4))) for _ in range(count)]
    return [{"id": n, "title": t, "completed": False} for n, t in enumerate(made, start=1)]


def understand_and_rank(message: str, tasks: list[dict[str, object]], cold: bool) -> None:
    understanding._understand.cache_clear()
    understanding._settled.cache_clear()
    if cold:  # the titles' words not seen before (a process's first turn for this user)
        matching._title_words.cache_clear()
        matching._pair_score.cache_clear()
    for intent in understanding.understand(message, TODO_TOOLS).intents:
        if intent.needs_lookup and intent.select is None:
            matching.rank(intent.ref or "", tasks)


def resident_mb() -> float:
    """This process's resident memory (Linux)."""
    status = Path("/proc/self/status").read_text()
    return int(next(x for x in status.splitlines() if x.startswith("VmRSS:")).split()[1]) / 1024


def timed(fn, rounds: int) -> list[float]:  # type: ignore[no-untyped-def]
    spent = []
    for _ in range(rounds):
        began = time.perf_counter()
        fn()
        spent.append((time.perf_counter() - began) * 1000)
    return spent


def line(label: str, ms: list[float]) -> str:
    q = statistics.quantiles(ms, n=100)
    return f"{label:44} median {statistics.median(ms):6.3f}  p90 {q[89]:6.3f}  p99 {q[98]:6.3f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--data", default="bench/data/nlu_dev.jsonl")
    args = parser.parse_args()
    before = resident_mb()
    reader_for(TODO_TOOLS).read("add buy milk")  # the learned model loaded
    print(f"resident memory added by the learned model: {resident_mb() - before:.1f} MB")
    cases = [json.loads(x) for x in Path(args.data).read_text().splitlines() if x.strip()]
    messages = [c["message"] for c in cases]
    tasks = titles(args.tasks)
    alone = [t for m in messages for t in timed(lambda m=m: understand_and_rank(m, [], False), 3)]
    print(line("understand (the table and the learned model)", alone))
    for cold in (True, False):
        each = [
            t
            for m in messages
            for t in timed(lambda m=m, cold=cold: understand_and_rank(m, tasks, cold), 3)
        ]
        label = "titles read before" if not cold else "titles new"
        print(line(f"understand + rank ({args.tasks:,} tasks, {label})", each))
    for earlier in (10, 1000):
        history = [
            m for k in range(earlier // 2) for m in (HumanMessage(f"add item {k}"), AIMessage("ok"))
        ]

        def one(m: str, history=history) -> None:  # type: ignore[no-untyped-def]
            understanding._understand.cache_clear()
            understanding._settled.cache_clear()
            decide([*history, HumanMessage(m)], TODO_TOOLS)

        spent = [t for m in messages for t in timed(lambda m=m: one(m), 3)]
        print(line(f"decide, first round ({earlier:,} earlier messages)", spent))


if __name__ == "__main__":
    main()
