"""A coarse quantizer for large in-memory partitions (inverted-file search, "IVF").

k-means (spherical: unit centroids, cosine) splits a partition's rows into about sqrt(n) cells;
a search scores the centroids, then only the rows of the `probes` best cells. Scores of the
rows it looks at are exact; a true neighbour in an unprobed cell is missed, which the benchmark
measures (`eko bench guard --lookup`: recall against exact search).
"""

from __future__ import annotations

import numpy as np

# Rows scored per batch when assigning cells (bounds the temporary n x cells matrix).
ASSIGN_BATCH = 8192
SAMPLE_ROWS = 20_000
ITERATIONS = 8


def cells_for(n: int) -> int:
    return int(min(4096, max(16, round(np.sqrt(n)))))


def train(matrix: np.ndarray, *, cells: int, seed: int = 0) -> np.ndarray:
    """Unit centroids of `cells` cells for these unit rows (spherical k-means on a sample)."""
    rng = np.random.default_rng(seed)
    n = matrix.shape[0]
    sample = matrix[rng.choice(n, min(n, SAMPLE_ROWS), replace=False)]
    centroids = sample[rng.choice(len(sample), min(cells, len(sample)), replace=False)].copy()
    for _ in range(ITERATIONS):
        owner = assign(sample, centroids)
        sums = np.zeros_like(centroids)
        np.add.at(sums, owner, sample)
        norms = np.linalg.norm(sums, axis=1)
        empty = norms == 0
        # An empty cell restarts on a random row.
        sums[empty] = sample[rng.choice(len(sample), int(empty.sum()))]
        norms[empty] = 1.0
        centroids = (sums / norms[:, None]).astype(np.float32)
    return np.ascontiguousarray(centroids, dtype=np.float32)


def assign(matrix: np.ndarray, centroids: np.ndarray) -> np.ndarray:
    """The cell of each row (its most similar centroid)."""
    owner = np.empty(matrix.shape[0], dtype=np.int32)
    for start in range(0, matrix.shape[0], ASSIGN_BATCH):
        block = matrix[start : start + ASSIGN_BATCH]
        owner[start : start + len(block)] = np.argmax(block @ centroids.T, axis=1)
    return owner


def probe(centroids: np.ndarray, query: np.ndarray, probes: int) -> np.ndarray:
    """The `probes` cells whose centroids are most similar to `query`."""
    scores = centroids @ query
    if probes >= len(scores):
        return np.arange(len(scores), dtype=np.int32)
    return np.argpartition(-scores, probes - 1)[:probes].astype(np.int32)
