"""The offline understanding over the labelled sets: every category holds, as real turns."""

import json
from pathlib import Path

import pytest

from keel.api.nlu_command import evaluate

DATA = Path(__file__).resolve().parents[2] / "bench" / "data"


@pytest.mark.parametrize(
    "name,overall",
    [
        ("nlu_dev.jsonl", 0.95),
        ("nlu_holdout.jsonl", 0.95),
        ("nlu_fresh.jsonl", 0.95),
        ("nlu_second.jsonl", 0.95),
    ],
)
async def test_each_category_is_understood(name, overall):
    cases = [json.loads(line) for line in (DATA / name).read_text().splitlines() if line.strip()]
    tally = await evaluate(cases, failures=False)
    assert {c["category"] for c in cases} == set(tally)
    for category, (passed, total) in tally.items():
        assert passed / total >= 0.8, (category, passed, total)
    assert sum(p for p, _ in tally.values()) / len(cases) >= overall
