"""The benchmark scripts still run against the code as it is (tiny sizes; no figure is checked).

docs/benchmarks.md quotes their output; a script that no longer runs would leave those figures
without a way to measure them again.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def bench(*args: str, timeout: float = 300) -> str:
    done = subprocess.run(
        [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


async def test_the_plain_baseline_does_the_todo_work(tmp_path):
    """The baseline calls the tools it is compared on: a task a turn, as keel's turn makes."""
    sys.path.insert(0, str(ROOT))
    from langchain_core.messages import HumanMessage

    from bench.plain_react import build_plain_graph
    from bench.plain_server import open_plain

    async with open_plain(f"sqlite:///{tmp_path / 'plain.db'}") as (saver, store):
        graph = build_plain_graph(saver, store, "local")
        config = {"configurable": {"thread_id": "baseline"}}
        for k in range(1, 4):
            state = await graph.ainvoke({"messages": [HumanMessage(f"Add item {k}")]}, config)
            assert state["messages"][-1].text == f"Created task: item {k}"
            assert [m.type for m in state["messages"][-4:]] == ["human", "ai", "tool", "ai"]
        assert [t["title"] for t in await store.list("local")] == ["item 1", "item 2", "item 3"]


def test_the_turn_profile_runs():
    out = bench("bench/turn_profile.py", "--turns", "3")
    assert "| checkpoint writes | 7.0 |" in out  # four checkpoints and three steps' writes
    assert "rest (graph engine, nodes, CPU)" in out


def test_the_engine_floor_runs():
    out = bench("bench/engine_floor.py", "--turns", "10", "--length", "4")
    rows = [line for line in out.splitlines() if line.startswith("| ")]
    assert len(rows) == 7  # the header, one per floor (three savers, the flat shape), keel, plain
    assert "keel/plain throughput" in out and "the other shape's floor" in out


def test_the_turn_cost_bench_runs():
    out = bench("bench/turn_cost.py", "--turns", "12", "--backends", "sqlite")
    assert "| sqlite | keel |" in out and "| sqlite | plain |" in out


@pytest.mark.parametrize("deep", [False, True])
def test_the_http_load_bench_runs(deep):
    how = ["--measure-from-turn", "2"] if deep else ["--seconds", "2", "--warmup", "0"]
    out = bench(
        "bench/http_load.py",
        *("--backends", "sqlite", "--users", "2", "--lengths", "3", "--workers", "1", *how),
    )
    row = next(line for line in out.splitlines() if line.startswith("| sqlite | 1 | 2 | 3 |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[7] == "0 (0)" and cells[11] == "0 (0)"  # no errors, keel's or plain's


def test_the_topic_detector_bench_runs():
    out = bench("bench/topic_detector.py", "--messages", "61")
    assert "| offline | first 6 |" in out and "| language model | last 6 |" in out
    assert "| offline, the message read first | last 6 |" in out


def test_the_topic_threshold_table_runs_on_held_out_training_data():
    out = bench("bench/topic_threshold.py", "--thresholds", "0.4")
    rows = [line for line in out.splitlines() if line.startswith("| 0.4 |")]
    assert len(rows) == 1 and rows[0].count(",") == 4  # an F1 and a count for each of four sets


def test_the_topic_corpus_script_reads_both_formats(tmp_path):
    corpus = tmp_path / "corpus.json"
    dialogue = {"dial_id": 7, "utterances": ["a", "b", "c", "d"], "segments": [2, 2], "set": "dev"}
    corpus.write_text(json.dumps([dialogue, {**dialogue, "dial_id": 8, "set": "train"}]))
    converted = bench("bench/topic_corpus.py", str(corpus), "--set", "dev")
    assert json.loads(converted) == {
        "id": "corpus-7",
        "turns": ["a", "b", "c", "d"],
        "labels": [0, 0, 1, 0],
    }
    marked = tmp_path / "superseg_test.jsonl"
    text = "user: hi[NEWLINE]agent: hello[NEWLINE][BOUNDARY][NEWLINE]user: new thing?"
    marked.write_text(json.dumps({"id": "s-1", "dialogue": text}) + "\n")
    assert json.loads(bench("bench/topic_corpus.py", str(marked))) == {
        "id": "s-1",
        "turns": ["hi", "hello", "new thing?"],
        "speakers": ["user", "agent", "user"],
        "labels": [0, 0, 1],
    }


def test_the_misbehaving_model_table_runs():
    out = bench("bench/misbehaving_model.py", "--timeout", "0.5", "--turn-seconds", "1")
    rows = [line for line in out.splitlines() if line.startswith("| ") and "---" not in line]
    assert len(rows) == 10  # the header and nine turns
    assert "model_fallback(timeout)" in out and "turn_timed_out" in out


def test_the_types_on_the_path_are_counted():
    out = bench("bench/types_on_path.py")
    assert "reply: 200 'Created task: buy milk'" in out
    counted = re.search(r"keel types met: (\d+); keel modules run: (\d+)", out)
    assert counted and int(counted[1]) > 20 and int(counted[2]) > 40
    assert "graphs.turns.Turns (" in out and "tools.tasks.store.TaskStore (" in out
