"""Capabilities come from data: agents grant them, and only with their required service."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from eko.chat.engine.capabilities import compute_capabilities, load_catalog


def test_no_agent_grants_nothing() -> None:
    report = compute_capabilities(load_catalog(), active_agents=[], connected_services=["email"])
    assert not any(report.flags.values())
    assert report.statuses["can_action_request"].reason == "no_agent"


def test_agent_without_its_required_service_does_not_grant() -> None:
    report = compute_capabilities(load_catalog(), active_agents=["ultimate"], connected_services=[])
    status = report.statuses["can_action_request"]
    assert status.granted is False
    assert status.reason == "service_not_connected"
    assert status.missing_services == ("calendar", "email")
    # A capability of the same agent that needs no service is granted.
    assert report.flags["can_deep_work"] is True
    assert report.tiers == ("personal",)


def test_one_connected_service_of_the_list_is_enough() -> None:
    report = compute_capabilities(
        load_catalog(), active_agents=["ultimate"], connected_services=["email"]
    )
    assert report.flags["can_action_request"] is True


def test_pro_mode_agent_tier_and_grant() -> None:
    report = compute_capabilities(
        load_catalog(), active_agents=["medical_assistant"], connected_services=[]
    )
    assert report.flags["can_professional_request"] is True
    assert report.has_tier("pro_mode")


def test_catalog_is_config() -> None:
    catalog = load_catalog(
        {
            "intent_requires": {"deep_work": "can_deep_work"},
            "agents": {
                "writer": {
                    "tier": "personal",
                    "grants": {"can_deep_work": {"requires_any": ["docs"]}},
                }
            },
        }
    )
    off = compute_capabilities(catalog, active_agents=["writer"], connected_services=[])
    on = compute_capabilities(catalog, active_agents=["writer"], connected_services=["docs"])
    assert off.flags == {"can_deep_work": False}
    assert on.flags == {"can_deep_work": True}
    with pytest.raises(ValidationError):
        load_catalog({"agents": {"x": {"tier": "gold"}}})
