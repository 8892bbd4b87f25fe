"""How many hand-written rules keel's offline understanding still has.

Regular expressions and word-list entries, counted in the modules that read people's words. A
regular expression is a literal pattern given to ``re`` (compiled or used at once) or a tool's
declared phrasing; a word-list entry is a string in a module-level collection of words (a set, a
tuple, a list or a dict's keys, ``"a b c".split()`` included). The learned model's own files
(``tools/understanding/nlu/``) hold no such rule.

    python bench/understanding_rules.py
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILES = [
    "tools/understanding/reading.py",
    "tools/understanding/pieces.py",
    "tools/understanding/phrasings.py",
    "tools/understanding/words.py",
    "tools/understanding/talk.py",
    "tools/tasks/matching.py",
    "tools/yes_no.py",
    "tools/spec.py",
    "tools/tasks/changes.py",
    "tools/tasks/reads.py",
    "tools/understanding/nlu/settle.py",
    "nodes/models/decisions.py",
    "nodes/models/lookups.py",
    "nodes/models/choices.py",
]
RE_CALLS = {"compile", "match", "search", "sub", "findall", "finditer", "fullmatch", "split"}


def _strings(node: ast.AST) -> list[str]:
    """The words a collection literal holds."""
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "split":  # "a b c".split()
            value = func.value
            return value.value.split() if isinstance(value, ast.Constant) else []
        return _strings(node.args[0]) if node.args else []  # frozenset(...)
    if isinstance(node, ast.Set | ast.Tuple | ast.List):
        return [
            e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
        ]
    if isinstance(node, ast.Dict):
        return [
            k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)
        ]
    return []


def count(path: Path) -> tuple[int, int]:
    """(regular expressions, word-list entries) in one module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    patterns = words = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            if isinstance(owner, ast.Name) and owner.id == "re" and node.func.attr in RE_CALLS:
                patterns += bool(node.args) and isinstance(
                    node.args[0], ast.Constant | ast.JoinedStr
                )
        if isinstance(node, ast.keyword) and node.arg == "phrasings":
            patterns += len(node.value.elts) if isinstance(node.value, ast.List) else 0
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            found = _strings(node.value)
            words += len(found) if len(found) >= 3 else 0
    return patterns, words


def main() -> None:
    total = [0, 0]
    for name in FILES:
        patterns, words = count(ROOT / name)
        total[0] += patterns
        total[1] += words
        print(f"{name:32} {patterns:4} regular expressions {words:5} word-list entries")
    print(f"{'all':32} {total[0]:4} regular expressions {total[1]:5} word-list entries")


if __name__ == "__main__":
    sys.exit(main())
