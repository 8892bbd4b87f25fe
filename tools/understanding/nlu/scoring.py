"""How well keel's offline understanding reads labelled utterances, by data set and category.

Each labelled line (``keel.tools.understanding.nlu.data``) is read by the whole offline
understanding (``keel.tools.understanding.reading.understand``: the decision table settled with the
learned model), and scored as a person would judge the reply: a request is understood when its first
request is for the labelled tool, or, when it names nothing to act on ("set a reminder for me"),
when keel asks for it (any other question back does not count); a message that asks nothing is
understood when no request is read and its kind of talk is the labelled one (``unknown``, "did you
mean", passes for ``offtopic``). Also counted: created titles that are clean (the labelled words,
nothing around them: no "to my list", no date), dates read (a request's labelled words of when,
exactly), lists and places read (the list a request's words name, the place in it), and
non-requests that leave the tasks untouched: no request
that changes tasks (a remark in the past tense, "I went to the bank", is read as a report of a task
done, which changes a task only if the user has one it names). ``keel nlu eval`` prints the table.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from keel.checkpoints.list_fields import list_name, read_place
from keel.checkpoints.times import FieldError
from keel.tools.spec import spec_of, tool_named
from keel.tools.understanding.nlu.data import SLOTS, TALK, Sample, declared
from keel.tools.understanding.reading import understand


@dataclass
class Tally:
    """Counts for one data set or category."""

    understood: int = 0
    total: int = 0
    clean: int = 0
    titled: int = 0
    untouched: int = 0
    talk: int = 0
    dated: int = 0
    """Requests understood whose labelled words include a date (``due``)."""
    dates: int = 0
    """Of those, how many were read with exactly those words of when."""
    listed: int = 0
    """Requests understood whose labelled words name a list."""
    lists: int = 0
    """Of those, how many were read as that list."""
    placed: int = 0
    """Requests understood whose labelled words name a place in a list (the top, the second)."""
    places: int = 0
    """Of those, how many were read as that place."""
    failures: list[str] = field(default_factory=list)

    def add(self, other: Tally) -> Tally:
        """Add ``other``'s counts (and failures) to these; this tally back."""
        for name in (
            "understood",
            "total",
            "clean",
            "titled",
            "untouched",
            "talk",
            "dated",
            "dates",
            "listed",
            "lists",
            "placed",
            "places",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.failures += other.failures
        return self

    def add_all(self, others: Iterable[Tally]) -> Tally:
        """Add every one of ``others``; this tally back."""
        for other in others:
            self.add(other)
        return self


def _plain(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s'-]", " ", text.casefold()).split())


def score(sample: Sample, tools: Sequence[Any]) -> Tally:
    """One utterance read and judged."""
    read = understand(sample.text, tools)
    tally = Tally(total=1)
    first = read.intents[0] if read.intents else None
    if sample.label in TALK:
        tally.talk = 1
        changes = [
            i for i in read.intents if spec_of(tool_named(tools, i.tool)).mutates and not i.reported
        ]
        tally.untouched = int(not changes)
        kinds = {sample.label, "unknown"} if sample.label == "offtopic" else {sample.label}
        tally.understood = int(first is None and read.kind in kinds)
    else:
        needed = {k for k in dict(sample.args) if k not in SLOTS}  # a date alone asks nothing
        asked_for_words = not needed and read.kind == "missing"
        tally.understood = int(
            (first is not None and first.tool == sample.label)
            or (asked_for_words and read.detail == sample.label)
        )
    wanted = dict(sample.args).get("title")
    if tally.understood and first is not None and wanted and "title" in first.args:
        tally.titled = 1
        tally.clean = int(_plain(str(first.args["title"])) == _plain(wanted))
    due = dict(sample.args).get("due")
    if tally.understood and first is not None and due and sample.label not in TALK:
        tally.dated = 1
        tally.dates = int(_plain(str(first.args.get("due") or "")) == _plain(due))
    taken = _fields_of(tools, first.tool) if first is not None else ()
    if tally.understood and first is not None and sample.label not in TALK:
        if "list" in taken:  # a task named by what it is needs no list to be found by
            tally.listed, tally.lists = _same(first.args, sample, "list", _list_of)
        if "place" in taken:
            tally.placed, tally.places = _same(first.args, sample, "place", _place_of)
    missed = tally.dated > tally.dates or tally.listed > tally.lists or tally.placed > tally.places
    if not tally.understood or (tally.titled and not tally.clean) or missed:
        got = [(i.tool, i.ref, i.args) for i in read.intents] or (read.kind, read.detail)
        tally.failures.append(f"{sample.text!r}: {sample.label} {dict(sample.args)} -> {got}")
    return tally


def _same(
    args: dict[str, Any], sample: Sample, name: str, meaning: Callable[[str], Any]
) -> tuple[int, int]:
    """Whether the sample labels words for the field ``name``, and whether they were read with the
    same meaning (the same list, the same place).
    """  # noqa: D205
    wanted = dict(sample.args).get(name)
    if not wanted:
        return 0, 0
    return 1, int(meaning(str(args.get(name) or "")) == meaning(wanted))


def _fields_of(tools: Sequence[Any], name: str) -> tuple[str, ...]:
    """The task fields the tool ``name`` takes in words."""
    return next((t.fields for t in declared(tools) if t.name == name), ())


def _list_of(words: str) -> str | None:
    try:
        return list_name(words)
    except FieldError:
        return None


def _place_of(words: str) -> int | None:
    try:
        return read_place(words)["position"]
    except FieldError:
        return None


def tallies(samples: Iterable[Sample], tools: Sequence[Any]) -> dict[tuple[str, str], Tally]:
    """Counts by (data set, category): the category is the labelled tool or kind of talk."""
    found: dict[tuple[str, str], Tally] = {}
    for sample in samples:
        found.setdefault((sample.dataset, sample.label), Tally()).add(score(sample, tools))
    return found
