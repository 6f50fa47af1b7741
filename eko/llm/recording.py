"""MemoryRecorder: a CallRecorder that keeps the call log in a list (tests, benchmarks, CLI)."""

from __future__ import annotations

from eko.llm.types import LLMCallRecord, Outcome


class MemoryRecorder:
    def __init__(self) -> None:
        self.records: list[LLMCallRecord] = []

    async def record(self, call: LLMCallRecord) -> None:
        self.records.append(call)

    @property
    def outcomes(self) -> list[Outcome]:
        return [record.outcome for record in self.records]
