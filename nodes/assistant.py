"""The assistant node: one call of the chat model over the window, with the todo tools bound.

The model sees the system prompt, the earlier messages the context builder picked (one system
message), the current turn's window and, when the response node sent it back without a finished
answer, a short nudge naming what is still open. Tool calls left without results are given
stand-in results first; a context-length refusal from the provider marks the context exhausted.
The call itself is bounded, checked and, when the provider fails, taken over by the offline model
(``keel.nodes.models.model_call``). A question the model asks with ``ask_user`` becomes the
reply and the turn's ``pending_question``: the next message answers it. An answer whose every
call repeats a step the turn already took ends the turn (``repeated_step``): a model going round in
circles stops at once, not at the loop limit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import structlog
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
)
from langchain_core.tools import BaseTool
from langgraph.runtime import Runtime

from keel.nodes.context.recency import history_messages, render_history
from keel.nodes.models.chat import DONE_RULE, ContextLengthExceeded, said_done
from keel.nodes.models.declared import Declared
from keel.nodes.models.model_call import answer_round, said_lately
from keel.nodes.models.notes import ANSWER_NOW, ANSWERS_HEADER, NUDGE_PREFIX, SAME_ANSWER
from keel.nodes.models.rule_based import RuleBasedChatModel
from keel.nodes.models.takeover import describe
from keel.nodes.models.turn_messages import ran, repeats, this_turn
from keel.nodes.run_context import KeelContext, conversation_id
from keel.nodes.state.lineage import turn_key
from keel.nodes.state.schema import KeelState, open_items
from keel.nodes.support.previews import preview
from keel.tools.ask_user import ASK_TOOL, question_of
from keel.tools.calls import storable, tool_error, unanswered
from keel.tools.spec import spec_of

log = structlog.get_logger(__name__)


def nudged(state: KeelState) -> bool:
    """The last answer stopped short of the task in words: this call carries the nudge."""
    window = state.get("window", [])
    stopped_short = bool(window) and isinstance(window[-1], AIMessage) and not window[-1].tool_calls
    return bool(state.get("nudges")) and stopped_short


def nudge_text(state: KeelState) -> str:
    """The reminder sent when the last answer did not finish the task: each open item, with the
    tool that does it when the plan names one (a small model told only "Mark task 4 done" wrote
    that sentence back instead of calling the tool).
    """  # noqa: D205
    items = open_items(state.get("todolist"))
    lines = [f"- {i['description']}" + (f" (call {i['tool']})" if i["tool"] else "") for i in items]
    if lines:
        return f"{NUDGE_PREFIX} Open items:\n" + "\n".join(lines)
    return f"{NUDGE_PREFIX} If everything is handled, end with a line starting with KEEL DONE:."


INTERRUPTED_CALL = "Error: this tool call was interrupted and did not run."


def repair_window(window: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The window with a stand-in result for every tool call that has none.

    A turn cut off between an assistant's tool calls and their results must not break the next
    model call (providers refuse tool calls without results).
    """
    repaired: list[BaseMessage] = []
    pending: list[ToolCall] = []
    for message in [*window, None]:
        if pending and not isinstance(message, ToolMessage):
            repaired.extend(tool_error(c, INTERRUPTED_CALL) for c in pending)
            pending = []
        if message is None:
            break
        repaired.append(message)
        if isinstance(message, AIMessage) and message.tool_calls:
            pending = unanswered(message.tool_calls, window)
    return repaired


def model_input(state: KeelState, prompt: str, transcript: bool = True) -> list[BaseMessage]:
    """What the model is given: the system ``prompt``, the history and the user's answers to its
    questions, the window, and a nudge when one is due. The history is one system message holding
    its transcript (what keel's offline model reads), or with ``transcript`` false, the chat's own
    list of what was already handled (what any other model reads). When the system prompt does not
    ask for the DONE line (``KEEL_DONE_RULE=after_results``), the model is asked for its answer and
    DONE line after the tool results (``ANSWER_NOW``).
    """  # noqa: D205
    window = state.get("window", [])
    messages: list[BaseMessage] = [SystemMessage(prompt)]
    changed = bool(state.get("topic_changed"))
    if not transcript:
        messages.extend(history_messages(state.get("history", []), changed))
    elif history := render_history(state.get("history", []), changed):
        messages.append(SystemMessage(history))
    if answers := state.get("answers"):
        given = "\n".join(f"- {question} -> {answer}" for question, answer in answers.items())
        messages.append(SystemMessage(f"{ANSWERS_HEADER}\n{given}"))
    messages.extend(repair_window(window))
    if nudged(state):
        messages.append(HumanMessage(nudge_text(state)))
    elif (
        not transcript
        and DONE_RULE not in prompt
        and window
        and isinstance(window[-1], ToolMessage)
    ):
        messages.append(SystemMessage(ANSWER_NOW))  # the prompt did not ask for the DONE line
    return messages


async def assistant(state: KeelState, runtime: Runtime[KeelContext]) -> dict[str, Any]:
    """Ask the model for the next step; its DONE line is taken out (``said_done`` tells)."""
    ctx = runtime.context
    reply_id = f"{conversation_id(runtime)}:{turn_key(state)}:assistant-{state.get('loops', 0)}"
    try:  # the run's models take their DONE lines out: they never reach the window
        transcript = model_input(state, ctx.resources.prompt)
        offline = isinstance(ctx.resources.model, RuleBasedChatModel)
        declared = None if offline else declared_for(state, ctx)
        prompt = declared.prompt if declared is not None else ctx.resources.prompt
        messages = transcript if offline else model_input(state, prompt, transcript=False)
        answered = await answer_round(state, runtime, reply_id, messages, transcript, declared)
    except ContextLengthExceeded as exc:
        log.warning("context_length_exceeded", detail=preview(exc))
        return {"context_exhausted": True}
    reply = answered.reply
    if reply is None:
        return answered.update
    log.info(
        "assistant_replied",
        tool_calls=[c["name"] for c in reply.tool_calls],
        reply_preview=preview(reply.text),
    )
    for call in reply.tool_calls:
        call["args"] = storable(call["args"])  # a model may name any number
    if (ended := repeated(state, reply, ctx.resources.tools, ctx.done_marker)) is not None:
        return {**answered.update, **ended}
    reply, question = asked(reply)
    update = {**answered.update, "window": [reply]}
    return {**update, "pending_question": question} if question else update


def declared_for(state: KeelState, ctx: KeelContext) -> Declared | None:
    """This turn's lean declarations (``keel.nodes.models.declared``), when the model gets them.

    A small model that answered in words while a step of the plan waits for a tool is asked
    again with a tool call required: told "Mark task 4 done", it wrote that sentence back.
    """
    declaring = ctx.resources.declaring
    if declaring is None:
        return None
    mission = state.get("mission") or ""
    planned = [i["tool"] for i in open_items(state.get("todolist")) if i["tool"]]
    declared = declaring.for_turn(
        said_lately(state), state.get("request", ""), mission, planned=planned
    )
    return replace(declared, must_call=True) if nudged(state) and planned else declared


def repeated(
    state: KeelState, reply: AIMessage, tools: Sequence[BaseTool], marker: str
) -> dict[str, Any] | None:
    """The update that ends the turn when every call of ``reply`` repeats a step the turn already
    took, or ``reply`` repeats an answer the turn already gave (a model going round in circles),
    else None. The reply keeps what the turn did, in the tools' words (or the answer); the
    response node adds the note.
    """  # noqa: D205
    window = state.get("window", [])
    if not reply.tool_calls:
        if said_done(reply, marker):  # a DONE line closes the answer it repeats
            return None
        text = reply.text.strip()
        said = [m.text.strip() for m in this_turn(window) if isinstance(m, AIMessage)]
        if not text or text not in said:
            return None
        log.warning("repeated_answer", loops=state.get("loops", 0))
        return {"window": [AIMessage(text, id=reply.id)], "repeated_step": SAME_ANSWER}
    mutating = {t.name for t in tools if spec_of(t).mutates}
    again = repeats(window, reply.tool_calls, mutating)
    if len(again) < len(reply.tool_calls):
        return None
    names = ", ".join(dict.fromkeys(c["name"] for c in again))
    log.warning("repeated_step", tools=names, loops=state.get("loops", 0))
    done = [describe(call, result, tools) for call, result in ran(this_turn(window))]
    shown = AIMessage("\n".join(done), id=reply.id)
    return {"window": [shown], "repeated_step": names}


def asked(reply: AIMessage) -> tuple[AIMessage, str | None]:
    """``reply`` with its ``ask_user`` call made its text, and the question it asks (if any).

    A question asked beside other tool calls waits: those calls run first, and the model may ask
    again when it sees their results.
    """
    asks = [c for c in reply.tool_calls if c["name"] == ASK_TOOL]
    question = next((q for c in asks if (q := question_of(c["args"]))), None)
    if not asks:
        return reply, None
    others = [c for c in reply.tool_calls if c["name"] != ASK_TOOL]
    kwargs = {k: v for k, v in reply.additional_kwargs.items() if k != "tool_calls"}  # raw calls
    if others or question is None:
        return reply.model_copy(update={"tool_calls": others, "additional_kwargs": kwargs}), None
    text = reply.text.strip()
    shown = text if question in text else "\n\n".join(p for p in (text, question) if p)
    log.info("question_asked", question_preview=preview(question))
    update = {"content": shown, "tool_calls": [], "additional_kwargs": kwargs}
    return reply.model_copy(update=update), question
