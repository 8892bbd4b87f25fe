"""Dependencies of the routers, as ``Annotated`` aliases: the service, the user, a conversation.

``UserDep`` authenticates ``Authorization: Bearer <key>`` against ``KEEL_API_KEYS`` (everyone is
``local`` when no keys are set). The header is read by ``bearer``, FastAPI's ``HTTPBearer``, so the
OpenAPI schema declares the scheme and every operation that needs it (and /docs has an Authorize
button); ``user_for`` reads a header value the same way for the callers that are no FastAPI
dependencies (the MCP endpoint, the WebSocket). ``ConversationDep`` resolves a conversation id the
user owns; another user's conversation is answered exactly like an unknown one (404).
"""

from __future__ import annotations

import hmac
import uuid
from typing import Annotated

from fastapi import Depends, Path, Request, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from fastapi.security.utils import get_authorization_scheme_param
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


class APIKeyBearer(HTTPBearer):
    """``HTTPBearer`` whose reading of the header can also be called with the header's value.

    FastAPI calls the instance for the routes (and puts the scheme in the OpenAPI schema);
    ``user_for`` calls ``read`` for the MCP endpoint and the WebSocket: one reading for all of them.
    """

    def read(self, authorization: str | None) -> HTTPAuthorizationCredentials | None:
        """The scheme and key of an ``Authorization`` value; None unless it is ``Bearer <key>``."""
        scheme, key = get_authorization_scheme_param(authorization)
        if scheme.lower() != "bearer" or not key:
            if self.auto_error:
                raise self.make_not_authenticated_error()
            return None
        return HTTPAuthorizationCredentials(scheme=scheme, credentials=key)

    async def __call__(self, request: HTTPConnection) -> HTTPAuthorizationCredentials | None:
        """The credentials of the request's ``Authorization`` header, as ``read`` finds them."""
        return self.read(request.headers.get("authorization"))


UNAUTHORIZED = "missing or invalid API key (Authorization: Bearer <key>)"
bearer = APIKeyBearer(
    auto_error=False,  # no key or a malformed header is keel's own 401, in the error envelope
    description=(
        "An API key from KEEL_API_KEYS (`user:key` pairs). With no keys set the server serves "
        "everyone as the user `local` and the header is not needed."
    ),
)


def _owner(service: Service, credentials: HTTPAuthorizationCredentials | None) -> str:
    """The user the bearer key belongs to; APIError 401 when it belongs to none."""
    keys = service.settings.keys
    if not keys:
        return LOCAL_USER
    if credentials is not None:
        for key, user in keys.items():
            if hmac.compare_digest(key.encode(), credentials.credentials.encode()):
                return user
    raise APIError(401, "unauthorized", UNAUTHORIZED)


def user_for(service: Service, authorization: str | None) -> str:
    """The user an ``Authorization`` header value's bearer key belongs to; APIError 401 if none."""
    return _owner(service, bearer.read(authorization))


async def get_user(
    service: ServiceDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Security(bearer)],
) -> str:
    """The authenticated user of the request."""
    return _owner(service, credentials)


UserDep = Annotated[str, Depends(get_user)]


async def get_conversation(
    conversation_id: ConversationId, user: UserDep, service: ServiceDep
) -> str:
    """The id of a conversation the user owns (404 otherwise)."""
    cid = str(conversation_id)
    await service.conversations.require(cid, user)
    return cid


ConversationDep = Annotated[str, Depends(get_conversation)]
