"""Tool calls a model wrote as text, in the forms small local models write them.

A local server parses a model's tool call only when the model writes it inside the tags its chat
template names; a small model often writes the same call some other way, and the server passes it
on as prose. ``read_calls`` reads the forms they commonly use:

- bare JSON: ``{"name": "create_todo_task", "arguments": {"title": "buy milk"}}`` (``parameters``
  for ``arguments``, arguments as a JSON string, a list of such objects, or the object in doubled
  braces, ``{{"name": ...}}``, as Qwen2.5-Coder's chat template shows its example);
- a ``<tool_call>...</tool_call>`` block, or ``<tools>...</tools>`` (the closing tag may be
  missing at the end);
- a fenced block: ```` ```json ... ``` ````;
- ``functions.create_todo_task: {"title": "buy milk"}`` (the shape llama-cpp-python's
  function-calling format forces);
- a call written as a tag, ``<get_todo_task task_id="1"/>``, inside the tags above. A
  ``<tool_response>`` block holding no call is a result the model made up: it is dropped.

A call counts only when it names a bound tool and its arguments fit that tool's parameters; the
text around the calls stays the answer's text. A text that holds something shaped like a call but
not a usable one (a tool that is not bound, arguments that do not fit, ``functions.name:`` with no
arguments) is ``Unusable``: it is never shown, and the answer is asked for again. So is a bare
call cut off before it ends (a small model listing arguments until ``max_tokens``). Anything else
is prose.
``may_start_call`` tells a streaming filter when to hold a line back until the answer ends.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.utils.function_calling import convert_to_openai_tool

_STARTS = ("{", "[", "<tool_call>", "<tools>", "<tool_response>", "```", "functions.")
_BLOCK = re.compile(
    r"<(?P<tag>tool_call|tools|tool_response)>\s*(?P<tagged>.*?)\s*(?:</(?P=tag)>|\Z)"
    r"|```[a-zA-Z_]*\s*\n?(?P<fenced>.*?)```"
    r"|functions\.(?P<fname>[A-Za-z0-9_\-]+):\s*(?P<fargs>\{.*\})?",
    re.DOTALL,
)
_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
    "null": (type(None),),
}


@dataclass
class TextCalls:
    """What a model's text holds: the calls read from it, the prose beside them, and whether
    something shaped like a call could not be used.
    """  # noqa: D205

    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    prose: str = ""
    unusable: bool = False


_CUT_CALL = re.compile(r'^\s*\{\s*\{?\s*"name"\s*:\s*"(?P<name>[\w\-]+)"')
"""The start of a bare JSON call, which names its tool."""
_OPENS = re.compile(
    r"^\s*(?:\{\s*\{?\s*\"|\[\s*\{|<tool_call>|<tools>|<tool_response>|```|functions\.\w)"
)


def may_start_call(line: str) -> bool:
    """``line`` starts like one of the forms read here."""
    return line.lstrip().startswith(_STARTS)


def opens_call(line: str) -> bool:
    """``line`` looks like the start of a call (held back until the answer ends): a JSON object
    with a key, a list of objects, a call's tags, a code fence or ``functions.name``; not any
    line that starts with a bracket.
    """  # noqa: D205
    return bool(_OPENS.match(line))


def parameters_of(tools: Sequence[Any]) -> dict[str, Mapping[str, Any]]:
    """The bound tools' JSON-schema parameters by name (tools declared by LangChain or OpenAI)."""
    out: dict[str, Mapping[str, Any]] = {}
    for tool in tools:
        function = convert_to_openai_tool(tool).get("function", {})
        if name := function.get("name"):
            out[name] = function.get("parameters") or {}
    return out


def fits(value: Any, schema: Mapping[str, Any]) -> bool:
    """``value`` fits ``schema`` (types, enums and required properties)."""
    if options := schema.get("anyOf") or schema.get("oneOf"):
        return any(fits(value, option) for option in options)
    if "enum" in schema and value not in schema["enum"]:
        return False
    kind = schema.get("type")
    if isinstance(kind, str) and kind in _JSON_TYPES:
        if isinstance(value, bool) and kind in ("integer", "number"):
            return False
        if not isinstance(value, _JSON_TYPES[kind]):
            return False
    if isinstance(value, dict) and kind == "object":
        properties = schema.get("properties") or {}
        if any(key not in value for key in schema.get("required", ())):
            return False
        return all(fits(v, properties[k]) for k, v in value.items() if k in properties)
    return True


def coerced(args: dict[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
    """``args`` as the tool reads them: a whole number written as a string (``"3"``) made the
    integer it names where the parameter is an integer, and arguments the tool does not take left
    out (a small model mixes in another tool's).
    """  # noqa: D205
    properties = schema.get("properties") or {}
    out = {key: value for key, value in args.items() if key in properties or not properties}
    for key, value in args.items():
        kinds = [properties.get(key, {}).get("type")]
        kinds += [o.get("type") for o in properties.get(key, {}).get("anyOf", [])]
        if "integer" in kinds and isinstance(value, str) and value.strip().isdigit():
            out[key] = int(value)
    return out


def _objects(text: str) -> list[Any] | None:
    """The JSON values ``text`` is made of (one, a list, or several one after another), or None."""
    values, rest = _leading_objects(text)
    return values if values and not rest.strip() else None


def _leading_objects(text: str) -> tuple[list[Any], str]:
    """The JSON values ``text`` starts with (one, a list, or several one after another), and the
    text after them.
    """  # noqa: D205
    decoder = json.JSONDecoder()
    values: list[Any] = []
    at = 0
    text = text.strip()
    while at < len(text):
        try:
            value, end = decoder.raw_decode(text, at)
        except ValueError:
            if not text.startswith("{{", at):
                break
            try:  # {{"name": ...}}: the braces some chat templates double, copied
                value, end = decoder.raw_decode(text, at + 1)
            except ValueError:
                break
            while text.startswith("}", end):  # and its closing ones, however many
                end += 1
        values.extend(value if isinstance(value, list) else [value])
        at = end
        while at < len(text) and text[at] in " \t\r\n,;":
            at += 1
    return values, text[at:]


_VALUE = r"(?:\"[^\"]*\"|'[^']*'|\[[^\]]*\]|[^\s/>\"']+)"
_XML_CALL = re.compile(rf"<(?P<name>[A-Za-z_][\w\-]*)(?P<attrs>(?:\s+[\w\-]+={_VALUE})*)\s*/?>")
_XML_ATTR = re.compile(rf"([\w\-]+)=({_VALUE})")


def _xml_calls(body: str) -> list[tuple[str, Any]]:
    """The calls in ``body`` written as tags, ``<get_todo_task task_id="1"/>``.

    A value is read as JSON where it is one (``"null"`` is null, ``"3"`` the number).
    """
    calls: list[tuple[str, Any]] = []
    for match in _XML_CALL.finditer(body):
        args: dict[str, Any] = {}
        for key, value in _XML_ATTR.findall(match.group("attrs")):
            raw = value[1:-1] if value[:1] in "\"'" and value[-1:] == value[:1] else value
            try:
                args[key] = json.loads(raw)
            except ValueError:
                args[key] = raw
        calls.append((match.group("name"), args))
    return calls


def _call(value: Any) -> tuple[str, Any] | None:
    """``value`` as (name, arguments) when it is shaped like a call."""
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return None
    keys = set(value) - {"type", "id"}
    if not keys & {"arguments", "parameters", "args", "function"} and keys != {"name"}:
        return None  # an object that merely has a name ({"name": "Bob", "tasks": 2})
    if isinstance(value.get("function"), dict):  # {"type": "function", "function": {...}}
        return _call(value["function"])
    args = value.get("arguments", value.get("parameters", value.get("args", {})))
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except ValueError:
            return value["name"], None
    return value["name"], args


def read_calls(text: str, tools: Sequence[Any]) -> TextCalls:
    """The tool calls ``text`` writes in one of the known forms, for the bound ``tools``."""
    if not any(may_start_call(line) for line in text.splitlines()):
        return TextCalls(prose=text)
    params = parameters_of(tools)
    found: list[tuple[str, Any]] = []
    shaped = False
    kept: list[str] = []
    at = 0
    for match in _BLOCK.finditer(text):
        if match.group("fname") is not None:
            shaped = True
            raw = match.group("fargs")
            args = _objects(raw) if raw else None
            found.append((match.group("fname"), args[0] if args and len(args) == 1 else None))
        else:
            body = (
                match.group("tagged")
                if match.group("tagged") is not None
                else match.group("fenced")
            )
            values = _objects(body or "")
            calls = [_call(v) for v in values or []]
            read = [c for c in calls if c] if values and all(calls) else []
            tag = match.group("tag")
            if not read and tag:
                read = _xml_calls(body or "")
            if not read:
                if tag is None:
                    continue  # a code block that is not a call stays prose
                # a call's tags around something else: never shown; a result the model
                # made up for itself is dropped, anything else is an unusable call
                read = [] if tag == "tool_response" else [("", None)]
            shaped = True
            found.extend(read)
        kept.append(text[at : match.start()])
        at = match.end()
    kept.append(text[at:])
    prose = "".join(kept)
    if not shaped:  # bare JSON: the whole text, or its lines from the first that opens a call
        lines = text.splitlines()
        first = next(i for i, line in enumerate(lines) if may_start_call(line))
        values, after = _leading_objects("\n".join(lines[first:]))
        calls = [_call(v) for v in values]
        if not values:
            cut = _CUT_CALL.match(lines[first])  # a call cut off at the answer's length
            return TextCalls(prose=text, unusable=cut is not None and cut["name"] in params)
        if not all(calls):
            return TextCalls(prose=text)
        found = [c for c in calls if c]
        rest = [line for line in after.splitlines() if line.strip() != "```"]  # a stray fence
        prose = "\n".join([*lines[:first], *rest])
    usable = [
        (name, given)
        for name, args in found
        if name in params
        and isinstance(args, dict)
        and fits(given := coerced(args, params[name]), {"type": "object", **params[name]})
    ]
    if len(usable) < len(found):
        return TextCalls(prose=prose.strip(), unusable=True)
    return TextCalls(calls=usable, prose=prose.strip())
