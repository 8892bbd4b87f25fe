"""Turn a dialogue topic-segmentation corpus into the JSON lines ``keel topics eval`` reads.

Two public formats are read:

- the Dialogue-Topic-Segmenter project's (github.com/lxing532/Dialogue-Topic-Segmenter,
  ``data/eval/*.json``: TIAGE, DialSeg711, ...): a JSON list of ``{"dial_id", "utterances",
  "segments": [lengths], "set"}``, no speakers;
- the Def-DTS project's (github.com/ElPlaguister/Def-DTS, ``data/DTS_session_datasets/*.jsonl``:
  TIAGE, SuperDialseg and DialSeg711 by split): JSON lines ``{"id", "dialogue"}``, the dialogue one
  string of ``speaker: text`` turns joined by ``[NEWLINE]``, a ``[BOUNDARY]`` line between topics.

Each dialogue becomes one line ``{"id", "turns", "speakers", "labels"}`` (no ``speakers`` for the
first format), a label 1 where a turn starts a new segment (never the first turn). The files are
read as given: fetch them yourself, under their licences (``bench/data/topics/README.md`` lists
those keel trains on).

    python bench/topic_corpus.py tiage.json --set dev > tiage-dev.jsonl
    python bench/topic_corpus.py superseg_test.jsonl > superseg-test.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator

BOUNDARY, NEWLINE = "[BOUNDARY]", "[NEWLINE]"


def convert(dialogue: dict, prefix: str) -> dict:
    """One dialogue of segment lengths as a keel evaluation line."""
    labels: list[int] = []
    for length in dialogue["segments"]:
        labels += [1] + [0] * (length - 1)
    labels[0] = 0
    turns = [str(t) for t in dialogue["utterances"]]
    if len(labels) != len(turns):
        raise ValueError(f"dialogue {dialogue['dial_id']}: segments do not cover its turns")
    return {"id": f"{prefix}{dialogue['dial_id']}", "turns": turns, "labels": labels}


def convert_marked(dialogue: dict) -> dict:
    """One dialogue of ``speaker: text`` turns and ``[BOUNDARY]`` marks as a keel line."""
    turns: list[str] = []
    speakers: list[str] = []
    labels: list[int] = []
    boundary = False
    for part in dialogue["dialogue"].split(NEWLINE):
        if part.strip() == BOUNDARY:
            boundary = True
            continue
        if not part.strip():
            continue  # a line break at the end, or two in a row
        name, colon, text = part.partition(": ")
        speakers.append(name.strip() if colon else "user")
        turns.append(text if colon else part)
        labels.append(int(boundary and len(turns) > 1))
        boundary = False
    return {"id": dialogue["id"], "turns": turns, "speakers": speakers, "labels": labels}


def dialogues(path: str, split: str | None) -> Iterator[dict]:
    """The keel lines of the corpus file at ``path`` (only ``split``, for the first format)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if text.lstrip().startswith("["):
        prefix = path.rsplit("/", 1)[-1].removesuffix(".json") + "-"
        for dialogue in json.loads(text):
            if split is None or dialogue.get("set") == split:
                yield convert(dialogue, prefix)
    else:
        for line in text.splitlines():
            if line.strip():
                yield convert_marked(json.loads(line))


def main() -> None:
    """Convert the file named on the command line; print JSON lines."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", help="a corpus file in one of the two formats")
    parser.add_argument("--set", dest="split", help="only dialogues of this set (train, dev, test)")
    args = parser.parse_args()
    for line in dialogues(args.corpus, args.split):
        sys.stdout.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    main()
