"""Node D, agent.response_writer: the final node, after every other one."""

from __future__ import annotations

from collections.abc import Mapping

from eko.chat.engine.registry import NodeContext, NodeOutput, NodeResult, NodeSpec
from eko.chat.engine.writer import ResponseWriter
from eko.guard.utterance import facts_in_answer
from eko.llm.errors import LLMError
from eko.llm.failures import cause_of_error

NODE_ID = "D"
NODE_TYPE = "agent.response_writer"


def response_writer_node(writer: ResponseWriter, *, timeout_s: float) -> NodeSpec:
    async def run(context: NodeContext, inputs: Mapping[str, NodeResult]) -> NodeOutput:
        try:
            answer = await writer.write(context, inputs)
        except LLMError as exc:
            return NodeOutput(
                data={"fallback": "llm_error", "cause": cause_of_error(exc)},
                error=f"llm_error: {exc}"[:300],
            )
        facts = {fact.fact_key: fact.value for fact in context.ctx.facts}
        return NodeOutput(
            data={
                "provider": answer.completion.provider,
                "model": answer.completion.model,
                # Keys of the user's facts whose value the answer repeats: never cached.
                "answer_uses_facts": facts_in_answer(answer.text, facts),
            },
            value=answer,
        )

    return NodeSpec(
        id=NODE_ID,
        type=NODE_TYPE,
        description="writes the final answer (persona, rules, docs first, web digest)",
        run=run,
        timeout_s=timeout_s,
        final=True,
        inputs=lambda decision: {
            "mode": decision.mode,
            "intent": decision.intent,
            "intent_eligible": decision.intent_eligible,
            "block_reason": decision.intent_block_reason,
            "smalltalk_target_key": decision.smalltalk_target_key,
            "transition_window": decision.gates.get("transition_window"),
            "transition_reason": decision.gates.get("transition_reason"),
        },
    )
