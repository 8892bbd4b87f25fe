"""The settings that suit the server keel's model runs on, learned from the server at start-up.

A small model on a person's own machine (llama.cpp's ``llama-server``, Ollama) needs other
settings than a hosted one: it calls its tools far more reliably at temperature 0, writes its
DONE line at once when the system prompt asks for it up front (so the line is asked for after
the tool results), spends a CPU's minute on a plan of its own (so plans come from the offline
reading), takes longer than a hosted model to answer, and reads a long list of tools slowly and
badly (so each turn shows it what its request can need: ``keel.nodes.models.declared``). keel
asks the server at ``OPENAI_BASE_URL`` what it is (llama.cpp answers ``GET /props``, or 503
"Loading model" while it loads; Ollama ``GET /api/version``) and, on such a server, takes
``LOCAL_DEFAULTS`` for every one of those settings the person did not set. It says in one log
line what it picked. A hosted model, or a server that answers neither, keeps the defaults.
"""

from __future__ import annotations

from typing import Any

import httpx
import structlog

from keel.graphs.settings import Settings

log = structlog.get_logger(__name__)

LOCAL_DEFAULTS: dict[str, Any] = {
    "model_temperature": 0.0,
    "done_rule": "after_results",
    "plan_method": "off",
    "model_timeout_seconds": 120.0,
    "turn_seconds": 600,
    "tool_schemas": "lean",
}
"""The settings a model on a local server gets unless the person set them."""
PROBES = {"llama.cpp": "/props", "ollama": "/api/version"}
"""What each kind of local server answers, under the root of its address."""
PROBE_SECONDS = 3.0


async def local_server(base_url: str, api_key: str | None = None) -> str | None:
    """The kind of local server at ``base_url`` (its OpenAI address), or None for any other.

    Asked with the model's key, as a server started with one (``llama-server --api-key``)
    answers nothing else.
    """
    root = base_url.rstrip("/").removesuffix("/v1")
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    async with httpx.AsyncClient(timeout=PROBE_SECONDS, headers=headers) as client:
        for kind, path in PROBES.items():
            try:
                answer = await client.get(f"{root}{path}")
            except httpx.HTTPError:
                return None  # nothing answers there yet: keel's own calls will say so
            if answer.status_code == 200 and _json_object(answer) is not None:
                return kind
            if kind == "llama.cpp" and _loading(answer):
                return kind  # it answers nothing else until its model is loaded
    return None


def _json_object(answer: httpx.Response) -> dict[str, Any] | None:
    try:
        body = answer.json()
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


def _loading(answer: httpx.Response) -> bool:
    """llama.cpp's server still loading its model: every request gets 503 "Loading model"."""
    error = (_json_object(answer) or {}).get("error")
    return (
        answer.status_code == 503
        and isinstance(error, dict)
        and error.get("message") == "Loading model"
    )


async def fitted(settings: Settings) -> Settings:
    """``settings`` with ``LOCAL_DEFAULTS`` for what the person left unset, when the model is on
    a local server; else ``settings`` as they are.
    """  # noqa: D205
    if settings.openai_api_key is None or settings.openai_base_url is None:
        return settings
    kind = await local_server(settings.openai_base_url, settings.openai_api_key)
    if kind is None:
        return settings
    picked = {k: v for k, v in LOCAL_DEFAULTS.items() if k not in settings.model_fields_set}
    kept = sorted(LOCAL_DEFAULTS.keys() - picked.keys())
    log.info("model_on_a_local_server", server=kind, picked=picked, kept_as_set=kept)
    return settings.model_copy(update=picked)
