"""The arguments keel gives a todo tool itself, and a task id as the tools take it.

``user_id`` and ``store`` are injected by keel and hidden from the model's schema, so a model can
never name another user; ``TaskId`` refuses ``true`` for 1. Used by the tools' modules.
"""

from __future__ import annotations

from typing import Annotated, Any

from langchain_core.tools import InjectedToolArg
from pydantic import BeforeValidator

from keel.tools.tasks.store import TaskStore

UserId = Annotated[str, InjectedToolArg]
Store = Annotated[TaskStore, InjectedToolArg]


def _not_a_bool(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("a task id is a number, not true or false")
    return value


TaskId = Annotated[int, BeforeValidator(_not_a_bool)]
"""A task id as tools take it: a whole number (``true`` is not 1)."""
