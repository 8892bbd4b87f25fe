"""/v1/tasks, /v1/lists and /v1/reminders: the caller's tasks, lists and reminders, read-only.

The agent's tools change tasks; keel's reminder delivery (``keel.graphs.reminding``) says the
reminders.

Each user sees only their own tasks, numbered from 1; another user's task number reads as no such
task (404), exactly like one that does not exist. The tasks are read a page at a time (``offset``,
``limit``), in their lists' order, with ``X-Total-Count`` saying how many there are; ``list``
reads one list.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Header, Path, Query, Request, Response
from sse_starlette.sse import EventSourceResponse

from keel.api.deps import ServiceDep, UserDep
from keel.api.errors import APIError
from keel.api.link_header import NEXT_PAGE_HEADER, link_next_page
from keel.api.service import Service
from keel.api.task_schemas import ErrorOut, ListOut, ReminderOut, TaskOut
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


REMINDERS_MAX = 200
"""Reminders one GET /v1/reminders returns at most."""


@router.get("/v1/reminders", response_model=list[ReminderOut], responses=ERRORS)
async def list_reminders(
    service: ServiceDep,
    user: UserDep,
    since: Annotated[
        datetime | None,
        Query(
            description="Only those said after this moment (ISO 8601), and those on their way: "
            "what fell due while a client was away.",
            examples=["2026-11-29T16:00:00Z"],
        ),
    ] = None,
    limit: Annotated[
        int, Query(ge=1, le=REMINDERS_MAX, description="How many, newest first.")
    ] = 50,
) -> list[dict[str, Any]]:
    """The caller's reminders that fell due, newest first: those said in a conversation, and those
    on their way (keel says a reminder that fell due while it was down as soon as it is back).
    """  # noqa: D205
    if since is not None and since.tzinfo is None:
        raise APIError(422, "invalid_request", "since needs a time zone (say Z for UTC).")
    found = await service.resources.reminders.of_user(user, limit, since)
    return [r.as_dict() for r in found]


REMINDER_FRAME = {
    "type": "string",
    "description": "`event: reminder`, `id: <when it was said>`, `data: <a reminder as JSON>`.",
    "examples": ['event: reminder\nid: 2026-11-29T17:00:01+00:00\ndata: {"task_id": 3, ...}\n\n'],
}
OUT_OF_ORDER = timedelta(minutes=1)
"""How far behind the newest reminder said a stream still looks (one said a moment earlier may
be committed a moment later)."""
WATCH_SECONDS = 1.0
"""How often an open stream asks the database for reminders said since it last looked."""


async def said_since(
    service: Service, user: str, since: datetime, conversation: str | None = None
) -> AsyncIterator[dict[str, Any]]:
    """The user's reminders as they are said (in ``conversation`` only, when given), from
    ``since`` on, oldest first; forever. Any worker said them: the database is asked.
    """  # noqa: D205
    seen: dict[str, datetime] = {}
    while True:
        found = await service.resources.reminders.of_user(user, REMINDERS_MAX, since)
        said = sorted((r for r in found if r.delivered_at), key=lambda r: r.delivered_at or since)
        for reminder in said:
            if reminder.id in seen:
                continue
            seen[reminder.id] = reminder.delivered_at or since
            if conversation is None or reminder.conversation_id == conversation:
                yield reminder.as_dict()
        if seen:  # asked from a little before the newest: one committed late is not missed
            since = max(since, max(seen.values()) - OUT_OF_ORDER)
            seen = {k: at for k, at in seen.items() if at >= since}
        await asyncio.sleep(WATCH_SECONDS)


@router.get(
    "/v1/reminders/events",
    responses={**ERRORS, 200: {"content": {"text/event-stream": {"schema": REMINDER_FRAME}}}},
)
async def stream_reminders(
    service: ServiceDep,
    user: UserDep,
    last_event_id: Annotated[
        str | None,
        Header(description="The last frame's id, given back on reconnecting: none is missed."),
    ] = None,
) -> EventSourceResponse:
    """The caller's reminders as keel says them, as Server-Sent Events: an ``event: reminder``
    frame each (its data a reminder as ``GET /v1/reminders`` gives it; its id when it was said).
    A client that reconnects with ``Last-Event-ID`` gets what was said while it was away.
    """  # noqa: D205
    since = service.resources.clock()
    if last_event_id:
        try:
            since = datetime.fromisoformat(last_event_id)
        except ValueError:
            raise APIError(422, "invalid_request", "Last-Event-ID is not a frame's id.") from None
        if since.tzinfo is None:
            raise APIError(422, "invalid_request", "Last-Event-ID is not a frame's id.")

    async def frames() -> AsyncIterator[dict[str, str]]:
        async for reminder in said_since(service, user, since):
            yield {
                "event": "reminder",
                "id": reminder["delivered_at"],
                "data": json.dumps(reminder),
            }

    return EventSourceResponse(frames(), ping=15)
