"""What the learned understanding learns from: labelled utterances, and the tools' own examples.

Two sources, both read here and nowhere else:

- Labelled utterances in ``corpora/*.jsonl``, one JSON object a line: ``text``, ``intent`` (a tool's
  ``ToolSpec.intent`` such as ``create``, or a kind of talk such as ``offtopic``), and the
  exact words of its arguments where it has them (``title``, ``ref``, ``due``: the words of a
  date or time, marked in talk as well as in requests). Each file is a data set:
  public corpora's training and validation splits (credited in ``corpora/README.md``) and keel's
  own sets; a line whose ``split`` is ``heldout`` is kept back from training for measuring.
- Each tool's declared ``examples`` ("put {title} on my {list} list"), expanded with fillers
  (``corpora/fillers.json``): a placeholder becomes words tagged as that argument (``{task}`` as
  ``ref``), so a new tool is learned from its declaration alone.

A ``Sample`` is a text, its label (a tool's name or a kind of talk) and the tag of each token.
Deterministic: the same files and tools give the same samples in the same order.
"""

from __future__ import annotations

import json
import random
import re
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from keel.checkpoints.task_fields import FIELDS
from keel.tools.spec import KEEL, ToolSpec, spec_of
from keel.tools.understanding.nlu.features import tokens

DATA = Path(__file__).parent / "corpora"
TALK = ("greeting", "thanks", "goodbye", "wellbeing", "help", "lists", "offtopic")
"""The labels of messages that ask no tool: kinds of talk, lists of lists, anything else."""
OUTSIDE = "O"
"""The tag of a word that is no argument."""
MODEL_VERSION = 4
"""Raised whenever the features, the samples or the training change what a model predicts (a test
rebuilds the shipped model and compares its predictions)."""
VARIANTS = 8
"""How many filled-in utterances each declared example becomes."""

_PLACEHOLDER = re.compile(r"\{(\w+)\}")
SLOTS = {field.name: field.tag for field in FIELDS}
"""Each task field's argument, and the tag of its words (``due``: the words of when)."""
ARGUMENT_TAGS = {
    "task": "ref",
    "descriptions": "ref",
    "when": "due",
    "late": "due",
    "urgent": "place",
    "every": "repeat",
}
"""A placeholder's tag when it is not the argument's own name."""


@dataclass(frozen=True)
class Declared:
    """A tool as the understanding knows it: its name, its declaration, what a request needs."""

    name: str
    spec: ToolSpec
    required: tuple[str, ...]
    """The arguments the model must fill (``title``, ``task_id``, ...)."""
    fields: tuple[str, ...] = ()
    """The task fields the tool takes in words (``due``): arguments the tagger may fill."""

    @property
    def metadata(self) -> dict[str, ToolSpec]:
        """The declaration where ``spec_of`` reads it."""
        return {KEEL: self.spec}


def declared(tools: Sequence[Any]) -> tuple[Declared, ...]:
    """``tools`` as the understanding knows them (hashable: a cache key): those people ask for,
    with phrasings, examples or an intent (not the model's own, such as ``record_next_step``).

    Read once per list of tools (a process's tools are one list, read several times a turn).
    """  # noqa: D205
    key = tuple(map(id, tools))
    kept = _DECLARED.get(key)
    if kept is not None:
        return kept[1]
    made = tuple(
        t if isinstance(t, Declared) else Declared(t.name, spec, _required(t), _fields(t))
        for t in tools
        if hasattr(t, "name") and ((spec := spec_of(t)).phrasings or spec.examples or spec.intent)
    )
    if len(_DECLARED) >= DECLARED_KEPT:
        _DECLARED.pop(next(iter(_DECLARED)))
    _DECLARED[key] = (tuple(tools), made)  # the tools held: their ids stay theirs while kept
    return made


DECLARED_KEPT = 32
_DECLARED: dict[tuple[int, ...], tuple[tuple[Any, ...], tuple[Declared, ...]]] = {}


def _required(tool_: Any) -> tuple[str, ...]:
    schema = getattr(tool_, "tool_call_schema", None)
    return _required_by(schema) if isinstance(schema, type) else ()


@cache
def _required_by(schema: type) -> tuple[str, ...]:
    """The required fields of a tool's call schema (made once: a JSON schema costs a while)."""
    made = getattr(schema, "model_json_schema", None)
    return tuple(made().get("required") or ()) if made else ()


def _fields(tool_: Any) -> tuple[str, ...]:
    schema = getattr(tool_, "tool_call_schema", None)
    return _fields_by(schema) if isinstance(schema, type) else ()


@cache
def _fields_by(schema: type) -> tuple[str, ...]:
    """The task fields (``SLOTS``) a call schema takes as any words (not a choice of some)."""
    made = getattr(schema, "model_json_schema", None)
    properties = (made().get("properties") or {}) if made else {}
    taken = []
    for name in SLOTS:
        field_ = properties.get(name)
        kinds = (field_.get("anyOf") or [field_]) if isinstance(field_, dict) else []
        if any(k.get("type") == "string" and "enum" not in k for k in kinds):
            taken.append(name)
    return tuple(taken)


@dataclass(frozen=True)
class Sample:
    """One labelled utterance: its text, what it asks for, and each token's tag."""

    text: str
    label: str
    tags: tuple[str, ...]
    dataset: str
    heldout: bool = False
    args: tuple[tuple[str, str], ...] = ()
    """The arguments' words as labelled (``title``, ``ref``), for measuring."""


def labels_of(tools: Sequence[Any]) -> tuple[str, ...]:
    """The classifier's labels for ``tools``: their names, then the kinds of talk."""
    return (*(t.name for t in tools), *TALK)


def _tool_of_intent(tools: Sequence[Any]) -> dict[str, str]:
    return {spec.intent: t.name for t in tools if (spec := spec_of(t)).intent}


def tagged(text: str, spans: dict[str, str]) -> tuple[str, ...]:
    """The tag of each token of ``text`` given the words of each argument (exact substrings)."""
    words = tokens(text)
    tags = [OUTSIDE] * len(words)
    taken: list[tuple[int, int]] = []
    for name, value in spans.items():
        if not value:
            continue
        start = _free_find(text, value, taken, last=name == "title")
        if start < 0:
            continue
        end = start + len(value)
        taken.append((start, end))
        for i, w in enumerate(words):
            if w.start < end and w.end > start:
                tags[i] = name
    return tuple(tags)


def _free_find(text: str, value: str, taken: list[tuple[int, int]], last: bool) -> int:
    """Where ``value`` stands in ``text`` outside the spans already ``taken`` (-1: nowhere)."""
    found = [m.start() for m in re.finditer(re.escape(value), text)]
    free = [s for s in found if all(s >= b or s + len(value) <= a for a, b in taken)]
    if not free:
        return -1
    return free[-1] if last else free[0]


def labelled(tools: Sequence[Any], files: Sequence[Path] | None = None) -> Iterator[Sample]:
    """The labelled utterances of ``files`` (every data set by default), labelled for ``tools``.

    An intent no tool declares is taken as talk outside what ``tools`` do (``offtopic``).
    """
    by_intent = _tool_of_intent(tools)
    for path in files if files is not None else sorted(DATA.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            intent = row["intent"]
            label = intent if intent in TALK else by_intent.get(intent, "offtopic")
            args = {k: row[k] for k in ("ref", "title") if row.get(k) and label not in TALK}
            for tag in SLOTS.values():  # marked in talk too ("what's the weather tomorrow")
                if row.get(tag):
                    args[tag] = row[tag]
            yield Sample(
                text=row["text"],
                label=label,
                tags=tagged(row["text"], args),
                dataset=path.stem,
                heldout=row.get("split") == "heldout",
                args=tuple(sorted(args.items())),
            )


@cache
def fillers() -> dict[str, tuple[str, ...]]:
    """The words placeholders are filled with, by placeholder (``title``, ``task``, ...)."""
    raw = json.loads((DATA / "fillers.json").read_text(encoding="utf-8"))
    return {name: tuple(values) for name, values in raw.items()}


def expanded(tools: Sequence[Any]) -> Iterator[Sample]:
    """Each tool's declared examples, filled in ``VARIANTS`` ways (deterministically)."""
    for t in tools:
        for example in spec_of(t).examples:
            rng = random.Random(zlib.crc32(f"{t.name}|{example}".encode()))
            for _ in range(VARIANTS):
                text, spans = _filled(example, rng)
                yield Sample(text, t.name, _tags_of(text, spans), "examples", args=())


def _filled(example: str, rng: random.Random) -> tuple[str, list[tuple[int, int, str]]]:
    """``example`` with each placeholder filled, and the span and tag of each filler."""
    bank = fillers()
    out, spans, at = [], [], 0
    for i, piece in enumerate(_PLACEHOLDER.split(example)):
        if i % 2 == 0:
            out.append(piece)
            at += len(piece)
            continue
        choices = bank.get(piece) or bank["title"]
        value = rng.choice(choices)
        tag = ARGUMENT_TAGS.get(piece, piece)
        if piece == "task" and "|" in value:  # "task |7|": only the marked words name it
            before, inner, after = value.split("|")
            spans.append((at + len(before), at + len(before) + len(inner), tag))
            value = before + inner + after
        elif tag != OUTSIDE:
            spans.append((at, at + len(value), tag))
        out.append(value)
        at += len(value)
    return "".join(out), spans


def _tags_of(text: str, spans: list[tuple[int, int, str]]) -> tuple[str, ...]:
    tags = []
    for w in tokens(text):
        tag = next((t for a, b, t in spans if w.start < b and w.end > a), OUTSIDE)
        tags.append(tag)
    return tuple(tags)


def training(tools: Sequence[Any]) -> list[Sample]:
    """Everything the model learns from for ``tools``: the data sets (held-back lines left out)
    and the tools' expanded examples.
    """  # noqa: D205
    return [s for s in labelled(tools) if not s.heldout] + list(expanded(tools))


def fingerprint(tools: Sequence[Any]) -> str:
    """What a model for ``tools`` is made from, as a short hash: the data, the tools' names,
    intents and examples, and ``MODEL_VERSION``. A model with another fingerprint is stale.
    """  # noqa: D205
    crc = zlib.crc32(f"keel-nlu-{MODEL_VERSION}".encode())
    for path in sorted(DATA.glob("*.json*")):
        crc = zlib.crc32(path.read_bytes(), crc)
    for t in tools:
        spec = spec_of(t)
        crc = zlib.crc32(json.dumps([t.name, spec.intent, list(spec.examples)]).encode(), crc)
    return f"{crc:08x}"
