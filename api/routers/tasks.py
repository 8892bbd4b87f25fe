"""/v1/tasks: the caller's todo tasks, read-only (the agent's tools change them).

Each user sees only their own tasks, numbered from 1; another user's task number reads as no such
task (404), exactly like one that does not exist. The list is read a page at a time (``offset``,
``limit``), with ``X-Total-Count`` saying how many tasks there are.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request, Response

from keel.api.deps import ServiceDep, UserDep
from keel.api.errors import APIError
from keel.api.link_header import NEXT_PAGE_HEADER, link_next_page
from keel.api.schemas import ErrorOut, TaskOut
from keel.api.service import Service
from keel.tools.tasks.store import MAX_TASK_ID, TaskError, TaskStore

router = APIRouter(prefix="/v1/tasks", tags=["tasks"])

ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut} for code in (401, 404, 422, 503)
}


MAX_PAGE = 500
"""Tasks one GET /v1/tasks returns at most (and by default)."""
PAGE_HEADERS: dict[int | str, dict[str, Any]] = {
    200: {
        "headers": {
            "X-Total-Count": {
                "description": "How many tasks the caller has.",
                "schema": {"type": "integer"},
            },
            **NEXT_PAGE_HEADER,
        }
    }
}


ZoneQuery = Annotated[
    str | None,
    Query(
        max_length=64,
        description="The caller's time zone (IANA), in which due times are given (default: the "
        "server's `KEEL_TIMEZONE`).",
        examples=["Europe/Berlin"],
    ),
]


def _in_zone(service: Service, timezone: str | None) -> TaskStore:
    """The task store giving due times in ``timezone`` (the server's zone when none)."""
    try:
        return service.resources.store.in_zone(timezone or service.settings.timezone)
    except TaskError as exc:
        raise APIError(422, "invalid_request", exc.message) from None


@router.get("", response_model=list[TaskOut], responses={**ERRORS, **PAGE_HEADERS})
async def list_tasks(
    service: ServiceDep,
    user: UserDep,
    request: Request,
    response: Response,
    offset: Annotated[
        int, Query(ge=0, le=MAX_TASK_ID, description="How many tasks to skip.", examples=[0])
    ] = 0,
    limit: Annotated[
        int, Query(ge=1, le=MAX_PAGE, description=f"Tasks a page (at most {MAX_PAGE}).")
    ] = MAX_PAGE,
    timezone: ZoneQuery = None,
) -> list[dict[str, Any]]:
    """The caller's tasks in the order they were created, a page at a time.

    ``X-Total-Count`` says how many tasks the caller has; when there are more after this page,
    ``Link: <...>; rel="next"`` names the next one.
    """
    store = _in_zone(service, timezone)
    total = await store.count(user)
    page = await store.list(user, offset, limit)
    response.headers["X-Total-Count"] = str(total)
    if page and offset + len(page) < total:
        link_next_page(request, response, offset=offset + len(page), limit=limit)
    return page


@router.get("/{task_id}", response_model=TaskOut, responses=ERRORS)
async def get_task(
    task_id: Annotated[int, Path(ge=1, description="The task's number.", examples=[1])],
    service: ServiceDep,
    user: UserDep,
    timezone: ZoneQuery = None,
) -> dict[str, Any]:
    """One of the caller's tasks."""
    try:
        return await _in_zone(service, timezone).get(user, task_id)
    except TaskError as exc:
        raise APIError(404, "task_not_found", str(exc)) from None
