"""/health through a real server (issue #37): `degraded` while the primary model's circuit is
open, `healthy` again once a probe closes it."""

from __future__ import annotations

import time

import httpx

from eko.llm.errors import ProviderUnavailable
from eko.llm.providers import FunctionModel
from eko.llm.types import ProviderRequest

from .live_server import running_eko


def healthy_soon(client: httpx.Client) -> bool:
    """Healthy within a few seconds: a loaded machine may report the database probe stale
    (degraded for another reason) for a moment."""
    deadline = time.monotonic() + 10
    while client.get("/health").json()["status"] != "healthy":
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


def test_health_over_the_wire_is_degraded_while_the_primary_circuit_is_open(
    database_url: str,
) -> None:
    down = {"primary": True}

    def primary(request: ProviderRequest) -> str:
        if down["primary"]:
            raise ProviderUnavailable("primary", "connection refused")
        return "{}" if request.json_schema is not None else "du principal"

    models = [
        FunctionModel(primary, name="primary"),
        FunctionModel(lambda r: "{}" if r.json_schema else "de secours", name="backup"),
    ]
    # Long enough that the circuit the post opened is still open when /health is read on a
    # loaded machine (0.5 s was not: CI read it half-open); the recovery below waits it out.
    cooldown_s = 5.0
    with running_eko(database_url, models, llm_breaker_cooldown_s=cooldown_s) as eko:
        headers = {"Authorization": f"Bearer {eko.key}"}
        with httpx.Client(base_url=eko.url, headers=headers, timeout=30) as client:
            assert healthy_soon(client)
            room = client.post("/v1/rooms", json={"kind": "direct"}).json()["id"]
            posted = client.post(f"/v1/rooms/{room}/messages", json={"content": "Bonjour"})
            assert posted.status_code == 201
            assert posted.json()["assistant_message"]["content"] == "de secours"
            health = client.get("/health").json()
            circuits = {p["name"]: p["circuit"] for p in health["model"]["providers"]}
            assert circuits["primary"] == "open" and circuits["backup"] == "closed"
            assert health["status"] == "degraded"
            assert health["model"]["status"] == "down"

            down["primary"] = False  # it comes back: after the cooldown a reply probes it
            time.sleep(cooldown_s + 0.1)
            again = client.post(f"/v1/rooms/{room}/messages", json={"content": "Encore"})
            assert again.json()["assistant_message"]["content"] == "du principal"
            assert healthy_soon(client)
