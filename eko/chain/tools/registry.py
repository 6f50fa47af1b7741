"""The tool registry: what the chain's models may call, and the one safe way to call it.

A tool is a name, a description, a JSON schema of its arguments, an async handler and whether
it only reads. `ToolRegistry.call` never raises: an unknown name, arguments that fail the
schema, a handler error or timeout all come back as an error result the model can read.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import structlog

from eko.chain.tools.schema import check_args
from eko.store.models import Room, User

log = structlog.get_logger("eko.chain")

# What a tool result may weigh in the next prompt (a small model's context is small).
MAX_RESULT_CHARS = 1500


@dataclass(frozen=True, slots=True)
class ToolContext:
    """Who is asking, where: tools read and write within this caller's scopes only."""

    user: User
    room: Room
    message_id: str | None = None


ToolHandler = Callable[[ToolContext, dict[str, Any]], Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class Tool:
    name: str
    description: str
    parameters: dict[str, Any]
    handler: ToolHandler
    read_only: bool = True


@dataclass(frozen=True, slots=True)
class ToolResult:
    name: str
    args: dict[str, Any]
    ok: bool
    result: Any = None
    error: str | None = None

    def to_meta(self) -> dict[str, Any]:
        """The seed's `{name, args, result}`, and `error` (null for a success)."""
        result = self.result if self.ok else None
        return {"name": self.name, "args": self.args, "result": result, "error": self.error}

    def for_model(self) -> str:
        """The result as the model reads it, capped."""
        if not self.ok:
            return f"ERROR {self.name}: {self.error}"
        text = json.dumps(self.result, ensure_ascii=False, default=str)
        if len(text) > MAX_RESULT_CHARS:
            text = text[: MAX_RESULT_CHARS - 1] + "…"
        return f"RESULT {self.name}: {text}"


class ToolError(Exception):
    """A handler's refusal or failure, told to the model as is (e.g. a path escaping)."""


@dataclass
class ToolRegistry:
    tools: dict[str, Tool] = field(default_factory=dict)
    timeout_s: float = 15.0

    @classmethod
    def of(cls, tools: Iterable[Tool], *, timeout_s: float = 15.0) -> ToolRegistry:
        registry = cls(timeout_s=timeout_s)
        for tool in tools:
            registry.register(tool)
        return registry

    def register(self, tool: Tool) -> None:
        if tool.name in self.tools:
            raise ValueError(f"tool {tool.name!r} is already registered")
        self.tools[tool.name] = tool

    @property
    def names(self) -> list[str]:
        return list(self.tools)

    def __contains__(self, name: object) -> bool:
        return name in self.tools

    def describe(self) -> str:
        """One line per tool for a text-format prompt: name, arguments, description."""
        lines = []
        for tool in self.tools.values():
            props: Mapping[str, Any] = tool.parameters.get("properties") or {}
            required = set(tool.parameters.get("required") or [])
            args = ", ".join(
                f"{name}{'' if name in required else '?'}: {spec.get('type', 'any')}"
                for name, spec in props.items()
            )
            lines.append(f"- {tool.name}({args}): {tool.description}")
        return "\n".join(lines)

    def bare_args(self, name: str, value: str) -> dict[str, Any] | None:
        """`{"arg": value}` for a tool with one string argument (its only required one, or its
        only one): a small model's `[TOOL:read_file:notes.txt]`. None when it is ambiguous."""
        tool = self.tools.get(name)
        if tool is None:
            return None
        props: Mapping[str, Any] = tool.parameters.get("properties") or {}
        required = list(tool.parameters.get("required") or [])
        candidates = required if required else list(props)
        if len(candidates) != 1 or (props.get(candidates[0]) or {}).get("type") != "string":
            return None
        return {candidates[0]: value}

    async def call(self, context: ToolContext, name: str, args: Any) -> ToolResult:
        """Run one call; every failure is a result, never an exception (cancellation aside)."""
        safe_args = args if isinstance(args, dict) else {"_raw": args}
        tool = self.tools.get(name)
        if tool is None:
            known = ", ".join(self.tools) or "none"
            return ToolResult(name, safe_args, False, error=f"unknown tool; known tools: {known}")
        problems = check_args(tool.parameters, args)
        if problems:
            return ToolResult(name, safe_args, False, error="; ".join(problems))
        try:
            async with asyncio.timeout(self.timeout_s):
                result = await tool.handler(context, dict(args))
        except ToolError as exc:
            return ToolResult(name, safe_args, False, error=str(exc))
        except TimeoutError:
            return ToolResult(name, safe_args, False, error=f"timed out after {self.timeout_s}s")
        except Exception as exc:
            log.warning("chain.tool.failed", tool=name, exc_info=True)
            return ToolResult(name, safe_args, False, error=f"{type(exc).__name__}: {exc}"[:300])
        return ToolResult(name, safe_args, True, result=result)
