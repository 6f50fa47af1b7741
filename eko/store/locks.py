"""Per-key asyncio locks that disappear when nobody holds or waits for them."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class KeyedLocks:
    """`async with locks.hold(key):` serializes work on one key within this process.

    Entries are reference-counted, so a server that sees millions of keys (rooms, messages)
    keeps only the ones in use.
    """

    def __init__(self) -> None:
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}

    @asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        lock, users = self._locks.get(key, (asyncio.Lock(), 0))
        self._locks[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[key]
            if users <= 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, users - 1)

    def busy(self, key: str) -> bool:
        """Whether someone in this process holds `key` now (a hint: it may change at once)."""
        entry = self._locks.get(key)
        return entry is not None and entry[0].locked()

    def __len__(self) -> int:
        return len(self._locks)
