"""The chat page: ``GET /`` answers it, its scripts and styles are served under /web/.

Every file ships in the package (``keel/api/web``); nothing is fetched from another host and no
build step is needed. The page talks to keel only through the documented /v1 API.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles
from starlette.responses import Response
from starlette.types import Scope

WEB = Path(__file__).resolve().parent.parent / "web"
PAGE_HEADERS = {
    "Cache-Control": "no-cache",
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
}
"""Only keel's own origin: the page can load and call nothing else."""

router = APIRouter(include_in_schema=False)


@router.get("/")
async def chat_page() -> FileResponse:
    """The chat page."""
    return FileResponse(WEB / "index.html", headers=PAGE_HEADERS)


class Assets(StaticFiles):
    """The page's files, each with the page's headers (revalidated, never framed elsewhere)."""

    async def get_response(self, path: str, scope: Scope) -> Response:  # noqa: D102
        response = await super().get_response(path, scope)
        response.headers.update(PAGE_HEADERS)
        return response


def assets() -> StaticFiles:
    """The page's scripts and styles."""
    return Assets(directory=WEB)
