"""/health answers from the background database probe, whatever the database is doing."""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path

from eko.llm.errors import AllProvidersFailed, ProviderUnavailable
from eko.llm.providers import FunctionModel
from eko.llm.providers.local import LocalLlamaProvider
from eko.llm.types import ChatMessage, ProviderRequest
from eko.store.db_health import DatabaseHealth, DatabaseHealthMonitor
from tests.api.conftest import HarnessFactory
from tests.llm.slow_llama import SlowLlama, slow_local


async def test_health_reads_the_last_probe_without_waiting_on_the_database(
    make_harness: HarnessFactory,
) -> None:
    probes = 0
    hung = asyncio.Event()

    async def first_ok_then_hung() -> bool:
        nonlocal probes
        probes += 1
        if probes > 1:
            hung.set()
            await asyncio.Event().wait()
        return True

    async with make_harness() as h:
        monitor = DatabaseHealthMonitor(
            h.services.database, probe=first_ok_then_hung, interval_s=0.0, timeout_s=60.0
        )
        h.services.db_health = monitor
        monitor.start()
        try:
            await asyncio.wait_for(hung.wait(), 5)
            body = (await h.client.get("/health")).json()
            assert body["status"] == "healthy"
            assert body["database"]["status"] == "ok" and body["database"]["checked_s_ago"] >= 0
            # A result older than the staleness bound is not trusted.
            monitor._last = DatabaseHealth("ok", True, None, time.monotonic() - 60)
            stale = (await h.client.get("/health")).json()
            assert stale["status"] == "degraded" and stale["database"]["status"] == "stale"
        finally:
            await monitor.aclose()


async def test_health_is_degraded_while_the_primary_models_circuit_is_open(
    make_harness: HarnessFactory,
) -> None:
    """Issue #37: /health said `healthy` while every reply came from the fallback."""

    def unreachable(_request: ProviderRequest) -> str:
        raise ProviderUnavailable("primary", "connection refused")

    primary = FunctionModel(unreachable, name="primary")
    backup = FunctionModel.constant("de secours", name="backup")
    async with make_harness(providers=[primary, backup]) as h:
        assert (await h.client.get("/health")).json()["status"] == "healthy"
        await h.services.runtime.complete([ChatMessage("user", "hi")], purpose="writer")
        body = (await h.client.get("/health")).json()
        circuits = {p["name"]: p["circuit"] for p in body["model"]["providers"]}
        assert circuits == {"primary": "open", "backup": "closed"}
        assert body["status"] == "degraded"
        assert body["database"]["status"] == "ok"


async def test_an_open_fallback_circuit_leaves_health_healthy(
    make_harness: HarnessFactory,
) -> None:
    def unreachable(_request: ProviderRequest) -> str:
        raise ProviderUnavailable("primary", "connection refused")

    backup = FunctionModel(unreachable, name="backup")
    async with make_harness(providers=[FunctionModel.constant("oui", name="main"), backup]) as h:
        # A stage that asks the fallback alone opens its circuit (the breakers are shared).
        with contextlib.suppress(AllProvidersFailed):
            await h.services.runtime.subset([backup]).complete(
                [ChatMessage("user", "hi")], purpose="writer"
            )
        body = (await h.client.get("/health")).json()
        assert [p["circuit"] for p in body["model"]["providers"]] == ["closed", "open"]
        assert body["status"] == "healthy"


async def test_a_busy_local_model_is_busy_and_a_failing_one_down(
    make_harness: HarnessFactory, tmp_path: Path
) -> None:
    """Issue #34: a slow model was shown as a dead one."""
    local = slow_local(tmp_path, SlowLlama())
    async with make_harness(providers=[local]) as h:
        await local.gate.acquire("interactive")  # a person's call running
        waiter = asyncio.create_task(local.gate.acquire("interactive"))  # another in line
        await asyncio.sleep(0)
        body = (await h.client.get("/health")).json()
        assert body["model"]["status"] == "busy" and body["status"] == "healthy"
        (provider,) = body["model"]["providers"]
        assert (provider["state"], provider["circuit"]) == ("busy", "closed")
        assert provider["queue"]["waiting"] == 1 and provider["queue"]["running"] is True
        local.gate.release()
        await waiter
        local.gate.release()
        assert (await h.client.get("/health")).json()["model"]["status"] == "up"

    missing = LocalLlamaProvider(tmp_path / "missing.gguf", name="local")
    async with make_harness(providers=[missing]) as h:
        for _ in range(3):  # a real failure, up to the threshold
            with contextlib.suppress(AllProvidersFailed):
                await h.services.runtime.complete([ChatMessage("user", "hi")], purpose="writer")
        body = (await h.client.get("/health")).json()
        assert body["model"]["status"] == "down" and body["status"] == "degraded"
        assert body["model"]["providers"][0]["state"] == "down"
