"""/healthz (the process is alive) and /readyz (the database takes a write)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from keel.api.deps import ServiceDep
from keel.api.errors import error_body
from keel.checkpoints.trouble import Trouble, trouble_of

router = APIRouter(tags=["health"])

PROBE = (
    "INSERT INTO keel_health (id, checked_at) VALUES (1, :now) "
    "ON CONFLICT (id) DO UPDATE SET checked_at = excluded.checked_at"
)


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    """Liveness."""
    return {"status": "ok"}


@router.get(
    "/readyz", responses={503: {"description": "The database does not answer or take writes."}}
)
async def readyz(service: ServiceDep) -> JSONResponse:
    """Readiness: the database answers and takes a write (one row, rewritten)."""
    try:
        await service.db.execute(PROBE, {"now": service.db.time(service.resources.clock())})
    except Exception as exc:
        trouble = trouble_of(exc) or Trouble.UNAVAILABLE
        return JSONResponse(error_body(trouble.value, trouble.message), status_code=503)
    return JSONResponse({"status": "ready"})
