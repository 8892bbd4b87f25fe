"""``keel topics eval``: run keel's topic-shift detector over a file of dialogues.

Reads JSON lines ``{"id": ..., "turns": ["first message", ...]}`` (optionally ``"labels": [0, 1,
...]``, 1 where a turn starts a new topic), runs the detector exactly as the topic_detect node
does with the current settings (``KEEL_TOPIC_SHIFT_THRESHOLD``, ``KEEL_TOPIC_RETURN_THRESHOLD``;
no time gaps), and prints one JSON line per dialogue: the turns where keel opens a topic
(``opens``, returns to an earlier one included), with the reason of each. With labels, a last
line gives precision, recall and F1 over every turn after the first.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from keel.api.logs import configure_logging
from keel.graphs.settings import Settings
from keel.nodes.support.embeddings import load_embedder
from keel.nodes.support.shifts import segment
from keel.tools.todo import TODO_TOOLS

topics_app = typer.Typer(help="Topic detection: how keel splits conversations into topics.")


def _dialogue(line: str, number: int) -> dict[str, Any]:
    try:
        dialogue = json.loads(line)
    except ValueError as exc:
        raise typer.BadParameter(f"line {number} is not JSON: {exc}") from None
    turns, labels = dialogue.get("turns"), dialogue.get("labels")
    if not isinstance(turns, list) or not all(isinstance(t, str) for t in turns):
        raise typer.BadParameter(f"line {number}: turns must be a list of strings")
    if labels is not None and (
        not isinstance(labels, list) or len(labels) != len(turns) or set(labels) - {0, 1}
    ):
        raise typer.BadParameter(f"line {number}: labels must be one 0 or 1 per turn")
    return dialogue


def _scores(tp: int, fp: int, fn: int) -> dict[str, float]:
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": round(precision, 3), "recall": round(recall, 3), "f1": round(f1, 3)}


@topics_app.command("eval")
def eval_command(
    file: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="JSON lines.")],
) -> None:
    """Print where keel's detector opens topics in each dialogue (and its scores, with labels)."""
    configure_logging(level="warning")  # stdout carries the results; logs go to stderr
    settings = Settings()
    embedder = load_embedder()
    thresholds = (settings.topic_shift_threshold, settings.topic_return_threshold)
    tp = fp = fn = turns = labelled = 0
    for number, line in enumerate(file.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        dialogue = _dialogue(line, number)
        changes = segment(dialogue["turns"], embedder, TODO_TOOLS, *thresholds)
        opens = [index for index, _ in changes]
        out = {"id": dialogue.get("id", number), "opens": opens}
        out["reasons"] = [shift.reason for _, shift in changes]
        if (labels := dialogue.get("labels")) is not None:
            gold = {i for i, label in enumerate(labels) if label and i > 0}
            tp, fp, fn = (
                tp + len(gold & set(opens)),
                fp + len(set(opens) - gold),
                fn + len(gold - set(opens)),
            )
            turns, labelled = turns + len(labels) - 1, labelled + 1
        sys.stdout.write(json.dumps(out) + "\n")
    if labelled:
        summary = {"dialogues": labelled, "turns": turns, "shifts": tp + fn, **_scores(tp, fp, fn)}
        summary["semantic_signal"] = embedder is not None
        sys.stdout.write(json.dumps(summary) + "\n")
