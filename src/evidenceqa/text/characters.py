"""Text people type, made safe to store and show: no control characters, and none of the invisible
ones that make a title or a question read differently from what it is.

Bidirectional overrides, embeddings and isolates (U+202A–U+202E, U+2066–U+2069, and the marks U+200E,
U+200F, U+061C) can make "txt.exe" show as "exe.txt" in a conversation list; zero-width spaces and word
joiners hide text inside words. The zero-width (non-)joiners U+200C/U+200D are kept: Persian, the Indic
scripts and emoji sequences need them. Unpaired surrogates are not text at all (JSON can carry
"\\ud800"; no encoder can write it).
"""

from __future__ import annotations

import re
import unicodedata

# C0 and C1 controls and DEL, but tab and newline; they mean nothing in typed text, PostgreSQL refuses
# NUL, and a terminal or log line would render them.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_INVISIBLE = re.compile(
    "[\u061c\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\ud800-\udfff]"
)


def visible(text: str) -> str:
    """`text` with control characters as spaces and invisible formatting characters removed."""
    return _INVISIBLE.sub("", _CONTROL.sub(" ", text))


def is_plain(text: str) -> bool:
    """True when `text` has no control, formatting, surrogate or separator character (an email address,
    a user name on one line)."""
    return not any(unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp") for c in text)
