"""llama.cpp JSON-schema grammars for the local provider, checked before llama.cpp uses them."""

from __future__ import annotations

import re
from typing import Any

# llama-cpp-python's JSON grammar lets a string hold raw control characters (a literal
# newline), which is not JSON; llama.cpp's own grammar excludes them, as this rule does.
_LOOSE_CHAR_RULE = re.compile(r'^char ::= \[\^"\\\\\]', re.MULTILINE)
_STRICT_CHAR_RULE = r'char ::= [^"\\\x7F\x00-\x1F]'


def json_schema_grammar(schema_json: str, llama: Any) -> Any:
    """llama.cpp's grammar for a JSON schema, checked against the loaded model's vocabulary."""
    from llama_cpp import LlamaGrammar
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    gbnf = _LOOSE_CHAR_RULE.sub(lambda _match: _STRICT_CHAR_RULE, json_schema_to_gbnf(schema_json))
    grammar = LlamaGrammar.from_string(gbnf, verbose=False)
    check_grammar_parses(llama, grammar)
    return grammar


def check_grammar_parses(llama: Any, grammar: Any) -> None:
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
