"""Turn public intent corpora into the labelled lines keel's understanding learns from.

Reads CLINC150's ``data_full.json`` (github.com/clinc/oos-eval, CC BY 3.0) and SLURP's
``devel.jsonl`` (github.com/pswietojanski/slurp, text CC BY 4.0), their training and validation
splits only (a test split is never opened), and writes ``clinc150.jsonl`` and ``slurp.jsonl``
in ``tools/understanding/nlu/corpora/``. Utterances of the corpora's todo, shopping-list,
reminder and list intents are labelled by hand for keel (``--labels``: one JSON line each with
``text``, ``source``, ``intent`` and the exact words of ``title`` / ``ref`` / ``due`` / ``list`` /
``place``; by default those the files already carry); every other intent is talk keel does not
act on (``offtopic``), except greetings, goodbyes, thanks and "what can I ask you" (their own
kinds), and yes / no / cancel / repeat, left out (keel reads those by rule). CLINC150's validation
split and half of SLURP's (by a hash of the text) are marked ``heldout``: kept back from training,
to measure on.

    python bench/nlu_corpus.py --clinc data_full.json --slurp devel.jsonl
"""

from __future__ import annotations

import argparse
import json
import zlib
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[1] / "tools" / "understanding" / "nlu" / "corpora"
TALK = {
    "greeting": "greeting",
    "goodbye": "goodbye",
    "thank_you": "thanks",
    "what_can_i_ask_you": "help",
    "general_greet": "greeting",
}
LEFT_OUT = {"yes", "no", "maybe", "cancel", "repeat"}
KEPT = ("intent", "title", "ref", "select", "due", "list", "place", "repeat")
DATED = {"date", "time", "timeofday"}
"""SLURP's entity types of the words of when, marked ``due`` on every line that has them."""
LEADING = {"on", "at", "by", "before", "for", "until", "till", "in", "from", "due", "this", "next"}
"""A word before a date that belongs to it ("on friday", "by five pm")."""
UNNAMED = {"things to do"}
"""SLURP's list names that only say it is the list of tasks ("remove the list of things to do");
a playlist is no list either."""


RELABELLED = {
    "todo_list", "todo_list_update", "reminder", "reminder_update", "shopping_list",
    "shopping_list_update", "calendar", "calendar_update", "lists_createoradd", "lists_query",
    "lists_remove", "calendar_set",
}  # fmt: skip
"""The corpora's intents whose utterances are labelled by hand for keel."""


def _hand(labels: Path | None) -> dict[tuple[str, str], dict[str, object]]:
    """The hand labels: from ``labels``, or those the shipped files already carry."""
    paths = [labels] if labels else [DATA / "clinc150.jsonl", DATA / "slurp.jsonl"]
    rows = [json.loads(x) for p in paths for x in p.read_text(encoding="utf-8").splitlines()]
    return {
        (r["source"], r["text"]): r
        for r in rows
        if labels or r["source"].rsplit(":", 1)[-1] in RELABELLED or _named(r)
    }


def _named(row: dict[str, Any]) -> bool:
    """Whether ``row`` is CLINC150 talk whose list's name was marked by hand ("order everything
    on my shopping list"): CLINC150 has no annotations to find it again.
    """  # noqa: D205
    return str(row["source"]).startswith("clinc150:") and bool(row.get("list"))


def _line(
    text: str, intent: str, source: str, hand: dict[str, object] | None, heldout: bool
) -> str:
    row: dict[str, object] = {"text": text, "intent": intent, "source": source}
    if hand is not None:
        row.update({k: hand[k] for k in KEPT if hand.get(k)})
    if heldout:
        row["split"] = "heldout"
    return json.dumps(row, ensure_ascii=False)


def clinc(path: Path, hand: dict[tuple[str, str], dict[str, object]]) -> list[str]:
    data = json.loads(path.read_text(encoding="utf-8"))
    lines = []
    for split in ("train", "val", "oos_train", "oos_val"):
        for text, intent in data[split]:
            if intent in LEFT_OUT:
                continue
            source = f"clinc150:{split.removeprefix('oos_')}:{intent}"
            labelled = hand.get((source, text))
            label = str(labelled["intent"]) if labelled else TALK.get(intent, "offtopic")
            lines.append(_line(text, label, source, labelled, split.endswith("val")))
    return lines


def _due(row: dict[str, Any]) -> str | None:
    """The words of when in a SLURP line: its date, time and time-of-day entities that stand
    together (two tokens apart at most; the longest run), with a preposition before them.
    """  # noqa: D205
    words = [t["surface"] for t in row["tokens"]]
    spans = sorted(
        (e["span"][0], e["span"][-1]) for e in row.get("entities", []) if e["type"] in DATED
    )
    if not spans:
        return None
    runs = [list(spans[0])]
    for first, last in spans[1:]:
        if first - runs[-1][1] <= 2:
            runs[-1][1] = max(last, runs[-1][1])
        else:
            runs.append([first, last])
    first, last = max(runs, key=lambda r: r[1] - r[0])
    if first > 0 and words[first - 1].lower() in LEADING:
        first -= 1
    due = " ".join(words[first : last + 1])
    return due if due in row["sentence"] else None


def _list(row: dict[str, Any]) -> str | None:
    """The name of a list in a SLURP line: its ``list_name`` entity's words as said, without a
    leading "my" or "the" or a trailing "list" ("my vacation list": "vacation").
    """  # noqa: D205
    words = [t["surface"] for t in row["tokens"]]
    for entity in row.get("entities", []):
        if entity["type"] != "list_name":
            continue
        name = [words[i] for i in entity["span"]]
        while name and name[0].lower() in {"my", "the"}:
            name = name[1:]
        while name and name[-1].lower() in {"list", "lists"}:
            name = name[:-1]
        text = " ".join(name)
        if text and text not in UNNAMED and "playlist" not in text and text in row["sentence"]:
            return text
    return None


def slurp(path: Path, hand: dict[tuple[str, str], dict[str, object]]) -> list[str]:
    lines = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(raw)
        source = f"slurp:devel:{row['intent']}"
        labelled = hand.get((source, row["sentence"]))
        label = str(labelled["intent"]) if labelled else TALK.get(row["intent"], "offtopic")
        heldout = zlib.crc32(row["sentence"].encode()) % 2 == 0
        name = _list(row)
        if labelled is None:  # talk: only its words of when and its list's name are marked
            labelled = {k: v for k, v in (("due", _due(row)), ("list", name)) if v} or None
        elif name and not labelled.get("list"):
            labelled = {**labelled, "list": name}  # a hand label's own list name wins
        lines.append(_line(row["sentence"], label, source, labelled, heldout))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clinc", type=Path, required=True)
    parser.add_argument("--slurp", type=Path, required=True)
    parser.add_argument("--labels", type=Path, help="hand labels (default: the shipped ones)")
    args = parser.parse_args()
    hand = _hand(args.labels)
    for name, lines in (("clinc150", clinc(args.clinc, hand)), ("slurp", slurp(args.slurp, hand))):
        (DATA / f"{name}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        print(f"{name}: {len(lines)} lines")


if __name__ == "__main__":
    main()
