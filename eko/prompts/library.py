"""Reads prompt and persona files from a directory (the packaged one by default).

A persona is a `.luciform`: an XML document, symbols included, sent to the model as is to give
the assistant its character in final answers — or, for a reader with a small prompt budget,
compact (`compact_persona`: its symbols and indentation left out, every other element kept).
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

PACKAGED_PROMPTS = Path(__file__).parent
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
PERSONA_SUFFIX = ".luciform"


_SYMBOLS = re.compile(r"\s*<symbols>.*?</symbols>", re.DOTALL)
_INDENT = re.compile(r"\n[ \t]+")
_LANGUAGE = re.compile(r"\n?[ \t]*<language>.*?</language>")


def compact_persona(persona: str) -> str:
    """The persona without its symbols (the glyphs' meanings repeat the rules) and indentation:
    about half its tokens, its name, essence, voice and rules kept."""
    return _INDENT.sub("\n", _SYMBOLS.sub("", persona))


def without_language(persona: str) -> str:
    """The persona without its `<language>` element, for a message that names the language of
    its answer ("Comment dit-on « chat » en anglais ?"): "answer in the language you are
    spoken to" contradicts it, and a small model obeys the persona (issue 34: the bundled model
    answered 'In English, "chat" is the animal.' with it, "cat" without it)."""
    return _LANGUAGE.sub("", persona)


class UnknownPersona(ValueError):
    pass


class PromptLibrary:
    def __init__(self, root: Path = PACKAGED_PROMPTS) -> None:
        self.root = root

    def text(self, relative_path: str) -> str:
        return _read(self.root / relative_path)

    def personas(self) -> list[str]:
        return sorted(p.stem for p in (self.root / "personas").glob(f"*{PERSONA_SUFFIX}"))

    def has_persona(self, name: str) -> bool:
        return (
            bool(_NAME.match(name))
            and (self.root / "personas" / f"{name}{PERSONA_SUFFIX}").is_file()
        )

    def persona(self, name: str) -> str:
        if not self.has_persona(name):
            raise UnknownPersona(
                f"unknown persona {name!r}; available: {', '.join(self.personas())}"
            )
        return self.text(f"personas/{name}{PERSONA_SUFFIX}")


@cache
def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8").strip()
