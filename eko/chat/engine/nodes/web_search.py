"""Node C, tool.web_search: a web search, digested to a summary, titles and domains (no URLs)."""

from __future__ import annotations

import re
from collections.abc import Mapping

from eko.chat.engine.registry import NodeContext, NodeOutput, NodeResult, NodeSpec, WriterSection
from eko.chat.engine.writer import WEB_SECTION_TITLE
from eko.chat.websearch.base import WebSearchProvider

NODE_ID = "C"
NODE_TYPE = "tool.web_search"
OFF_REASON = "web search is off (set EKO_WEB_SEARCH_PROVIDER to searxng or perplexity)"
_URL = re.compile(r"https?://\S+")


def web_search_node(
    provider: WebSearchProvider | None, *, max_results: int, max_chars: int, timeout_s: float
) -> NodeSpec:
    async def run(context: NodeContext, _inputs: Mapping[str, NodeResult]) -> NodeOutput:
        query = str(context.inputs.get("query") or "").strip()
        if provider is None:
            return NodeOutput(data={"query": query}, skipped_reason=OFF_REASON)
        if not query:
            return NodeOutput(skipped_reason="empty search query")
        result = await provider.search(query, max_results=max_results)
        lines = []
        if result.answer:
            lines.append(_URL.sub("", result.answer).strip())
        for source in result.sources:
            snippet = _URL.sub("", source.snippet).strip()
            lines.append(
                f"- {source.title} ({source.domain})" + (f": {snippet}" if snippet else "")
            )
        text = "\n".join(lines)[:max_chars]
        data = {
            "provider": result.provider,
            "query": query,
            "has_answer": bool(result.answer),
            "sources": [{"title": s.title, "domain": s.domain} for s in result.sources],
        }
        if not lines:
            return NodeOutput(data=data, skipped_reason="no web result")
        return NodeOutput(
            data=data,
            section=WriterSection(title=WEB_SECTION_TITLE, text=text, priority=20),
            value=result,
        )

    return NodeSpec(
        id=NODE_ID,
        type=NODE_TYPE,
        description="searches the web when fresh facts are needed (off unless configured)",
        run=run,
        timeout_s=timeout_s,
        include=lambda decision: decision.need_web,
        inputs=lambda decision: {"query": decision.web_search_prompt},
    )
