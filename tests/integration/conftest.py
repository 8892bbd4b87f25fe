import pytest

from tests.conftest import database_url_for, new_postgres_database
from tests.integration.server import keel_server

KEYS = "ann:ann-key,bob:bob-key"
ANN = {"Authorization": "Bearer ann-key"}
BOB = {"Authorization": "Bearer bob-key"}


@pytest.fixture(params=["sqlite", "postgres"], scope="module")
def server_url(request, tmp_path_factory):
    if request.param == "sqlite":
        db = f"sqlite:///{tmp_path_factory.mktemp('api') / 'keel.db'}"
    else:
        db = new_postgres_database(request.getfixturevalue("postgres_server"))
    with keel_server(db, KEEL_API_KEYS=KEYS, KEEL_MAX_MESSAGE_CHARS="2000") as server:
        yield server


@pytest.fixture
def database_url(request, tmp_path) -> str:
    """Integration tests that take a database get a fresh PostgreSQL one."""
    return database_url_for("postgres", request, tmp_path)
