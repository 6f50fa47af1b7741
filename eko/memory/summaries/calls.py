"""The model calls that summarize one segment: map, then reduce — never a silent cut.

A segment's input is a list of blocks (L1: one rendered turn each; L2+: one child summary
each). When all blocks fit `summary_input_max_chars`, one call summarizes them (purpose
`summary_l<k>`). Otherwise the blocks are packed in order into parts that each fit (a block
longer than the budget is split into pieces), each part is summarized (`summary_l<k>_part`),
and the part summaries are merged by one last call (`summary_l<k>`); when the part summaries
themselves overflow the budget, consecutive ones are first merged in groups
(`summary_l<k>_merge`) until they fit. Every character of the segment reaches a model call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from string import Template
from typing import Any

from pydantic import BaseModel, create_model

from eko.config import Settings
from eko.llm.errors import AllProvidersFailed, LLMError
from eko.llm.runtime import LLMRuntime
from eko.llm.types import ChatMessage
from eko.memory.clock import as_utc
from eko.memory.outputs import Confidence, bounded_list, bounded_text
from eko.memory.summaries.segments import Segment
from eko.memory.turns import TurnStyle, group_turns, render_turn
from eko.prompts.library import PromptLibrary
from eko.store.memory_models import Summary

MAX_TOPIC_NAME_CHARS = 60
MAX_SAME_TOPIC_PROPOSALS = 3
# Summaries should be factual: little sampling freedom.
SUMMARY_TEMPERATURE = 0.2
# The smallest room left for blocks next to a part's footer (topic list).
MIN_PART_CHARS = 200


def summary_output_model(*, part_max_chars: int, max_topics: int, higher: bool) -> type[BaseModel]:
    """The seed's output schema ({conversation_summary, actions_summary}, maxLength each) plus
    topics, and for L2+ the topics the model thinks are the same."""
    text = bounded_text(part_max_chars)
    name = bounded_text(MAX_TOPIC_NAME_CHARS)
    fields: dict[str, Any] = {
        "conversation_summary": (text, ...),
        "actions_summary": (text, ...),
        "topics": (bounded_list(name, max_topics), ...),
    }
    if higher:
        same = create_model(
            "SameTopics", first=(name, ...), second=(name, ...), confidence=(Confidence, ...)
        )
        fields["same_topics"] = (bounded_list(same, MAX_SAME_TOPIC_PROPOSALS), ...)
    model: type[BaseModel] = create_model("HigherSummary" if higher else "L1Summary", **fields)
    return model


def child_block(number: int, child: Summary) -> str:
    """The seed's L2+ input for one child: "L1 Summary #n (chars a-b): Conversation / Actions"."""
    return (
        f"L{child.level} Summary #{number} (chars {child.char_range_start}-"
        f"{child.char_range_end}, {as_utc(child.period_start):%Y-%m-%d} to "
        f"{as_utc(child.period_end):%Y-%m-%d}):\n"
        f'  Conversation: "{child.conversation_summary}"\n'
        f'  Actions: "{child.actions_summary}"'
    )


def known_topics_line(names: Sequence[str]) -> str:
    known = sorted(set(names))
    return "Known topics: " + (", ".join(known) if known else "(none)")


def render_children(children: Sequence[Summary], topic_names: dict[str, list[str]]) -> str:
    """The whole L2+ input, uncut: every child's block, then the known topics."""
    blocks = [child_block(n, child) for n, child in enumerate(children, start=1)]
    footer = known_topics_line([name for names in topic_names.values() for name in names])
    return "\n\n".join([*blocks, footer])


def split_text(text: str, max_chars: int) -> list[str]:
    """`text` in consecutive pieces of at most max_chars, cut at a line break or a space when
    one is near; the pieces joined back hold every character (only the cut spaces go)."""
    pieces: list[str] = []
    rest = text
    while len(rest) > max_chars:
        cut = max(rest.rfind("\n", 0, max_chars), rest.rfind(" ", 0, max_chars))
        if cut < max_chars // 2:
            cut = max_chars
        pieces.append(rest[:cut])
        rest = rest[cut:].lstrip(" \n")
    if rest:
        pieces.append(rest)
    return pieces


def pack_blocks(blocks: Sequence[str], max_chars: int) -> list[str]:
    """Consecutive blocks joined by blank lines into parts of at most max_chars each."""
    parts: list[str] = []
    current: list[str] = []
    size = 0
    for block in blocks:
        for piece in split_text(block, max_chars):
            added = len(piece) + (2 if current else 0)
            if current and size + added > max_chars:
                parts.append("\n\n".join(current))
                current, size, added = [], 0, len(piece)
            current.append(piece)
            size += added
    if current:
        parts.append("\n\n".join(current))
    return parts


@dataclass(slots=True)
class SegmentInput:
    blocks: list[str]
    topic_names: list[str]


@dataclass(slots=True)
class SegmentSummary:
    data: Any  # the last call's validated output (L1Summary or HigherSummary)
    provider: str
    model: str
    fallback_used: bool
    meta: dict[str, Any]


class SegmentSummarizer:
    """Turns one segment's input into one summary through as many calls as it takes."""

    def __init__(self, *, runtime: LLMRuntime, prompts: PromptLibrary, settings: Settings) -> None:
        self._runtime = runtime
        self._prompts = prompts
        self._settings = settings
        self._l1_output = summary_output_model(
            part_max_chars=settings.summary_part_max_chars,
            max_topics=settings.topics_per_summary,
            higher=False,
        )
        self._higher_output = summary_output_model(
            part_max_chars=settings.summary_part_max_chars,
            max_topics=settings.topics_per_summary,
            higher=True,
        )

    async def summarize(
        self, room_id: str, segment: Segment, source: SegmentInput, count: Callable[[], None]
    ) -> SegmentSummary:
        """Raises LLMError when a call fails (after one retry at half the budget when the
        input did not fit the model's context window)."""
        budget = self._settings.summary_input_max_chars
        for attempt in range(2):
            try:
                return await self._summarize(room_id, segment, source, budget, count)
            except LLMError as exc:
                if attempt == 0 and _context_overflow(exc):
                    budget //= 2  # the input did not fit the model: once more, half as long
                    continue
                raise
        raise AssertionError("unreachable")

    async def _summarize(
        self,
        room_id: str,
        segment: Segment,
        source: SegmentInput,
        budget: int,
        count: Callable[[], None],
    ) -> SegmentSummary:
        level = segment.level
        first_prompt = "memory/summary_l1.md" if level == 1 else "memory/summary_higher.md"
        first_output = self._l1_output if level == 1 else self._higher_output
        footer = known_topics_line(source.topic_names) if level > 1 else ""
        room = max(MIN_PART_CHARS, budget - len(footer) - 2) if footer else budget
        parts = pack_blocks(source.blocks, room)
        input_chars = 0
        calls = 0

        async def call(prompt: str, output: type[BaseModel], purpose: str, body: str) -> Any:
            nonlocal input_chars, calls
            if footer and prompt == "memory/summary_higher.md":
                body = f"{body}\n\n{footer}"
            input_chars += len(body)
            calls += 1
            count()
            return await self._call(room_id, prompt, output, purpose, body)

        if len(parts) == 1:
            final = await call(first_prompt, first_output, f"summary_l{level}", parts[0])
        else:
            partials = []
            for part in parts:
                completion = await call(first_prompt, first_output, f"summary_l{level}_part", part)
                partials.append(completion.data)
            while len(partials) > 2 and len(_merge_body(partials)) > budget:
                partials = await self._merge_groups(partials, budget, level, call)
            final_prompt = "memory/summary_merge.md" if level == 1 else first_prompt
            final = await call(
                final_prompt, first_output, f"summary_l{level}", _merge_body(partials)
            )
        return SegmentSummary(
            data=final.data,
            provider=final.provider,
            model=final.model,
            fallback_used=final.fallback_used,
            meta={"input_chars": input_chars, "parts": len(parts), "calls": calls},
        )

    async def _merge_groups(
        self, partials: list[Any], budget: int, level: int, call: Any
    ) -> list[Any]:
        """One round of merging consecutive part summaries, at least two per call (so each
        round shrinks the list); a group of one passes through unchanged."""
        groups: list[list[Any]] = [[]]
        for partial in partials:
            group = groups[-1]
            if len(group) >= 2 and len(_merge_body([*group, partial])) > budget:
                groups.append([partial])
            else:
                group.append(partial)
        merged = []
        for group in groups:
            if len(group) == 1:
                merged.append(group[0])
                continue
            completion = await call(
                "memory/summary_merge.md",
                self._l1_output,
                f"summary_l{level}_merge",
                _merge_body(group),
            )
            merged.append(completion.data)
        return merged

    async def _call(
        self, room_id: str, prompt: str, output: type[BaseModel], purpose: str, body: str
    ) -> Any:
        values = {
            "max_chars": str(self._settings.summary_part_max_chars),
            "max_topics": str(self._settings.topics_per_summary),
        }
        instructions = Template(self._prompts.text(prompt)).safe_substitute(values)
        completion = await self._runtime.complete(
            [ChatMessage("system", instructions), ChatMessage("user", body)],
            output=output,
            purpose=purpose,
            room_id=room_id,
            max_tokens=self._settings.summary_max_tokens,
            temperature=SUMMARY_TEMPERATURE,
            priority="background",
        )
        if completion.data is None:
            raise LLMError(f"{purpose}: no structured answer")
        return completion


def _merge_body(partials: Sequence[Any]) -> str:
    """Part summaries in order, in the children's format, then the topics they named."""
    blocks = [
        f"Part {n} of {len(partials)}:\n"
        f'  Conversation: "{p.conversation_summary}"\n'
        f'  Actions: "{p.actions_summary}"'
        for n, p in enumerate(partials, start=1)
    ]
    names = sorted({name for p in partials for name in p.topics})
    return "\n\n".join([*blocks, "Topics named in the parts: " + (", ".join(names) or "(none)")])


def _context_overflow(exc: LLMError) -> bool:
    if not isinstance(exc, AllProvidersFailed):
        return False
    return any("context" in (attempt.error or "").lower() for attempt in exc.attempts)


def l1_blocks(segment: Segment, names: dict[int, str], style: TurnStyle) -> list[str]:
    """One block per turn of an L1 segment, each rendered whole."""
    return [render_turn(turn, names, style) for turn in group_turns(segment.messages)]
