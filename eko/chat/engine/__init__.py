"""The chat engine: orchestrator -> plan of whitelisted nodes -> executor -> response writer.

See docs/chat-engine.md. `build_chat_engine` assembles it; `ChatEngine` is the pipeline Writer;
`NodeRegistry` / `NodeSpec` let other features add nodes.
"""

from eko.chat.engine.build import ChatEngineParts, build_chat_engine
from eko.chat.engine.engine import ChatEngine
from eko.chat.engine.quota import QuotaPaywall, QuotaStatus, quota_state
from eko.chat.engine.registry import (
    NodeContext,
    NodeOutput,
    NodeRegistry,
    NodeResult,
    NodeSpec,
    WriterSection,
)

__all__ = [
    "ChatEngine",
    "ChatEngineParts",
    "NodeContext",
    "NodeOutput",
    "NodeRegistry",
    "NodeResult",
    "NodeSpec",
    "QuotaPaywall",
    "QuotaStatus",
    "WriterSection",
    "build_chat_engine",
    "quota_state",
]
