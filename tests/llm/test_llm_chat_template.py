"""ChatTemplate: turn markers derived from a template, and the fallbacks for strict templates."""

from __future__ import annotations

from eko.llm.chat_template import ChatTemplate, control_token_ids, jinja_formatter
from eko.llm.types import ChatMessage

from .fake_llama import CHATML, EOS, SPECIAL, FakeLlama

GEMMA_LIKE = (
    "{{ bos_token }}{% for message in messages %}"
    "{% set role = 'model' if message['role'] == 'assistant' else message['role'] %}"
    "{{ '<start_of_turn>' + role + '\\n' + message['content'] | trim + '<end_of_turn>\\n' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<start_of_turn>model\\n' }}{% endif %}"
)
NO_SYSTEM_ROLE = (
    "{% for message in messages %}"
    "{% if message['role'] == 'system' %}{{ raise_exception('no system role') }}{% endif %}"
    "{{ '[' + message['role'] + '] ' + message['content'] + '\\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '[assistant] ' }}{% endif %}"
)


def template(source: str, eos: str = "<|im_end|>", bos: str = "") -> ChatTemplate:
    return ChatTemplate(jinja_formatter(source, eos_token=eos, bos_token=bos), eos_token=eos)


def test_chatml_markers() -> None:
    assert template(CHATML).stop == (
        "<|im_end|>",
        "<|im_start|>user",
        "<|im_start|>assistant",
        "<|im_start|>",
    )


def test_gemma_markers_and_its_own_bos() -> None:
    gemma = template(GEMMA_LIKE, eos="<eos>", bos="<bos>")
    assert gemma.stop == (
        "<eos>",
        "<end_of_turn>",
        "<start_of_turn>user",
        "<start_of_turn>model",
        "<start_of_turn>",
    )
    rendered = gemma.render([ChatMessage("user", "Hi")])
    assert rendered.prompt == "<bos><start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n"
    assert rendered.add_bos is False  # the template wrote it


def test_a_template_without_system_role_gets_it_in_the_first_user_turn() -> None:
    rendered = template(NO_SYSTEM_ROLE).render(
        [ChatMessage("system", "Be brief."), ChatMessage("user", "Hi")]
    )
    assert rendered.prompt == "[user] Be brief.\n\nHi\n[assistant] "


def test_from_metadata_without_a_template_is_none() -> None:
    assert ChatTemplate.from_metadata({}, eos_token="</s>", bos_token="<s>") is None


def test_control_tokens_exclude_the_ones_that_end_generation() -> None:
    ids = control_token_ids(
        FakeLlama(), ("<|im_end|>", "<|im_start|>user"), ends_generation=lambda t: t == EOS
    )
    # "user" is plain text; <|im_end|> ends generation; <|im_start|> would open a new turn.
    assert ids == frozenset({SPECIAL["<|im_start|>"]})
