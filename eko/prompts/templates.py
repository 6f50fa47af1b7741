"""Filling `{{name}}` placeholders in prompt files (JSON braces in prompts stay untouched)."""

from __future__ import annotations

import re

_PLACEHOLDER = re.compile(r"\{\{\s*([a-z_][a-z0-9_]*)\s*\}\}")


def fill(template: str, **values: object) -> str:
    """Replace each {{name}}; a placeholder without a value is an error, not a silent gap."""

    def value_of(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in values:
            raise KeyError(f"prompt placeholder {{{{{name}}}}} has no value")
        return str(values[name])

    return _PLACEHOLDER.sub(value_of, template)
