"""The response writer (node D): persona + rules + this turn's inputs + context -> the answer.

The prompt is one system message followed by the recent window (eko/memory/recent.py) and the
message:

    persona (.luciform of the room)            writer/rules.md, anti_patterns.md,
    writer/modes/<mode>.md                      ui_conventions.md (chat-safe output)
    writer/blocked.md      (intent not eligible: refuse + alternative)
    writer/sources.md      (web results present)
    writer/caller_instructions.md  (the room's instructions: an OpenAI client's system message)
    writer/caller_json.md, caller_tools.md  (the message's JSON or tools: caller_format.py)
    the turn's inputs (mode, intent, eligibility, target key, address form)
    sections from the other nodes, by priority: docs first, then web, then the user's context
    writer/grounding/note_<lang>.md  (a question about the user's life nothing given mentions)

After the model (answer_lock.py): flags are stripped, a Sources block the model wrote is
replaced by the canonical one (1-3 bullets, titles and domains, never URLs), and the body is
capped so the whole answer stays under MAX_ANSWER_CHARS. A reply to that question claiming to
know is replaced by writer/grounding/dont_know_*.md (eko/chat/grounding/check.py).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import structlog

from eko.chat.engine.lean_prompt import language_drifts, lean_profile, mode_hint, names_a_language
from eko.chat.engine.registry import NodeContext, NodeResult, WriterSection
from eko.chat.engine.stream_writer import write_streamed
from eko.chat.engine.turn_inputs import LANGUAGE_NAMES, turn_inputs
from eko.chat.grounding.assess import MEMORY_SOURCES, assess
from eko.chat.grounding.check import check_reply
from eko.chat.grounding.report import GroundingReport
from eko.chat.grounding.storage_claims import without_storage_claims
from eko.config import Settings
from eko.guard.language import detect_language
from eko.llm.caller_format import CallerFormat
from eko.llm.prompt_budget import CHARS_PER_TOKEN, MESSAGE_OVERHEAD_CHARS
from eko.llm.runtime import LLMRuntime
from eko.llm.types import ChatMessage, Completion
from eko.prompts.library import PromptLibrary, compact_persona, without_language
from eko.prompts.templates import fill

log = structlog.get_logger("eko.chat")


@dataclass(frozen=True, slots=True)
class WrittenAnswer:
    text: str
    completion: Completion[Any]
    # Set when the message asked a fact of the user's life (eko/chat/grounding).
    grounding: GroundingReport | None = None
    # Sentences removed because they said something was stored (storage_claims.py).
    storage_claims: tuple[str, ...] = ()


class ResponseWriter:
    def __init__(self, *, runtime: LLMRuntime, prompts: PromptLibrary, settings: Settings) -> None:
        self._runtime = runtime
        self._prompts = prompts
        self._settings = settings

    def sections(self, inputs: Mapping[str, NodeResult]) -> list[WriterSection]:
        found = [
            result.output.section
            for result in inputs.values()
            if result.ok and result.output is not None and result.output.section is not None
        ]
        return sorted(found, key=lambda section: section.priority)

    def messages(self, context: NodeContext, inputs: Mapping[str, NodeResult]) -> list[ChatMessage]:
        decision, ctx, turn = context.decision, context.ctx, context.turn
        prompts = self._prompts
        language = self._reply_language(context)
        compact = self.compact
        persona = prompts.persona(turn.room.persona)
        if names_a_language(turn.user_message.content):
            persona = without_language(persona)
        parts = [compact_persona(persona) if compact else persona]
        parts += [prompts.text(path) for path in instruction_files(compact)]
        mode = fill(
            prompts.text(f"writer/modes/{decision.mode}.md"),
            target_key=decision.smalltalk_target_key
            or "none (all collected: close the intro warmly)",
            transition_window=decision.gates.get("transition_window") or "none",
            transition_reason=decision.gates.get("transition_reason") or "none",
        )
        parts.append(
            mode_hint(mode, decision.intent) if compact and decision.mode == "normal" else mode
        )
        if not decision.intent_eligible:
            parts.append(
                fill(
                    prompts.text("writer/blocked.md"),
                    intent=decision.intent,
                    block_reason=decision.intent_block_reason or "not available",
                    missing_services=", ".join(decision.gates.get("missing_services") or [])
                    or "none",
                )
            )
        sections = self.sections(inputs)
        if any(section.title == WEB_SECTION_TITLE for section in sections):
            parts.append(prompts.text("writer/sources.md"))
        if turn.room.instructions:
            # Under the persona and the rules: on a conflict, they win (docs/api.md).
            parts.append(
                fill(
                    prompts.text("writer/caller_instructions.md"),
                    instructions=turn.room.instructions.strip(),
                )
            )
        caller = CallerFormat.from_meta(turn.user_message.meta)
        if caller is not None:
            parts.append(caller_format_section(prompts, caller))
        parts.append(turn_inputs(context, reply_language=language, lean=compact))
        for section in sections:
            text = (
                lean_profile(section.text)
                if compact and section.title == PROFILE_SECTION_TITLE
                else section.text
            )
            if text.strip():
                parts.append(f"## {section.title}\n{text}")
        grounding = self.grounding(context, sections)
        note_language = self._note_language(context)
        if grounding is not None and grounding.note:
            # After every section: what memory holds was said above, this says it is nothing.
            parts.append(
                fill(
                    prompts.text(f"writer/grounding/note_{note_language}.md"),
                    subject=grounding.subject,
                )
            )
        messages = [ChatMessage("system", "\n\n".join(part for part in parts if part.strip()))]
        # The recent window (ctx.history: the window's turns, then the message) goes whole:
        # it was sized once for this message, and memory recalls only what comes before it, so
        # a message left out here would reach the model by no route. Only a message longer
        # than the cap (a pasted document) is cut.
        # From where memory took over (sized to the reader's room, memory_context.py): the
        # older messages of the window reach the model through memory instead.
        start = recent_start(inputs)
        cap = self._settings.recent_max_chars
        turns: list[ChatMessage] = []
        for position, item in enumerate(ctx.history):
            if item.role not in ("user", "assistant"):
                continue
            if start is not None and item.seq < start and position < len(ctx.history) - 1:
                continue
            # A user's display name is sent only where several people speak (the lobby): in a
            # direct room it adds nothing, and an answer that never saw it can be shared.
            name = (
                self._settings.assistant_name
                if item.role == "assistant"
                else item.name
                if turn.room.kind == "lobby"
                else None
            )
            turns.append(ChatMessage(item.role, item.content[:cap], name=name))  # type: ignore[arg-type]
        if language is not None and turns and turns[-1].role == "user":
            # Said again right after the message: a small model weighs the last tokens most,
            # and the system prompt's line alone did not move it (`eko bench language`).
            note = prompts.text(f"writer/reply_in/{language}.md").strip()
            last = turns[-1]
            turns[-1] = ChatMessage("user", f"{last.content}\n\n({note})", name=last.name)
        if grounding is not None and grounding.note and turns and turns[-1].role == "user":
            # Said again last, as the reply language is (a small model weighs the end most).
            reminder = prompts.text(f"writer/grounding/reminder_{note_language}.md").strip()
            last = turns[-1]
            turns[-1] = ChatMessage("user", f"{last.content}\n\n({reminder})", name=last.name)
        messages += turns
        return messages

    @property
    def compact(self) -> bool:
        """Whether the compact instructions are used: the reader's prompt budget is small
        (COMPACT_BELOW_TOKENS), so the full ones would leave the conversation little room."""
        budget = self._runtime.prompt_budget_tokens()
        return budget is not None and budget < COMPACT_BELOW_TOKENS

    def reader_room(self, context: NodeContext) -> int | None:
        """The characters the conversation (the recent window's messages and the memory
        section) may take so that this turn's prompt fits the prompt budget of the provider
        that will read it (LLMRuntime.prompt_budget_tokens): that budget less the prompt
        without conversation or sections (instructions, this turn's inputs, the message),
        counted in that provider's tokens (the local model's own tokenizer once loaded), less
        the section's heading and a few hundred characters for the short sections beside it
        (the user's profile); tokens left are sized as text at CHARS_PER_TOKEN. None: the
        provider declares no limit. Docs and web results are not reserved for: when they are
        there, the provider may still cut (reported as input_cut in the reply's metadata)."""
        budget = self._runtime.prompt_budget_tokens()
        if budget is None:
            return None
        bare = self.messages(context, {})
        bare = [bare[0], bare[-1]] if len(bare) > 1 else bare
        used, _ = self._runtime.count_prompt_tokens(bare)
        reserved = SECTION_OVERHEAD_CHARS + SMALL_SECTIONS_CHARS
        return max(0, int((budget - used) * CHARS_PER_TOKEN) - reserved)

    def sent_chars(self, content: str) -> int:
        """The characters a recent message takes in the prompt (cut at the cap as messages()
        sends it, with the chat template's overhead) — how reader_room is shared."""
        return min(len(content), self._settings.recent_max_chars) + MESSAGE_OVERHEAD_CHARS

    def grounding(
        self, context: NodeContext, sections: Sequence[WriterSection]
    ) -> GroundingReport | None:
        """Is the message a question about the user's life, and is its subject in what the
        prompt holds (eko/chat/grounding)? None: not personal, or EKO_WRITER_GROUNDING off."""
        if not self._settings.writer_grounding:
            return None
        message = context.turn.user_message
        return assess(
            message.content,
            facts=[(fact.fact_key, fact.value) for fact in context.ctx.facts],
            user_turns=[
                item.content
                for item in context.ctx.history
                if item.role == "user" and item.seq < message.seq
            ],
            recalled=[s.text for s in sections if MEMORY_SOURCES & set(s.personal_sources)],
        )

    def _note_language(self, context: NodeContext) -> str:
        """The grounding note's and the replacement answer's language: the message's (French
        or English; English when unclear)."""
        language = detect_language(context.turn.user_message.content)
        return "fr" if language == "fr" else "en"

    def _reply_language(self, context: NodeContext) -> str | None:
        """The language the answer must be in (fr / en), None when unclear or off."""
        if not self._settings.writer_reply_language:
            return None
        message = context.turn.user_message
        language = detect_language(message.content)
        if language not in LANGUAGE_NAMES or names_a_language(message.content):
            return None  # unclear, or a translation: the message says which language
        if self.compact:
            # Said only against drift: a small model reads every extra line as something to
            # answer (lean_prompt.py); alone in its language, the message needs no note.
            earlier = [
                item.content
                for item in context.ctx.history
                if item.role in ("user", "assistant") and item.seq < message.seq
            ]
            if not language_drifts(language, earlier):
                return None
        return language

    async def write(self, context: NodeContext, inputs: Mapping[str, NodeResult]) -> WrittenAnswer:
        """One model call; LLMError propagates (the node turns it into a failure)."""
        messages = self.messages(context, inputs)
        sections = self.sections(inputs)
        docs = next((s for s in sections if s.title == DOCS_SECTION_TITLE), None)
        if docs is not None:
            log.debug("chat.response_writer.docs_chunks", preview=docs.text[:160])
        log.info(
            "chat.response_writer.call",
            has_docs=docs is not None,
            has_web=any(s.title == WEB_SECTION_TITLE for s in sections),
            intent=context.decision.intent,
            mode=context.decision.mode,
            context_level=context.decision.context_level,
            prompt_chars=sum(len(m.content) for m in messages),
        )
        caller = CallerFormat.from_meta(context.turn.user_message.meta)
        if caller is not None:
            # JSON or tool calls: asked whole (checked, re-asked once), never streamed as
            # prose; the API hands it out whole.
            completion = await self._runtime.complete(
                messages,
                purpose="writer",
                room_id=context.turn.room.id,
                message_id=context.turn.user_message.id,
                caller_format=caller,
                max_tokens=max(self._settings.llm_max_tokens, CALLER_FORMAT_MIN_TOKENS),
            )
            return WrittenAnswer(text=completion.text, completion=completion)
        # Streamed into the live reply when the request streams (eko/chat/streaming.py).
        completion = await write_streamed(
            self._runtime,
            messages,
            purpose="writer",
            room_id=context.turn.room.id,
            message_id=context.turn.user_message.id,
            # What memory, the profile and documents said may be repeated as the answer: a
            # small model answering with a remembered fact word for word is not reciting its
            # instructions (eko/llm/sanitize.py).
            quotable=[line for section in sections for line in section.text.splitlines()],
        )
        # What the stream showed may differ from what is stored (the `done` event's message):
        # a sentence saying something was stored is removed, and ...
        text, claims = without_storage_claims(completion.text)
        if claims and not text:
            text = self._prompts.text(
                f"writer/grounding/acknowledge_{self._note_language(context)}.md"
            ).strip()
        grounding = self.grounding(context, sections)
        if grounding is None:
            return WrittenAnswer(text=text, completion=completion, storage_claims=tuple(claims))
        # ... a reply claiming a fact memory does not hold is replaced.
        text = check_reply(
            grounding,
            text,
            self._prompts,
            language=self._note_language(context),
            use_tu=context.ctx.settings.get("use_tu_form"),
        )
        if grounding.corrected:
            log.info("chat.grounding.corrected", subject=grounding.subject)
        return WrittenAnswer(
            text=text, completion=completion, grounding=grounding, storage_claims=tuple(claims)
        )


# Below this prompt budget (tokens) the writer's compact instructions are used: the full ones
# (persona, rules, anti-patterns, format: ~750 tokens of the bundled model) would leave a
# 1,280-token reader almost nothing for the conversation.
COMPACT_BELOW_TOKENS = 2048
FULL_INSTRUCTIONS = ("writer/rules.md", "writer/anti_patterns.md", "writer/ui_conventions.md")
COMPACT_INSTRUCTIONS = ("writer/compact/rules.md",)


def instruction_files(compact: bool) -> tuple[str, ...]:
    """The writer's stable instructions after the persona (warm-up primes the same)."""
    return COMPACT_INSTRUCTIONS if compact else FULL_INSTRUCTIONS


def recent_start(inputs: Mapping[str, NodeResult]) -> int | None:
    """The seq the recent window starts at when a node (memory) covers what is before it."""
    starts = [
        result.output.recent_from_seq
        for result in inputs.values()
        if result.outcome in ("ok", "skipped")
        and result.output is not None
        and result.output.recent_from_seq is not None
    ]
    return max(starts) if starts else None


# A JSON reply or a tool call is cut short by a prose-sized budget: at least this many tokens.
CALLER_FORMAT_MIN_TOKENS = 512


def caller_format_section(prompts: PromptLibrary, caller: CallerFormat) -> str:
    """What the caller asked the reply to be, said to the model (a remote model gets the
    format natively as well; a local one is held to it by grammar)."""
    if not caller.tools:
        return fill(
            prompts.text("writer/caller_json.md"),
            schema=json.dumps(caller.json_schema(), ensure_ascii=False),
        )
    tools = [
        {
            "name": tool["function"].get("name"),
            "description": tool["function"].get("description", ""),
            "parameters": tool["function"].get("parameters") or {},
        }
        for tool in caller.tools
    ]
    forced = caller.forced_tool
    choice = (
        f"Call the tool {forced} now."
        if forced
        else "Call one of them now."
        if caller.call_required
        else "Call one when it helps to answer; otherwise answer directly."
    )
    return fill(
        prompts.text("writer/caller_tools.md"),
        choice=choice,
        tools="\n".join(json.dumps(tool, ensure_ascii=False) for tool in tools),
    )


# The memory section's heading ("## <title>\n") and the blank line before it, and room for the
# short sections beside it (the user's profile: a few lines); docs and web results are not
# reserved for (reader_room).
SECTION_OVERHEAD_CHARS = 80
SMALL_SECTIONS_CHARS = 400

DOCS_SECTION_TITLE = "Documentation (use it first)"
PROFILE_SECTION_TITLE = "About the user"
WEB_SECTION_TITLE = "Web results"
