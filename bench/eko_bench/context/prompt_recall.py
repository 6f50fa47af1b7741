"""Content recall in the prompt the model receives (`eko bench context --provider-budget`).

For each question the writer's real prompt is rendered by the product (ChatEngineParts.preview:
the context loader, the deterministic decision, every node before the writer — the memory
section sized by the reader's budget — and ResponseWriter.messages), then fitted by the reader
(readers.py) as the provider would. Only the conversation's content in it is scored: the memory
section's passages and each earlier chat message; the instructions and the question itself are
not. Per question and reader:

- eko: the strict score in what the model receives (after the cut);
- cut: evidence present in the prompt as built but not in what is received (target: 0);
- BM25 and random turns of the same conversation (the same-conversation control), filling as
  many characters as the conversation takes in the received prompt; the unrelated control:
  the received prompt of another conversation's question.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta

from eko.chat.engine.prompt_preview import WriterPrompt
from eko.chat.memory_context import NODE_ID as MEMORY_NODE
from eko.chat.memory_context import SECTION_TITLE as MEMORY_TITLE
from eko.chat.pipeline import Turn
from eko.llm.types import ChatMessage
from eko.store.models import Message
from eko_bench.context.baselines import BM25, PastTurn, bm25_context, random_context
from eko_bench.context.content import Passages, passages
from eko_bench.context.data import Conversation, Question
from eko_bench.context.recall import MethodScore, past_turns
from eko_bench.context.rooms import LoadedRoom, PromptVariant

PROMPT_METHODS = ("eko prompt", "BM25 turns", "random turns (same-conversation control)")
UNRELATED = "unrelated (control)"
_MEMORY_HEADING = f"## {MEMORY_TITLE}\n"


def prompt_method_names(variants: Sequence[PromptVariant]) -> list[str]:
    return [f"{m}, {v.label}" for v in variants for m in (*PROMPT_METHODS, UNRELATED)]


@dataclass
class PromptStats:
    """Per reader: what the cut did and how large the prompts were."""

    label: str
    how: str
    questions: int = 0
    # Questions with an evidence turn in the prompt as built but not in what is received.
    evidence_cut: int = 0
    prompts_cut: int = 0
    did_not_fit: int = 0
    memory_failed: int = 0
    # The memory section's characters in the prompt as built, and the received prompt's.
    memory_chars: list[int] = field(default_factory=list)
    prompt_chars: list[int] = field(default_factory=list)


def memory_section(messages: Sequence[ChatMessage]) -> str:
    """The memory section's text in the system message ("" when there is none)."""
    if not messages or messages[0].role != "system":
        return ""
    system = messages[0].content
    start = system.find(_MEMORY_HEADING)
    if start < 0:
        return ""
    body = system[start + len(_MEMORY_HEADING) :]
    end = body.find("\n\n## ")
    return body if end < 0 else body[:end]


def conversation_passages(messages: Sequence[ChatMessage]) -> list[str]:
    """The conversation's content in a rendered prompt: the memory section of the system
    message, split on its blocks, then each chat message but the last (the question)."""
    found = passages(memory_section(messages))
    found += [m.content for m in messages[1:-1] if m.role != "system" and m.content.strip()]
    return found


def question_turn(loaded: LoadedRoom, question: str) -> Turn:
    """The question as the next message of the room, by the asker, a minute after the last
    one — not stored: the preview reads only its seq, text, time and sender."""
    message = Message(
        id=uuid.uuid4().hex,
        room_id=loaded.room.id,
        seq=max(loaded.seq_of.values()) + 1,
        sender_id=loaded.asker.id,
        role="user",
        type="message",
        content=question,
        meta={},
        created_at=loaded.last_time + timedelta(minutes=1),
    )
    return Turn(user=loaded.asker, room=loaded.room, user_message=message)


async def measure_prompts(
    rooms: Sequence[LoadedRoom],
    selected: list[tuple[Conversation, Question]],
    variants: Sequence[PromptVariant],
) -> tuple[dict[str, MethodScore], list[PromptStats], int, list[dict[str, object]]]:
    """Every question's prompt for every reader, scored; returns the scores by row name, the
    readers' stats, the questions skipped (no evidence turn) and one report row per question."""
    by_id = {room.conversation.sample_id: room for room in rooms}
    methods = {name: MethodScore() for name in prompt_method_names(variants)}
    stats = [PromptStats(v.label, v.reader.how) for v in variants]
    indexes: dict[str, tuple[list[PastTurn], dict[str, str], BM25]] = {}
    kept: list[tuple[LoadedRoom, Question, list[str], list[Passages]]] = []
    rows: list[dict[str, object]] = []
    skipped = 0
    for number, (conversation, question) in enumerate(selected):
        loaded = by_id[conversation.sample_id]
        if conversation.sample_id not in indexes:
            turns, texts = past_turns(conversation)
            indexes[conversation.sample_id] = (turns, texts, BM25([t.line for t in turns]))
        turns, texts, bm25 = indexes[conversation.sample_id]
        evidence = [texts[e] for e in question.evidence if e in texts]
        if not evidence:
            skipped += 1
            continue
        row: dict[str, object] = {
            "conversation": conversation.sample_id,
            "question": question.text,
            "category": question.category,
            "answer": question.answer,
            "evidence": question.evidence,
        }
        found: dict[str, bool] = {}
        chars: dict[str, int] = {}
        cut_rows: dict[str, bool] = {}
        received_all: list[Passages] = []
        for variant, stat in zip(variants, stats, strict=True):
            prompt = await variant.preview.render(question_turn(loaded, question.text))
            fitted, cut = await variant.reader.fit(prompt.messages)
            sent = Passages.of(conversation_passages(prompt.messages))
            received = Passages.of(conversation_passages(fitted or ()))
            received_all.append(received)
            lost = any(sent.has_turn(t) and not received.has_turn(t) for t in evidence)
            _count(stat, prompt, fitted, cut, lost)
            budget = received.chars
            candidates = {
                "eko prompt": received,
                "BM25 turns": Passages.split(bm25_context(turns, bm25, question.text, budget)),
                PROMPT_METHODS[2]: Passages.split(random_context(turns, budget, number)),
            }
            for method, text in candidates.items():
                name = f"{method}, {variant.label}"
                found[name] = methods[name].score(
                    question.category, evidence, question.answer, text
                )
                chars[name] = text.chars
            cut_rows[variant.label] = lost
        row.update(found=found, chars=chars, evidence_cut=cut_rows)
        rows.append(row)
        kept.append((loaded, question, evidence, received_all))
    # The unrelated control: each question against the prompt built for another
    # conversation's question, per reader.
    for position, (loaded, question, evidence, _) in enumerate(kept):
        other = next(
            (item for item in kept[position + 1 :] + kept[:position] if item[0] is not loaded),
            None,
        )
        if other is None:
            continue
        for variant, received in zip(variants, other[3], strict=True):
            methods[f"{UNRELATED}, {variant.label}"].score(
                question.category, evidence, question.answer, received
            )
    return methods, stats, skipped, rows


def _count(
    stat: PromptStats,
    prompt: WriterPrompt,
    fitted: Sequence[ChatMessage] | None,
    cut: object,
    lost: bool,
) -> None:
    stat.questions += 1
    stat.evidence_cut += lost
    stat.prompts_cut += cut is not None
    stat.did_not_fit += fitted is None
    memory = prompt.results.get(MEMORY_NODE)
    if memory is None or memory.outcome not in ("ok", "skipped"):
        stat.memory_failed += 1
    stat.memory_chars.append(len(memory_section(prompt.messages)))
    stat.prompt_chars.append(sum(len(m.content) for m in fitted or ()))
