"""The built wheel installs keel as one ``keel`` namespace and nothing at the top level.

The wheel is built from this checkout and installed into a fresh virtual environment that borrows
the test environment's dependencies (its site-packages as a plain path entry, so the editable
install's import hook there stays off). Everything then runs from an empty directory.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import httpx
import pytest

from keel.checkpoints.migrate import head_revision
from tests.integration.server import free_port, stop, wait_until_ready

ROOT = Path(__file__).resolve().parents[2]
TOP_LEVEL = ("api", "checkpoints", "graphs", "nodes", "tools")

PROBE = """
import importlib.util, json, sys
import keel.api.app, keel.graphs.builder, keel.checkpoints.migrate
print(json.dumps({
    "top_level": {name: importlib.util.find_spec(name) is not None for name in %r},
    "files": [keel.graphs.builder.__file__, keel.api.app.__file__],
    "prefix": sys.prefix,
    "graph_nodes": sorted(keel.graphs.builder.graph.get_graph(xray=True).nodes),
}))
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The wheel, and what the build printed."""
    out = tmp_path_factory.mktemp("wheel")
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--verbose", "--no-deps", "--no-build-isolation"]
        + ["--wheel-dir", str(out), str(ROOT)],
        check=True,
        capture_output=True,
        text=True,
    )
    return next(out.glob("keel-*.whl")), build.stdout + build.stderr


@pytest.fixture(scope="module")
def wheel(built: tuple[Path, str]) -> Path:
    return built[0]


def test_the_build_warns_of_nothing_about_the_packages(built: tuple[Path, str]) -> None:
    output = built[1]
    assert "absent from the `packages` configuration" not in output
    assert "Package would be ignored" not in output


@pytest.fixture(scope="module")
def fresh_python(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    (Path(site) / "test_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet"]
        + ["--no-deps", str(wheel)],
        check=True,
    )
    return python


def test_wheel_holds_only_the_keel_namespace(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        roots = {name.split("/", 1)[0] for name in archive.namelist()}
        names = set(archive.namelist())
    assert roots == {"keel", wheel.name.split("-py")[0] + ".dist-info"}
    assert "keel/__init__.py" not in names  # a namespace: nothing else may own ``keel``
    assert "keel/checkpoints/migrations/versions/0001_app_tables.py" in names
    assert "keel/api/routers/conversations.py" in names
    assert {"keel/api/web/index.html", "keel/api/web/app.js", "keel/api/web/style.css"} <= names
    assert "keel/nodes/context/topic_shift_model.npz" in names  # the topic-shift network


def test_installed_wheel_imports_keel_without_top_level_modules(
    fresh_python: Path, tmp_path: Path
) -> None:
    result = subprocess.run(
        [fresh_python, "-c", PROBE % (TOP_LEVEL,)],
        cwd=tmp_path,
        check=True,
        capture_output=True,
        text=True,
    )
    probe = json.loads(result.stdout.strip().splitlines()[-1])
    assert probe["top_level"] == dict.fromkeys(TOP_LEVEL, False)
    for file in probe["files"]:
        assert file.startswith(probe["prefix"]), file
        assert not file.startswith(str(ROOT))
    nodes = {node.removeprefix("turn:") for node in probe["graph_nodes"]}  # the served graph's
    assert {"user_input", "assistant", "tool_execution", "response"} <= nodes


def test_console_script_migrates_a_database_from_the_installed_package(
    fresh_python: Path, tmp_path: Path
) -> None:
    keel = fresh_python.parent / "keel"
    database = tmp_path / "keel.db"
    env = {"KEEL_DATABASE_URL": f"sqlite:///{database}", "PATH": str(fresh_python.parent)}
    upgrade = subprocess.run(
        [keel, "db", "upgrade"], cwd=tmp_path, env=env, check=True, capture_output=True, text=True
    )
    assert f"schema: empty -> {head_revision()}" in upgrade.stdout  # the wheel has them all
    assert database.exists()


def test_the_installed_package_serves_the_chat_page_and_every_file_it_loads(
    fresh_python: Path, tmp_path: Path
) -> None:
    port = free_port()
    env = {"KEEL_DATABASE_URL": "memory", "PATH": str(fresh_python.parent), "HOME": str(tmp_path)}
    output = (tmp_path / "serve.log").open("w+")
    process = subprocess.Popen(
        [fresh_python.parent / "keel", "serve", "--port", str(port)],
        cwd=tmp_path,
        env=env,
        stdout=output,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_ready(process, f"{url}/readyz", output, "keel serve (wheel)")
        page = httpx.get(f"{url}/")
        assert page.status_code == 200 and "text/html" in page.headers["content-type"]
        linked = set(re.findall(r'(?:src|href)="([^"]+)"', page.text))
        assert not [a for a in linked if "//" in a]  # nothing from another host
        scripts = {a for a in linked if a.startswith("/")}
        for module in list(scripts):  # and the modules those scripts import
            if module.endswith(".js"):
                text = httpx.get(f"{url}{module}").text
                scripts |= {f"/web/{m}" for m in re.findall(r'from "\./([\w.]+)"', text)}
        assert "/web/app.js" in scripts and "/web/style.css" in scripts
        for asset in scripts:
            assert asset.startswith("/web/"), asset
            assert httpx.get(f"{url}{asset}").status_code == 200, asset
    finally:
        stop(process)
        output.close()
