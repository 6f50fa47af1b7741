"""One in-memory search partition: the unit vectors of one (collection, model, dim, key).

Rows live in one float32 matrix (grown by half again when full, like a list); a search is one
matrix product over the filled rows, so it is exact. A removal moves the last row into the hole,
so the filled rows stay contiguous.

A large partition may be split into cells (eko.store.vectors.ivf): its rows are then ordered
by cell, so a search multiplies only the contiguous slices of the cells nearest the query
(approximate). Rows written after the split go to a tail that every search scans; a row removed
from the ordered part is only marked dead. Reloading the partition splits it afresh.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from eko.store.vectors import ivf

# Rows allocated for a new partition before it grows.
INITIAL_ROWS = 16


@dataclass(frozen=True, slots=True)
class PartitionKey:
    collection: str
    model: str
    dim: int
    key: str


class Partition:
    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._matrix = np.zeros((0, dim), dtype=np.float32)
        self._embedding_ids = np.zeros(0, dtype=np.int64)
        self._alive = np.zeros(0, dtype=bool)
        self._item_ids: list[str] = []  # per row ("" for a dead row)
        self._row_of: dict[str, int] = {}
        self._rows = 0  # rows in use (live and dead)
        # After a split: unit centroids, and where each cell's rows start (then the tail).
        self._centroids: np.ndarray | None = None
        self._cell_start = np.zeros(1, dtype=np.int64)
        self._ordered = 0  # rows [0, _ordered) are ordered by cell
        self.probes = 0
        self.version = 0  # bumped by every write

    def copy(self) -> Partition:
        twin = Partition(self.dim)
        twin._matrix, twin._embedding_ids = self._matrix.copy(), self._embedding_ids.copy()
        twin._alive, twin._item_ids = self._alive.copy(), list(self._item_ids)
        twin._row_of, twin._rows = dict(self._row_of), self._rows
        twin._centroids, twin._cell_start = self._centroids, self._cell_start.copy()
        twin._ordered, twin.probes, twin.version = self._ordered, self.probes, self.version
        return twin

    def __len__(self) -> int:
        return len(self._row_of)

    def __contains__(self, item_id: object) -> bool:
        return item_id in self._row_of

    @property
    def nbytes(self) -> int:
        """Memory held by the arrays (allocated rows, filled or not)."""
        arrays = (self._matrix, self._embedding_ids, self._alive, self._cell_start)
        extra = 0 if self._centroids is None else self._centroids.nbytes
        return int(sum(array.nbytes for array in arrays) + extra)

    @property
    def exact(self) -> bool:
        return self._centroids is None

    def item_ids(self) -> list[str]:
        return list(self._row_of)

    def split(self, *, probes: int, seed: int = 0) -> None:
        """Order the rows by cell (k-means, ~sqrt(n) cells); searches then multiply the rows
        of the `probes` cells nearest the query only. CPU-heavy (seconds at 100k rows): run it
        off the event loop, before the partition is shared."""
        self._compact()
        n = self._rows
        if n == 0:
            return
        centroids = ivf.train(self._matrix[:n], cells=ivf.cells_for(n), seed=seed)
        cells = ivf.assign(self._matrix[:n], centroids)
        order = np.argsort(cells, kind="stable")
        self._matrix[:n] = self._matrix[:n][order]
        self._embedding_ids[:n] = self._embedding_ids[:n][order]
        self._item_ids = [self._item_ids[i] for i in order.tolist()]
        self._row_of = {item_id: row for row, item_id in enumerate(self._item_ids)}
        bounds = np.searchsorted(cells[order], np.arange(len(centroids) + 1))
        self._cell_start = bounds.astype(np.int64)
        self._centroids, self._ordered, self.probes = centroids, n, probes

    def put_many(self, item_ids: list[str], embedding_ids: list[int], vectors: np.ndarray) -> None:
        """Insert or replace rows; `vectors` must be unit rows of this partition's dimension."""
        if not item_ids:
            return
        if vectors.shape != (len(item_ids), self.dim):
            raise ValueError(f"expected {len(item_ids)} x {self.dim} vectors, got {vectors.shape}")
        self.version += 1
        self._reserve(self._rows + len(item_ids))
        for item_id, embedding_id, vector in zip(item_ids, embedding_ids, vectors, strict=True):
            row = self._row_of.get(item_id)
            if row is not None and row < self._ordered:
                # In a cell it may no longer belong to: dead there, written again in the tail.
                self.remove(item_id)
                row = None
            if row is None:
                row = self._rows
                self._rows += 1
                self._item_ids.append(item_id)
                self._row_of[item_id] = row
            self._matrix[row] = vector
            self._embedding_ids[row] = embedding_id
            self._alive[row] = True

    def remove(self, item_id: str) -> bool:
        row = self._row_of.pop(item_id, None)
        if row is None:
            return False
        self.version += 1
        if row < self._ordered:
            self._alive[row] = False
            self._item_ids[row] = ""
            return True
        last = self._rows - 1
        if row != last:
            moved = self._item_ids[last]
            self._item_ids[row] = moved
            self._row_of[moved] = row
            self._matrix[row] = self._matrix[last]
            self._embedding_ids[row] = self._embedding_ids[last]
        self._alive[last] = False
        self._item_ids.pop()
        self._rows -= 1
        return True

    def top(self, query: np.ndarray, k: int) -> list[tuple[float, int, str]]:
        """The k best rows as (cosine, embedding id, item id), in no particular order."""
        if not self._row_of or k <= 0:
            return []
        if self._centroids is None:
            rows = np.arange(self._rows)
            scores = self._matrix[: self._rows] @ query
        else:
            spans = [
                (int(self._cell_start[c]), int(self._cell_start[c + 1]))
                for c in ivf.probe(self._centroids, query, self.probes).tolist()
            ]
            spans.append((self._ordered, self._rows))
            spans = [(start, end) for start, end in spans if end > start]
            rows = np.concatenate([np.arange(start, end) for start, end in spans])
            # Contiguous slices: views of the matrix, multiplied without a copy.
            scores = np.concatenate([self._matrix[start:end] @ query for start, end in spans])
            keep = self._alive[rows]
            rows, scores = rows[keep], scores[keep]
        m = len(rows)
        best = np.argpartition(-scores, k - 1)[:k] if k < m else np.arange(m)
        return [
            (float(scores[i]), int(self._embedding_ids[rows[i]]), self._item_ids[rows[i]])
            for i in best.tolist()
        ]

    def _compact(self) -> None:
        """Drop dead rows and forget the cells (before a new split)."""
        live = np.flatnonzero(self._alive[: self._rows])
        if len(live) != self._rows:
            self._matrix[: len(live)] = self._matrix[live]
            self._embedding_ids[: len(live)] = self._embedding_ids[live]
            self._item_ids = [self._item_ids[i] for i in live.tolist()]
            self._alive[len(live) : self._rows] = False
            self._rows = len(live)
            self._row_of = {item_id: row for row, item_id in enumerate(self._item_ids)}
        self._centroids, self._ordered = None, 0
        self._cell_start = np.zeros(1, dtype=np.int64)

    def _reserve(self, rows: int) -> None:
        capacity = self._matrix.shape[0]
        if rows <= capacity:
            return
        grown = max(rows, INITIAL_ROWS, capacity + capacity // 2)
        used = self._rows
        matrix = np.zeros((grown, self.dim), dtype=np.float32)
        matrix[:used] = self._matrix[:used]
        embedding_ids = np.zeros(grown, dtype=np.int64)
        embedding_ids[:used] = self._embedding_ids[:used]
        alive = np.zeros(grown, dtype=bool)
        alive[:used] = self._alive[:used]
        self._matrix, self._embedding_ids, self._alive = matrix, embedding_ids, alive
