"""/v1/conversations/{id}: what a conversation said, and the points it can be run from again.

The message log a page at a time (of the branch the conversation is on, or of the branch a
checkpoint names), a message's branches (the messages sent from the same checkpoint, each with
the newest kept checkpoint of its line), and the kept checkpoints (time travel).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Request, Response
from langchain_core.tools import BaseTool

from keel.api.deps import ConversationDep, ServiceDep
from keel.api.errors import APIError
from keel.api.link_header import NEXT_PAGE_HEADER, link_next_page
from keel.api.message_schemas import BranchOut, CheckpointOut, LoggedMessageOut, Storable
from keel.api.task_schemas import ErrorOut
from keel.checkpoints.messages import Sibling
from keel.graphs.runner import thread_config
from keel.graphs.viewed_branch import branch_tips, holds, viewed_branch
from keel.tools.spec import tool_sentence

router = APIRouter(prefix="/v1/conversations", tags=["conversations"])
MAX_PAGE = 1000
"""Messages in one page of the log: a read's memory is bounded however long the log."""

ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut} for code in (401, 404, 422, 503)
}

CheckpointQuery = Annotated[
    str | None,
    Query(
        min_length=1,
        max_length=64,
        description="Read the branch this checkpoint is on (a message's branch tip, from "
        "`/messages/{id}/branches`), not the one the conversation is on.",
    ),
    Storable,
]


LOG_PAGE_HEADERS: dict[int | str, dict[str, Any]] = {
    200: {
        "headers": {
            **NEXT_PAGE_HEADER,
            "X-Next-Cursor": {
                "description": "The `cursor` of the next page, when there is one.",
                "schema": {"type": "integer"},
            },
        }
    }
}


@router.get(
    "/{conversation_id}/messages",
    response_model=list[LoggedMessageOut],
    responses={**ERRORS, **LOG_PAGE_HEADERS},
)
async def get_messages(
    cid: ConversationDep,
    service: ServiceDep,
    request: Request,
    response: Response,
    topic: Annotated[
        Literal["active", "all"], Query(description="Only the active topic, or all.")
    ] = "all",
    order: Annotated[
        Literal["oldest", "newest"], Query(description="Oldest first, or newest first.")
    ] = "oldest",
    limit: Annotated[
        int, Query(ge=1, le=MAX_PAGE, description=f"Messages a page (at most {MAX_PAGE}).")
    ] = MAX_PAGE,
    cursor: Annotated[
        int | None,
        Query(ge=0, le=2**63 - 1, description="Start after this message id (the next cursor)."),
    ] = None,
    checkpoint_id: CheckpointQuery = None,
) -> list[dict[str, Any]]:
    """The immutable message log, a page at a time: ``Link: <...>; rel="next"`` when there is more.

    The next page starts after the last message of this one (``cursor`` = its id), in the same
    order; ``X-Next-Cursor`` carries that id alone. A conversation forked from an earlier
    checkpoint (a message edited) shows the branch its newest checkpoint is on, or the branch of
    ``checkpoint_id``; a message with ``branch_count`` above 1 has edits to switch between.
    """
    viewed = await viewed_branch(service.graph, cid, checkpoint_id)
    topic_id = None
    if topic == "active":
        active = viewed.topic_id or getattr(await service.topics.active(cid), "id", None)
        if active is None:
            return []
        topic_id = active
    page = await service.messages.page(
        cid,
        topic_id=topic_id,
        newest_first=order == "newest",
        cursor=cursor,
        limit=limit + 1,
        lineage=viewed.lineage,
    )
    if len(page) > limit:
        page = page[:limit]
        link_next_page(request, response, cursor=page[-1].id)
        response.headers["X-Next-Cursor"] = str(page[-1].id)
    starts = [m.from_checkpoint for m in page if m.from_checkpoint is not None]
    siblings = await service.messages.siblings(cid, starts)
    shown = []
    for m in page:
        row = _shown(m.as_dict(), service.resources.tools)
        sent = siblings.get(m.from_checkpoint) if m.from_checkpoint is not None else None
        if sent and m.id in (ids := [s.id for s in sent]):
            row["branch_count"], row["branch_index"] = len(ids), ids.index(m.id) + 1
        shown.append(row)
    return shown


@router.get(
    "/{conversation_id}/messages/{message_id}/branches",
    response_model=list[BranchOut],
    responses=ERRORS,
)
async def get_branches(
    cid: ConversationDep,
    service: ServiceDep,
    message_id: Annotated[int, Path(ge=1, le=2**63 - 1, description="A message's id.")],
    checkpoint_id: CheckpointQuery = None,
) -> list[dict[str, Any]]:
    """The messages sent from the checkpoint this message was sent from: its branches.

    Each comes with the newest kept checkpoint of its branch, to view it (`GET /messages` and
    `GET /` with `checkpoint_id`) or continue it (a message sent with that `checkpoint_id`).
    """
    row = await service.messages.get(cid, message_id)
    if row is None or not row.opens_turn:  # only a message that opened a turn has branches
        raise APIError(
            404,
            "message_not_found",
            f"conversation {cid} has no message {message_id} that opened a turn",
        )
    viewed = await viewed_branch(service.graph, cid, checkpoint_id)
    sent = [Sibling(row.id, row.content, row.created_at, row.branch, row.turn)]
    if row.from_checkpoint is not None:
        sent = (await service.messages.siblings(cid, [row.from_checkpoint]))[row.from_checkpoint]
    tips = await branch_tips(service.graph, cid, sent)
    return [
        {
            "message_id": s.id,
            "content": s.content,
            "created_at": s.created_at.isoformat(),
            "checkpoint_id": tip,
            "viewed": holds(viewed.lineage, s),
        }
        for s, tip in zip(sent, tips, strict=True)
    ]


def _shown(message: dict[str, Any], tools: Sequence[BaseTool]) -> dict[str, Any]:
    """A logged message as the API gives it: a tool result with its sentence for people."""
    if message["role"] == "tool" and message["tool_name"]:
        try:
            result: Any = json.loads(message["content"])
        except ValueError:
            result = message["content"]
        message["text"] = tool_sentence(tools, message["tool_name"], result)
    return message


@router.get("/{conversation_id}/checkpoints", response_model=list[CheckpointOut], responses=ERRORS)
async def get_checkpoints(cid: ConversationDep, service: ServiceDep) -> list[dict[str, Any]]:
    """The kept checkpoints a turn ended at (or waits at, for an answer), newest first: the points
    a message can be sent from again (time travel). A turn's own steps in between are left out.
    """  # noqa: D205
    out = []
    async for snap in service.graph.aget_state_history(thread_config(cid)):
        if snap.next and not snap.interrupts:  # mid-turn: a step left to run
            continue
        out.append(
            {
                "checkpoint_id": snap.config["configurable"]["checkpoint_id"],
                "step": (snap.metadata or {}).get("step"),
                "created_at": snap.created_at,
                "next": list(snap.next),
                "agent_state": snap.values.get("agent_state"),
            }
        )
    return out
