"""Configuration rules that are more than defaults."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from eko.config import (
    BUNDLED_MODEL_NAMES,
    DEFAULT_LOCAL_MODEL,
    GuardSettings,
    Settings,
    default_home,
    mask_url,
)


def settings(**values: object) -> Settings:
    return Settings(_env_file=None, **values)  # type: ignore[arg-type]


def test_memory_extraction_is_on_with_any_provider_unless_turned_off() -> None:
    assert settings().memory_extraction_on is True  # the bundled local model
    remote = {"kind": "openai", "base_url": "http://llm.test/v1", "model": "m"}
    assert settings(llm_providers=[remote, {"kind": "local"}]).memory_extraction_on is True
    assert settings(memory_extract_enabled=False).memory_extraction_on is False
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


def test_home_defaults_to_the_platform_user_data_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("EKO_HOME", raising=False)
    monkeypatch.delenv("EKO_MODELS_PATH", raising=False)
    monkeypatch.delenv("EKO_DATABASE_URL", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))  # platformdirs on Linux
    loaded = settings()
    assert loaded.home == default_home()
    if sys.platform.startswith("linux"):
        assert loaded.home == tmp_path / "data" / "eko"
    assert loaded.database_url == f"sqlite+aiosqlite:///{loaded.home / 'eko.db'}"
    assert loaded.models_dir == loaded.home / "models"


def test_eko_home_moves_the_database_and_models(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("EKO_DATABASE_URL", raising=False)
    monkeypatch.delenv("EKO_MODELS_PATH", raising=False)
    monkeypatch.setenv("EKO_HOME", str(tmp_path / "eko-data"))
    loaded = settings()
    assert loaded.home == tmp_path / "eko-data"
    assert loaded.database_url == f"sqlite+aiosqlite:///{tmp_path / 'eko-data' / 'eko.db'}"
    assert loaded.models_dir == tmp_path / "eko-data" / "models"
    assert loaded.masked()["home"] == str(tmp_path / "eko-data")


def test_a_relative_home_is_made_absolute_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    loaded = settings(home="relative/eko")
    assert loaded.home == tmp_path / "relative" / "eko"
    monkeypatch.chdir("/")
    assert loaded.database_url.endswith(f"{tmp_path}/relative/eko/eko.db")


def test_an_empty_eko_home_means_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EKO_HOME", "")
    assert settings().home == default_home()


def test_database_url_wins_over_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("EKO_HOME", str(tmp_path))
    monkeypatch.setenv("EKO_DATABASE_URL", "postgresql+asyncpg://eko:pw@db/eko")
    loaded = settings()
    assert loaded.database_url == "postgresql+asyncpg://eko:pw@db/eko"
    assert loaded.home == tmp_path  # still where models go


def test_the_home_directory_is_created_on_first_use(tmp_path: Path) -> None:
    loaded = settings(home=tmp_path / "a" / "b")
    assert not loaded.home.exists()  # reading the settings creates nothing
    assert loaded.ensure_home() == tmp_path / "a" / "b"
    assert loaded.home.is_dir()


def test_models_path_shares_one_copy_of_the_models(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("EKO_HOME", str(tmp_path / "one-home"))
    monkeypatch.setenv("EKO_MODELS_PATH", str(tmp_path / "shared-models"))
    assert settings().models_dir == tmp_path / "shared-models"
    monkeypatch.delenv("EKO_MODELS_PATH")
    assert settings().models_dir == tmp_path / "one-home" / "models"


def test_the_bundled_model_names_are_the_catalogs() -> None:
    # The configuration validates EKO_LOCAL_MODEL without loading the LLM package.
    from eko.llm.bundled import DEFAULT_BUNDLED_MODEL, bundled_model_names

    assert bundled_model_names() == BUNDLED_MODEL_NAMES
    assert DEFAULT_LOCAL_MODEL == DEFAULT_BUNDLED_MODEL


def test_the_local_model_must_be_a_bundled_one() -> None:
    assert settings(local_model="gemma-3-270m-q4_k_m").local_model == "gemma-3-270m-q4_k_m"
    with pytest.raises(ValidationError, match="unknown bundled model 'nope'"):
        settings(local_model="nope")


def test_auto_features_follow_the_primary_provider() -> None:
    remote = {"kind": "openai", "base_url": "http://llm.test/v1", "model": "m"}
    assert settings().chain_on is False
    assert settings(llm_providers=[remote]).chain_on is True
    assert settings(llm_providers=[remote], chain_enabled=False).chain_on is False


def test_a_section_reads_only_its_own_fields() -> None:
    section = GuardSettings(guard_mode="strict")
    assert section.guard_mode == "strict"
    assert not hasattr(section, "database_url")
    assert isinstance(settings(), GuardSettings)
