"""The server's process holds NumPy's BLAS to one thread (eko/store/vectors/blas_threads.py)."""

from __future__ import annotations

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

from eko.config import Settings
from eko.embed.hashing import HashEmbedder
from eko.llm.providers import FunctionModel
from eko.wiring import build_services


def _blas_threads() -> list[int]:
    return [info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"]


async def test_building_the_services_limits_blas_to_one_thread(tmp_path: object) -> None:
    np.ones((4, 4)) @ np.ones(4)  # BLAS loaded
    with threadpool_limits(limits=2, user_api="blas"):  # as a fresh process on 2 cores starts
        assert _blas_threads() and all(n == 2 for n in _blas_threads())
        services = build_services(
            Settings(database_url=f"sqlite+aiosqlite:///{tmp_path}/eko.db", _env_file=None),
            providers=[FunctionModel(lambda request: "ok", name="scripted")],
            embedder=HashEmbedder(),
        )
        try:
            assert all(n == 1 for n in _blas_threads())
        finally:
            await services.aclose()
