"""The /docs page works offline: a headless Chromium renders it and it lists every endpoint."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile

import httpx
import pytest

from tests.integration.server import keel_server

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--virtual-time-budget=15000",
]


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        pytest.fail(
            "Chromium not found: install it with `apt-get install -y chromium` (.ci/run does)"
        )
    return found


def rendered(url: str) -> str:
    """The page's DOM after its scripts ran, as headless Chromium sees it."""
    with tempfile.TemporaryDirectory(prefix="keel-chromium-") as profile:
        result = subprocess.run(
            [_chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--dump-dom", url],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def test_the_docs_page_lists_every_endpoint_with_no_network(tmp_path):
    with keel_server(f"sqlite:///{tmp_path / 'keel.db'}") as server:
        page = httpx.get(f"{server.url}/docs").text
        assets = re.findall(r'(?:src|href)="([^"]+)"', page)
        assert assets and all(a.startswith("/") for a in assets)  # nothing from a CDN
        schema = httpx.get(f"{server.url}/openapi.json").json()
        dom = rendered(f"{server.url}/docs")
    listed = set(re.findall(r'class="opblock-summary-path" data-path="([^"]+)"', dom))
    assert listed == set(schema["paths"])
    assert "keel" in dom and "/v1/conversations/{conversation_id}/messages" in listed
