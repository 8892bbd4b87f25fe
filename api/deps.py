"""Dependencies of the routers, as ``Annotated`` aliases: the service, the user, a conversation.

``UserDep`` authenticates ``Authorization: Bearer <key>`` against ``KEEL_API_KEYS`` (everyone is
``local`` when no keys are set). ``ConversationDep`` resolves a conversation id the user owns;
another user's conversation is answered exactly like an unknown one (404).
"""

from __future__ import annotations

import hmac
import uuid
from typing import Annotated

from fastapi import Depends, Path, Request

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


def user_for(service: Service, authorization: str | None) -> str:
    """The user a bearer key belongs to; APIError 401 when it belongs to none."""
    keys = service.settings.keys
    if not keys:
        return LOCAL_USER
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() == "bearer" and token:
        for key, user in keys.items():
            if hmac.compare_digest(key.encode(), token.strip().encode()):
                return user
    raise APIError(401, "unauthorized", "missing or invalid API key (Authorization: Bearer <key>)")


async def get_user(request: Request, service: ServiceDep) -> str:
    """The authenticated user of the request."""
    return user_for(service, request.headers.get("authorization"))


UserDep = Annotated[str, Depends(get_user)]


async def get_conversation(
    conversation_id: ConversationId, user: UserDep, service: ServiceDep
) -> str:
    """The id of a conversation the user owns (404 otherwise)."""
    cid = str(conversation_id)
    await service.conversations.require(cid, user)
    return cid


ConversationDep = Annotated[str, Depends(get_conversation)]
