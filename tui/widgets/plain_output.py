"""Tool output as plain text: never parsed as markup, ANSI colours kept, no raw control bytes.

``to_text`` turns raw tool output into a ``rich.text.Text``: ``\\r\\n`` becomes ``\\n``; a lone
``\\r`` (progress bars) keeps the last frame of that line; ANSI SGR colours become
styles; other escape sequences and control characters are dropped; ``[bold]`` stays literally
``[bold]``. Output longer than ``max_lines`` lines is cut with a note.
"""

from __future__ import annotations

import re

from rich.text import Text
from textual.widgets import Static

#: Lines shown in a tool block body; the rest is summarised in one line.
MAX_LINES = 400

# C0 controls except tab, newline and ESC (ESC starts the ANSI sequences we decode), plus DEL.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1a\x1c-\x1f\x7f]")
# An ESC that does not start a CSI or OSC sequence.
_LONE_ESC = re.compile(r"\x1b(?![\[\]])")
_ANY_ESCAPE = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]?|\][^\x07\x1b]*(\x07|\x1b\\)?)?")


def _overwrite(line: str) -> str:
    """A line with carriage returns (a progress bar redrawing itself): keep the last non-empty
    frame, as the agent core does for the model's copy."""
    if "\r" not in line:
        return line
    for frame in reversed(line.split("\r")):
        if frame:
            return frame
    return ""


def clean_output(raw: str) -> str:
    """Return ``raw`` with CRLF/CR resolved and control characters other than tab, newline and
    ANSI escape starts removed."""
    text = raw.replace("\r\n", "\n")
    if "\r" in text:
        text = "\n".join(_overwrite(line) for line in text.split("\n"))
    text = _CONTROL.sub("", text)
    return _LONE_ESC.sub("", text)


def to_text(raw: str, max_lines: int = MAX_LINES) -> Text:
    """Return tool output as a rich ``Text`` (ANSI colours as styles, never markup).

    Output longer than ``max_lines`` lines is cut, and a dim line says how many were left out.
    """
    text = clean_output(raw)
    lines = text.split("\n")
    hidden = 0
    if len(lines) > max_lines:
        hidden = len(lines) - max_lines
        text = "\n".join(lines[:max_lines])
    result = Text.from_ansi(text) if "\x1b" in text else Text(text)
    if "\x1b" in result.plain:  # a sequence the decoder did not understand: drop colours
        result = Text(_ANY_ESCAPE.sub("", text))
    result.rstrip()
    if hidden:
        result.append(f"\n... {hidden} more lines not shown here", style="dim italic")
    return result


class PlainOutput(Static):
    """A ``Static`` that shows tool output literally (see ``to_text``)."""

    DEFAULT_CSS = """
    PlainOutput { height: auto; }
    """

    def __init__(self, raw: str, *, max_lines: int = MAX_LINES, classes: str | None = None) -> None:
        self.text = to_text(raw, max_lines)
        super().__init__(self.text, markup=False, classes=classes)
