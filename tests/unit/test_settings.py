"""One settings class, read in one place, and what it gives the graph's runs."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from keel.graphs.resources import open_resources
from keel.graphs.settings import Settings, UnsafeSettings
from keel.nodes.run_context import KeelContext
from keel.tools.tasks.todo import TODO_TOOLS

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("api", "checkpoints", "graphs", "nodes", "tools")


def environment_reads(path: Path) -> list[int]:
    """Lines of ``path`` that read the environment (``os.environ[...]`` stores are writes)."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv"):
            if isinstance(node.value, ast.Name) and node.value.id == "os":
                lines.append(node.lineno)
    stores = {
        n.lineno
        for n in ast.walk(ast.parse(path.read_text()))
        if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store)
    }
    return [line for line in lines if line not in stores]


def test_only_the_settings_class_reads_the_environment():
    readers = {
        str(p.relative_to(ROOT)): lines
        for package in PACKAGES
        for p in (ROOT / package).rglob("*.py")
        if (lines := environment_reads(p))
    }
    assert readers == {}


def test_the_settings_are_the_defaults_of_every_run(memory_keel, monkeypatch):
    monkeypatch.setenv("KEEL_LOOP_LIMIT", "9")
    monkeypatch.setenv("OPENAI_MODEL", "gpt-test")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    settings = Settings()
    assert (settings.loop_limit, settings.token_model) == (9, "gpt-test")
    run = open_resources(memory_keel.db, settings=settings, tools=TODO_TOOLS)
    assert run.settings.loop_limit == 9 and run.token_model == "gpt-test"
    resolved = KeelContext(user_id="ann", loop_limit=2).using(run)
    assert (resolved.user_id, resolved.loop_limit, resolved.topic_gap_seconds) == (
        "ann",
        2,
        settings.topic_gap_seconds,
    )


def test_a_context_keeps_plain_data_only():
    schema = KeelContext.model_json_schema()
    assert set(schema["properties"]) == {
        "user_id",
        "done_marker",
        "loop_limit",
        "context_token_budget",
        "topic_gap_seconds",
        "resume_template",
        "max_tokens",
        "turn_seconds",
        "timezone",
    }
    assert KeelContext.model_validate({"user_id": "bob", "model": object()}).user_id == "bob"
    with pytest.raises(ValueError):
        KeelContext(user_id="")
    with pytest.raises(ValueError, match="not a time zone"):
        KeelContext(timezone="not a zone; drop table")


def test_only_serving_refuses_a_public_host_without_keys(monkeypatch):
    monkeypatch.setenv("KEEL_HOST", "0.0.0.0")
    monkeypatch.delenv("KEEL_API_KEYS", raising=False)
    settings = Settings()  # the chat, `keel db` and the graph read it as it is
    assert settings.host == "0.0.0.0" and settings.keys == {}
    with pytest.raises(UnsafeSettings, match="KEEL_API_KEYS is empty"):
        settings.for_serving()
    monkeypatch.setenv("KEEL_API_KEYS", "ann:k1")
    assert Settings().for_serving().keys == {"k1": "ann"}


def test_a_context_refuses_tunables_that_would_fail_a_turn():
    with pytest.raises(ValueError, match="not a regular expression"):
        KeelContext(done_marker="(")
    with pytest.raises(ValueError, match="step"):
        KeelContext(resume_template="{nope}")


def test_studio_may_leave_a_tunable_empty():
    field = KeelContext.model_json_schema()["properties"]["loop_limit"]
    assert field["default"] is None and {"type": "null"} in field["anyOf"]


def test_the_dotenv_file_is_read_where_a_command_runs_and_the_environment_wins(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KEEL_ENV_FILE")
    monkeypatch.delenv("KEEL_PORT", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    (tmp_path / ".env").write_text("KEEL_PORT=8123\nOPENAI_API_KEY=sk-from-file\nOTHER=1\n")
    (tmp_path / "other.env").write_text("KEEL_PORT=8124\n")
    assert (Settings().port, Settings().openai_api_key) == (8123, "sk-from-file")
    monkeypatch.setenv("KEEL_PORT", "9000")
    assert Settings().port == 9000
    monkeypatch.delenv("KEEL_PORT")
    monkeypatch.setenv("KEEL_ENV_FILE", "other.env")
    assert Settings().port == 8124
    monkeypatch.setenv("KEEL_ENV_FILE", "")
    assert (Settings().port, Settings().openai_api_key) == (8000, None)


@pytest.mark.parametrize("given", ["", "relative/data"])
def test_the_data_directory_does_not_depend_on_the_folder(tmp_path, monkeypatch, given):
    monkeypatch.delenv("KEEL_DATABASE_URL", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_DATA_HOME", given)
    default = f"sqlite:///{tmp_path / 'home' / '.local' / 'share' / 'keel' / 'keel.db'}"
    monkeypatch.chdir(tmp_path)
    assert Settings().database_url == default
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert Settings().database_url == f"sqlite:///{tmp_path / 'data' / 'keel' / 'keel.db'}"
