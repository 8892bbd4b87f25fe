"""/v1/tasks and /v1/lists: the caller's tasks and lists, read-only (the agent's tools change them).

Each user sees only their own tasks, numbered from 1; another user's task number reads as no such
task (404), exactly like one that does not exist. The tasks are read a page at a time (``offset``,
``limit``), in their lists' order, with ``X-Total-Count`` saying how many there are; ``list``
reads one list.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request, Response

from keel.api.deps import ServiceDep, UserDep
from keel.api.errors import APIError
from keel.api.link_header import NEXT_PAGE_HEADER, link_next_page
from keel.api.service import Service
from keel.api.task_schemas import ErrorOut, ListOut, TaskOut
from keel.tools.tasks.rows import MAX_TASK_ID
from keel.tools.tasks.store import TaskError, TaskStore

router = APIRouter(tags=["tasks"])

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


ListQuery = Annotated[
    str | None,
    Query(
        max_length=100,
        description='Only the tasks on this list, by its name ("shopping"; "todo": the one a '
        "task is on when none is named).",
        examples=["shopping"],
    ),
]


@router.get("/v1/tasks", response_model=list[TaskOut], responses={**ERRORS, **PAGE_HEADERS})
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
    list: ListQuery = None,  # noqa: A002 - the query's name
) -> list[dict[str, Any]]:
    """The caller's tasks, a page at a time: the todo list first, then the named lists by name,
    each in the order its person set.

    ``X-Total-Count`` says how many tasks the caller has (on the list, with ``list``); when there
    are more after this page, ``Link: <...>; rel="next"`` names the next one.
    """  # noqa: D205
    store = _in_zone(service, timezone)
    try:
        total = await store.count(user, list_=list)
        page = await store.list(user, offset, limit, list_=list)
    except TaskError as exc:
        raise APIError(422, "invalid_request", exc.message) from None
    response.headers["X-Total-Count"] = str(total)
    if page and offset + len(page) < total:
        link_next_page(request, response, offset=offset + len(page), limit=limit)
    return page


@router.get("/v1/tasks/{task_id}", response_model=TaskOut, responses=ERRORS)
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


@router.get("/v1/lists", response_model=list[ListOut], responses=ERRORS)
async def list_lists(service: ServiceDep, user: UserDep) -> list[dict[str, Any]]:
    """The caller's lists: the todo list first (always there), then each list they have put a
    task on, by name, with how many tasks it holds and how many are open.
    """  # noqa: D205
    return await service.resources.store.lists(user)

