"""Text from users or a model, made safe to print on a terminal.

Messages are stored as they were sent, control characters included, but printed raw they could
drive the terminal: ANSI escape sequences (ESC) can move the cursor, rewrite earlier lines or
set the window title, and bidi override/isolate characters reorder what is displayed
("Trojan Source"). `printable` shows each of them as a visible escape instead.
"""

from __future__ import annotations

import re

# C0 controls except tab and newline, DEL, C1 controls; bidi embeddings/overrides
# (U+202A-U+202E) and isolates (U+2066-U+2069).
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text: str) -> str:
    """`text` with every terminal-controlling character replaced by its visible escape
    (ESC -> `\\x1b`, U+202E -> `\\u202e`); tabs and newlines are kept."""
    return _UNSAFE.sub(_visible, text)
