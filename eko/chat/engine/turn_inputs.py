"""The writer's "This turn" block: the inputs of this turn the model must act on."""

from __future__ import annotations

from eko.chat.engine.registry import NodeContext

# The language the answer must be in, named as a small model reads it best.
LANGUAGE_NAMES = {"fr": "French (français)", "en": "English"}


def turn_inputs(context: NodeContext, *, reply_language: str | None, lean: bool = False) -> str:
    """The turn's inputs; `lean` (the compact prompt): only those that are not defaults."""
    decision, ctx = context.decision, context.ctx
    use_tu = ctx.settings.get("use_tu_form")
    address = "tu" if use_tu is True else "vous" if use_tu is False else "unknown (match the user)"
    lines = ["## This turn"]
    if not lean:
        lines += [
            f"mode: {decision.mode}",
            f"intent: {decision.intent}",
            f"intent_eligible: {str(decision.intent_eligible).lower()}",
        ]
    elif decision.mode != "normal":
        lines.append(f"mode: {decision.mode}")
    if not lean or use_tu is not None:
        lines.append(f"address: {address}")
    if reply_language is not None:
        # Stated because small models follow the history's language instead of the last
        # message's ("What does my sister play?" after a French turn got a French answer).
        lines.append(f"reply_language: {LANGUAGE_NAMES[reply_language]}")
    if decision.intent_block_reason:
        lines.append(f"block_reason: {decision.intent_block_reason}")
    if decision.smalltalk_target_key:
        lines.append(f"smalltalk_target_key: {decision.smalltalk_target_key}")
    if decision.mode == "discovery":
        lines.append(f"transition_window: {decision.gates.get('transition_window') or 'none'}")
        lines.append(f"transition_reason: {decision.gates.get('transition_reason') or 'none'}")
    active = [name for name, on in decision.signals.to_meta().items() if on is True]
    if active and not lean:
        lines.append(f"signals: {', '.join(active)}")
    if ctx.settings.get("locale_main"):
        lines.append(f"locale: {ctx.settings['locale_main']}")
    if ctx.settings.get("timezone"):
        lines.append(f"timezone: {ctx.settings['timezone']}")
    return "\n".join(lines) if len(lines) > 1 else ""
