"""The docs' tool table is made from the tools' declarations, and says what they declare."""

from pathlib import Path

from keel.tools.spec import tool_table, with_tool_table
from keel.tools.tasks.todo import TODO_TOOLS

API_DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"


def test_the_docs_tool_table_is_the_declared_tools():
    text = API_DOC.read_text()
    assert with_tool_table(text, TODO_TOOLS) == text, "run `make docs`"


def test_the_table_lists_every_tool_with_its_question():
    table = tool_table(TODO_TOOLS)
    for t in TODO_TOOLS:
        assert f"| `{t.name}` |" in table
    assert '"Are you sure you want to delete task N? (yes/no)"' in table
