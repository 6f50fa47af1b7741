"""The judge: one model call that says whether a candidate in the grey band is the same question.

Used only in the `judge` mode, only for a candidate whose cosine sits in the grey band just below
the serving threshold and that passed the string rules. The model answers {"same": true|false}
under the runtime's JSON schema (a grammar on the bundled model); the call is logged in
llm_calls with purpose `guard_judge`. Any failure — provider error, timeout, an answer that is
not that JSON — means "not the same": nothing is served and the writer answers as usual.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

import structlog
from pydantic import BaseModel, ConfigDict

from eko.llm.deadline import message_deadline
from eko.llm.errors import LLMError
from eko.llm.runtime import LLMRuntime
from eko.llm.types import ChatMessage
from eko.prompts.library import PromptLibrary

log = structlog.get_logger("eko.guard")

PURPOSE = "guard_judge"
PROMPT = "guard_judge.md"
# {"same": false} is 15 characters: a few tokens, with room for a model's spacing.
JUDGE_MAX_TOKENS = 16


class SameQuestion(BaseModel):
    model_config = ConfigDict(extra="forbid")
    same: bool


@dataclass(frozen=True, slots=True)
class JudgeVerdict:
    """The judge's answer: `same` is None when it failed (then nothing is served)."""

    same: bool | None
    error: str | None = None
    duration_ms: float = 0.0
    provider: str | None = None

    def as_meta(self) -> dict[str, Any]:
        return {
            "same": self.same,
            "error": self.error,
            "duration_ms": round(self.duration_ms, 1),
            "provider": self.provider,
        }


class GuardJudge:
    def __init__(
        self, runtime: LLMRuntime, prompts: PromptLibrary, *, timeout_s: float = 10.0
    ) -> None:
        self._runtime = runtime
        self._prompts = prompts
        self.timeout_s = timeout_s

    def messages(self, question: str, stored: str) -> list[ChatMessage]:
        pair = f"Question 1: {stored.strip()}\nQuestion 2: {question.strip()}"
        return [
            ChatMessage("system", self._prompts.text(PROMPT)),
            ChatMessage("user", pair),
        ]

    async def same(
        self,
        question: str,
        stored: str,
        *,
        room_id: str | None = None,
        message_id: str | None = None,
    ) -> JudgeVerdict:
        """Whether `question` asks the same as the stored one; never raises for the model."""
        started = time.perf_counter()
        try:
            with message_deadline(self.timeout_s):
                completion = await asyncio.wait_for(
                    self._runtime.complete(
                        self.messages(question, stored),
                        output=SameQuestion,
                        purpose=PURPOSE,
                        room_id=room_id,
                        message_id=message_id,
                        max_tokens=JUDGE_MAX_TOKENS,
                        temperature=0.0,
                    ),
                    self.timeout_s + 1.0,
                )
        except TimeoutError:
            return self._failed("timeout", started)
        except LLMError as exc:
            return self._failed(f"model failed: {str(exc)[:200]}", started)
        data = completion.data
        if not isinstance(data, SameQuestion):
            return self._failed("invalid output", started, completion.provider)
        return JudgeVerdict(data.same, None, _ms(started), completion.provider)

    def _failed(self, error: str, started: float, provider: str | None = None) -> JudgeVerdict:
        log.warning("guard.judge_failed", error=error)
        return JudgeVerdict(None, error, _ms(started), provider)


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000
