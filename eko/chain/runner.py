"""The reflexive chain: OL1 (research, tools) -> M1 (analysis) -> M2 (review).

Each stage is a model (a subset of the chat's runtime: its providers, fallback, the shared
breakers, llm_calls with purpose `chain.<node>`) with a turn budget. A turn is one model call;
its [TOOL:...] calls run through the registry and their results are the next message. A stage
ends when its model answers without a call, repeats a call (anti-loop v2), runs out of its
budget or of the chain's global cap, or times out. Every stage gets the question and what the
earlier stages found and wrote. A stage whose model is offline is skipped; a stage with nothing
useful does not stop the chain. The reply is the last stage's answer (or the latest stage that
wrote one).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import structlog

from eko.chain.antiloop import DEFAULT_GLOBAL_CAP, GlobalBudget, StageGuard
from eko.chain.report import ChainResult, StageReport
from eko.chain.tool_calls import MAX_CALLS_PER_TURN, ToolCall, parse_output
from eko.chain.tools.registry import ToolContext, ToolRegistry, ToolResult
from eko.llm.deadline import time_limit
from eko.llm.errors import AllProvidersFailed, LLMError
from eko.llm.runtime import LLMRuntime
from eko.llm.types import ChatMessage
from eko.prompts.library import PromptLibrary
from eko.prompts.templates import fill

log = structlog.get_logger("eko.chain")

MAX_EARLIER_CHARS = 6000


@dataclass(frozen=True, slots=True)
class Stage:
    node: str  # OL1 | M1 | M2
    prompt: str  # research | analysis | review (eko/prompts/chain/<prompt>.md)
    budget: int
    runtime: LLMRuntime
    timeout_s: float = 60.0
    max_tokens: int | None = None


class ChainRunner:
    def __init__(
        self,
        *,
        stages: Sequence[Stage],
        tools: ToolRegistry,
        prompts: PromptLibrary,
        global_cap: int = DEFAULT_GLOBAL_CAP,
    ) -> None:
        if not stages:
            raise ValueError("a chain needs at least one stage")
        self.stages = list(stages)
        self.tools = tools
        self._prompts = prompts
        self.global_cap = global_cap

    async def run(
        self,
        question: str,
        context: ToolContext,
        *,
        history: Sequence[ChatMessage] = (),
        room_id: str | None = None,
        instructions: str | None = None,
    ) -> ChainResult:
        """Cancellation propagates; every other failure ends one stage, never the chain.

        `instructions`: the caller's own (an OpenAI client's system message), given to every
        stage under the stage's prompt, as the chat's writer gives them."""
        chain = GlobalBudget(cap=self.global_cap)
        reports: list[StageReport] = []
        for stage in self.stages:
            report = StageReport(node=stage.node, model=stage.runtime.providers[0].model)
            reports.append(report)
            if chain.left <= 0:
                report.status, report.stop_reason = "failed", "global_cap"
                continue
            if not stage.runtime.any_available:
                report.status, report.stop_reason = "offline", "offline"
                continue
            started = time.perf_counter()
            try:
                async with time_limit(stage.timeout_s):  # stopped while queued
                    await self._run_stage(
                        stage,
                        report,
                        chain,
                        question,
                        reports[:-1],
                        context,
                        history,
                        room_id,
                        instructions,
                    )
            except TimeoutError:
                report.status, report.stop_reason = "timeout", "timeout"
            report.duration_ms = (time.perf_counter() - started) * 1000.0
            log.info(
                "chain.stage",
                node=stage.node,
                model=report.model,
                turns=report.turns,
                tools=[result.name for result in report.tools_used],
                status=report.status,
                stop_reason=report.stop_reason,
                duration_ms=round(report.duration_ms, 1),
            )
        reply = next((r.text for r in reversed(reports) if r.ran and r.text.strip()), None)
        return ChainResult(reply=reply, stages=reports)

    async def _run_stage(
        self,
        stage: Stage,
        report: StageReport,
        chain: GlobalBudget,
        question: str,
        earlier: list[StageReport],
        context: ToolContext,
        history: Sequence[ChatMessage],
        room_id: str | None,
        instructions: str | None = None,
    ) -> None:
        guard = StageGuard(budget=stage.budget, chain=chain)
        messages = [
            ChatMessage("system", self._system(stage, instructions)),
            *history,
            ChatMessage("user", self._context(question, earlier)),
        ]
        while guard.can_take_turn():
            guard.take_turn()
            report.turns = guard.turns
            asking = messages
            if self.tools.names and not guard.has_turn_left():
                # The last turn: a call now could not be followed up, so ask for the answer.
                note = self._prompts.text("chain/last_turn.md")
                last = messages[-1]
                asking = [*messages[:-1], ChatMessage(last.role, f"{last.content}\n\n{note}")]
            try:
                completion = await stage.runtime.complete(
                    asking,
                    purpose=f"chain.{stage.node}",
                    room_id=room_id,
                    message_id=context.message_id,
                    max_tokens=stage.max_tokens,
                )
            except AllProvidersFailed as exc:
                report.error = str(exc)[:300]
                if not report.ran:
                    guard.refund()
                    report.turns = guard.turns
                    report.status, report.stop_reason = "offline", "offline"
                else:
                    report.status, report.stop_reason = "failed", "model_failed"
                return
            except LLMError as exc:
                report.status, report.stop_reason, report.error = "failed", "model_failed", str(exc)
                return
            report.model_calls += 1
            report.model = completion.model
            parsed = parse_output(completion.text)
            if parsed.text:
                report.text = parsed.text
            if not parsed.calls:
                report.stop_reason = "answered"
                return
            messages.append(ChatMessage("assistant", completion.text))
            results: list[ToolResult] = []
            for call in parsed.calls:
                bare = self.tools.bare_args(call.name, call.bare) if call.bare else None
                if bare is not None:
                    call = ToolCall(call.name, bare)
                unreadable = call.raw if call.error is not None else None
                if not guard.allow_call(call.name, call.args, raw=unreadable):
                    log.info("chain.repeated_call", node=stage.node, tool=call.name)
                    break
                if call.error is not None:
                    results.append(ToolResult(call.name, call.args, False, error=call.error))
                    continue
                results.append(await self.tools.call(context, call.name, call.args))
            else:  # no repeat stopped the stage: the calls past the limit are answered too
                results += [self._over_limit(call) for call in parsed.over_limit]
            report.tools_used += results
            if guard.stop_reason == "repeated_call":
                report.stop_reason = guard.stop_reason
                return
            messages.append(
                ChatMessage("user", "\n".join(result.for_model() for result in results))
            )
        report.stop_reason = guard.stop_reason

    def _over_limit(self, call: ToolCall) -> ToolResult:
        """A call past the per-answer limit: not run, and the model is told why."""
        error = fill(self._prompts.text("chain/over_limit.md"), limit=MAX_CALLS_PER_TURN)
        return ToolResult(call.name, call.args, False, error=error)

    def _system(self, stage: Stage, instructions: str | None = None) -> str:
        parts = [fill(self._prompts.text(f"chain/{stage.prompt}.md"), budget=stage.budget)]
        if self.tools.names:
            parts.append(fill(self._prompts.text("chain/tools.md"), tools=self.tools.describe()))
        if instructions and instructions.strip():
            # Under the stage's prompt: on a conflict, it wins (docs/api.md).
            parts.append(
                fill(
                    self._prompts.text("writer/caller_instructions.md"),
                    instructions=instructions.strip(),
                )
            )
        return "\n\n".join(parts)

    def _context(self, question: str, earlier: list[StageReport]) -> str:
        blocks = []
        for report in earlier:
            if not report.ran:
                continue
            lines = [f"## What {report.node} did"]
            lines += [f"- {result.for_model()}" for result in report.tools_used]
            if report.text:
                lines.append(f"{report.node} wrote: {report.text}")
            if len(lines) == 1:
                lines.append("(nothing useful)")
            blocks.append("\n".join(lines))
        earlier_text = "\n\n".join(blocks)[-MAX_EARLIER_CHARS:]
        return fill(self._prompts.text("chain/context.md"), question=question, earlier=earlier_text)
