"""Which local model is active, in words for `eko doctor` and the `eko serve` banner."""

from __future__ import annotations

from pathlib import Path

from eko.llm.bundled.catalog import BUNDLED_MODELS, get_bundled_model


def describe_local_model(name: str, path: Path | None) -> str:
    """One line: the GGUF file when one is configured (it wins), else the bundled model."""
    if path is not None:
        return f"{path} (EKO_LOCAL_MODEL_PATH)"
    model = get_bundled_model(name)
    return f"{model.name} ({model.summary}; {model.licence})"


def switch_hint(name: str, path: Path | None) -> str:
    """How to choose another local model."""
    if path is not None:
        names = " or ".join(model.name for model in BUNDLED_MODELS)
        return f"switch: unset EKO_LOCAL_MODEL_PATH for a bundled model (EKO_LOCAL_MODEL={names})"
    others = " or ".join(model.name for model in BUNDLED_MODELS if model.name != name)
    return f"switch: EKO_LOCAL_MODEL={others}, or EKO_LOCAL_MODEL_PATH=file.gguf"
