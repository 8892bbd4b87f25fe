"""/v1/conversations: a user's conversations and what is done with one.

Create, list (and search), rename and delete; talk (JSON or SSE) and stop a running turn; read
the state; reset; go back to an earlier topic. What a conversation said and where it can be run
from again (its message log, a message's branches, its checkpoints) is ``history``'s.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Body, Header, Path, Query, Request, Response
from sse_starlette.sse import EventSourceResponse

from keel.api.conversation_schemas import (
    CancelAnswer,
    Conversation,
    ConversationListed,
    ConversationRename,
    NewConversation,
    ReopenAnswer,
    Searchable,
)
from keel.api.deps import ConversationDep, ConversationIdDep, ServiceDep, UserDep
from keel.api.errors import TURN_FAILED, check_size, error_body
from keel.api.link_header import NEXT_PAGE_HEADER, link_next_page
from keel.api.message_schemas import KEY_PATTERN, STREAM_FRAME, NewMessage, Storable
from keel.api.routers.history import CheckpointQuery
from keel.api.task_schemas import ErrorOut
from keel.checkpoints.conversation_store import MAX_SEARCH_WORDS, ConversationNotFound
from keel.checkpoints.topics import TopicNotFound
from keel.checkpoints.trouble import trouble_of
from keel.graphs.legacy_import import import_legacy_session
from keel.graphs.result import ResetAnswer, Snapshot, TurnResult, reset_answer, topic_segment
from keel.graphs.run_turn import CheckpointNotKept
from keel.graphs.runner import snapshot
from keel.nodes.event_types import StreamEvent
from keel.nodes.state.schema import TurnCommand

router = APIRouter(prefix="/v1/conversations", tags=["conversations"])
IdempotencyKey = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        min_length=1,
        max_length=200,
        pattern=KEY_PATTERN,
        description="A key of the client's own (a UUID is fine) that makes the message run at "
        "most once: send the same key again only to retry the same message.",
        examples=["9b2f6c1e-3d4a-4f1b-8c2d-5e6f7a8b9c0d"],
    ),
]

ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut} for code in (401, 404, 409, 413, 422, 503)
}
LIST_PAGE_HEADERS: dict[int | str, dict[str, Any]] = {200: {"headers": NEXT_PAGE_HEADER}}


@router.post("", status_code=201, response_model=Conversation, responses=ERRORS)
async def create_conversation(
    service: ServiceDep, user: UserDep, body: Annotated[NewConversation | None, Body()] = None
) -> dict[str, str]:
    """Start a conversation owned by the caller (in a legacy session's state, if one is given)."""
    created = await service.conversations.create(user)
    if body is not None and body.legacy_session is not None:
        legacy = body.legacy_session.model_dump(exclude_unset=True)
        cid = created["conversation_id"]
        try:
            await import_legacy_session(service.graph, cid, legacy, service.turn_context(user))
        except BaseException:
            await service.turns.erase(cid)  # no conversation is left half made
            raise
    return created


@router.get("", response_model=list[ConversationListed], responses={**ERRORS, **LIST_PAGE_HEADERS})
async def list_conversations(
    service: ServiceDep,
    user: UserDep,
    request: Request,
    response: Response,
    limit: Annotated[int, Query(ge=1, le=500, description="At most this many.")] = 100,
    offset: Annotated[
        int, Query(ge=0, le=100_000, description="Skip this many (the next page's offset).")
    ] = 0,
    q: Annotated[
        str | None,
        Query(
            max_length=200,
            description="Only conversations whose name, or messages of the user or keel, hold "
            f"each of these words (at most {MAX_SEARCH_WORDS}), in any order and any case.",
            examples=["milk"],
        ),
        Storable,
        Searchable,
    ] = None,
) -> list[dict[str, Any]]:
    """The caller's conversations, the most recently active first, each with a preview.

    A page at a time: ``Link: <...>; rel="next"`` names the next page when there may be more.
    """
    page = await service.conversations.list(user, limit + 1, offset, q)
    if len(page) > limit:
        page = page[:limit]
        link_next_page(request, response, offset=offset + limit)
    return page


@router.patch("/{conversation_id}", response_model=ConversationListed, responses=ERRORS)
async def rename_conversation(
    body: ConversationRename, cid: ConversationDep, service: ServiceDep, user: UserDep
) -> dict[str, Any]:
    """Rename a conversation: its name in every client's list and header."""
    await service.conversations.rename(cid, body.name)
    listed = await service.conversations.listed(cid, user)
    if listed is None:  # deleted in the meantime
        raise ConversationNotFound(cid)
    return listed


@router.delete("/{conversation_id}", status_code=204, responses=ERRORS)
async def delete_conversation(
    cid: ConversationIdDep, service: ServiceDep, user: UserDep
) -> Response:
    """Delete a conversation: its checkpoints, message log, topics and backups (tasks stay).

    Once answered, the conversation is gone for every process of the service at once.
    """
    await service.turns.delete(cid, user)
    return Response(status_code=204)


async def _sse(
    task: asyncio.Task[TurnResult], queue: asyncio.Queue[StreamEvent | None]
) -> AsyncIterator[dict[str, str]]:
    """Frames of a running turn; the turn goes on (and frees its lock) if the client leaves."""
    while (event := await queue.get()) is not None:
        kind = "token" if event["type"] == "token" else "event"
        yield {"event": kind, "data": json.dumps(event)}
    try:
        result = await asyncio.shield(task)
    except CheckpointNotKept as exc:  # pruned between the check and the run
        yield {"event": "error", "data": json.dumps(error_body(exc.code, str(exc)))}
        return
    except Exception as exc:
        trouble = trouble_of(exc)
        code, message = (
            (trouble.value, trouble.message) if trouble else ("turn_failed", TURN_FAILED)
        )
        yield {"event": "error", "data": json.dumps(error_body(code, message))}
        return
    yield {"event": "result", "data": result.model_dump_json()}


@router.post(
    "/{conversation_id}/messages",
    response_model=TurnResult,
    responses={**ERRORS, 200: {"content": {"text/event-stream": {"schema": STREAM_FRAME}}}},
)
async def post_message(
    message: NewMessage,
    request: Request,
    cid: ConversationIdDep,
    service: ServiceDep,
    user: UserDep,
    idempotency_key: IdempotencyKey = None,
) -> Any:
    """Send a message; the answer is the turn result, or an SSE stream of it.

    With an ``Idempotency-Key`` the message runs at most once: a retry with the same key gets the
    first answer (``replayed: true``), even when the first attempt was cut off.
    """
    check_size(service.settings.max_message_chars, message.content)
    turns, start, zone = service.turns, message.checkpoint_id, message.timezone
    if "text/event-stream" not in request.headers.get("accept", ""):
        return await turns.take(
            cid, user, message.content, idempotency_key, from_checkpoint=start, timezone=zone
        )
    queue: asyncio.Queue[StreamEvent | None] = asyncio.Queue()
    task = await turns.start(
        cid, user, message.content, queue.put, idempotency_key, from_checkpoint=start, timezone=zone
    )
    task.add_done_callback(lambda _: queue.put_nowait(None))
    return EventSourceResponse(_sse(task, queue))


@router.get("/{conversation_id}", response_model=Snapshot, responses=ERRORS)
async def get_conversation(
    cid: ConversationDep, service: ServiceDep, checkpoint_id: CheckpointQuery = None
) -> Snapshot:
    """The conversation's state: agent_state, mission, todolist, topics, confirmation, stats."""
    topics = await service.topics.list(cid)
    result = await snapshot(service.graph, cid, topics, checkpoint_id)
    result["turn_running"] = await service.turns.running(cid)
    return result


@router.post("/{conversation_id}/reset", response_model=ResetAnswer, responses=ERRORS)
async def reset(cid: ConversationDep, service: ServiceDep, user: UserDep) -> ResetAnswer:
    """Start afresh: a new topic, the mission cleared; the message history is kept.

    Runs as a turn whose input is the reset command, as ``/reset`` typed does.
    """
    command: TurnCommand = {"command": "reset"}
    return reset_answer(await service.turns.take(cid, user, "", command=command))


@router.post("/{conversation_id}/cancel", response_model=CancelAnswer, responses=ERRORS)
async def cancel_turn(cid: ConversationDep, service: ServiceDep) -> dict[str, bool]:
    """Stop the running turn at its next safe point; what already ran stays done and logged."""
    if not service.turns.stop(cid):
        return {"running": await service.turns.running(cid), "cancel_requested": False}
    return {"running": True, "cancel_requested": True}


@router.post(
    "/{conversation_id}/topics/{topic_id}/reopen", response_model=ReopenAnswer, responses=ERRORS
)
async def reopen(
    cid: ConversationDep,
    topic_id: Annotated[str, Path(max_length=36, description="An earlier topic's id."), Storable],
    service: ServiceDep,
    user: UserDep,
) -> dict[str, Any]:
    """Go back to an earlier topic: it becomes the active one, the next turn's context.

    Runs as a turn whose input is the reopen command.
    """
    if await service.topics.get(cid, topic_id) is None:
        raise TopicNotFound(topic_id)
    command: TurnCommand = {"command": "reopen", "topic_id": topic_id}
    result = await service.turns.take(cid, user, "", command=command)
    changed = next((e["data"] for e in result.events if e["type"] == "topic_changed"), None)
    topic = await service.topics.get(cid, topic_id)
    if topic is None:  # the conversation was deleted in the meantime
        raise TopicNotFound(topic_id)
    return {
        "topic": topic_segment(topic),
        "previous_topic_id": changed["previous_topic_id"] if changed else None,
        "message": result.reply,
    }
