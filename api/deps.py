"""Dependencies of the routers, as ``Annotated`` aliases: the service, the user, a conversation.

``UserDep`` authenticates ``Authorization: Bearer <key>`` against ``KEEL_API_KEYS``. With no keys
set (a server on 127.0.0.1 only) everyone is ``local``, and ``Bearer local:NAME`` acts as the local
user ``local:NAME`` (any other token is ignored): a script can try things without touching the tasks
of the page's user, and no key meant for another server becomes a user's name. The header is read by
``bearer``, FastAPI's ``HTTPBearer``, so the OpenAPI schema declares the scheme and every operation
that needs it (and /docs has an Authorize button); ``user_for`` has it read a connection that is no
route's (the MCP endpoint), and ``user_of`` finds the key's user for all of them.
``ConversationDep`` resolves a conversation id the user owns; another user's conversation is
answered exactly like an unknown one (404). The routes that take the turn lock (a message, a delete)
use ``ConversationIdDep`` and have the lock check.
"""

from __future__ import annotations

import hmac
import re
import uuid
from typing import Annotated

from fastapi import Depends, Path, Request, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.requests import HTTPConnection

from keel.api.errors import APIError
from keel.api.service import Service
from keel.graphs.settings import LOCAL_USER

ConversationId = Annotated[
    uuid.UUID,
    Path(
        description="The conversation's id (a UUID).",
        examples=["6f1c1a9e-0c57-4d3e-9a52-2f9b0f0c3b11"],
    ),
]


async def get_service(request: Request) -> Service:
    """The running service."""
    service: Service = request.app.state.service
    return service


ServiceDep = Annotated[Service, Depends(get_service)]


UNAUTHORIZED = "missing or invalid API key (Authorization: Bearer <key>)"
LOCAL = "local:"
LOCAL_NAME = re.compile(r"local:[A-Za-z0-9_.-]{1,64}")
BAD_LOCAL_NAME = "a local user is named local:NAME, NAME 1-64 of A-Z a-z 0-9 _ . -"
bearer = HTTPBearer(
    auto_error=False,  # no key or a malformed header is keel's own 401, in the error envelope
    description=(
        "An API key from KEEL_API_KEYS (`user:key` pairs). With no keys set the server serves "
        "everyone as the user `local` and the header is not needed; `Bearer local:NAME` then "
        "acts as a local user of its own, `local:NAME` (tasks apart from `local`'s)."
    ),
)


def user_of(service: Service, credentials: HTTPAuthorizationCredentials | None) -> str:
    """The user the bearer key belongs to; APIError 401 when it belongs to none."""
    keys = service.settings.keys
    if not keys:
        token = credentials.credentials if credentials is not None else ""
        if not token.startswith(LOCAL):
            return LOCAL_USER  # no token, or one meant for some other server: ignored
        if not LOCAL_NAME.fullmatch(token):
            raise APIError(401, "unauthorized", BAD_LOCAL_NAME)
        return token
    if credentials is not None:
        for key, user in keys.items():
            if hmac.compare_digest(key.encode(), credentials.credentials.encode()):
                return user
    raise APIError(401, "unauthorized", UNAUTHORIZED)


async def user_for(service: Service, connection: HTTPConnection) -> str:
    """The user of a request's (or a WebSocket's) bearer key; APIError 401 when there is none."""
    return user_of(service, await bearer(connection))


async def get_user(
    service: ServiceDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Security(bearer)],
) -> str:
    """The authenticated user of the request."""
    return user_of(service, credentials)


UserDep = Annotated[str, Depends(get_user)]


async def get_conversation(
    conversation_id: ConversationId, user: UserDep, service: ServiceDep
) -> str:
    """The id of a conversation the user owns (404 otherwise)."""
    cid = str(conversation_id)
    await service.conversations.require(cid, user)
    return cid


ConversationDep = Annotated[str, Depends(get_conversation)]


async def get_conversation_id(conversation_id: ConversationId) -> str:
    """A conversation id, its owner checked later with the turn lock (``service.turns``)."""
    return str(conversation_id)


ConversationIdDep = Annotated[str, Depends(get_conversation_id)]
"""For the routes that take the conversation's turn lock: the lock's statement checks the owner."""
