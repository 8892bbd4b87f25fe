"""The baseline for the benchmarks: a plain LangGraph ReAct graph doing keel's todo work.

Messages live in graph state (``MessagesState``), as in LangGraph's own ReAct examples; the same
rule-based model and the same todo tools (bound to one user and store) run in it.
"""

from __future__ import annotations

from typing import Any

from langchain_core.tools import BaseTool, StructuredTool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from keel.nodes.models.rule_based import RuleBasedChatModel
from keel.tools.tasks.store import TaskStore
from keel.tools.tasks.todo import TODO_TOOLS


def bound_tools(store: TaskStore, user_id: str) -> list[BaseTool]:
    """Keel's todo tools with the user and the store fixed."""

    def bind(tool: BaseTool) -> BaseTool:
        async def run(**kwargs: Any) -> Any:
            return await tool.ainvoke({**kwargs, "user_id": user_id, "store": store})

        return StructuredTool.from_function(
            coroutine=run,
            name=tool.name,
            description=tool.description,
            args_schema=tool.tool_call_schema,
        )

    return [bind(t) for t in TODO_TOOLS]


def build_plain_graph(checkpointer: BaseCheckpointSaver, store: TaskStore, user_id: str) -> Any:
    """The ReAct graph: agent -> tools -> agent, the whole message list in state.

    The model is bound to keel's own tool declarations (the offline model understands a request
    by the phrasings they declare; the bound copies carry none) and calls them by name; the
    ToolNode runs the copies bound to the user and the store.
    """
    tools = bound_tools(store, user_id)
    model = RuleBasedChatModel().bind_tools(TODO_TOOLS)

    async def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    g = StateGraph(MessagesState)
    g.add_node("agent", agent)
    g.add_node("tools", ToolNode(tools))
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", tools_condition)
    g.add_edge("tools", "agent")
    return g.compile(checkpointer=checkpointer)
