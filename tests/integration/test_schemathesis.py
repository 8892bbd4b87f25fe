"""Property-based requests from the live OpenAPI schema (schemathesis): never a 5xx."""

import shutil
import subprocess
import sys
from pathlib import Path

from tests.integration.conftest import KEYS
from tests.integration.server import keel_server

ST = Path(sys.executable).with_name("schemathesis")


def test_no_request_from_the_schema_gets_a_server_error(tmp_path):
    with keel_server(f"sqlite:///{tmp_path / 'k.db'}", KEEL_API_KEYS=KEYS) as server:
        result = subprocess.run(
            [
                str(ST if ST.exists() else shutil.which("schemathesis")),
                "run",
                f"{server.url}/openapi.json",
                "--checks",
                "not_a_server_error",
                "--max-examples",
                "25",
                "--header",
                "Authorization: Bearer ann-key",
                "--request-timeout",
                "30",
                "--generation-deterministic",
                "--exclude-path",  # a stream that stays open: test_reminders_served reads it
                "/v1/reminders/events",
                "--no-color",
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
