"""A fake llama_cpp.Llama: records calls, tokenizes characters, knows ChatML control tokens."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

CHATML = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
# Like Gemma's: no system role after the first message, and strictly alternating turns.
STRICT_TEMPLATE = (
    "{% for message in messages %}"
    "{% if message['role'] == 'system' and not loop.first %}"
    "{{ raise_exception('System role only first') }}{% endif %}"
    "{% if loop.index0 > 0 and message['role'] == messages[loop.index0 - 1]['role'] %}"
    "{{ raise_exception('Roles must alternate') }}{% endif %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
# Control tokens: printed as nothing unless special=True. <|im_end|> is the EOS.
SPECIAL = {"<|im_start|>": 1, "<|im_end|>": 2, "<|endoftext|>": 3}
EOS = 2
_CHAR_BASE = 1000


def completion(text: str = " Bonjour Alice !", finish_reason: str = "stop") -> dict[str, Any]:
    return {
        "choices": [{"text": text, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 17, "completion_tokens": 4, "total_tokens": 21},
    }


class FakeLlama:
    def __init__(
        self, result: Any = None, *, delay: float = 0.0, chat_template: str | None = None
    ) -> None:
        self.result = result if result is not None else completion()
        self.delay = delay
        self.metadata: dict[str, str] = (
            {"tokenizer.chat_template": chat_template} if chat_template else {}
        )
        self.calls: list[tuple[Any, dict[str, Any]]] = []
        self.active = 0
        self.max_active = 0
        self.threads: set[int] = set()
        self.closed = False
        self._guard = threading.Lock()

    # --- tokenizer: one id per character, one per control token when special=True ---

    def tokenize(self, text: bytes, add_bos: bool = True, special: bool = False) -> list[int]:
        decoded, ids = text.decode("utf-8"), [] if not add_bos else [SPECIAL["<|endoftext|>"]]
        index = 0
        while index < len(decoded):
            for piece, token in SPECIAL.items():
                if special and decoded.startswith(piece, index):
                    ids.append(token)
                    index += len(piece)
                    break
            else:
                ids.append(_CHAR_BASE + ord(decoded[index]))
                index += 1
        return ids

    def detokenize(
        self, tokens: list[int], prev_tokens: list[int] | None = None, special: bool = False
    ) -> bytes:
        names = {token: piece for piece, token in SPECIAL.items()}
        return "".join(
            (names[t] if special else "") if t in names else chr(t - _CHAR_BASE) for t in tokens
        ).encode("utf-8")

    def token_eos(self) -> int:
        return EOS

    def token_bos(self) -> int:
        return SPECIAL["<|endoftext|>"]

    def text_of(self, prompt: Any) -> str:
        """A prompt as the model saw it (tokens decoded with their control tokens)."""
        if isinstance(prompt, str):
            return prompt
        return self.detokenize(prompt, special=True).decode("utf-8")

    # --- generation ---

    def create_completion(self, prompt: Any, **kwargs: Any) -> Any:
        with self._guard:
            self.active += 1
            self.max_active = max(self.max_active, self.active)
        self.threads.add(threading.get_ident())
        try:
            self.calls.append((prompt, kwargs))
            deadline = time.monotonic() + self.delay
            # Like llama.cpp, consult the stopping criteria between tokens.
            while time.monotonic() < deadline:
                if kwargs["stopping_criteria"](None, None):
                    return completion("cancel", finish_reason="stop")
                time.sleep(0.005)
            if isinstance(self.result, Exception):
                raise self.result
            return self.result
        finally:
            with self._guard:
                self.active -= 1

    def close(self) -> None:
        self.closed = True


class Loader:
    def __init__(self, llama: FakeLlama) -> None:
        self.llama = llama
        self.loads: list[tuple[Path, int, int]] = []

    def __call__(self, path: Path, n_ctx: int, n_threads: int) -> FakeLlama:
        self.loads.append((path, n_ctx, n_threads))
        return self.llama
