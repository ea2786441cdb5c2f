"""Text from users, models and stores made safe to show: in a terminal, a log line, a report.

A turn's text, a slot value or a model's reply can carry ESC, BEL, C1 controls such as CSI
(U+009B), a carriage return or a direction override: printed raw they retitle, clear or
rewrite an operator's terminal, or show a line that reads otherwise than it is. Every such
character is shown as its escape (``\\x1b``, ``\\u202e``), the way Python's ``repr`` writes
it; newline and tab stay, they are how text is laid out.
"""

from __future__ import annotations

import re

# C0 but tab and newline, DEL and C1, the Arabic letter mark, left/right-to-left marks, line
# and paragraph separators, direction embeddings, overrides and isolates
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")
# what json.dumps(ensure_ascii=False) leaves raw among those (it escapes C0 itself)
_UNSAFE_IN_JSON = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


def _escape(found: re.Match[str]) -> str:
    cp = ord(found.group())
    if cp == 0x0D:
        return "\\r"
    return f"\\x{cp:02x}" if cp < 0x100 else f"\\u{cp:04x}"


def _json_escape(found: re.Match[str]) -> str:
    return f"\\u{ord(found.group()):04x}"


def shown(text: str) -> str:
    """``text`` with every character that would act on a terminal written as its escape."""
    return _UNSAFE.sub(_escape, text)


def shown_json(dumped: str) -> str:
    """JSON text (``json.dumps(..., ensure_ascii=False)``) with the characters it leaves raw
    and a terminal would act on written as ``\\uXXXX``: the same JSON, safe to print."""
    return _UNSAFE_IN_JSON.sub(_json_escape, dumped)
