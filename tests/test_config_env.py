"""Every EKO_* variable Eko read before its settings were split by section still names the same
setting (issue #31: nothing renamed for users)."""

from __future__ import annotations

from pathlib import Path

import pytest

from eko.config import Settings

# Frozen from eko/config.py and eko/config_*.py before the split (2350590, with main's
# EKO_LOBBY_RECENT_MESSAGES -> EKO_LOBBY_RECENT_TURNS of 213b14c): one per line.
ENV_NAMES_BEFORE_THE_SPLIT = frozenset(
    (Path(__file__).parent / "eko_env_names.txt").read_text(encoding="utf-8").split()
)


def env_name(field: str) -> str:
    prefix = Settings.model_config.get("env_prefix", "")
    return f"{prefix}{field}".upper()


def test_every_setting_keeps_its_environment_variable() -> None:
    assert Settings.model_config.get("case_sensitive", False) is False
    for name, field in Settings.model_fields.items():
        # An alias would replace the variable's name.
        assert field.alias is None and field.validation_alias is None, name
    assert {env_name(name) for name in Settings.model_fields} == ENV_NAMES_BEFORE_THE_SPLIT


@pytest.mark.parametrize(
    ("variable", "value", "field", "expected"),
    [
        ("EKO_PORT", "9001", "port", 9001),
        ("EKO_GUARD_MODE", "strict", "guard_mode", "strict"),
        ("EKO_MEMORY_CONTEXT_MAX_CHARS", "1234", "memory_context_max_chars", 1234),
        ("EKO_VECTOR_MEMORY_COLLECTIONS", '["guard"]', "vector_memory_collections", ["guard"]),
        ("EKO_CHAIN_BUDGET_M1", "5", "chain_budget_m1", 5),
        ("EKO_JOBS_PRUNE_CRON", "1 2 * * *", "jobs_prune_cron", "1 2 * * *"),
        ("EKO_GUARD_PRUNE_CRON", "3 4 * * *", "guard_prune_cron", "3 4 * * *"),
        ("EKO_WRITER_REPLY_LANGUAGE", "false", "writer_reply_language", False),
        ("EKO_ORCHESTRATOR_TIMEOUT_S", "7.5", "orchestrator_timeout_s", 7.5),
        ("EKO_EMBED_BATCH_SIZE", "8", "embed_batch_size", 8),
    ],
)
def test_a_variable_of_each_section_reaches_its_field(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, field: str, expected: object
) -> None:
    monkeypatch.setenv(variable, value)
    assert getattr(Settings(_env_file=None), field) == expected
