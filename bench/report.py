"""What one implementation did in one cell of the HTTP load bench, and the tables it prints.

Used by ``bench/http_load.py``.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field


@dataclass
class Result:
    """One implementation in one cell."""

    impl: str
    failed: str | None = None
    turns_per_s: float = 0.0
    p50_ms: float = math.nan
    p99_ms: float = math.nan
    errors: Counter[str] = field(default_factory=Counter)
    ok_turns: int = 0
    conversations: int = 0
    seconds: float = 0.0
    client_cpu: float = 0.0
    server_cpu: float = 0.0
    startup_s: float = 0.0
    mean_depth: float = 0.0
    note: str = ""

    @property
    def n_errors(self) -> int:
        """Every failed request."""
        return sum(self.errors.values())

    @property
    def n_5xx(self) -> int:
        """Failed requests answered with a 5xx status."""
        return sum(n for kind, n in self.errors.items() if kind.split()[-1].startswith("5"))


def percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile of an ascending list (nan when empty)."""
    if not sorted_values:
        return math.nan
    return sorted_values[max(0, math.ceil(q * len(sorted_values)) - 1)]


# --- report ---------------------------------------------------------------------------------

HEAD = [
    "backend",
    "workers",
    "users",
    "L",
    "keel turns/s",
    "keel p50 ms",
    "keel p99 ms",
    "keel errors (5xx)",
    "plain turns/s",
    "plain p50",
    "plain p99",
    "plain errors (5xx)",
    "keel/plain turns/s",
]
DETAIL_HEAD = [
    "backend",
    "workers",
    "users",
    "L",
    "impl",
    "ok turns",
    "conversations",
    "measured s",
    "errors by kind",
    "client CPU (cores)",
    "server CPU (cores)",
    "ready after s",
    "mean turn # in its conversation",
    "note",
]

Cell = tuple[str, int, int, int]


def md_row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def md_table(head: list[str], rows: list[list[str]]) -> str:
    return "\n".join([md_row(head), "|" + "---|" * len(head), *(md_row(r) for r in rows)])


def fmt(x: float, digits: int = 1) -> str:
    return "-" if math.isnan(x) else f"{x:.{digits}f}"


def impl_cells(r: Result | None) -> list[str]:
    if r is None:
        return ["-"] * 4
    if r.failed:
        return [r.failed, "-", "-", "-"]
    return [fmt(r.turns_per_s), fmt(r.p50_ms), fmt(r.p99_ms), f"{r.n_errors} ({r.n_5xx})"]


def row(cell: Cell, results: dict[str, Result]) -> list[str]:
    keel, plain = results.get("keel"), results.get("plain")
    ratio = "-"
    if keel and plain and not keel.failed and not plain.failed and plain.turns_per_s > 0:
        ratio = f"{keel.turns_per_s / plain.turns_per_s:.2f}"
    return [cell[0], *(str(c) for c in cell[1:]), *impl_cells(keel), *impl_cells(plain), ratio]


def detail_row(cell: Cell, r: Result) -> list[str]:
    errors = ", ".join(f"{k}: {n}" for k, n in sorted(r.errors.items())) or "0"
    return [
        cell[0],
        *(str(c) for c in cell[1:]),
        r.impl,
        str(r.ok_turns),
        str(r.conversations),
        fmt(r.seconds),
        errors if not r.failed else "-",
        fmt(r.client_cpu, 2),
        fmt(r.server_cpu, 2),
        fmt(r.startup_s),
        fmt(r.mean_depth),
        "; ".join(x for x in (r.failed, r.note) if x),
    ]


def progress(cell: Cell, r: Result) -> str:
    name = f"{cell[0]} workers={cell[1]} users={cell[2]} L={cell[3]} {r.impl}"
    if r.failed:
        return f"{name}: {r.failed}"
    kinds = f" {dict(r.errors)}" if r.errors else ""
    return (
        f"{name}: {r.turns_per_s:.1f} turns/s, p50 {fmt(r.p50_ms)} ms, p99 {fmt(r.p99_ms)} ms, "
        f"{r.n_errors} errors ({r.n_5xx} 5xx){kinds}, client CPU "
        f"{r.client_cpu:.2f} cores, server CPU {r.server_cpu:.2f} cores"
    )
