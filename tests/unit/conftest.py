"""Unit tests run on the embedded databases: memory and a SQLite file (PostgreSQL: integration)."""

from pathlib import Path

import pytest

from tests.conftest import database_url_for


@pytest.fixture(params=["memory", "sqlite"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return database_url_for(request.param, request, tmp_path)
