"""/v1/tasks: the caller's todo tasks, read-only (the agent's tools change them).

Each user sees only their own tasks, numbered from 1; another user's task number reads as no such
task (404), exactly like one that does not exist.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path

from keel.api.deps import ServiceDep, UserDep
from keel.api.errors import APIError
from keel.api.schemas import ErrorOut, TaskOut
from keel.tools.store import TaskError, TaskStore

router = APIRouter(prefix="/v1/tasks", tags=["tasks"])

ERRORS: dict[int | str, dict[str, Any]] = {code: {"model": ErrorOut} for code in (401, 404, 503)}


@router.get("", response_model=list[TaskOut], responses=ERRORS)
async def list_tasks(service: ServiceDep, user: UserDep) -> list[dict[str, Any]]:
    """The caller's tasks, in the order they were created."""
    return await TaskStore(service.db).list(user)


@router.get("/{task_id}", response_model=TaskOut, responses=ERRORS)
async def get_task(
    task_id: Annotated[int, Path(ge=1, description="The task's number.", examples=[1])],
    service: ServiceDep,
    user: UserDep,
) -> dict[str, Any]:
    """One of the caller's tasks."""
    try:
        return await TaskStore(service.db).get(user, task_id)
    except TaskError as exc:
        raise APIError(404, "task_not_found", str(exc)) from None
