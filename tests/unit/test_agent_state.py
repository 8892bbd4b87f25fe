import itertools

import pytest
from langgraph.graph import END

from keel.graphs.builder import build_graph
from keel.nodes.state.machine import (
    TRANSITIONS,
    AgentState,
    InvalidTransition,
    path_map,
    validate_transition,
)
from keel.nodes.state.reducers import AUDIT_MAX_ENTRIES, bounded_audit

VALID = {
    (AgentState.USER_INPUT, AgentState.ASSISTANT),
    (AgentState.ASSISTANT, AgentState.TOOL_EXECUTION),
    (AgentState.ASSISTANT, AgentState.RESPONSE),
    (AgentState.TOOL_EXECUTION, AgentState.RESPONSE),
    (AgentState.RESPONSE, AgentState.ASSISTANT),
    (AgentState.RESPONSE, END),
}
TARGETS = [*AgentState, END]


def test_exactly_four_states_with_stable_values():
    assert [s.name for s in AgentState] == ["USER_INPUT", "ASSISTANT", "TOOL_EXECUTION", "RESPONSE"]
    assert [s.value for s in AgentState] == [
        "user_input",
        "assistant",
        "tool_execution",
        "response",
    ]
    assert AgentState("tool_execution") is AgentState.TOOL_EXECUTION


def test_table_is_the_design_table():
    assert {(s, d) for s, ds in TRANSITIONS.items() for d in ds} == VALID


@pytest.mark.parametrize("src,dst", sorted(VALID, key=str))
def test_valid_transitions_pass(src, dst):
    assert validate_transition(src, dst) is True


@pytest.mark.parametrize(
    "src,dst",
    [(s, d) for s, d in itertools.product(AgentState, TARGETS) if (s, d) not in VALID and s != d],
)
def test_invalid_transitions_raise_naming_both_ends(src, dst):
    with pytest.raises(InvalidTransition) as err:
        validate_transition(src, dst)
    assert err.value.src == src and err.value.dst == dst
    assert str(src) in str(err.value) and str(dst) in str(err.value)


@pytest.mark.parametrize("state", list(AgentState))
def test_self_transition_is_a_no_op(state):
    assert validate_transition(state, state) is False


def test_graph_edges_out_of_state_nodes_equal_the_table():
    graph = build_graph()
    edges: dict[str, set[str]] = {}
    for edge in graph.get_graph().edges:
        edges.setdefault(edge.source, set()).add(edge.target)
    for state, targets in TRANSITIONS.items():
        if state is AgentState.USER_INPUT:
            continue  # user_input leads to assistant through topic_detect, reset and plan
        expected = {str(t) for t in targets}
        if AgentState.ASSISTANT in targets:
            expected.add("resume")  # the way into the assistant may pass through resume
        if state is AgentState.TOOL_EXECUTION:
            expected.add(str(state))  # a question put is checkpointed, then waited on: no move
        assert edges[str(state)] == expected, state


def test_router_path_maps_come_from_the_table():
    branches = build_graph().builder.branches
    assert branches["assistant"]["route_assistant"].ends == path_map(AgentState.ASSISTANT)
    # RESPONSE -> ASSISTANT may pass through resume (a fresh window) on its way
    ends = dict(branches["response"]["route_response"].ends)
    assert ends.pop("resume") == "resume"
    assert ends == path_map(AgentState.RESPONSE)


def test_the_turn_prelude_runs_in_order_before_the_assistant():
    edges = {(e.source, e.target) for e in build_graph().get_graph().edges}
    chain = ["__start__", "user_input", "topic_detect", "reset", "plan"]
    assert all(pair in edges for pair in zip(chain, chain[1:], strict=False))
    assert ("plan", "assistant") in edges and ("plan", "resume") in edges
    assert ("resume", "assistant") in edges


def test_the_audit_keeps_an_entry_once_when_a_nested_graph_returns_the_whole_list():
    old = [{"at": "1", "kind": "reset"}, {"at": "2", "kind": "resume"}]
    new = {"at": "3", "kind": "reset"}
    assert bounded_audit(old, [*old, new]) == [*old, new]  # the served graph's turn node
    assert bounded_audit(old, [new]) == [*old, new]  # a node's own entry
    many = [{"at": str(i), "kind": "reset"} for i in range(AUDIT_MAX_ENTRIES + 5)]
    assert bounded_audit([], many) == many[-AUDIT_MAX_ENTRIES:]
