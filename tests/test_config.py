"""Configuration rules that are more than defaults."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from eko.config import Settings, mask_url


def settings(**values: object) -> Settings:
    return Settings(_env_file=None, **values)  # type: ignore[arg-type]


def test_memory_extraction_is_auto_by_primary_provider() -> None:
    assert settings().memory_extraction_on is False  # bundled local base model
    remote = {"kind": "openai", "base_url": "http://llm.test/v1", "model": "m"}
    assert settings(llm_providers=[remote, {"kind": "local"}]).memory_extraction_on is True
    assert settings(memory_extract_enabled=True).memory_extraction_on is True
    forced_off = settings(llm_providers=[remote], memory_extract_enabled=False)
    assert forced_off.memory_extraction_on is False


def test_provider_list_is_validated() -> None:
    with pytest.raises(ValidationError, match="at least one provider"):
        settings(llm_providers=[])
    with pytest.raises(ValidationError, match="base_url and model"):
        settings(llm_providers=[{"kind": "openai"}])


def test_environment_json_gives_the_provider_list(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        "EKO_LLM_PROVIDERS",
        '[{"kind":"openai","base_url":"https://api.deepseek.com/v1","model":"deepseek-chat",'
        '"api_key":"sk-x"},{"kind":"local"}]',
    )
    loaded = settings()
    assert [p.kind for p in loaded.llm_providers] == ["openai", "local"]
    assert loaded.masked()["llm_providers"][0]["api_key"] == "****"


def test_database_passwords_are_masked() -> None:
    assert mask_url("postgresql+asyncpg://eko:s3cret@db:5432/eko") == (
        "postgresql+asyncpg://eko:****@db:5432/eko"
    )
    assert mask_url("sqlite+aiosqlite:///./eko.db") == "sqlite+aiosqlite:///./eko.db"
