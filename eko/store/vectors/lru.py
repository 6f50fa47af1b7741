"""Which in-memory partitions to drop when their vectors outgrow a memory cap.

`PartitionLru` keeps the partitions in the order they were last searched (least recent
first), the bytes each holds and their sum, and which ones a search under way uses (pinned:
never chosen). `evict` removes the chosen ones from the index's maps (eko.store.vectors.memory
calls it in every search, after any load: O(1) under the cap); the next search that needs a
dropped partition reads it whole again from the database (the truth).

Nothing is lost by a drop: a committed write is applied to loaded partitions only (`_put`
skips a missing one, which will be read with the row), marked items are re-read into loaded
ones only, and a background split replaces its partition only if that is still in place.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager

import structlog

from eko.store.vectors.partition import Partition, PartitionKey

log = structlog.get_logger("eko.store")


class PartitionLru:
    def __init__(self, max_bytes: int) -> None:
        """`max_bytes` 0: no cap (nothing is ever chosen)."""
        if max_bytes < 0:
            raise ValueError("max_bytes must be >= 0")
        self.max_bytes = max_bytes
        self._sizes: OrderedDict[PartitionKey, int] = OrderedDict()  # least recent first
        self._pins: Counter[PartitionKey] = Counter()
        self.nbytes = 0  # sum of the recorded sizes

    def order(self) -> list[PartitionKey]:
        """Tracked partitions, least recently searched first."""
        return list(self._sizes)

    def record(self, key: PartitionKey, nbytes: int) -> None:
        """A partition loaded, replaced or grown: its size now (its recency is kept; a new
        one counts as just used)."""
        self.nbytes += nbytes - self._sizes.get(key, 0)
        self._sizes[key] = nbytes

    def forget(self, key: PartitionKey) -> None:
        self.nbytes -= self._sizes.pop(key, 0)

    @contextmanager
    def using(self, keys: Sequence[PartitionKey]) -> Iterator[None]:
        """A search of `keys`: they become the most recent, and are pinned until it ends."""
        self.touch(keys)
        self._pins.update(keys)
        try:
            yield
        finally:
            self._pins.subtract(keys)
            for key in keys:
                if self._pins[key] <= 0:
                    del self._pins[key]

    def touch(self, keys: Iterable[PartitionKey]) -> None:
        """Mark `keys` (tracked ones) as just searched."""
        for key in keys:
            if key in self._sizes:
                self._sizes.move_to_end(key)

    def victims(self) -> list[PartitionKey]:
        """Least recently searched unpinned partitions whose removal brings the total under
        the cap (as far as unpinned ones allow); [] when under it or without a cap."""
        if not self.max_bytes or self.nbytes <= self.max_bytes:
            return []
        excess = self.nbytes - self.max_bytes
        chosen: list[PartitionKey] = []
        for key, size in self._sizes.items():
            if excess <= 0:
                break
            if self._pins[key] > 0:
                continue
            chosen.append(key)
            excess -= size
        return chosen

    def evict(
        self,
        partitions: dict[PartitionKey, Partition],
        where: dict[tuple[str, str], PartitionKey],
    ) -> list[PartitionKey]:
        """Remove the victims from an index's partitions and its (collection, item) ->
        partition map; returns them."""
        victims = self.victims()
        for key in victims:
            partition = partitions.pop(key, None)
            self.forget(key)
            for item_id in partition.item_ids() if partition is not None else ():
                if where.get((key.collection, item_id)) == key:
                    del where[(key.collection, item_id)]
        if victims:
            log.info(
                "vectors.evicted",
                partitions=len(victims),
                keys=[key.key for key in victims[:5]],
                held_bytes=self.nbytes,
                max_bytes=self.max_bytes,
            )
        return victims
