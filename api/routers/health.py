"""/healthz (the process is alive) and /readyz (the database answers)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from keel.api.deps import ServiceDep
from keel.api.errors import error_body

router = APIRouter(tags=["health"])


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    """Liveness."""
    return {"status": "ok"}


@router.get("/readyz", responses={503: {"description": "The database does not answer."}})
async def readyz(service: ServiceDep) -> JSONResponse:
    """Readiness: the database answers a query."""
    try:
        await service.db.fetch("SELECT 1")
    except Exception:
        body = error_body("database_unavailable", "the database is unavailable")
        return JSONResponse(body, status_code=503)
    return JSONResponse({"status": "ready"})
