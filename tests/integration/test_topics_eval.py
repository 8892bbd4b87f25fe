"""`keel topics eval FILE.jsonl`: the real `keel` command over keel's own labelled dialogues."""

import json

from tests.keel_process import ROOT, run_keel

DEV = ROOT / "bench" / "data" / "topics_dev.jsonl"


def lines(output: str) -> list[dict]:
    return [json.loads(line) for line in output.splitlines() if line.strip()]


def test_it_prints_each_dialogues_topics_and_the_scores(tmp_path):
    done = run_keel(f"sqlite:///{tmp_path / 'k.db'}", ["topics", "eval", str(DEV)])
    assert done.returncode == 0, done.stderr
    *dialogues, summary = lines(done.stdout)
    assert len(dialogues) == len(DEV.read_text().splitlines())
    by_id = {d["id"]: d for d in dialogues}
    assert by_id["todo-session-1"]["opens"] == [] and by_id["todo-session-2"]["opens"] == []
    pets = by_id["pets-music-pets"]
    assert dict(zip(pets["opens"], pets["reasons"], strict=True)) == {4: "semantic", 7: "returned"}
    assert set(summary) >= {"precision", "recall", "f1", "dialogues", "turns", "shifts"}
    assert summary["semantic_signal"] is True and summary["f1"] > 0


def test_without_labels_there_is_no_score_and_settings_are_read(tmp_path):
    data = tmp_path / "d.jsonl"
    turns = ["Our puppy chews every shoe.", "Teething, probably.", "Do you like jazz music?"]
    data.write_text(json.dumps({"id": "x", "turns": turns}) + "\n")
    done = run_keel("memory", ["topics", "eval", str(data)])
    assert done.returncode == 0, done.stderr
    assert lines(done.stdout) == [{"id": "x", "opens": [2], "reasons": ["semantic"]}]
    off = run_keel("memory", ["topics", "eval", str(data)], KEEL_TOPIC_SHIFT_THRESHOLD="1")
    assert lines(off.stdout) == [{"id": "x", "opens": [], "reasons": []}]


def test_a_bad_line_is_named(tmp_path):
    data = tmp_path / "bad.jsonl"
    data.write_text('{"id": 1, "turns": ["a", "b"], "labels": [0]}\n')
    done = run_keel("memory", ["topics", "eval", str(data)])
    assert done.returncode == 2
    assert "line 1: labels must be one 0 or 1 per turn" in done.stderr
