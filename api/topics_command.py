"""``keel topics``: run keel's topic-shift detector over dialogues, and train its network.

``keel topics eval FILE`` reads JSON lines ``{"id": ..., "turns": ["first message", ...]}``
(optionally ``"speakers": ["user", "agent", ...]``, one per turn, and ``"labels": [0, 1, ...]``,
1 where a turn starts a new topic), runs the detector the topic_detect node runs, message by
message, with its decisions and the current settings (``KEEL_TOPIC_SHIFT_THRESHOLD``,
``KEEL_TOPIC_RETURN_THRESHOLD``; no time gaps), and prints one JSON line per dialogue: the turns
where keel opens a topic (``opens``, returns to an earlier one included), with the reason of each.
With labels, a last line gives precision, recall and F1 over every turn after the first, Pk and
WindowDiff (averaged over dialogues), and the same for three baselines: a shift at every turn,
never a shift, and a shift at random at the labelled rate. Without speakers the turns alternate,
the user's first. ``bench/topic_corpus.py`` turns the public corpora's formats into these lines.

``keel topics train FILE... --out FILE`` trains the detector's network on labelled dialogues with
speakers and writes it (``keel.nodes.context.topic_model``).
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import typer

from keel.api.logs import configure_logging
from keel.nodes.context.topic_model import SPEAKERS, Said, said_turns

topics_app = typer.Typer(help="Topic detection: how keel splits conversations into topics.")
MIN_EACH = 20
"""Shifts, and messages that are not one, a training set needs at least: the network keeps a
tenth of them aside to know when to stop."""
RANDOM_SEED = 0
"""The random baseline's seed: its figures are the same at every run."""


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
    speakers = dialogue.get("speakers")
    if speakers is not None and (
        not isinstance(speakers, list)
        or len(speakers) != len(turns)
        or not all(isinstance(name, str) for name in speakers)
    ):
        raise typer.BadParameter(f"line {number}: speakers must be one name per turn")
    unknown = sorted({name for name in speakers or [] if name.strip().lower() not in SPEAKERS})
    if unknown:
        raise typer.BadParameter(
            f"line {number}: unknown speaker {unknown[0]!r} (one of: {', '.join(sorted(SPEAKERS))})"
        )
    if labels is not None and (
        not isinstance(labels, list)
        or len(labels) != len(turns)
        or not all(type(label) is int and label in (0, 1) for label in labels)
    ):
        raise typer.BadParameter(f"line {number}: labels must be one 0 or 1 per turn")
    if not isinstance(dialogue.get("id", number), str | int):
        raise typer.BadParameter(f"line {number}: an id is a string or a number")
    return dialogue


def _dialogues(file: Path) -> Iterator[dict[str, Any]]:
    """The dialogues of a JSON lines file, each checked (a bad line is named)."""
    with file.open("rb") as lines:
        for number, raw in enumerate(lines, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise typer.BadParameter(f"line {number} of {file} is not UTF-8") from None
            if line.strip():
                yield _dialogue(line, number)


def _said(dialogue: dict[str, Any]) -> list[Said]:
    return said_turns(dialogue["turns"], dialogue.get("speakers"))


def _window_errors(gold: Sequence[int], found: Sequence[int]) -> tuple[float, float] | None:
    """Pk and WindowDiff of one dialogue: ``gold`` and ``found`` mark the turns that open a
    topic; the window is half the mean length of its labelled topics. None when the dialogue is no
    longer than its window.
    """  # noqa: D205
    n = len(gold)
    k = max(1, round(n / (2 * (sum(gold) + 1))))
    if n <= k:
        return None
    seg_gold, seg_found, g, f = [], [], 0, 0
    for i in range(n):
        g, f = g + gold[i], f + found[i]
        seg_gold.append(g)
        seg_found.append(f)
    pk = wd = 0
    for i in range(n - k):
        pk += (seg_gold[i] == seg_gold[i + k]) != (seg_found[i] == seg_found[i + k])
        wd += (seg_gold[i + k] - seg_gold[i]) != (seg_found[i + k] - seg_found[i])
    return pk / (n - k), wd / (n - k)


@dataclass
class Tally:
    """Turns a detector opened a topic at, against the labels: precision, recall, F1, Pk and
    WindowDiff count them.
    """  # noqa: D205

    found: int = 0
    wrong: int = 0
    missed: int = 0
    turns: int = 0
    dialogues: int = 0
    windows: list[tuple[float, float]] = field(default_factory=list)

    def add(self, opens: set[int], labels: list[int]) -> None:
        """Count one labelled dialogue (its first turn opens nothing to score)."""
        gold = {i for i, label in enumerate(labels) if label and i > 0}
        opens = {i for i in opens if i > 0}
        self.found += len(gold & opens)
        self.wrong += len(opens - gold)
        self.missed += len(gold - opens)
        self.turns += max(len(labels) - 1, 0)
        self.dialogues += 1
        marks = [int(i in gold) for i in range(len(labels))]
        errors = _window_errors(marks, [int(i in opens) for i in range(len(labels))])
        if errors is not None:
            self.windows.append(errors)

    def scores(self) -> dict[str, Any]:
        """Precision, recall, F1, Pk and WindowDiff."""
        tp, fp, fn = self.found, self.wrong, self.missed
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        count = len(self.windows) or 1
        return {
            "precision": round(precision, 3),
            "recall": round(recall, 3),
            "f1": round(f1, 3),
            "pk": round(sum(pk for pk, _ in self.windows) / count, 3),
            "windowdiff": round(sum(wd for _, wd in self.windows) / count, 3),
        }


@dataclass
class Baselines:
    """What a detector that reads nothing scores on the same labels."""

    every: Tally = field(default_factory=Tally)
    never: Tally = field(default_factory=Tally)
    labels: list[list[int]] = field(default_factory=list)

    def add(self, labels: list[int]) -> None:
        """Keep one labelled dialogue (the random baseline draws once every rate is known)."""
        self.every.add(set(range(1, len(labels))), labels)
        self.never.add(set(), labels)
        self.labels.append(labels)

    def scores(self) -> dict[str, Any]:
        """Each baseline's scores; the random one at the labelled rate of shifts."""
        shifts = sum(sum(labels[1:]) for labels in self.labels)
        rate = shifts / max(sum(len(labels) - 1 for labels in self.labels), 1)
        draw, guessed = random.Random(RANDOM_SEED), Tally()
        for labels in self.labels:
            guessed.add({i for i in range(1, len(labels)) if draw.random() < rate}, labels)
        return {
            "all_shift": self.every.scores(),
            "never_shift": self.never.scores(),
            "random": {**guessed.scores(), "rate": round(rate, 3)},
        }


@topics_app.command("eval")
def eval_command(
    file: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="JSON lines.")],
) -> None:
    """Print where keel's detector opens topics in each dialogue (and its scores, with labels)."""
    configure_logging(level="warning")  # stdout carries the results; logs go to stderr
    from keel.graphs.settings import Settings  # keel's parts load when a command runs
    from keel.nodes.context.dialogue_segments import segment
    from keel.nodes.context.embeddings import load_embedder
    from keel.tools.tasks.todo import TODO_TOOLS

    settings = Settings()
    embedder = load_embedder()
    thresholds = (settings.topic_shift_threshold, settings.topic_return_threshold)
    tally, baselines = Tally(), Baselines()
    for number, dialogue in enumerate(_dialogues(file), start=1):
        changes = segment(_said(dialogue), embedder, TODO_TOOLS, *thresholds)
        opens = [index for index, _ in changes]
        reasons = [shift.reason for _, shift in changes]
        out = {"id": dialogue.get("id", number), "opens": opens, "reasons": reasons}
        sys.stdout.write(json.dumps(out) + "\n")
        if (labels := dialogue.get("labels")) is not None:
            tally.add(set(opens), labels)
            baselines.add(labels)
    if tally.dialogues:
        shifts = tally.found + tally.missed
        sizes = {"dialogues": tally.dialogues, "turns": tally.turns, "shifts": shifts}
        summary = {**sizes, **tally.scores(), "baselines": baselines.scores()}
        summary["semantic_signal"] = embedder is not None
        sys.stdout.write(json.dumps(summary) + "\n")


def _training_file(name: str) -> tuple[Path, int]:
    """A training file and how many times its dialogues count: ``FILE`` or ``FILE*N``."""
    if Path(name).is_file():
        return Path(name), 1
    path, star, times = name.rpartition("*")
    if star and times.isdigit() and int(times) >= 1 and Path(path).is_file():
        return Path(path), int(times)
    raise typer.BadParameter(f"{name}: not a file, or not FILE*N with N at least 1")


@topics_app.command("train")
def train_command(
    files: Annotated[
        list[str],
        typer.Argument(
            help="JSON lines of labelled dialogues with speakers; FILE*N counts a file's "
            "dialogues N times."
        ),
    ],
    out: Annotated[Path, typer.Option(help="Where to write the network (.npz).")],
) -> None:
    """Train the topic-shift network on labelled dialogues (deterministic) and write it.

    Each file is one kind of conversation: the network learns how alike a message and its
    topic are to each kind. The shipped network is ``keel/nodes/context/topic_shift_model.npz``.
    """
    from keel.nodes.context.embeddings import load_embedder
    from keel.nodes.context.topic_model import train

    configure_logging(level="warning")
    embedder = load_embedder()
    if embedder is None:
        raise typer.BadParameter("the sentence embeddings (wordllama) are not installed")
    parts = []
    for name in files:
        path, times = _training_file(name)
        said = []
        for dialogue in _dialogues(path):
            if dialogue.get("labels") is None or dialogue.get("speakers") is None:
                which = dialogue.get("id")
                raise typer.BadParameter(f"{path}: dialogue {which} needs labels and speakers")
            said.append((_said(dialogue), dialogue["labels"]))
        if sum(len(turns) - 1 for turns, _ in said if turns) < 1:
            raise typer.BadParameter(f"{path}: no dialogue of two turns or more")
        parts.append((said, float(times)))
    marks = [label for said, _ in parts for _, labels in said for label in labels[1:]]
    shifts, dialogues = sum(marks), sum(len(said) for said, _ in parts)
    if min(shifts, len(marks) - shifts) < MIN_EACH:
        raise typer.BadParameter(
            f"{shifts} shifts and {len(marks) - shifts} other messages: "
            f"the network needs at least {MIN_EACH} of each"
        )
    train(parts, embedder).save(out)
    counts = {"dialogues": dialogues, "messages": len(marks), "shifts": shifts}
    sys.stdout.write(json.dumps({**counts, "written": str(out)}) + "\n")
