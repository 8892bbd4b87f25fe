"""Every notebook under notebooks/ runs top to bottom without an error (each asserts as it goes)."""

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
SHOWS = {
    "01_step_through_a_turn.ipynb": "Deleted task 1: buy milk",
    "02_topic_reset_resume.ipynb": "Continue from step",
    "03_time_travel.ipynb": "branches start at the end of turn 1",
}


def test_there_are_notebooks():
    assert [p.name for p in NOTEBOOKS] == sorted(SHOWS)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(path, monkeypatch):
    monkeypatch.setenv("KEEL_LOG_LEVEL", "warning")
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}
    ).execute()
    outputs = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs]
    assert SHOWS[path.name] in "".join(o.get("text", "") for o in outputs)
    if path.name.startswith("01"):  # the graph is drawn as a picture
        assert any("image/png" in o.get("data", {}) for o in outputs)
