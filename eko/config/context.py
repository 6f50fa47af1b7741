"""Settings of the dual context's single budget, multi-hop recall and recall over raw turns:
sections of eko.config.Settings (read from EKO_* like every other setting). See
eko/memory/budget.py and eko/memory/turn_recall.py."""

from __future__ import annotations

from pydantic import BaseModel, Field


class ContextBudgetSettings(BaseModel):
    # --- one budget for the dual context (eko/memory/budget.py, eko/memory/multihop.py) ---
    # Characters of the whole context block (recent turns, facts, recalled turns, summaries),
    # section headings included. 0: off, each source keeps its own cap (recent_max_chars,
    # memory_context_max_items, memory_recall_max_chars, rag_max_summaries). The rule: recent
    # turns first (at most recent_max_chars and the recent share of the budget), then facts
    # (at most the facts share), then recalled turns and summaries interleaved by rank
    # (memory_context_turns_per_summary turns, then one summary, ...) until the budget is full.
    memory_context_max_chars: int = Field(default=8000, ge=0, le=200_000)
    memory_context_recent_share: float = Field(default=0.5, ge=0, le=1)
    memory_context_facts_share: float = Field(default=0.2, ge=0, le=1)
    # 12: on the bench's dev-q questions (extractive summaries), with speaker-aware turn
    # recall, 78.1% at 8k vs 76.2% with 6 and 78.8% with 50 (summaries only when turns run
    # out); a model's summaries say more than the extractive stand-in's, so they keep a share.
    memory_context_turns_per_summary: int = Field(default=12, ge=1, le=50)
    # A question needing several pieces (two people, "both", a list) is split by rule into
    # sub-queries whose recalled turns are interleaved by rank (no model call).
    memory_multihop_enabled: bool = True
    # ... and, for those questions only, the model is asked once for this many things the
    # people might have said ("I went camping with the kids"), each recalled as one more
    # sub-query (eko/memory/query_expansion.py; purpose "memory_expand" in llm_calls). On the
    # dev questions with the bundled model, 3 beat 5 and 8 (fewer guesses, more room for the
    # question's own hits). 0: off, the rule alone (no model call).
    memory_recall_expand: int = Field(default=3, ge=0, le=8)
    # The longest wait for those phrases; past it the context is built without them (a local
    # model busy with another answer). Keep it below chat_node_timeout_s.
    memory_recall_expand_timeout_s: float = Field(default=8.0, gt=0)
    # A fact in the context pulls the turn it was learned from into the recalled turns.
    memory_fact_source_turns: bool = True
    # And back: the facts drawn from the recalled turns join the context (after the facts
    # found by meaning, within the facts share), at most this many. 0: off.
    memory_turn_facts: int = Field(default=5, ge=0, le=50)


class RecallSettings(BaseModel):
    # --- recall over raw turns (eko/memory/turn_recall.py, turn_index.py) ---
    # Nearest turns by meaning fused with the full-text matches (0: words only). Each user and
    # assistant message is embedded once (collection "turn"); `eko memory reindex` redoes a room.
    memory_recall_dense_k: int = Field(default=12, ge=0, le=100)
    # Each exchange is embedded by an after-reply job as it arrives; a context build embeds
    # only what a lost job left unindexed among the newest N older than the recent window.
    # Older gaps wait for `eko memory reindex`. Bounds the cost of a read after an import.
    memory_recall_catch_up: int = Field(default=64, ge=0, le=10_000)
    # ... and stops embedding once this long has passed (a few turns at a time), so a
    # question right after a long import is answered from what is indexed and full-text
    # search while the import's job indexes the rest. Skipped while that job runs here.
    memory_recall_catch_up_s: float = Field(default=1.0, ge=0, le=60)
    # Turns per embedder call when a job indexes an imported history (eko/jobs/turn_indexing.py).
    memory_index_batch: int = Field(default=32, ge=1, le=1024)
    # An exchange answered from the memory guard's cache is indexed this much later: the next
    # question, often right behind it, does not share the CPU with the embedder, and the
    # exchanges of a burst of cached answers are embedded together. Until then the recent
    # window and the request path's catch-up (above) still see them.
    memory_index_cached_delay_s: float = Field(default=5.0, ge=0, le=3600)
    # Characters of the turn before (its speaker and words, same sitting) embedded ahead of a
    # turn, so a reply ("Yes, every weekend!") carries what it answers. The bundled embedder's
    # cost is per token: 0 (the turn alone) doubles its speed (15.3 against 7.3 turns per
    # CPU-second on LoCoMo) but lost 2.4 / 3.3 points of strict recall on the held-out
    # questions, and multi-hop at 16k fell from 41% to 29% (docs/benchmarks.md, "Import and
    # reindex"): what memory finds comes first, so 400 stays the default; 0 is for a server
    # that imports much. Vectors written with another value still work;
    # `eko memory reindex` rewrites them.
    memory_index_previous_chars: int = Field(default=400, ge=0, le=1000)
    # Turns before and after each of the best `memory_recall_neighbours_head` recalled turns
    # that come with it (the exchange around it: the question it answers, the answer it got);
    # the hits below come alone, so the budget holds more of them. A list question ("what
    # books has she read?") takes none. Chosen on LoCoMo's dev questions (`eko bench context
    # --split dev-q`): 2 around the best 10 beat 1 around every hit by ~3 points at 8k chars.
    memory_recall_neighbours: int = Field(default=2, ge=0, le=5)
    memory_recall_neighbours_head: int = Field(default=10, ge=0, le=100)
    # A day or month the question names ("on 3 June, 2023", "en août 2023") also recalls that
    # period's turns that share its other words (eko/memory/dates.py, date_recall.py).
    memory_recall_dates: bool = True
    # A question naming one member of the room ("what books has Melanie read?") is mostly
    # answered by what that member said (95% of LoCoMo's evidence turns for such questions):
    # their recalled turns come first, this many for each turn by anyone else (who keeps a
    # place: "what did Melanie's friend tell her?"). 0: off. On dev-q, 4: 84.2% -> 86.2% at 8k.
    memory_recall_named_speaker: int = Field(default=4, ge=0, le=50)
