"""``keel topics eval``: run keel's topic-shift detector over a file of dialogues.

Reads JSON lines ``{"id": ..., "turns": ["first message", ...]}`` (optionally ``"labels": [0, 1,
...]``, 1 where a turn starts a new topic), runs the detector the topic_detect node runs, with its
decisions and the current settings (``KEEL_TOPIC_SHIFT_THRESHOLD``, ``KEEL_TOPIC_RETURN_THRESHOLD``;
no time gaps), and prints one JSON line per dialogue: the turns where keel opens a topic (``opens``,
returns to an earlier one included), with the reason of each. With labels, a last line gives
precision, recall and F1 over every turn after the first. A dialogue file has no speakers, so every
turn is judged (the node judges what the user says, and matches a return against the user's side of
a closed topic; here, against its last messages).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from keel.api.logs import configure_logging
from keel.graphs.settings import Settings
from keel.nodes.context.dialogue_segments import segment
from keel.nodes.context.embeddings import load_embedder
from keel.tools.tasks.todo import TODO_TOOLS

topics_app = typer.Typer(help="Topic detection: how keel splits conversations into topics.")


def _dialogue(line: str, number: int) -> dict[str, Any]:
    try:
        dialogue = json.loads(line)
    except ValueError as exc:
        raise typer.BadParameter(f"line {number} is not JSON: {exc}") from None
    if not isinstance(dialogue, dict):
        raise typer.BadParameter(f"line {number}: a dialogue is a JSON object")
    turns, labels = dialogue.get("turns"), dialogue.get("labels")
    if not isinstance(turns, list) or not all(isinstance(t, str) for t in turns):
        raise typer.BadParameter(f"line {number}: turns must be a list of strings")
    if labels is not None and (
        not isinstance(labels, list)
        or len(labels) != len(turns)
        or not all(type(label) is int and label in (0, 1) for label in labels)
    ):
        raise typer.BadParameter(f"line {number}: labels must be one 0 or 1 per turn")
    if not isinstance(dialogue.get("id", number), str | int):
        raise typer.BadParameter(f"line {number}: an id is a string or a number")
    return dialogue


@dataclass
class Tally:
    """Turns keel opened a topic at, against the labels: what precision and recall count."""

    found: int = 0
    wrong: int = 0
    missed: int = 0
    turns: int = 0
    dialogues: int = 0

    def add(self, opens: set[int], labels: list[int]) -> None:
        """Count one labelled dialogue (its first turn opens nothing to score)."""
        gold = {i for i, label in enumerate(labels) if label and i > 0}
        self.found += len(gold & opens)
        self.wrong += len(opens - gold)
        self.missed += len(gold - opens)
        self.turns += max(len(labels) - 1, 0)
        self.dialogues += 1

    def scores(self) -> dict[str, Any]:
        """The summary line: sizes, then precision, recall and F1."""
        tp, fp, fn = self.found, self.wrong, self.missed
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        return {
            "dialogues": self.dialogues,
            "turns": self.turns,
            "shifts": tp + fn,
            "precision": round(precision, 3),
            "recall": round(recall, 3),
            "f1": round(f1, 3),
        }


@topics_app.command("eval")
def eval_command(
    file: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="JSON lines.")],
) -> None:
    """Print where keel's detector opens topics in each dialogue (and its scores, with labels)."""
    configure_logging(level="warning")  # stdout carries the results; logs go to stderr
    settings = Settings()
    embedder = load_embedder()
    thresholds = (settings.topic_shift_threshold, settings.topic_return_threshold)
    tally = Tally()
    with file.open("rb") as lines:
        for number, raw in enumerate(lines, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise typer.BadParameter(f"line {number} is not UTF-8") from None
            if not line.strip():
                continue
            dialogue = _dialogue(line, number)
            changes = segment(dialogue["turns"], embedder, TODO_TOOLS, *thresholds)
            opens = [index for index, _ in changes]
            reasons = [shift.reason for _, shift in changes]
            out = {"id": dialogue.get("id", number), "opens": opens, "reasons": reasons}
            sys.stdout.write(json.dumps(out) + "\n")
            if (labels := dialogue.get("labels")) is not None:
                tally.add(set(opens), labels)
    if tally.dialogues:
        summary = {**tally.scores(), "semantic_signal": embedder is not None}
        sys.stdout.write(json.dumps(summary) + "\n")
