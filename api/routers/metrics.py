"""GET /metrics: the server's counters in Prometheus's text format (``keel.api.prometheus``).

Behind the API keys like /v1 (any user's key; with no keys set the server is local and it is
open), so scrape it with ``Authorization: Bearer <key>``.
"""

from __future__ import annotations

from fastapi import APIRouter, Response

from keel.api.deps import ServiceDep, UserDep
from keel.api.prometheus import count_pool, exposition

router = APIRouter(tags=["operations"])


@router.get("/metrics", response_class=Response, responses={200: {"content": {"text/plain": {}}}})
async def metrics(service: ServiceDep, user: UserDep) -> Response:
    """Turns by outcome and duration, refusals, tool calls, confirmations, resets, topics, pool."""
    count_pool(service.pool_stats())
    body, content_type = exposition(service.settings.metrics_dir)
    return Response(body, media_type=content_type)
