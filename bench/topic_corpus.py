"""Turn a dialogue topic-segmentation corpus into the JSON lines ``keel topics eval`` reads.

Reads the shared format of the public corpora collected by the Dialogue-Topic-Segmenter project
(github.com/lxing532/Dialogue-Topic-Segmenter, ``data/eval/*.json``: TIAGE, DialSeg711, ...), a
JSON list of ``{"dial_id", "utterances", "segments": [lengths], "set"}``, and writes one line a
dialogue: ``{"id", "turns", "labels"}``, a label 1 where a turn starts a new segment (never the
first turn). The corpora are not shipped with keel: fetch them yourself, under their licences.

    python bench/topic_corpus.py tiage.json --set train > tiage-train.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys


def convert(dialogue: dict, prefix: str) -> dict:
    """One dialogue as a keel evaluation line."""
    labels: list[int] = []
    for length in dialogue["segments"]:
        labels += [1] + [0] * (length - 1)
    labels[0] = 0
    turns = [str(t) for t in dialogue["utterances"]]
    if len(labels) != len(turns):
        raise ValueError(f"dialogue {dialogue['dial_id']}: segments do not cover its turns")
    return {"id": f"{prefix}{dialogue['dial_id']}", "turns": turns, "labels": labels}


def main() -> None:
    """Convert the file named on the command line; print JSON lines."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", help="a JSON list of dialogues with segment lengths")
    parser.add_argument("--set", dest="split", help="only dialogues of this set (train, dev, test)")
    args = parser.parse_args()
    with open(args.corpus) as f:
        dialogues = json.load(f)
    prefix = args.corpus.rsplit("/", 1)[-1].removesuffix(".json") + "-"
    for dialogue in dialogues:
        if args.split is None or dialogue.get("set") == args.split:
            sys.stdout.write(json.dumps(convert(dialogue, prefix)) + "\n")


if __name__ == "__main__":
    main()
