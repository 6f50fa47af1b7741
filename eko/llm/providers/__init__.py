"""Chat model providers: in-process llama.cpp, OpenAI-compatible HTTP, and a scripted test double.

Importing this package does not import llama_cpp: the local provider loads it on first use.
"""

from eko.llm.providers.factory import build_providers
from eko.llm.providers.function import Deltas, FunctionModel
from eko.llm.providers.local import LocalLlamaProvider, resolve_default_model_path
from eko.llm.providers.openai_compat import OpenAICompatProvider

__all__ = [
    "Deltas",
    "FunctionModel",
    "LocalLlamaProvider",
    "OpenAICompatProvider",
    "build_providers",
    "resolve_default_model_path",
]
