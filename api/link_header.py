"""Paged answers: the ``Link`` header that names the next page, for every paged list of the API.

Used by GET /v1/conversations/{id}/messages and GET /v1/tasks: the next page is this request's
address with the query parameters that start it.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

NEXT_PAGE_HEADER = {
    "Link": {
        "description": 'The next page, `<...>; rel="next"`, when there is one.',
        "schema": {"type": "string"},
    }
}
"""How the OpenAPI schema declares the header."""


def link_next_page(request: Request, response: Response, **query: Any) -> None:
    """Name the next page, this request with ``query`` changed, in ``Link: <...>; rel="next"``."""
    following = request.url.include_query_params(**query)
    response.headers["Link"] = f'<{following.path}?{following.query}>; rel="next"'
