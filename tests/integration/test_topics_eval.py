"""`keel topics eval FILE.jsonl` and `keel topics train`: the real `keel` command over keel's own
labelled dialogues, and the shipped network rebuilt from its training data."""

import json

import numpy as np

from tests.keel_process import ROOT, run_keel

DEV = ROOT / "bench" / "data" / "topics_dev.jsonl"
TRAINING = ROOT / "bench" / "data" / "topics"
SHIPPED = ROOT / "nodes" / "context" / "topic_shift_model.npz"


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
    scores = {"precision", "recall", "f1", "pk", "windowdiff"}
    assert set(summary) >= {*scores, "dialogues", "turns", "shifts"}
    assert summary["semantic_signal"] is True and summary["f1"] > 0
    baselines = summary["baselines"]
    assert set(baselines) == {"all_shift", "never_shift", "random"}
    assert all(set(b) >= scores for b in baselines.values())
    assert baselines["all_shift"]["recall"] == 1.0 and baselines["never_shift"]["recall"] == 0.0
    assert summary["f1"] > baselines["all_shift"]["f1"]
    assert summary["pk"] < baselines["never_shift"]["pk"]


def test_speakers_are_read_and_a_bad_speaker_list_is_named(tmp_path):
    data = tmp_path / "d.jsonl"
    turns = ["Our puppy chews every shoe.", "Teething, probably.", "Do you like jazz music?"]
    line = {"id": "x", "turns": turns, "speakers": ["user", "agent", "user"], "labels": [0, 0, 1]}
    data.write_text(json.dumps(line) + "\n")
    done = run_keel("memory", ["topics", "eval", str(data)])
    assert done.returncode == 0, done.stderr
    assert lines(done.stdout)[0] == {"id": "x", "opens": [2], "reasons": ["semantic"]}
    data.write_text(json.dumps({**line, "speakers": ["user"]}) + "\n")
    bad = run_keel("memory", ["topics", "eval", str(data)])
    assert bad.returncode == 2
    assert "line 1: speakers must be one name per turn" in bad.stderr


def test_training_on_the_shipped_data_rebuilds_the_shipped_network(tmp_path):
    out = tmp_path / "rebuilt.npz"
    files = [
        str(TRAINING / "tiage_train.jsonl"),
        str(TRAINING / "tiage_validation.jsonl"),
        str(TRAINING / "superseg_validation.jsonl"),
        f"{TRAINING / 'todo_sessions.jsonl'}*6",
    ]
    done = run_keel("memory", ["topics", "train", *files, "--out", str(out)])
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1])["dialogues"] == 1776
    with np.load(out) as rebuilt, np.load(SHIPPED) as shipped:
        assert sorted(rebuilt.files) == sorted(shipped.files)
        for name in shipped.files:
            assert np.allclose(rebuilt[name], shipped[name], atol=1e-4), name


def test_training_refuses_what_it_cannot_learn_from(tmp_path):
    model = tmp_path / "m.npz"
    data = tmp_path / "d.jsonl"

    def train(*files: str) -> str:
        done = run_keel("memory", ["topics", "train", *files, "--out", str(model)])
        assert done.returncode == 2
        return " ".join(done.stderr.replace("│", " ").split())  # the error box wraps lines

    data.write_text(json.dumps({"id": "x", "turns": ["a", "b"], "labels": [0, 1]}) + "\n")
    assert "needs labels and speakers" in train(str(data))
    assert "not FILE*N" in train(f"{data}*x") and "not FILE*N" in train(f"{data}*0")
    line = {"id": "x", "turns": ["a", "b"], "speakers": ["user", "agent"], "labels": [0, 1]}
    data.write_text(json.dumps(line) + "\n")
    assert "the network needs at least 20 of each" in train(str(data))
    data.write_text("")
    assert "no dialogue of two turns or more" in train(str(data))
    assert not model.exists()


def test_an_unknown_speaker_is_named(tmp_path):
    data = tmp_path / "d.jsonl"
    line = {"id": "x", "turns": ["a", "b"], "speakers": ["user", "wizard"]}
    data.write_text(json.dumps(line) + "\n")
    done = run_keel("memory", ["topics", "eval", str(data)])
    assert done.returncode == 2 and "line 1: unknown speaker 'wizard'" in done.stderr
