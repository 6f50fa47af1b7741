"""Capabilities: what the assistant may do for a user, computed from data, not from scattered ifs.

The agent catalog (agents.json, or EKO_CHAT_AGENT_CATALOG) says, for each agent type a user can
subscribe to, its tier (personal / pro_mode: how much context it unlocks) and the capabilities
it grants, each with the services of which at least one must be connected. The seed's ⚠⚠⚠ rule:
an active agent whose required service is not connected does not grant the capability.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

PACKAGED_CATALOG = Path(__file__).with_name("agents.json")


class Grant(BaseModel):
    model_config = ConfigDict(extra="forbid")
    # Empty: no service needed. Otherwise at least one of these must be connected.
    requires_any: list[str] = Field(default_factory=list)


class AgentDefinition(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tier: Literal["personal", "pro_mode"]
    grants: dict[str, Grant] = Field(default_factory=dict)


class AgentCatalog(BaseModel):
    model_config = ConfigDict(extra="forbid")
    # intent -> the capability it needs (intents not listed need none).
    intent_requires: dict[str, str] = Field(default_factory=dict)
    agents: dict[str, AgentDefinition] = Field(default_factory=dict)

    @property
    def capabilities(self) -> list[str]:
        names = set(self.intent_requires.values())
        for agent in self.agents.values():
            names.update(agent.grants)
        return sorted(names)


@cache
def _packaged() -> AgentCatalog:
    return AgentCatalog.model_validate(json.loads(PACKAGED_CATALOG.read_text(encoding="utf-8")))


def load_catalog(override: Mapping[str, Any] | None = None) -> AgentCatalog:
    """The configured catalog (settings.chat_agent_catalog) or the packaged one."""
    if override is None:
        return _packaged()
    return AgentCatalog.model_validate(dict(override))


@dataclass(frozen=True, slots=True)
class CapabilityStatus:
    granted: bool
    # Why not: "no_agent" (no active agent grants it) or "service_not_connected".
    reason: str | None = None
    # Agents that would grant it (active ones), and services that would unlock it.
    agents: tuple[str, ...] = ()
    missing_services: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class CapabilityReport:
    statuses: dict[str, CapabilityStatus]
    active_agents: tuple[str, ...]
    connected_services: tuple[str, ...]
    tiers: tuple[str, ...] = field(default=())

    @property
    def flags(self) -> dict[str, bool]:
        return {name: status.granted for name, status in self.statuses.items()}

    def has_tier(self, tier: str) -> bool:
        return tier in self.tiers

    def to_meta(self) -> dict[str, Any]:
        return {
            "flags": self.flags,
            "active_agents": list(self.active_agents),
            "connected_services": list(self.connected_services),
            "tiers": list(self.tiers),
            "blocked": {
                name: {"reason": s.reason, "missing_services": list(s.missing_services)}
                for name, s in self.statuses.items()
                if not s.granted
            },
        }


def compute_capabilities(
    catalog: AgentCatalog, *, active_agents: Iterable[str], connected_services: Iterable[str]
) -> CapabilityReport:
    agents = tuple(sorted(set(active_agents)))
    services = set(connected_services)
    statuses: dict[str, CapabilityStatus] = {}
    tiers: set[str] = set()
    for name in catalog.capabilities:
        granting: list[str] = []
        missing: set[str] = set()
        granted = False
        for agent_type in agents:
            definition = catalog.agents.get(agent_type)
            if definition is None or name not in definition.grants:
                continue
            granting.append(agent_type)
            required = definition.grants[name].requires_any
            if not required or services.intersection(required):
                granted = True
            else:
                missing.update(required)
        if granted:
            statuses[name] = CapabilityStatus(True, agents=tuple(granting))
        elif granting:
            statuses[name] = CapabilityStatus(
                False, "service_not_connected", tuple(granting), tuple(sorted(missing))
            )
        else:
            statuses[name] = CapabilityStatus(False, "no_agent")
    for agent_type in agents:
        definition = catalog.agents.get(agent_type)
        if definition is not None:
            tiers.add(definition.tier)
    return CapabilityReport(
        statuses=statuses,
        active_agents=agents,
        connected_services=tuple(sorted(services)),
        tiers=tuple(sorted(tiers)),
    )


def required_capability(catalog: AgentCatalog, intent: str) -> str | None:
    return catalog.intent_requires.get(intent)
