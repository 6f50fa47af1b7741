"""`eko bench recall --expander model`: list questions' phrases, written before any timing.

On the server a question that needs several pieces gets a few phrases from the model
(eko.memory.query_expansion), and each phrase is recalled as one more sub-query: by words and
by meaning. That recall is retrieval and is timed. The model's writing is not retrieval, so,
like the query's vector, the phrases are written first. The configured model writes them, and
each answer is cached on disk (eko_bench.context.summary_cache); only their recall is timed.
"""

from __future__ import annotations

from collections.abc import Sequence

from eko.config import Settings
from eko.llm.runtime import LLMRuntime
from eko.llm.types import Provider
from eko.memory.multihop import decompose
from eko.memory.query_expansion import QueryExpander
from eko.prompts.library import PromptLibrary
from eko_bench.context.rooms import EXPAND_TIMEOUT_S


async def write_phrases(
    questions: Sequence[str], *, settings: Settings, providers: Sequence[Provider]
) -> dict[str, list[str]]:
    """The phrases of each question the multi-hop rule says needs several pieces, as the
    server's expander writes them (same prompt, settings and cache key). A question whose
    call failed gets none, as on the server."""
    if not settings.memory_multihop_enabled or not providers:
        return {}
    # As the bench's builder is set up (eko_bench.context.rooms.bench_memory): a loaded
    # machine must not turn a phrase into a silent "no phrase".
    tuned = settings.model_copy(update={"memory_recall_expand_timeout_s": EXPAND_TIMEOUT_S})
    expander = QueryExpander(
        runtime=LLMRuntime(list(providers)), prompts=PromptLibrary(), settings=tuned
    )
    phrases: dict[str, list[str]] = {}
    for question in dict.fromkeys(questions):
        if decompose(question).needs_several:
            phrases[question] = (await expander.expand(question)).phrases
    return phrases
