"""The benchmark scripts still run against the code as it is (tiny sizes; no figure is checked).

docs/benchmarks.md quotes their output; a script that no longer runs would leave those figures
without a way to measure them again.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def bench(*args: str, timeout: float = 300) -> str:
    done = subprocess.run(
        [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_the_turn_profile_runs():
    out = bench("bench/turn_profile.py", "--turns", "3")
    assert "| checkpoint writes | 2.0 |" in out
    assert "rest (graph engine, nodes, CPU)" in out


def test_the_engine_floor_runs():
    out = bench("bench/engine_floor.py", "--turns", "10")
    rows = [line for line in out.splitlines() if line.startswith("| ")]
    assert len(rows) == 4  # the header row and one row per saver


def test_the_turn_cost_bench_runs():
    out = bench("bench/turn_cost.py", "--turns", "12", "--backends", "sqlite")
    assert "| sqlite | keel |" in out and "| sqlite | plain |" in out


@pytest.mark.parametrize("deep", [False, True])
def test_the_http_load_bench_runs(deep):
    how = ["--measure-from-turn", "2"] if deep else ["--seconds", "2", "--warmup", "0"]
    out = bench(
        "bench/http_load.py",
        *("--backends", "sqlite", "--users", "2", "--lengths", "3", "--workers", "1", *how),
    )
    row = next(line for line in out.splitlines() if line.startswith("| sqlite | 1 | 2 | 3 |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[7] == "0 (0)" and cells[11] == "0 (0)"  # no errors, keel's or plain's
