"""Authentication for a LangGraph server running keel's graph, with keel's own API keys.

``langgraph.auth.json`` points the server at ``auth`` here (``"auth": {"path": ...}``): a request
must carry ``Authorization: Bearer <key>`` or ``x-api-key: <key>`` (as LangGraph's SDK and Agent
Chat UI send it) with a key of ``KEEL_API_KEYS``, and its user is the
key's user, the same as on keel's HTTP API. The graph then acts for that user whatever the run's
context says (``keel.graphs.resources.authenticated_user``) and refuses a thread that is another
user's conversation. Threads, runs and crons are stamped with their owner and filtered by it, so
a user lists and reads only their own. Without this handler (plain ``langgraph.json``) the server
authenticates nobody: it is a local development tool, for one person on one machine.
"""

from __future__ import annotations

import hmac
from functools import cache
from typing import Any

from langgraph_sdk import Auth

from keel.graphs.settings import Settings

auth = Auth()
OWNER = "owner"


@cache
def _keys() -> dict[str, str]:
    """Key -> user, read once from the settings (``KEEL_API_KEYS``)."""
    return Settings().keys


def user_of_key(authorization: str | None, api_key: bytes | None = None) -> str | None:
    """The user whose key the ``Authorization: Bearer`` header carries, or else the ``x-api-key``
    header (what LangGraph's SDK and Agent Chat UI send), or None.
    """  # noqa: D205
    scheme, _, key = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not key:
        key = (api_key or b"").decode("utf-8", "replace")
    if not key.strip():
        return None
    for known, user in _keys().items():
        if hmac.compare_digest(known.encode(), key.strip().encode()):
            return user
    return None


@auth.authenticate
async def authenticate(
    authorization: str | None, headers: dict[bytes, bytes]
) -> Auth.types.MinimalUserDict:
    """The user of the request's key; 401 without a known one."""
    user = user_of_key(authorization, headers.get(b"x-api-key"))
    if user is None:
        raise Auth.exceptions.HTTPException(
            status_code=401,
            detail="missing or invalid API key (Authorization: Bearer <key>, or x-api-key: <key>)",
        )
    return {"identity": user}


@auth.on
async def own_resources(ctx: Auth.types.AuthContext, value: Any) -> dict[str, str]:
    """Stamp what a user creates with their name; let them see and change only that."""
    if isinstance(value, dict):
        metadata = value.setdefault("metadata", {})  # changed in place: the server holds it
        if isinstance(metadata, dict):
            metadata[OWNER] = ctx.user.identity
    return {OWNER: ctx.user.identity}


@auth.on.assistants
async def the_servers_assistants(ctx: Auth.types.AuthContext, value: Any) -> bool:
    """The graph's assistant is the server's: every authenticated user may use it."""
    return True
