"""keel's learned understanding: an intent classifier and an argument tagger, learned from data.

The offline model reads people through it (``keel.tools.understanding.reading``):
``reader_for(tools)`` gives the ``Reader`` for a tool list, whose ``read(text)`` says what a message
asks for (a tool, or a kind of talk), how sure it is, and the words of each argument ("add eggs to
my grocery list": ``create_todo_task``, title "eggs"). The model shipped in ``trained/`` is made for
the todo tools by ``keel nlu train`` from ``corpora/`` (public corpora's training and validation
splits and keel's own sets, credited in ``corpora/README.md``) and each tool's declared examples; a
tool list it was not made for (a developer's own tools) gets a model trained once on first use and
kept in ``CACHE``. CPU only, deterministic, nothing fetched.
"""

from __future__ import annotations

import functools
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from keel.tools.understanding.nlu.data import Declared, declared, fingerprint
from keel.tools.understanding.nlu.model import MANIFEST, Reader, Reading

SHIPPED = Path(__file__).parent / "trained"
"""The model made for the todo tools, shipped inside the package."""

__all__ = ["Declared", "Reader", "Reading", "declared", "reader_for", "SHIPPED"]


CACHE = Path.home() / ".cache" / "keel-nlu"
"""Where models trained on first use are kept, one folder per fingerprint."""


def reader_for(tools: Sequence[Any]) -> Reader:
    """The learned reader for ``tools`` (the shipped one when it was made for them)."""
    return _reader(declared(tools))


@functools.lru_cache(maxsize=8)
def _reader(tools: tuple[Declared, ...]) -> Reader:
    made_from = fingerprint(tools)
    if (SHIPPED / MANIFEST).exists():
        shipped = Reader(SHIPPED)
        if shipped.fingerprint == made_from:
            return shipped
    folder = CACHE / made_from
    if not (folder / MANIFEST).exists():
        from keel.tools.understanding.nlu.training import (
            train,  # scikit-learn is loaded only to train
        )

        folder.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=f".{made_from}-", dir=folder.parent))
        train(tools, scratch)
        try:
            scratch.rename(folder)
        except OSError:  # another process kept the same model first
            shutil.rmtree(scratch, ignore_errors=True)
    return Reader(folder)
