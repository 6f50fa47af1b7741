"""The text tool-call format for models without native tool calling: `[TOOL:name:{json args}]`.

Small models slip; the parser forgives what it safely can and nothing about the name:

- single quotes, Python literals (True/None), unquoted keys, trailing commas in the arguments;
- spaces around the parts, a lowercase `[tool:` marker, a missing closing `]`;
- text before and after a call (it is kept as the output's text);
- `[TOOL:name]` or `[TOOL:name:]` means no arguments.

The name must be a plain identifier and is taken as written: `List_Dir` is not `list_dir`,
`move_file` is not guessed into anything; an unknown name is the registry's error result.
Arguments that cannot be read become a call with an error, told to the model as a turn.
Calls past the per-answer limit are kept apart (`over_limit`): they are not run, and the
runner tells the model so.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from typing import Any

_MARKER = re.compile(r"\[\s*TOOL\s*:", re.IGNORECASE)
_NAME = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*")
_UNQUOTED_KEY = re.compile(r"([{,]\s*)([A-Za-z_][A-Za-z0-9_]*)(\s*:)")
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_THINK = re.compile(r"<think>.*?(?:</think>|$)", re.DOTALL | re.IGNORECASE)
MAX_CALLS_PER_TURN = 3
MAX_BARE_CHARS = 300


@dataclass(frozen=True, slots=True)
class ToolCall:
    name: str
    args: dict[str, Any]
    # Why the arguments could not be read (the call is then an error result, not run).
    error: str | None = None
    raw: str = ""
    # A bare value instead of an object (`[TOOL:read_file:notes.txt]`): the registry may map it
    # to the tool's only argument (ToolRegistry.bare_args).
    bare: str | None = None


@dataclass(frozen=True, slots=True)
class ParsedOutput:
    text: str
    calls: list[ToolCall] = field(default_factory=list)
    # The calls after the first `max_calls`, in order: not to be run.
    over_limit: list[ToolCall] = field(default_factory=list)


def render_call(name: str, args: dict[str, Any]) -> str:
    return f"[TOOL:{name}:{json.dumps(args, ensure_ascii=False, sort_keys=True)}]"


def parse_output(output: str, *, max_calls: int = MAX_CALLS_PER_TURN) -> ParsedOutput:
    """The calls in a model's output (the first `max_calls`, the rest in `over_limit`) and the
    text around them."""
    source = _THINK.sub("", output)
    calls: list[ToolCall] = []
    over_limit: list[ToolCall] = []
    text_parts: list[str] = []
    position = 0
    while True:
        found = _MARKER.search(source, position)
        if found is None:
            break
        text_parts.append(source[position : found.start()])
        call, position = _parse_call(source, found.end())
        if call is None:
            text_parts.append(source[found.start() : position])
        else:
            (calls if len(calls) < max_calls else over_limit).append(call)
    text_parts.append(source[position:])
    return ParsedOutput(
        text=" ".join("".join(text_parts).split()), calls=calls, over_limit=over_limit
    )


def _parse_call(source: str, start: int) -> tuple[ToolCall | None, int]:
    """One call after `[TOOL:`; None when no name follows (the text stays text)."""
    named = _NAME.match(source, start)
    if named is None:
        return None, start
    name = named.group(1)
    position = named.end()
    if position >= len(source) or source[position] == "]":
        return ToolCall(name, {}, raw=source[start : position + 1]), position + 1
    if source[position] != ":":
        # `[TOOL:name something]`: not the format; the name is kept, the call is an error.
        end = source.find("]", position)
        end = len(source) if end < 0 else end + 1
        return ToolCall(name, {}, error=_FORMAT_HELP, raw=source[start:end]), end
    position += 1
    while position < len(source) and source[position].isspace():
        position += 1
    if position >= len(source) or source[position] == "]":
        return ToolCall(name, {}, raw=source[start:position]), position + 1
    if source[position] != "{":
        end = source.find("]", position)
        end = len(source) if end < 0 else end + 1
        value = source[position : end - 1 if source[end - 1 : end] == "]" else end]
        bare = value.strip().strip("\"'").strip()
        usable = bare and "\n" not in bare and len(bare) <= MAX_BARE_CHARS
        return (
            ToolCall(name, {}, error=_FORMAT_HELP, raw=source[start:end], bare=bare or None)
            if usable
            else ToolCall(name, {}, error=_FORMAT_HELP, raw=source[start:end])
        ), end
    following = _MARKER.search(source, position)
    limit = following.start() if following is not None else len(source)
    body_end = _balanced_end(source[:limit], position)
    body = source[position:body_end]
    args, error = _read_args(body)
    end = body_end
    rest = source[end:]
    stripped = rest.lstrip()
    if stripped.startswith("]"):
        end += len(rest) - len(stripped) + 1
    return ToolCall(name, args, error=error, raw=source[start:end]), end


_FORMAT_HELP = 'arguments must be a JSON object: [TOOL:name:{"arg": "value"}]'


def _balanced_end(source: str, start: int) -> int:
    """Index after the `}` closing the `{` at `start`, quotes respected; else the index of a
    stray `]` (the call's own closer), or the end."""
    depth = 0
    brackets = 0
    quote: str | None = None
    escaped = False
    for index in range(start, len(source)):
        char = source[index]
        if quote is not None:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = None
            continue
        if char in "\"'":
            quote = char
        elif char == "[":
            brackets += 1
        elif char == "]":
            if brackets == 0:
                return index  # `{"a": 1]`: the call's bracket closes an unclosed object
            brackets -= 1
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index + 1
    return len(source)


def _read_args(body: str) -> tuple[dict[str, Any], str | None]:
    for attempt in _repairs(body):
        try:
            value = json.loads(attempt)
        except ValueError:
            try:
                value = ast.literal_eval(attempt)
            except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
                continue
        if isinstance(value, dict) and all(isinstance(key, str) for key in value):
            return _plain(value), None
        return {}, _FORMAT_HELP
    return {}, f"arguments are not valid JSON: {body[:120]}"


def _repairs(body: str) -> list[str]:
    text = body.strip()
    if text.count("{") > text.count("}"):
        text += "}" * (text.count("{") - text.count("}"))
    no_trailing = _TRAILING_COMMA.sub(r"\1", text)
    quoted_keys = _UNQUOTED_KEY.sub(r'\1"\2"\3', no_trailing)
    pythonic = quoted_keys.replace("true", "True").replace("false", "False").replace("null", "None")
    return [text, no_trailing, quoted_keys, pythonic]


def _plain(value: Any) -> Any:
    """JSON-compatible values only (literal_eval may give tuples or sets)."""
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set):
        return [_plain(item) for item in value]
    return value
